#!/bin/sh
# fuzz.sh DIR SECONDS TARGET... - run each libFuzzer target (built by make
# fuzz into DIR) for SECONDS, all at once, from a corpus seeded with
# tests/corpus and tests/data (and what earlier runs found, kept in
# DIR/corpus), with its dictionary tests/fuzz/<name>.dict. Ends with the line
# "N passed, N failed" of scripts/run_tests.sh; a target that crashes or
# breaks a promise fails and leaves its input in DIR/crash-<target>-*.
# A found input goes into tests/corpus (tests/corpus/make_corpus.py) with the
# phrase its message must contain, once the code is fixed.
dir=$1 seconds=$2; shift 2
pass=0 fail=0

# The loader target reads its first byte as the extension's index.
ext_byte() {
    case $1 in
    *.ply) echo 0 ;; *.pcd) echo 1 ;; *.xyz) echo 2 ;; *.txt) echo 3 ;; *.csv) echo 4 ;;
    *.pts) echo 5 ;; *.bin) echo 6 ;; *.pwn) echo 7 ;; *.asc) echo 8 ;; *) echo 9 ;;
    esac
}

seed() { # target corpus-folder
    mkdir -p "$2"
    n=0
    for f in tests/corpus/* tests/data/*; do
        case $f in */EXPECTED.tsv | */make_corpus.py) continue ;; esac
        n=$((n + 1))
        case $1 in
        fuzz_load) { printf "\\$(printf %03o "$(ext_byte "$f")")"; cat "$f"; } >"$2/seed-$n" ;;
        *) { printf '\003'; cat "$f"; } >"$2/seed-$n" ;;
        esac
    done
    if [ "$1" = fuzz_results ]; then # the stored results of the regression baseline
        for f in results/baseline/quick/*.json; do cp "$f" "$2/seed-$(basename "$f")"; done
    fi
    if [ "$1" = fuzz_answer ]; then # answer files of every shape the reader takes
        printf '\003%s' "3
1
2
" >"$2/seed-answer-plain"
        printf '\003%s' "# made by hand
index,dist2
3,0.5
-1,0.25
2,1e-3
" >"$2/seed-answer-csv"
        printf '\002%s' ",index,dist2
0,7,0.5
1,8,2
" >"$2/seed-answer-pandas"
        printf '\002%s' "1.700000000000000000e+01 2.5
3.000000000000000000e+00 1
" >"$2/seed-answer-numpy"
    fi
}

pids=""
for t in "$@"; do
    name=$(basename "$t")
    corpus="$dir/corpus/$name"
    seed "$name" "$corpus"
    dict="tests/fuzz/${name#fuzz_}.dict"
    "$t" "$corpus" -dict="$dict" -max_total_time="$seconds" -timeout=10 -max_len=65536 \
        -artifact_prefix="$dir/crash-$name-" -print_final_stats=1 >"$dir/$name.log" 2>&1 &
    pids="$pids $!:$name"
done
for p in $pids; do
    pid=${p%%:*} name=${p#*:}
    if wait "$pid"; then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/$name.log" | grep -o '[0-9]*$')
        echo "ok   $name: ${runs:-?} inputs in ${seconds} s, no crash"
        pass=$((pass + 1))
    else
        tail -n 40 "$dir/$name.log"
        echo "FAIL $name: see $dir/$name.log and $dir/crash-$name-*"
        fail=$((fail + 1))
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
