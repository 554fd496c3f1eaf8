#!/bin/sh
# check.sh PCBENCH - `pcbench check` judges answer files made anywhere: right
# answers pass (0), every kind of wrong answer fails (1) and says what is
# wrong, malformed answer files are bad input (3) naming file and line,
# usage errors are 2.
tool=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect STATUS TEXT-IN-OUTPUT DESCRIPTION -- command...
expect() {
    want=$1 text=$2 what=$3; shift 4
    "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ $rc -eq "$want" ] && grep -qF -- "$text" "$tmp/out"; then ok; else
        no "$what: exit $rc (want $want), output: $(head -c 300 "$tmp/out")"; fi
}

"$tool" gen clusters -n 3000 -o "$tmp/c.ply" && "$tool" gen uniform -n 2000 -o "$tmp/q.ply" &&
    "$tool" gen uniform -n 300 -o "$tmp/a.ply" && "$tool" gen sphere -n 300 --seed 2 -o "$tmp/b.ply" ||
    no "gen"

# ---- FPS ----
"$tool" fps -i "$tmp/c.ply" -m 50 -o "$tmp/f.txt" || no "fps"
fps() { "$tool" check fps -i "$tmp/c.ply" -m 50 --answer "$@"; }
expect 0 "pass" "fps right" -- fps "$tmp/f.txt"
expect 0 "50 samples of 3000 points" "fps summary" -- fps "$tmp/f.txt"
awk 'NR==7{next} {print} END{print 5}' "$tmp/f.txt" >"$tmp/f1.txt"
expect 1 "FAIL: cloud 0 step 6" "fps skipped step" -- fps "$tmp/f1.txt"
awk 'NR==1{print 1; next} {print}' "$tmp/f.txt" >"$tmp/f2.txt"
expect 1 "first index" "fps wrong start" -- fps "$tmp/f2.txt"
awk 'NR==9{print 3000; next} {print}' "$tmp/f.txt" >"$tmp/f3.txt"
expect 1 "out of range" "fps index out of range" -- fps "$tmp/f3.txt"
head -n 20 "$tmp/f.txt" >"$tmp/f4.txt"
expect 3 "f4.txt:20: 20 answers, expected 50" "fps truncated" -- fps "$tmp/f4.txt"
awk 'NR==4{print "seven"; next} {print}' "$tmp/f.txt" >"$tmp/f5.txt"
expect 3 "f5.txt:4: 'seven' is not an index" "fps not a number" -- fps "$tmp/f5.txt"
awk '{print $1, 0.5}' "$tmp/f.txt" >"$tmp/f6.txt"
expect 3 "one index a line" "fps with two fields" -- fps "$tmp/f6.txt"
{ echo "sample"; cat "$tmp/f.txt"; } >"$tmp/f7.csv"
expect 0 "pass" "fps with a header" -- fps "$tmp/f7.csv"
expect 0 "pass" "fps from stdin" -- sh -c "'$tool' check fps -i '$tmp/c.ply' -m 50 --answer - <'$tmp/f.txt'"
expect 3 "missing.txt" "fps missing answer file" -- fps "$tmp/missing.txt"
expect 2 "needs --answer" "fps without --answer" -- "$tool" check fps -i "$tmp/c.ply" -m 50
expect 2 "unknown problem" "check of an unknown problem" -- "$tool" check knn --answer "$tmp/f.txt"
expect 2 "" "check without a problem" -- "$tool" check
expect 3 "" "fps m > n" -- "$tool" check fps -i "$tmp/c.ply" -m 5000 --answer "$tmp/f.txt"

# ---- NN ----
"$tool" nn -r "$tmp/c.ply" -q "$tmp/q.ply" -o "$tmp/n.txt" || no "nn"
nn() { "$tool" check nn -r "$tmp/c.ply" -q "$tmp/q.ply" --answer "$@"; }
expect 0 "recall 1," "nn right, with distances" -- nn "$tmp/n.txt"
awk '{print $1}' "$tmp/n.txt" >"$tmp/n1.txt"
expect 0 "pass" "nn right, indexes only" -- nn "$tmp/n1.txt"
{ echo ",index,dist2"; awk '{print NR-1 "," $1 "," $2}' "$tmp/n.txt"; } >"$tmp/n2.csv"
expect 0 "pass" "nn from pandas CSV" -- nn "$tmp/n2.csv"
awk '{print ($1 + 1) % 3000}' "$tmp/n.txt" >"$tmp/n3.txt"
expect 1 "not nearest" "nn wrong neighbours" -- nn "$tmp/n3.txt"
awk 'NR==3{print $1, $2 * 2 + 1; next} {print}' "$tmp/n.txt" >"$tmp/n4.txt"
expect 1 "FAIL: query 2" "nn wrong squared distance" -- nn "$tmp/n4.txt"
awk 'NR==3{print $1; next} {print}' "$tmp/n.txt" >"$tmp/n5.txt"
expect 3 "n5.txt:3: 1 fields where the lines before have 2" "nn ragged file" -- nn "$tmp/n5.txt"

# ---- EMD ----
"$tool" emd -a "$tmp/a.ply" -b "$tmp/b.ply" --impl exact -o "$tmp/e.txt" >/dev/null || no "emd"
emd() { "$tool" check emd -a "$tmp/a.ply" -b "$tmp/b.ply" --answer "$@"; }
expect 0 "gap 0 (allowed 1e-06)" "emd optimal" -- emd "$tmp/e.txt"
awk 'NR==1{a=$1; next} NR==2{print $1; print a; next} {print}' "$tmp/e.txt" >"$tmp/e1.txt"
expect 1 "gap above" "emd suboptimal" -- emd "$tmp/e1.txt"
expect 0 "(allowed 0.5)" "emd suboptimal within --max-gap" -- emd "$tmp/e1.txt" --max-gap 0.5
awk 'NR==2{print 0; next} {print}' "$tmp/e.txt" | awk 'NR==1{print 0; next} {print}' >"$tmp/e2.txt"
expect 1 "bijection no" "emd two points to one (not a bijection)" -- emd "$tmp/e2.txt"
awk 'NR==5{print -1; next} {print}' "$tmp/e.txt" >"$tmp/e3.txt"
expect 1 "FAIL" "emd a point left unmatched" -- emd "$tmp/e3.txt"
head -n 299 "$tmp/e.txt" >"$tmp/e4.txt"
expect 3 "299 answers, expected 300" "emd truncated" -- emd "$tmp/e4.txt"
expect 2 "--max-gap" "emd negative --max-gap" -- emd "$tmp/e.txt" --max-gap -1

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
