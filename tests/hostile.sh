#!/bin/sh
# hostile.sh PCBENCH - what a hostile user tried, and what must happen now:
# a wrong EMD never passes, -o never replaces what is not a regular file nor
# an input, inputs that are not regular files are refused at once, answer
# streams are bounded, each command takes only its own options, usage errors
# speak pcbench's words, and a killed run leaves no temporary file. Run with
# the plain and the sanitized tool.
. "$(dirname "$0")/lib.sh"


"$tool" gen uniform -n 300 -o "$tmp/a.ply" && "$tool" gen sphere -n 300 --seed 2 -o "$tmp/b.ply" &&
    "$tool" gen uniform -n 2000 --seed 3 -o "$tmp/c.ply" || bad "gen"

# ---- check emd --max-gap: 0 is the strictest (exact), never "no promise" ----
"$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" --impl exact -o "$tmp/e.txt" >/dev/null || bad "emd exact"
seq 299 -1 0 >"$tmp/rev.txt" # a bijection far above the optimum
emd() { "$tool" check emd -a "$tmp/a.ply" -b "$tmp/b.ply" --answer "$@"; }
expect "identity-like matching with --max-gap 0" 1 "not optimal" -- emd "$tmp/rev.txt" --max-gap 0
expect "the optimum with --max-gap 0" 0 "pass" -- emd "$tmp/e.txt" --max-gap 0
expect "the same matching with --max-gap 0.01" 1 "gap above its promise" -- emd "$tmp/rev.txt" --max-gap 0.01
expect "--max-gap inf asks for a bijection only" 0 "(allowed inf)" -- emd "$tmp/rev.txt" --max-gap inf
expect "--max-gap nan" 2 "--max-gap" -- emd "$tmp/e.txt" --max-gap nan
expect "--max-gap -0.1" 2 "--max-gap" -- emd "$tmp/e.txt" --max-gap -0.1

# ---- -o: regular files replaced whole, devices and FIFOs written through ----
fps() { "$tool" fps -i "$tmp/a.ply" -m 5 "$@"; }
if mknod "$tmp/null" c 1 3 2>/dev/null; then # a private /dev/null (root only)
    expect "-o onto a character device" 0 "" -- fps -o "$tmp/null"
    [ -c "$tmp/null" ] && ok || bad "-o replaced a character device with $(ls -l "$tmp/null")"
else
    echo "skip: -o onto a character device: mknod needs root"
    skip=$((skip + 1))
fi
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from_fifo" &
reader=$!
expect "-o onto a FIFO" 0 "" -- fps -o "$tmp/fifo"
(sleep 10 && kill $reader) >/dev/null 2>&1 & # a replaced FIFO never reaches it
wait $reader
[ -p "$tmp/fifo" ] && [ "$(wc -l <"$tmp/from_fifo")" -eq 5 ] && ok ||
    bad "-o onto a FIFO: $(ls -l "$tmp/fifo"), $(wc -l <"$tmp/from_fifo") lines read"
echo old >"$tmp/target.txt"
ln -s target.txt "$tmp/link"
expect "-o onto a link to a regular file" 0 "" -- fps -o "$tmp/link"
[ -L "$tmp/link" ] && [ "$(wc -l <"$tmp/target.txt")" -eq 5 ] && ok ||
    bad "-o through a link: $(ls -l "$tmp/link"), target $(wc -l <"$tmp/target.txt") lines"
expect "-o /dev/stdout into a file" 0 "" -- fps -o /dev/stdout
[ "$(wc -l <"$tmp/out")" -eq 5 ] && ok || bad "-o /dev/stdout: $(wc -l <"$tmp/out") lines reached stdout"
ln -s "$tmp/nowhere/x" "$tmp/dangling"
expect "-o onto a dangling link" 3 "a symbolic link to nothing" -- fps -o "$tmp/dangling"
[ -L "$tmp/dangling" ] && ok || bad "-o replaced a dangling link"
mkdir "$tmp/folder"
expect "-o onto a folder" 3 "a folder" -- fps -o "$tmp/folder"
# -o naming an input (directly, through a link, or either cloud) is refused.
cp "$tmp/a.ply" "$tmp/a.keep"
expect "fps -o the input" 3 "is the input" -- fps -o "$tmp/a.ply"
ln -s a.ply "$tmp/a_link.ply"
expect "fps -o a link to the input" 3 "is the input" -- fps -o "$tmp/a_link.ply"
expect "nn -o the query cloud" 3 "is the input" -- "$tool" nn -r "$tmp/a.ply" -q "$tmp/b.ply" -o "$tmp/b.ply"
expect "emd -o cloud A" 3 "is the input" -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" -o "$tmp/a.ply"
cmp -s "$tmp/a.ply" "$tmp/a.keep" && ok || bad "an input cloud was overwritten"
# An output that cannot be written fails before anything is printed.
expect "emd -o into a missing folder" 5 "missing/x.txt" -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" -o "$tmp/missing/x.txt"
[ ! -s "$tmp/out" ] && ok || bad "emd printed '$(cat "$tmp/out")' before failing on -o"

# ---- inputs that are not regular files: refused at once, never read ----
expect "--answer /dev/zero" 3 "not a regular file" -- "$tool" check fps -i "$tmp/a.ply" -m 5 --answer /dev/zero
expect "--answer a FIFO" 3 "not a regular file" -- "$tool" check fps -i "$tmp/a.ply" -m 5 --answer "$tmp/fifo"
expect "a FIFO as the input cloud" 3 "not a regular file" -- "$tool" fps -i "$tmp/fifo" -m 5
expect "a FIFO as the query cloud" 3 "not a regular file" -- "$tool" nn -r "$tmp/a.ply" -q "$tmp/fifo"
# stdin may stream: bounded by what the expected answers can need.
expect "--answer - fed zeros" 3 "a NUL byte" -- sh -c "head -c 3000000 /dev/zero | '$tool' check fps -i '$tmp/a.ply' -m 5 --answer -"
expect "--answer - fed one endless line" 3 "longer than 4096" -- sh -c "head -c 3000000 /dev/zero | tr '\\000' 7 | '$tool' check fps -i '$tmp/a.ply' -m 5 --answer -"
expect "--answer - fed endless blank lines" 3 "more than the answers expected can need" -- sh -c "yes '' | '$tool' check fps -i '$tmp/a.ply' -m 5 --answer -"
expect "--answer - fed endless comments" 3 "more than the answers expected can need" -- sh -c "yes '# x' | '$tool' check fps -i '$tmp/a.ply' -m 5 --answer -"
# A NUL in a text body is refused, as in headers and answer files.
printf '1 2 3\n4 5\0006\n7 8 9\n' >"$tmp/nul.xyz"
expect "a NUL byte in a text body" 3 "NUL byte" -- "$tool" fps -i "$tmp/nul.xyz" -m 2
# .pts count lines that fit no integer (undefined behaviour before).
printf '1e999 2 3\n4 5 6\n' >"$tmp/inf.pts"
expect ".pts whose first line overflows" 3 "infinite x coordinate" -- "$tool" fps -i "$tmp/inf.pts" -m 1
printf '1e30\n1 2 3\n' >"$tmp/huge.pts"
expect ".pts with a count beyond int64" 3 "1 column" -- "$tool" fps -i "$tmp/huge.pts" -m 1

# ---- each command takes its own options only, and says so in its words ----
expect "fps --partitions" 2 "pcbench: fps: unrecognized option '--partitions'" -- fps --partitions 3
expect "nn --samples" 2 "pcbench: nn: unrecognized option '--samples'" -- "$tool" nn -r "$tmp/a.ply" -q "$tmp/b.ply" --samples 5
expect "emd --start" 2 "pcbench: emd: unrecognized option '--start'" -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" --start 3
expect "fps --ref" 2 "unrecognized option '--ref'" -- "$tool" fps --ref "$tmp/a.ply" -m 3
expect "fps --eps" 2 "unrecognized option '--eps'" -- fps --eps 0.1
expect "check --impl" 2 "unrecognized option '--impl'" -- emd "$tmp/e.txt" --impl exact
expect "check fps --max-gap" 2 "unrecognized option '--max-gap'" -- "$tool" check fps -i "$tmp/a.ply" -m 5 --answer "$tmp/e.txt" --max-gap 1
expect "getopt's message in pcbench's words" 2 "pcbench: fps: unrecognized option '--bogus'" -- fps --bogus
expect "a missing value" 2 "pcbench: fps: option '--impl' needs a value" -- fps --impl
expect "gen --bogus" 2 "pcbench: gen: unrecognized option '--bogus'" -- "$tool" gen uniform -n 3 -o "$tmp/g.ply" --bogus
for c in verify bench count; do
    expect "$c --bogus" 2 "pcbench: $c: unrecognized option '--bogus'" -- "$tool" $c --bogus
done
expect "--eps nan names the option" 2 "--eps: 'nan' is not a number" -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" --eps nan
expect "--eps -1 names the option" 2 "--eps" -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" --eps -1
# Unknown names are usage errors (2) in every command.
expect "count --problem bogus" 2 "unknown problem 'bogus'" -- "$tool" count --problem bogus
expect "count --impl bogus" 2 "unknown implementation 'bogus'" -- "$tool" count --impl bogus
expect "verify --impl bogus" 2 "unknown fps implementation 'bogus'" -- "$tool" verify --problem fps --impl bogus
expect "fps --impl bogus" 2 "unknown fps implementation 'bogus'" -- fps --impl bogus
expect "bench --impl bogus" 2 "unknown implementation 'bogus'" -- "$tool" bench --impl bogus

# ---- a killed run leaves no temporary file behind ----
# Unnamed files where the file system has them (even SIGKILL leaves nothing);
# named ones (PCBENCH_NAMED_TMP=1, as where it has none) are removed on
# SIGTERM, SIGINT and SIGHUP. The run is killed while its output is open.
killed() { # signal, environment assignment
    mkdir -p "$tmp/k"
    env $2 "$tool" fps -i "$tmp/c.ply" -m 2000 --impl naive -o "$tmp/k/out.txt" 2>/dev/null &
    pid=$!
    i=0
    while [ $i -lt 100 ] && ! ls -l /proc/$pid/fd 2>/dev/null | grep -q "$tmp/k/"; do
        sleep 0.05
        i=$((i + 1))
    done
    kill -"$1" $pid
    wait $pid 2>/dev/null
    if [ -z "$(ls -A "$tmp/k")" ]; then ok; else bad "$2 killed by SIG$1 left: $(ls -A "$tmp/k")"; fi
}
killed KILL PCBENCH_NAMED_TMP=0
killed TERM PCBENCH_NAMED_TMP=0
killed TERM PCBENCH_NAMED_TMP=1
killed INT PCBENCH_NAMED_TMP=1
expect "a named temporary, committed" 0 "" -- env PCBENCH_NAMED_TMP=1 "$tool" fps -i "$tmp/a.ply" -m 5 -o "$tmp/k/done.txt"
[ "$(ls -A "$tmp/k")" = done.txt ] && ok || bad "after commit: $(ls -A "$tmp/k")"

# ---- a loader's out-of-memory message, prefixed once ----
# A sparse KITTI file of 10^8 points under a 2 GB address-space limit (not
# under AddressSanitizer, which needs more than that to start).
if ! nm "$tool" 2>/dev/null | grep -q __asan_init && truncate -s 1600000000 "$tmp/big.bin" 2>/dev/null; then
    (ulimit -v 2000000 && "$tool" fps -i "$tmp/big.bin" -m 1) >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 5 ] && grep -q "big.bin: no memory for 100000000 points$" "$tmp/err" &&
        [ "$(grep -o "big.bin" "$tmp/err" | wc -l)" -eq 1 ]; then ok; else
        bad "out of memory: exit $rc: $(cat "$tmp/err")"; fi
    rm -f "$tmp/big.bin"
elif nm "$tool" 2>/dev/null | grep -q __asan_init; then
    # ASan reserves its own memory: the plain tool's run of this file checks it
    echo "elsewhere (the plain tool checks it): the loader's out-of-memory message"
else
    echo "skip: the loader's out-of-memory message: no sparse file here"
    skip=$((skip + 1))
fi

finish
