#!/bin/sh
# problems.sh PCBENCH - the one list of problems (PCB_PROBLEM_MAP in
# impl/pcbench.h) reaches every place that names problems: each has a face
# in the library and in the tool, is a command with --help and a line in
# pcbench --help, and every help text and usage message that takes a problem
# names them all.
. "$(dirname "$0")/lib.sh"

map=$(dirname "$0")/../impl/pcbench.h
problems=$(sed -n '/^#define PCB_PROBLEM_MAP/,/^$/p' "$map" | sed -n 's/^ *X([A-Z_]*, *\([a-z_]*\),.*/\1/p')
[ "$(echo "$problems" | wc -w)" -ge 6 ] && ok || bad "no problems read from $map: '$problems'"

# the library's common files ask each problem's face (impl/<p>/<p>_problem.c)
# and name no problem
ids=$(sed -n '/^#define PCB_PROBLEM_MAP/,/^$/p' "$map" | sed -n 's/^ *X(\([A-Z_]*\),.*/\1/p' | paste -sd'|' -)
lib=$(dirname "$0")/../impl
named=$(grep -nE "PCB_($ids)\b" "$lib/task.c" "$lib/judge.c" "$lib/ragged.c" "$lib/run.c" "$lib/each.c")
[ -n "$ids" ] && [ -z "$named" ] && ok || bad "a common file names a problem: $named"
for p in $problems; do
    [ -f "$lib/$p/${p}_problem.c" ] && ok || bad "$p has no face: $lib/$p/${p}_problem.c"
done
# the tool's: the harness, the check command and the defect catalog ask
# each problem's face (bench/problems/<p>.c)
bench=$(dirname "$0")/../bench
named=$(cd "$bench" && grep -nE "PCB_($ids)\b" harness/bench_suites.c harness/bench_run.c \
    harness/bench_predict.c harness/bench_store.c harness/bench_count.c cli/check.c cli/verify.c \
    verify/defects.c verify/verify_common.c problems/problems.c)
[ -z "$named" ] && ok || bad "a common file of the tool names a problem: $named"
for p in $problems; do
    [ -f "$bench/problems/$p.c" ] && ok || bad "$p has no face in the tool: $bench/problems/$p.c"
done

# the library reads no environment (its tuning and the judge's limits are
# pcb_options fields; the tool and the Python package read the variables)
lib=$(dirname "$0")/../impl
reads=$(grep -rn "getenv" "$lib" --include=*.c --include=*.cu --include=*.cuh --include=*.h --include=*.cc)
[ -z "$reads" ] && ok || bad "the library reads the environment: $reads"

# every problem named in the last expect's output
names_all() {
    for p in $problems; do
        cat "$out" "$err" | grep -qw -- "$p" || { bad "$1 does not name $p: $(cat "$out" "$err" | head -c 300)"; return; }
    done
    ok
}

expect "pcbench --help" 0 -- "$tool" --help
cp "$out" "$tmp/help"
for p in $problems; do
    grep -q "^  $p " "$tmp/help" && ok || bad "pcbench --help has no line for $p"
    expect "$p --help" 0 "usage: pcbench $p" -- "$tool" "$p" --help
done
for c in bench count verify check list; do
    expect "$c --help" 0 -- "$tool" "$c" --help
    names_all "$c --help"
done
expect "bench --problem bogus" 2 "unknown problem 'bogus'" -- "$tool" bench --problem bogus
names_all "bench's unknown problem message"
expect "count --problem bogus" 2 "unknown problem 'bogus'" -- "$tool" count --problem bogus
names_all "count's unknown problem message"
expect "verify --problem bogus" 2 "unknown problem 'bogus'" -- "$tool" verify --problem bogus
names_all "verify's unknown problem message"
expect "check bogus" 2 "unknown problem 'bogus'" -- "$tool" check bogus --answer x
names_all "check's unknown problem message"
expect "check without a problem" 2 -- "$tool" check
names_all "check's missing problem message"
expect "list" 0 -- "$tool" list
for p in $problems; do grep -q "^$p " "$out" && ok || bad "list has no $p implementation"; done
# the scripts' table (tables, plots, the peers): every problem, in the list's order
scripts=$(dirname "$0")/../scripts
if command -v python3 >/dev/null 2>&1; then
    got=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import pcbproblems as P
assert list(P.TABLE) == P.PROBLEMS, (list(P.TABLE), P.PROBLEMS)
print(" ".join(P.PROBLEMS))' "$scripts" 2>&1)
    [ "$got" = "$(echo $problems)" ] && ok || bad "scripts/pcbproblems.py's table: $got; the list's: $(echo $problems)"
else
    skip=$((skip + 1)); echo "skip: the scripts' table: no python3"
fi
# the Python binding's list (pcbench/_native.py, read alone: no numpy needed)
native=$(dirname "$0")/../impl/python/pcbench/_native.py
lib=${PCBENCH_LIBRARY:-$(dirname "$tool")/pic/libpcbench.so}
if command -v python3 >/dev/null 2>&1 && [ -f "$lib" ]; then
    got=$(PCBENCH_LIBRARY=$lib python3 -c 'import importlib.util as u, sys
s = u.spec_from_file_location("native", sys.argv[1]); m = u.module_from_spec(s); s.loader.exec_module(m)
print(" ".join(m.PROBLEMS))' "$native" 2>&1)
    [ "$got" = "$(echo $problems)" ] && ok || bad "pcbench/_native.py's PROBLEMS: $got; the list's: $(echo $problems)"
else
    skip=$((skip + 1)); echo "skip: the Python binding's list: no python3 or no $lib"
fi
# the Python package by operation: each problem's module, and an __init__
# that re-exports (its one class makes finite_check reach the operations)
pkg=$(dirname "$0")/../impl/python/pcbench
for p in $problems; do
    [ -f "$pkg/ops/$p.py" ] && ok || bad "$p has no module in the Python package: $pkg/ops/$p.py"
done
defs=$(grep -nE "^(def|class) " "$pkg/__init__.py" | grep -v "class _Module")
[ -z "$defs" ] && ok || bad "pcbench/__init__.py defines more than it re-exports: $defs"

finish
