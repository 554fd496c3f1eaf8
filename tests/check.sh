#!/bin/sh
# check.sh PCBENCH - `pcbench check` judges answer files made anywhere: right
# answers pass (0), every kind of wrong answer fails (1) and says what is
# wrong, malformed answer files are bad input (3) naming file and line,
# usage errors are 2.
. "$(dirname "$0")/lib.sh"


"$tool" gen clusters -n 3000 -o "$tmp/c.ply" && "$tool" gen uniform -n 2000 -o "$tmp/q.ply" &&
    "$tool" gen uniform -n 300 -o "$tmp/a.ply" && "$tool" gen sphere -n 300 --seed 2 -o "$tmp/b.ply" ||
    bad "gen"

# ---- FPS ----
"$tool" fps -i "$tmp/c.ply" -m 50 -o "$tmp/f.txt" || bad "fps"
fps() { "$tool" check fps -i "$tmp/c.ply" -m 50 --answer "$@"; }
expect "fps right" 0 "pass" -- fps "$tmp/f.txt"
expect "fps summary" 0 "50 samples of 3000 points" -- fps "$tmp/f.txt"
awk 'NR==7{next} {print} END{print 5}' "$tmp/f.txt" >"$tmp/f1.txt"
expect "fps skipped step" 1 "FAIL: cloud 0 step 6" -- fps "$tmp/f1.txt"
awk 'NR==1{print 1; next} {print}' "$tmp/f.txt" >"$tmp/f2.txt"
expect "fps wrong start" 1 "first index" -- fps "$tmp/f2.txt"
awk 'NR==9{print 3000; next} {print}' "$tmp/f.txt" >"$tmp/f3.txt"
expect "fps index out of range" 1 "out of range" -- fps "$tmp/f3.txt"
head -n 20 "$tmp/f.txt" >"$tmp/f4.txt"
expect "fps truncated" 3 "f4.txt:20: 20 answers, expected 50" -- fps "$tmp/f4.txt"
awk 'NR==4{print "seven"; next} {print}' "$tmp/f.txt" >"$tmp/f5.txt"
expect "fps not a number" 3 "f5.txt:4: 'seven' is not an index" -- fps "$tmp/f5.txt"
awk '{print $1, 0.5}' "$tmp/f.txt" >"$tmp/f6.txt"
expect "fps with two fields" 3 "one index a line" -- fps "$tmp/f6.txt"
{ echo "sample"; cat "$tmp/f.txt"; } >"$tmp/f7.csv"
expect "fps with a header" 0 "pass" -- fps "$tmp/f7.csv"
expect "fps from stdin" 0 "pass" -- sh -c "'$tool' check fps -i '$tmp/c.ply' -m 50 --answer - <'$tmp/f.txt'"
expect "fps missing answer file" 3 "missing.txt" -- fps "$tmp/missing.txt"
expect "fps without --answer" 2 "needs --answer" -- "$tool" check fps -i "$tmp/c.ply" -m 50
expect "check of an unknown problem" 2 "unknown problem" -- "$tool" check ballquery --answer "$tmp/f.txt"
expect "check without a problem" 2 "" -- "$tool" check
expect "fps m > n" 3 "" -- "$tool" check fps -i "$tmp/c.ply" -m 5000 --answer "$tmp/f.txt"

# ---- NN ----
"$tool" nn -r "$tmp/c.ply" -q "$tmp/q.ply" -o "$tmp/n.txt" || bad "nn"
nn() { "$tool" check nn -r "$tmp/c.ply" -q "$tmp/q.ply" --answer "$@"; }
expect "nn right, with distances" 0 "recall 1," -- nn "$tmp/n.txt"
awk '{print $1}' "$tmp/n.txt" >"$tmp/n1.txt"
expect "nn right, indexes only" 0 "pass" -- nn "$tmp/n1.txt"
{ echo ",index,dist2"; awk '{print NR-1 "," $1 "," $2}' "$tmp/n.txt"; } >"$tmp/n2.csv"
expect "nn from pandas CSV" 0 "pass" -- nn "$tmp/n2.csv"
awk '{print ($1 + 1) % 3000}' "$tmp/n.txt" >"$tmp/n3.txt"
expect "nn wrong neighbours" 1 "not nearest" -- nn "$tmp/n3.txt"
awk 'NR==3{print $1, $2 * 2 + 1; next} {print}' "$tmp/n.txt" >"$tmp/n4.txt"
expect "nn wrong squared distance" 1 "FAIL: query 2" -- nn "$tmp/n4.txt"
awk 'NR==3{print $1; next} {print}' "$tmp/n.txt" >"$tmp/n5.txt"
expect "nn ragged file" 3 "n5.txt:3: 1 fields where the lines before have 2" -- nn "$tmp/n5.txt"

# ---- EMD ----
"$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" --impl exact -o "$tmp/e.txt" >/dev/null || bad "emd"
emd() { "$tool" check emd -a "$tmp/a.ply" -b "$tmp/b.ply" --answer "$@"; }
expect "emd optimal" 0 "gap 0 (allowed 1e-06)" -- emd "$tmp/e.txt"
awk 'NR==1{a=$1; next} NR==2{print $1; print a; next} {print}' "$tmp/e.txt" >"$tmp/e1.txt"
expect "emd suboptimal" 1 "gap above" -- emd "$tmp/e1.txt"
expect "emd suboptimal within --max-gap" 0 "(allowed 0.5)" -- emd "$tmp/e1.txt" --max-gap 0.5
awk 'NR==2{print 0; next} {print}' "$tmp/e.txt" | awk 'NR==1{print 0; next} {print}' >"$tmp/e2.txt"
expect "emd two points to one (not a bijection)" 1 "bijection no" -- emd "$tmp/e2.txt"
awk 'NR==5{print -1; next} {print}' "$tmp/e.txt" >"$tmp/e3.txt"
expect "emd a point left unmatched" 1 "FAIL" -- emd "$tmp/e3.txt"
head -n 299 "$tmp/e.txt" >"$tmp/e4.txt"
expect "emd truncated" 3 "299 answers, expected 300" -- emd "$tmp/e4.txt"
expect "emd negative --max-gap" 2 "--max-gap" -- emd "$tmp/e.txt" --max-gap -1

finish
