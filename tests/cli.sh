#!/bin/sh
# cli.sh PCBENCH - the command-line contract: output formats, exit statuses,
# messages on stderr, --help everywhere, atomic output files.
. "$(dirname "$0")/lib.sh"

expect "no command" 2 -- "$tool"
expect "unknown command" 2 -- "$tool" frobnicate
grep -q '^pcbench: ' "$tmp/err" && ok || bad "usage message does not start with pcbench:"
expect "--help" 0 -- "$tool" --help
# (each problem's command: tests/problems.sh, from the one list)
for c in list gen verify check bench count compare; do
    expect "$c --help" 0 -- "$tool" "$c" --help
    grep -qi usage "$tmp/out" && ok || bad "$c --help prints no usage"
done

# list: <problem> <name> <device> <exact|approx> <status>
expect "list" 0 -- "$tool" list
awk '!($1 ~ /^[a-z_]+$/ && $3 ~ /^(cpu|cuda)$/ && $4 ~ /^(exact|approx|-)$/ && $5 ~ /^(available|unavailable)/) {bad=1; print "bad list line: " $0} END {exit bad}' "$tmp/out" && ok || bad "list format"
cp "$tmp/out" "$tmp/list"
# Where no NVIDIA driver is installed at all, the CUDA entries say so (not the
# runtime's "driver version is insufficient", which means an old driver).
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && grep -q "no CUDA device" "$tmp/list"; then
    grep -q "cuda_pruned .*unavailable: no CUDA device: no NVIDIA driver found" "$tmp/list" &&
        ! grep -q "driver version is insufficient" "$tmp/list" && ok ||
        bad "no driver: $(grep cuda_pruned "$tmp/list")"
fi

expect "gen uniform" 0 -- "$tool" gen uniform -n 300 --seed 5 -o "$tmp/a.ply"
expect "gen sphere" 0 -- "$tool" gen sphere -n 300 --seed 6 -o "$tmp/b.ply"
expect "gen without -o" 2 -- "$tool" gen uniform -n 10
expect "gen bad -n" 2 -- "$tool" gen uniform -n ten -o "$tmp/x.ply"
expect "gen of an unknown kind: a usage error naming the kinds" 2 "offset, lattice" -- "$tool" gen foo -n 5 -o "$tmp/x.ply"
expect "gen uniform -n 0: a usage error (0 is lidar's sweep)" 2 "uniform needs 1..2147483647" -- "$tool" gen uniform -n 0 -o "$tmp/x.ply"

expect "fps" 0 -- "$tool" fps -i "$tmp/a.ply" -m 12 --start 4
[ "$(wc -l <"$tmp/out")" = 12 ] && [ "$(head -n 1 "$tmp/out")" = 4 ] && ok || bad "fps output: 12 lines starting with the start index"
grep -qv '^[0-9][0-9]*$' "$tmp/out" && bad "fps output has a non-index line" || ok
expect "fps -o" 0 -- "$tool" fps -i "$tmp/a.ply" -m 12 -o "$tmp/fps.txt"
[ "$(wc -l <"$tmp/fps.txt")" = 12 ] && [ ! -s "$tmp/out" ] && ok || bad "fps -o writes the file, not stdout"
ls "$tmp" | grep -q '\.tmp\.' && bad "a temporary file was left behind" || ok
expect "fps m > n" 3 -- "$tool" fps -i "$tmp/a.ply" -m 301
# one rule for numbers: outside what the option allows whatever the input, 2;
# beyond this input, 3
expect "fps -m 0" 2 "pcbench: fps: -m: 0 is out of range" -- "$tool" fps -i "$tmp/a.ply" -m 0
expect "fps --start -1" 2 "pcbench: fps: --start" -- "$tool" fps -i "$tmp/a.ply" -m 3 --start -1
expect "emd --max-gap 2" 2 "pcbench: emd: --max-gap" -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" --max-gap 2
expect "fps --threads 100000" 2 -- "$tool" fps -i "$tmp/a.ply" -m 3 --threads 100000
expect "fps start out of range" 3 -- "$tool" fps -i "$tmp/a.ply" -m 3 --start 300
expect "fps missing file" 3 -- "$tool" fps -i "$tmp/missing.ply" -m 3
grep -q "missing.ply" "$tmp/err" && ok || bad "error does not name the missing file"
expect "fps without -m" 2 -- "$tool" fps -i "$tmp/a.ply"
expect "fps unknown impl" 2 -- "$tool" fps -i "$tmp/a.ply" -m 3 --impl nosuch

"$tool" gen sphere -n 299 --seed 7 -o "$tmp/c.ply" >/dev/null 2>&1
# every implementation listed: runs when available, says so (exit 4) when not
while read -r problem name device kind status rest; do
    case $problem in
    fps) set -- fps -i "$tmp/a.ply" -m 8 ;;
    nn) set -- nn -r "$tmp/a.ply" -q "$tmp/b.ply" ;;
    emd) set -- emd -a "$tmp/a.ply" -b "$tmp/b.ply" ;;
    chamfer) set -- chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" ;;
    knn) set -- knn -r "$tmp/a.ply" -q "$tmp/b.ply" -k 5 ;;
    ball) set -- ball -r "$tmp/a.ply" -q "$tmp/b.ply" --radius 0.3 -k 5 ;;
    grid) set -- grid -i "$tmp/a.ply" --size 0.1 ;;
    serialize) set -- serialize -i "$tmp/a.ply" --size 0.1 --curve hilbert ;;
    *) bad "no command line here for problem $problem (tests/cli.sh)"; continue ;;
    esac
    case $status in
    available) expect "$problem $name" 0 -- "$tool" "$@" --impl "$name" ;;
    *) expect "$problem $name unavailable" 4 -- "$tool" "$@" --impl "$name"
       grep -q "unavailable" "$tmp/err" && ok || bad "$problem $name: no 'unavailable' message" ;;
    esac
done <"$tmp/list"

# grid: a line a voxel, sorted, the counts summing to the points; the inverse
# map a line a point; pcbench check grid judges both, and a wrong one
expect "grid" 0 -- "$tool" grid -i "$tmp/a.ply" --size 0.2 -o "$tmp/grid.txt" --inverse "$tmp/inv.txt"
awk 'NF != 5 {exit 1} {n += $4} END {exit n != 300}' "$tmp/grid.txt" && ok || bad "grid output: 5 fields, counts sum to 300"
sort -n -k1,1 -k2,2 -k3,3 -c "$tmp/grid.txt" 2>/dev/null && ok || bad "grid lines not sorted by ix, iy, iz"
[ "$(wc -l <"$tmp/inv.txt")" = 300 ] && ok || bad "grid --inverse: a line a point"
expect "check grid" 0 "pass" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --answer "$tmp/grid.txt"
expect "check grid with its inverse" 0 "inverse read" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --answer "$tmp/grid.txt" --inverse "$tmp/inv.txt"
expect "check grid, another size" 1 "FAIL" -- "$tool" check grid -i "$tmp/a.ply" --size 0.25 --answer "$tmp/grid.txt"
expect "check grid, nearest asked" 1 "FAIL" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --select nearest --answer "$tmp/grid.txt"
expect "grid nearest, sizes an axis, an origin" 0 -- "$tool" grid -i "$tmp/a.ply" --size 0.2,0.1,0.3 --origin -1,-1,-1 --select nearest -o "$tmp/gn.txt"
expect "check grid nearest" 0 "pass" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2,0.1,0.3 --origin -1,-1,-1 --select nearest --answer "$tmp/gn.txt"
expect "grid without --size" 2 "grid needs -i CLOUD and --size S" -- "$tool" grid -i "$tmp/a.ply"
expect "grid --size 0" 2 "--size takes S or SX,SY,SZ" -- "$tool" grid -i "$tmp/a.ply" --size 0
expect "grid --size 1,2" 2 "--size takes S or SX,SY,SZ" -- "$tool" grid -i "$tmp/a.ply" --size 1,2
expect "grid --origin x" 2 "--origin takes X,Y,Z" -- "$tool" grid -i "$tmp/a.ply" --size 1 --origin x
expect "grid span" 4 "spans" -- "$tool" grid -i "$tmp/a.ply" --size 1e-9
expect "grid --inverse onto its input" 3 "would destroy it" -- "$tool" grid -i "$tmp/a.ply" --size 1 --inverse "$tmp/a.ply"
expect "grid random" 0 -- "$tool" grid -i "$tmp/a.ply" --size 0.2 --select random --seed 3 -o "$tmp/gr.txt"
expect "check grid random" 0 "pass" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --select random --seed 3 --answer "$tmp/gr.txt"
expect "check grid random, another seed" 1 "FAIL" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --select random --seed 4 --answer "$tmp/gr.txt"
expect "ball --select random" 2 "unknown ball selection 'random'" -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" --radius 0.3 -k 5 --select random
# mean: first's rows with each voxel's mean point after them, judged; a mean
# moved, a line without its three numbers and first's file are refused; far
# from the origin (a shift) the means come back in the file's frame
expect "grid mean" 0 -- "$tool" grid -i "$tmp/a.ply" --size 0.2 --select mean -o "$tmp/gm.txt"
awk 'NF != 8 {exit 1}' "$tmp/gm.txt" && ok || bad "grid mean: 8 fields a line"
cut -d' ' -f1-5 "$tmp/gm.txt" | cmp -s - "$tmp/grid.txt" && ok || bad "grid mean: first's rows"
expect "check grid mean" 0 "pass" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --select mean --answer "$tmp/gm.txt"
awk 'NR == 1 {$6 = $6 + 0.01} {print}' "$tmp/gm.txt" >"$tmp/gm-moved.txt"
expect "check grid mean, a mean moved" 1 "mean (" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --select mean --answer "$tmp/gm-moved.txt"
expect "check grid mean, first's lines" 3 "need 5 integers and 3 numbers" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --select mean --answer "$tmp/grid.txt"
awk 'BEGIN {srand(5); for (i = 0; i < 400; i++) printf "%.3f %.3f %.3f\n", 4000000 + 50 * rand(), 5000000 + 50 * rand(), 5 * rand()}' >"$tmp/utm.xyz"
expect "grid mean, far from the origin" 0 -- "$tool" grid -i "$tmp/utm.xyz" --size 2 --select mean -o "$tmp/gm-utm.txt"
awk '$6 < 4000000 || $7 < 5000000 {exit 1}' "$tmp/gm-utm.txt" && ok || bad "grid mean: not in the file's frame"
expect "check grid mean, far from the origin" 0 "pass" -- "$tool" check grid -i "$tmp/utm.xyz" --size 2 --select mean --answer "$tmp/gm-utm.txt"
# an origin given far from 0: check shifts it as grid and serialize do (the cloud is shifted
# on load)
expect "grid, far from 0, an origin given" 0 -- "$tool" grid -i "$tmp/utm.xyz" --size 2 --origin 3999990,4999990,-1 -o "$tmp/go-utm.txt"
expect "check grid, far from 0, an origin given" 0 "pass" -- "$tool" check grid -i "$tmp/utm.xyz" --size 2 --origin 3999990,4999990,-1 --answer "$tmp/go-utm.txt"
expect "serialize, far from 0, an origin given" 0 -- "$tool" serialize -i "$tmp/utm.xyz" --size 2 --curve hilbert --origin 3999990,4999990,-1 -o "$tmp/so-utm.txt"
expect "check serialize, far from 0, an origin given" 0 "pass" -- "$tool" check serialize -i "$tmp/utm.xyz" --size 2 --curve hilbert --origin 3999990,4999990,-1 --answer "$tmp/so-utm.txt"
printf '0 0 0 1 x\n' >"$tmp/badgrid.txt"
expect "check grid, a malformed line" 3 "badgrid.txt:1" -- "$tool" check grid -i "$tmp/a.ply" --size 0.2 --answer "$tmp/badgrid.txt"

# serialize: a line a point, codes ascending, every point once; pcbench
# check serialize judges it, and another curve, depth or a line moved fails
expect "serialize" 0 -- "$tool" serialize -i "$tmp/a.ply" --size 0.05 --curve hilbert -o "$tmp/ser.txt"
awk 'NF != 2 || $2 < last {exit 1} {last = $2} !seen[$1]++ {d++} END {exit d != 300}' "$tmp/ser.txt" && ok || bad "serialize output: 2 fields, codes ascending, 300 points"
expect "check serialize" 0 "pass" -- "$tool" check serialize -i "$tmp/a.ply" --size 0.05 --curve hilbert --answer "$tmp/ser.txt"
expect "check serialize, morton asked" 1 "FAIL" -- "$tool" check serialize -i "$tmp/a.ply" --size 0.05 --curve morton --answer "$tmp/ser.txt"
expect "check serialize, another depth" 1 "FAIL" -- "$tool" check serialize -i "$tmp/a.ply" --size 0.05 --curve hilbert --depth 9 --answer "$tmp/ser.txt"
{ sed -n 2p "$tmp/ser.txt"; sed -n 1p "$tmp/ser.txt"; sed -n '3,$p' "$tmp/ser.txt"; } >"$tmp/ser2.txt"
expect "check serialize, two lines swapped" 1 "FAIL" -- "$tool" check serialize -i "$tmp/a.ply" --size 0.05 --curve hilbert --answer "$tmp/ser2.txt"
expect "serialize morton at a depth, an origin" 0 -- "$tool" serialize -i "$tmp/a.ply" --size 0.1 --curve morton --depth 10 --origin -2,-2,-2 -o "$tmp/sm.txt"
expect "check serialize morton" 0 "pass" -- "$tool" check serialize -i "$tmp/a.ply" --size 0.1 --curve morton --depth 10 --origin -2,-2,-2 --answer "$tmp/sm.txt"
expect "serialize without --curve" 2 "serialize needs -i CLOUD, --size S and --curve" -- "$tool" serialize -i "$tmp/a.ply" --size 0.1
expect "serialize --curve peano" 2 "unknown curve 'peano'" -- "$tool" serialize -i "$tmp/a.ply" --size 0.1 --curve peano
expect "serialize --depth 22" 2 "--depth" -- "$tool" serialize -i "$tmp/a.ply" --size 0.1 --curve morton --depth 22
expect "serialize, a depth too small" 3 "bits an axis" -- "$tool" serialize -i "$tmp/a.ply" --size 0.001 --curve morton --depth 3
expect "serialize, an origin above the points" 3 "below the origin" -- "$tool" serialize -i "$tmp/a.ply" --size 0.1 --curve morton --origin 5,5,5
head -n 100 "$tmp/ser.txt" >"$tmp/ser3.txt"
expect "check serialize, lines missing" 3 "100 lines" -- "$tool" check serialize -i "$tmp/a.ply" --size 0.05 --curve hilbert --answer "$tmp/ser3.txt"
printf '0 12 7\n' >"$tmp/badser.txt"
expect "check serialize, a malformed line" 3 "badser.txt:1" -- "$tool" check serialize -i "$tmp/a.ply" --size 0.05 --curve hilbert --answer "$tmp/badser.txt"

expect "nn self" 0 -- "$tool" nn -r "$tmp/a.ply" -q "$tmp/a.ply"
[ "$(wc -l <"$tmp/out")" = 300 ] && awk '$2 != 0 {exit 1}' "$tmp/out" && ok || bad "nn of a cloud with itself: 300 zero distances"
expect "nn" 0 -- "$tool" nn -r "$tmp/a.ply" -q "$tmp/b.ply" -o "$tmp/nn.txt"
awk 'NF != 2 || $1 < 0 || $1 >= 300 || $2 < 0 {exit 1}' "$tmp/nn.txt" && ok || bad "nn output format"
expect "nn without -q" 2 -- "$tool" nn -r "$tmp/a.ply"

# knn: a line a query of index and squared-distance pairs, nearest first;
# check knn judges it, catches a point twice, and a row short of k (k > n)
# needs no padding written
expect "knn self" 0 -- "$tool" knn -r "$tmp/a.ply" -q "$tmp/a.ply" -k 4
[ "$(wc -l <"$tmp/out")" = 300 ] && awk 'NF != 8 || $1 != NR - 1 || $2 != 0 || $4 < $2 || $8 < $6 {exit 1}' "$tmp/out" && ok || bad "knn self: 300 rows of 4 pairs, each point its own nearest"
expect "knn -o" 0 -- "$tool" knn -r "$tmp/a.ply" -q "$tmp/b.ply" -k 6 -o "$tmp/knn.txt"
expect "check knn" 0 "pass" -- "$tool" check knn -r "$tmp/a.ply" -q "$tmp/b.ply" -k 6 --answer "$tmp/knn.txt"
awk '{print $1, $3, $5, $7, $9, $11}' "$tmp/knn.txt" >"$tmp/knn-idx.txt"
expect "check knn indices" 0 "pass" -- "$tool" check knn -r "$tmp/a.ply" -q "$tmp/b.ply" -k 6 --answer "$tmp/knn-idx.txt"
awk 'NR == 7 {$3 = $1; $4 = $2} {print}' "$tmp/knn.txt" >"$tmp/knn-bad.txt"
expect "check knn twice" 1 "twice" -- "$tool" check knn -r "$tmp/a.ply" -q "$tmp/b.ply" -k 6 --answer "$tmp/knn-bad.txt"
head -n 5 "$tmp/knn.txt" >"$tmp/knn-short.txt"
expect "check knn truncated" 3 "truncated" -- "$tool" check knn -r "$tmp/a.ply" -q "$tmp/b.ply" -k 6 --answer "$tmp/knn-short.txt"
"$tool" gen uniform -n 3 --seed 9 -o "$tmp/three.ply" >/dev/null 2>&1
expect "knn k > n" 0 -- "$tool" knn -r "$tmp/three.ply" -q "$tmp/b.ply" -k 5 -o "$tmp/knn3.txt"
awk 'NF != 6 {exit 1}' "$tmp/knn3.txt" && ok || bad "knn k > n: the 3 neighbours a line"
expect "check knn k > n" 0 "pass" -- "$tool" check knn -r "$tmp/three.ply" -q "$tmp/b.ply" -k 5 --answer "$tmp/knn3.txt"
# k = 2 min(k, n): 3 points, k 6: a row of 6 fields is 3 pairs, or 6 indices
# ending in the padding's -1 (pcbench.knn's layout); both read right
awk '{print $1, $3, $5, -1, -1, -1}' "$tmp/knn3.txt" >"$tmp/knn3-padded.txt"
expect "check knn padded indices at k = 2n" 0 "pass" -- "$tool" check knn -r "$tmp/three.ply" \
    -q "$tmp/b.ply" -k 6 --answer "$tmp/knn3-padded.txt"
expect "check knn pairs at k = 2n" 0 "pass" -- "$tool" check knn -r "$tmp/three.ply" \
    -q "$tmp/b.ply" -k 6 --answer "$tmp/knn3.txt"
# k past the reference's points and PCB_PAD_K: bad input, refused before anything is allocated
expect "knn -k 2147483647 on 3 points" 3 "1..1024" -- "$tool" knn -r "$tmp/three.ply" \
    -q "$tmp/b.ply" -k 2147483647
expect "knn without -k" 2 -- "$tool" knn -r "$tmp/a.ply" -q "$tmp/b.ply"
expect "knn -k 0" 2 -- "$tool" knn -r "$tmp/a.ply" -q "$tmp/b.ply" -k 0
expect "check knn without -k" 2 -- "$tool" check knn -r "$tmp/a.ply" -q "$tmp/b.ply" --answer "$tmp/knn.txt"

# ball: a line a centre of at most k indices (first: increasing; nearest: the
# centre itself first), an empty ball an empty line; check ball judges both,
# reads --pad first, catches first-K sold as nearest and a point twice
expect "ball first" 0 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/a.ply" --radius 0.25 -k 8 -o "$tmp/ball.txt"
[ "$(wc -l <"$tmp/ball.txt")" = 300 ] && awk '{for (i = 2; i <= NF; i++) if ($i <= $(i - 1)) exit 1} NF > 8 || NF < 1 {exit 1}' "$tmp/ball.txt" && ok || bad "ball first: 300 lines of 1-8 increasing indices"
expect "check ball first" 0 "pass" -- "$tool" check ball -r "$tmp/a.ply" -q "$tmp/a.ply" --radius 0.25 -k 8 --answer "$tmp/ball.txt"
expect "check ball first as nearest" 1 "FAIL" -- "$tool" check ball -r "$tmp/a.ply" -q "$tmp/a.ply" --radius 0.25 -k 8 --select nearest --answer "$tmp/ball.txt"
expect "ball nearest" 0 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/a.ply" --radius 0.25 -k 8 --select nearest -o "$tmp/balln.txt"
awk '$1 != NR - 1 {exit 1}' "$tmp/balln.txt" && ok || bad "ball nearest: each centre its own nearest"
expect "check ball nearest" 0 "pass" -- "$tool" check ball -r "$tmp/a.ply" -q "$tmp/a.ply" --radius 0.25 -k 8 --select nearest --answer "$tmp/balln.txt"
awk 'NR == 9 && NF > 1 {$2 = $1} {print}' "$tmp/balln.txt" >"$tmp/ball-bad.txt"
expect "check ball twice" 1 "FAIL" -- "$tool" check ball -r "$tmp/a.ply" -q "$tmp/a.ply" --radius 0.25 -k 8 --select nearest --answer "$tmp/ball-bad.txt"
expect "ball --pad first" 0 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" --radius 0.1 -k 6 --pad first -o "$tmp/ballp.txt"
awk 'NF != 0 && NF != 6 {exit 1}' "$tmp/ballp.txt" && grep -q '^$' "$tmp/ballp.txt" && ok || bad "ball --pad first: 6 entries a line, an empty ball empty"
expect "check ball --pad first" 0 "pass" -- "$tool" check ball -r "$tmp/a.ply" -q "$tmp/b.ply" --radius 0.1 -k 6 --pad first --answer "$tmp/ballp.txt"
expect "ball without --radius" 2 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" -k 4
expect "ball --radius 0" 2 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" -k 4 --radius 0
expect "ball --radius -1: said as a radius, not a double's range" 2 "need a number > 0" -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" -k 4 --radius -1
expect "ball --select random" 2 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" -k 4 --radius 0.1 --select random
# a radius whose float32 square overflows is a usage error, as inf is
expect "ball --radius 1e30" 2 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" -k 4 --radius 1e30
expect "ball --radius 1e20" 2 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" -k 4 --radius 1e20
expect "ball --radius inf" 2 -- "$tool" ball -r "$tmp/a.ply" -q "$tmp/b.ply" -k 4 --radius inf

expect "emd" 0 -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/a.ply" -o "$tmp/m.txt"
grep -q '^emd 0$' "$tmp/out" && ok || bad "emd of a cloud with itself is not 0: $(cat "$tmp/out")"
[ "$(sort -n "$tmp/m.txt" | uniq | wc -l)" = 300 ] && ok || bad "emd matching is not a bijection"
expect "emd different sizes" 3 -- "$tool" emd -a "$tmp/a.ply" -b "$tmp/c.ply"

# chamfer: the value line, the per-point answers with -o, conventions, and
# check chamfer judging both (a wrong value fails, a wrong index fails)
expect "chamfer self" 0 -- "$tool" chamfer -a "$tmp/a.ply" -b "$tmp/a.ply"
grep -q '^chamfer 0$' "$tmp/out" && ok || bad "chamfer of a cloud with itself is not 0: $(cat "$tmp/out")"
expect "chamfer -o" 0 -- "$tool" chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" -o "$tmp/ch.txt"
value=$(sed -n 's/^chamfer //p' "$tmp/out")
[ "$(wc -l <"$tmp/ch.txt")" = 599 ] && [ "$(wc -l <"$tmp/out")" = 1 ] && ok || bad "chamfer -o: 300 + 299 lines in the file, the value alone on stdout"
expect "check chamfer value" 0 "pass" -- "$tool" check chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --value "$value"
expect "check chamfer answer" 0 "pass" -- "$tool" check chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --answer "$tmp/ch.txt"
expect "check chamfer wrong value" 1 "FAIL: value" -- "$tool" check chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --value 1e-3
awk 'NR == 310 {$1 = ($1 + 1) % 300} {print}' "$tmp/ch.txt" >"$tmp/ch-bad.txt"
expect "check chamfer wrong index" 1 "B to A" -- "$tool" check chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --answer "$tmp/ch-bad.txt"
expect "chamfer convention" 0 "chamfer " -- "$tool" chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --convention euclidean-mean-average
l1=$(sed -n 's/^chamfer //p' "$tmp/out")
expect "check chamfer convention" 0 "euclidean-mean-average" -- "$tool" check chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --value "$l1" --convention euclidean-mean-average
expect "check chamfer other convention" 1 -- "$tool" check chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --value "$l1"
expect "chamfer bad convention" 2 "DISTANCE-POINTS-DIRECTIONS" -- "$tool" chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --convention l2
expect "chamfer without -b" 2 -- "$tool" chamfer -a "$tmp/a.ply"
expect "check chamfer right answer, wrong value" 1 "FAIL: value" -- "$tool" check chamfer \
    -a "$tmp/a.ply" -b "$tmp/c.ply" --answer "$tmp/ch.txt" --value 1e-3
if grep -q "^pass" "$out"; then bad "pass printed for a wrong value"; else ok; fi
expect "check chamfer --convention without --value" 2 "give the value too" -- "$tool" check \
    chamfer -a "$tmp/a.ply" -b "$tmp/c.ply" --answer "$tmp/ch.txt" --convention euclidean-mean-average
expect "check chamfer without answer" 2 -- "$tool" check chamfer -a "$tmp/a.ply" -b "$tmp/c.ply"
expect "verify unknown problem" 2 -- "$tool" verify --problem ballquery
expect "verify ball" 0 -- "$tool" verify --problem ball # the quickest matrix
says "verify ends with its counts" "^verify: 0 failures; [1-9][0-9]* passed, [0-9]* skipped$"
# an implementation unavailable here is said once, not in every case's row
if [ "$(grep -c "^.* cuda_grid  *cuda  skip " "$out")" -le 1 ]; then ok
else bad "cuda_grid's skip repeated: $(grep -c "cuda_grid .* skip" "$out") rows"; fi
if "$tool" list | grep -q "^ball cuda_grid cuda exact unavailable"; then # built, no device
    says "the unavailable ones named at the end" "^verify: not run here (unavailable, each said once above): ball/cuda_grid"
fi

# verify by shard: the problems dealt in turn (the 8th of 8: serialization alone), a shard
# with none ends well, --defects runs whole
expect "verify --shard 8/8" 0 "shard 8/8 (--shard 8/8): 1 problem" -- "$tool" verify --shard 8/8
says "the shard's problem" "serialize"
expect "verify, an empty shard" 0 "0 problems" -- "$tool" verify --problem fps --shard 2/2
expect "verify --defects by shard" 2 "no shard" -- "$tool" verify --defects --shard 1/2

finish
