#!/bin/sh
# readme.sh PCBENCH - the front door's examples run as written: every
# command of README.md's "Using it" block (and the Python block's shell
# line is left to tests/wheel.sh), in order, in an empty folder, with
# build/pcbench standing for the tool under test; `make` is what built it.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
block=$(awk '/^## Using it/ { on = 1; next } on && /^```sh/ { code = 1; next }
             code && /^```/ { exit } code { print }' "$root/README.md")
if [ -n "$block" ]; then ok; else bad "no example block under '## Using it' in README.md"; fi
mkdir -p "$tmp/work"
case $tool in /*) abs=$tool ;; *) abs=$PWD/$tool ;; esac
n=0
printf '%s\n' "$block" | while IFS= read -r line; do
    case $line in
    make*) continue ;; # what built the tool
    esac
    cmd=${line%%  #*} # the comment after two spaces
    cmd=$(printf '%s' "$cmd" | sed "s#build/pcbench#'$abs'#g")
    if (cd "$tmp/work" && eval "$cmd") >"$tmp/out" 2>&1; then echo "ok: $line"; else
        echo "FAIL: README example: $line: $(tail -c 400 "$tmp/out")"; fi
done >"$tmp/ran"
while IFS= read -r r; do
    case $r in ok:*) ok ;; *) bad "${r#FAIL: }" ;; esac
    n=$((n + 1))
done <"$tmp/ran"
if [ "$n" -ge 5 ]; then ok; else bad "only $n README examples ran"; fi
for f in s.ply samples.txt knn.txt; do
    if [ -s "$tmp/work/$f" ]; then ok; else bad "the examples made no $f"; fi
done
finish
