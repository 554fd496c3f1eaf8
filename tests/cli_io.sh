#!/bin/sh
# cli_io.sh PCBENCH - the command line on bad and good input files: every
# corpus file makes `pcbench fps` exit with status 3 (bad input) and name the
# file on stderr; a generated lidar sweep round-trips through a PLY file.
. "$(dirname "$0")/lib.sh"

for f in tests/corpus/*; do
    case $f in */EXPECTED.tsv | */make_corpus.py) continue ;; esac
    "$tool" fps -i "$f" -m 1 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 3 ] && grep -qF "$f" "$tmp/err" && grep -q "^pcbench: fps: " "$tmp/err"; then ok; else
        bad "$f: exit $rc, stderr: $(cat "$tmp/err")"; fi
done

for f in tests/data/*; do
    if "$tool" fps -i "$f" -m 3 >"$tmp/out" 2>"$tmp/err" && [ "$(wc -l <"$tmp/out")" -eq 3 ]; then
        ok
    else
        bad "$f: $(cat "$tmp/err")"
    fi
done

if "$tool" gen lidar -n 120000 -o "$tmp/s.ply" && "$tool" fps -i "$tmp/s.ply" -m 16 >"$tmp/out" &&
    [ "$(wc -l <"$tmp/out")" -eq 16 ]; then ok; else bad "gen lidar + fps"; fi

# The natural sweep, and determinism through the file: same seed, same bytes.
if "$tool" gen lidar -n 0 --seed 4 -o "$tmp/a.ply" && "$tool" gen lidar -n 0 --seed 4 -o "$tmp/b.ply" &&
    cmp -s "$tmp/a.ply" "$tmp/b.ply"; then ok; else bad "gen lidar -n 0 is not reproducible"; fi

# A missing input file is bad input (status 3), and the message names it.
"$tool" fps -i "$tmp/missing.ply" -m 1 2>"$tmp/err"
rc=$?
if [ $rc -eq 3 ] && grep -qF "missing.ply" "$tmp/err" && grep -q "^pcbench: fps: " "$tmp/err"; then ok; else
    bad "missing file: exit $rc: $(cat "$tmp/err")"; fi

# Geo-referenced coordinates (UTM-like, 5,000 km out): shifted by default and
# said on stderr; --no-shift and --shift X,Y,Z; malformed shifts are usage errors.
awk 'BEGIN{for(i=0;i<60;i++)for(j=0;j<50;j++) printf "%.3f %.3f %.3f\n", 4987654.321+i*0.37, 3012345.678+j*0.53, 100+((i*j)%7)*0.1}' >"$tmp/geo.xyz"
if "$tool" fps -i "$tmp/geo.xyz" -m 4 >"$tmp/out" 2>"$tmp/err" && grep -q "shift 4987654,3012345,100 subtracted" "$tmp/err" &&
    [ "$(wc -l <"$tmp/out")" -eq 4 ]; then ok; else bad "automatic shift: $(cat "$tmp/err")"; fi
if "$tool" fps -i "$tmp/geo.xyz" -m 4 --no-shift >"$tmp/out" 2>"$tmp/err" && ! grep -q shift "$tmp/err"; then ok; else bad "--no-shift"; fi
if "$tool" nn -r "$tmp/geo.xyz" -q "$tmp/geo.xyz" --shift 4987000,3012000,0 >"$tmp/out" 2>"$tmp/err" &&
    grep -q "shift 4987000,3012000,0 subtracted" "$tmp/err" && [ "$(awk '$2 != 0' "$tmp/out" | wc -l)" -eq 0 ]; then ok; else bad "--shift on nn"; fi
for bad in "1,2" "a,b,c" "1,2,3,4" "1,,3" "inf,0,0"; do
    "$tool" fps -i "$tmp/geo.xyz" -m 4 --shift "$bad" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q -- "--shift" "$tmp/err"; then ok; else bad "--shift '$bad': exit $rc"; fi
done
"$tool" fps -i "$tmp/geo.xyz" -m 4 --shift 1,2,3 --no-shift >/dev/null 2>&1
rc=$?
if [ $rc -eq 2 ]; then ok; else bad "--shift with --no-shift: exit $rc"; fi
"$tool" emd -a "$tmp/geo.xyz" -b "$tmp/geo.xyz" --impl exact >"$tmp/out" 2>"$tmp/err"
if grep -q "^emd 0$" "$tmp/out" && grep -q "shift" "$tmp/err"; then ok; else bad "emd with a shift: $(head -1 "$tmp/out")"; fi

finish
