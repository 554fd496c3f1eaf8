#!/bin/sh
# bench.sh PCBENCH - pcbench bench itself: options, results files, resume,
# budgets, --list, --max-time, an interrupted run, --compare, and the
# tables script reading what it wrote. Quick suite, FPS only: seconds.
. "$(dirname "$0")/lib.sh"
res=$tmp/r
dir=$res/testbox/quick
q="--suite quick --problem fps --machine testbox"

# A results file: valid JSON, and the Python expression holds for it (d).
json_holds() { # name, file, expression
    if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" \
        "$2" 2>"$tmp/py"; then ok; else bad "$1 ($2)"; cat "$tmp/py"; fi
}

expect "help" 0 -- "$tool" bench --help
says "help names the suites" "seed (default)"
expect "unknown suite" 2 -- "$tool" bench --suite nope
expect "unknown problem" 2 -- "$tool" bench --problem fps,xyz
expect "unknown implementation" 2 -- "$tool" bench --impl nosuchimpl
expect "bad repetitions" 2 -- "$tool" bench --reps 0
expect "bad tolerance" 2 -- "$tool" bench --tolerance -1
expect "bad machine name" 2 -- "$tool" bench --machine a/b
expect "stray argument" 2 -- "$tool" bench stray
expect "bad fault spec" 2 -- env PCBENCH_FAULT=bogus "$tool" bench --suite quick

expect "an empty results folder name" 2 -- "$tool" bench $q --results ''
says "said why" "--results: an empty folder name"
: >"$tmp/a-file"
expect "a results folder that cannot be written" 3 -- "$tool" bench $q --results "$tmp/a-file/r"
says "said before any work" "results folder $tmp/a-file/r/testbox/quick cannot be written"
if grep -q "verified" "$out" "$err"; then bad "work done before the results folder was checked"; else ok; fi

expect "quick fps run" 0 -- "$tool" bench $q --results "$res"
says "summary lists a configuration" "^fps/uniform/b1/n2000/m100 "
says "summary says where results went" "Results: $dir/"
f1=$dir/fps-uniform-b1-n2000-m100.json
f2=$dir/fps-uniform-b2-n3000-m64.json
for f in "$f1" "$f2"; do
    json_holds "verified and timed" "$f" \
        "all(e['status'] == 'ok' and e['verify']['ok'] and e['compute']['reps'] >= 2 for e in d['results'] if e['device'] == 'cpu')"
    json_holds "environment and machine" "$f" "d['env']['machine'] == 'testbox' and d['env']['cores'] >= 1"
    json_holds "Google Benchmark reports kept, one a sampling round" "$f" \
        "len(d['gbench']) >= 1 and all('real_time' in b for r in d['gbench'] for b in r['benchmarks'])"
    json_holds "where an end-to-end run's time goes, four stages that add up to about a run" "$f" \
        "all(e['e2e']['stage_runs'] >= 1 and sorted(e['e2e']['stages_ms']) == ['compute', 'fetch', 'prepare', 'release'] and 0.5 * e['e2e']['mean_ms'] <= sum(e['e2e']['stages_ms'].values()) <= 2 * e['e2e']['mean_ms'] for e in d['results'] if e['status'] == 'ok' and e['device'] == 'cpu')"
    json_holds "every figure's samples and why sampling stopped" "$f" \
        "all(e[k]['reps'] == len(e[k]['samples_ms']) and e[k]['stop'] for e in d['results'] if e['status'] == 'ok' for k in ('compute', 'e2e'))"
done
json_holds "naive FPS counts its distance evaluations" "$f1" \
    "[e for e in d['results'] if e['impl'] == 'naive'][0]['counters']['distance_evals'] > 0"

cp "$f1" "$tmp/f1.before"
expect "resume" 0 -- "$tool" bench $q --results "$res"
says "nothing re-run" "(0 run now)"
says "stored results are shown, and from when" "(stored 20[0-9][0-9]-[01][0-9]-[0-3][0-9])"
if cmp -s "$f1" "$tmp/f1.before"; then ok; else bad "resume rewrote $f1"; fi
json_holds "a figure records the build and host that measured it" "$f1" \
    "all(len(e['build']) == 16 and len(e['host']) == 16 for e in d['results'] if e['status'] == 'ok')"
# Another build (a planted change: the same tool with one more byte) measures
# again, whatever is stored; the stored figures were another binary's.
cp "$tool" "$tmp/changed-tool" && printf '\0' >>"$tmp/changed-tool"
expect "resume by another build" 0 -- "$tmp/changed-tool" bench $q --results "$res" --filter /b1/
says "another build's figures measured again" "(1 run now)"
if cmp -s "$f1" "$tmp/f1.before"; then bad "another build reused $f1"; else ok; fi
expect "resume by this build again" 0 -- "$tool" bench $q --results "$res" --filter /b1/
says "the other build's figures measured again by this one" "(1 run now)"

# A link in the results folder is reported and left alone: never read, never
# written through (the file outside it stays as it was); a FIFO there does
# not hang the resume.
echo "not a result, and not yours to overwrite" >"$tmp/outside.txt"
cp "$tmp/outside.txt" "$tmp/outside.before"
mv "$f1" "$tmp/f1.moved" && ln -s "$tmp/outside.txt" "$f1"
expect "a link in the results folder" 5 -- "$tool" bench $q --results "$res" --filter /b1/
says "the link reported on resume" "fps-uniform-b1-n2000-m100.json: a symbolic link, not a results file: left alone"
says "and not written through" "not a regular file (a symbolic link): left alone"
if cmp -s "$tmp/outside.txt" "$tmp/outside.before" && [ -L "$f1" ]; then ok; else
    bad "the file behind the link was changed, or the link replaced"; fi
rm "$f1" && mkfifo "$f1"
EXPECT_TIMEOUT=60 expect "a FIFO in the results folder" 5 -- "$tool" bench $q --results "$res" --filter /b1/
says "the FIFO reported" "not a regular file"
rm "$f1" && mv "$tmp/f1.moved" "$f1"

expect "force" 0 -- "$tool" bench $q --results "$res" --force
says "everything re-run" "(2 run now)"
expect "filter" 0 -- "$tool" bench $q --results "$res" --force --filter /b2/
says "one configuration" "1 configuration (1 run now)"

expect "tiny budget" 0 -- "$tool" bench $q --results "$res" --force --filter /b1/ --run-budget 0.001
says "over budget is skipped" "skipped-budget"
json_holds "skip recorded with its reason" "$f1" \
    "[e for e in d['results'] if e['impl'] == 'naive' and e['status'] == 'skipped-budget' and 'budget' in e['detail']]"
expect "a larger budget re-runs the skipped" 0 -- "$tool" bench $q --results "$res" --filter /b1/
says "re-run" "(1 run now)"
json_holds "now timed" "$f1" "all(e['status'] == 'ok' for e in d['results'] if e['device'] == 'cpu')"

# The whole run's budget: what the verifications leave is spread over the
# figures; a figure it stops says so, in the progress and the results file.
expect "bad whole-run budget" 2 -- "$tool" bench $q --budget -1
expect "a whole-run budget too small for the figures" 0 -- "$tool" bench $q --results "$res" \
    --force --budget 0.001
says "the prediction and the budget are said first" "predicted [0-9]* s (verification [0-9]* s); budget 0.001 s"
says "each configuration's share" "s of the budget for timing"
says "the progress line gives the time left" "^\[1/2 0:[0-9][0-9], ~[0-9]*:[0-9][0-9] left\]"
says "a figure the budget stopped says so" "stopped by the budget\|over its share of the budget"
json_holds "stored with its stop reason, never as converged" "$f1" \
    "all(e['compute']['stop'] == 'budget' for e in d['results'] if e['status'] == 'ok')"
expect "no whole-run budget: the figure time rules" 0 -- "$tool" bench $q --results "$res" \
    --force --budget 0
says "an ETA without a budget too" "predicted [0-9]* s to [0-9]* s"
json_holds "no figure stopped by a budget" "$f1" \
    "not [e for e in d['results'] if e['status'] == 'ok' and e['compute']['stop'] == 'budget']"
# A run longer than the figure time is timed once: the verification run.
expect "figure time under one run" 0 -- "$tool" bench $q --results "$res" --force --filter /b1/ \
    --impl naive --figure-time 0.001
says "the verification run is the figure" "one run: the verification run, over the figure time"
json_holds "stored as one run" "$f1" \
    "[e for e in d['results'] if e['impl'] == 'naive' and e['compute']['reps'] == 1 and e['compute']['clock'] == 'verification run' and e['compute']['stop'] == 'time']"

# The heartbeat: a step far past its prediction says so while it runs.
expect "heartbeat" 0 -- env PCBENCH_HEARTBEAT=0.05 PCBENCH_FAULT=slow:fps/naive:10 "$tool" bench $q \
    --results "$tmp/beat" --force --filter /b1/ --impl naive --figure-time 0.02
says "a long step is never silent" "\.\.\. still timing fps/uniform/b1/n2000/m100 (round 1): .* s so far, .* s predicted"

expect "list" 0 -- "$tool" bench $q --results "$res" --list
says "list shows stored results" "stored: ok"
expect "a filter of alternatives" 0 -- "$tool" bench --suite quick --results "$res" --list \
    --filter n2000/m100,emd/uniform/b2/
says "each alternative selects" "2 configurations"
says "the first" "fps/uniform/b1/n2000/m100"
says "the second" "emd/uniform/b2/n256"

expect "max-time" 0 -- "$tool" bench $q --results "$tmp/m" --max-time 0.001
says "stops and says what is left" "configurations* left; run the same command again"

# Two runs at once on one results folder, each timing another implementation
# of the same configuration: the file keeps both (the second writer reads
# the first's figures again under the folder's lock).
one="$q --filter n2000/m100 --results $tmp/two"
"$tool" bench $one --impl pruned >"$tmp/two1.log" 2>&1 &
pid=$!
"$tool" bench $one --impl omp >"$tmp/two2.log" 2>&1
rc2=$?
wait $pid
rc1=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ]; then ok; else bad "two runs at once: exit $rc1 and $rc2"; fi
json_holds "two runs at once keep both implementations" \
    "$tmp/two/testbox/quick/fps-uniform-b1-n2000-m100.json" \
    "{'pruned', 'omp'} <= {e['impl'] for e in d['results'] if e.get('status') == 'ok'}"

# A stored figure is reused only on the terms this run asks, and only where
# the CPU and GPU its file names are this host's.
one="$q --filter n2000/m100 --impl pruned --results $tmp/terms"
"$tool" bench $one --reps 3 >"$tmp/t1.log" 2>&1
expect "a run asking more samples" 0 -- "$tool" bench $one --reps 5
if grep -q "(stored" "$out"; then bad "a 3-sample figure was reused by --reps 5"; else ok; fi
expect "the same terms again" 0 -- "$tool" bench $one --reps 5
says "reused" "(stored"
python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['env']['cpu']='Another CPU'; \
json.dump(d, open(p, 'w'))" "$tmp/terms/testbox/quick/fps-uniform-b1-n2000-m100.json"
expect "a file that names another CPU" 0 -- "$tool" bench $one --reps 5
if grep -q "(stored" "$out"; then bad "a figure of another CPU was reused"; else ok; fi

# Interrupt a run once its first configuration is stored: that file stays
# whole and no temporary file is left behind.
"$tool" bench --suite quick --problem fps,nn --machine testbox --results "$tmp/i" \
    >"$tmp/i.log" 2>&1 &
pid=$!
i=0
while [ ! -f "$tmp/i/testbox/quick/fps-uniform-b1-n2000-m100.json" ] && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -INT $pid 2>/dev/null
wait $pid 2>/dev/null
json_holds "a finished configuration survives Ctrl-C" \
    "$tmp/i/testbox/quick/fps-uniform-b1-n2000-m100.json" "d['results']"
if [ -z "$(find "$tmp/i" -name '*.tmp.*')" ]; then ok; else bad "temporary files left behind"; fi

# Figures of 3 samples against 7 can never be significant at p < 0.01:
# compare says so and which, with status 3, rather than "no change".
expect "a baseline of 3 samples a figure" 0 -- "$tool" bench $q --results "$tmp/few" --reps 3
expect "compare with too few samples" 3 -- \
    "$tool" bench $q --results "$tmp/c" --compare "$tmp/few/testbox" --tolerance 50
says "the figures it cannot tell named" "cannot tell: 3 and [0-9]* samples can never reach p < 0.01 (at least 5 a side)"
expect "a baseline" 0 -- "$tool" bench $q --results "$tmp/base"
expect "compare with itself, wide tolerance" 0 -- \
    "$tool" bench $q --results "$tmp/c" --force --compare "$tmp/base/testbox" --tolerance 50
says "comparison printed" "^compare: 0 of [1-9]"
expect "compare catches an 8x slowdown" 1 -- env PCBENCH_FAULT=slow:fps/naive:8 \
    "$tool" bench $q --results "$tmp/c" --force --compare "$tmp/base/testbox" --tolerance 1
says "comparison names it" "slower"

# One judge: an answer that is a valid farthest-point sequence but not dp's
# (ties broken toward the highest index, on clouds with duplicated points)
# is failed-verification for a canonical implementation, as verify fails it,
# whether dp runs in the same configuration or not; dp itself passes.
# An answer equal bit for bit to one validated before takes its validator's
# report (said in the progress), never its verdict: omp's planted ties still
# fail beside dp's and pruned's equal answers.
for sel in omp omp,dp dp,pruned,omp; do
    expect "bench judges a non-canonical answer ($sel)" 1 -- env PCBENCH_FAULT=ties:fps/omp \
        "$tool" bench $q --filter /b1/ --impl $sel --results "$tmp/t-$sel"
    [ "$sel" != dp,pruned,omp ] || says "an equal answer's validation is reused" \
        "pruned: verified in .* (the answer of dp bit for bit: its validation)"
    f=$tmp/t-$sel/testbox/quick/fps-uniform-b1-n2000-m100.json
    json_holds "non-canonical answer not timed ($sel)" "$f" \
        "[(e['status'], e['detail'][:14]) for e in d['results'] if e['impl'] == 'omp'] == \
         [('failed-verification', 'not canonical:')]"
done
json_holds "the reference itself passes" "$tmp/t-omp,dp/testbox/quick/fps-uniform-b1-n2000-m100.json" \
    "[e['status'] for e in d['results'] if e['impl'] == 'dp'] == ['ok']"
expect "ties fault is FPS only" 2 -- env PCBENCH_FAULT=ties:nn/naive "$tool" bench $q

# A ragged configuration: an implementation that does not read lengths runs
# one cloud at a time, is judged cloud by cloud, and says so; the stored
# configuration names each cloud's length.
expect "a ragged configuration" 0 -- "$tool" bench --suite ragged --machine testbox \
    --filter chamfer/sphere/b32/n4096 --impl kdtree --reps 2 --results "$tmp/rag"
f=$tmp/rag/testbox/ragged/chamfer-sphere-b32-n4096-q4096-ragged.json
json_holds "judged cloud by cloud, one call a cloud" "$f" \
    "[(e['status'], e['detail'].startswith('one call a cloud'), 'clouds judged one by one' in e['detail']) \
      for e in d['results'] if e['impl'] == 'kdtree'] == [('ok', True, True)]"
json_holds "the lengths stored" "$f" \
    "d['config']['lengths'][0][0] == 512 and d['config']['lengths'][0][-1] == 4096 and \
     d['config']['lengths'][1][0] == 4096"

expect "tables from these results" 0 -- python3 scripts/tables.py "$res"
if grep -q "## testbox" "$res/TABLES.md" && grep -q "fps/uniform/b1/n2000/m100" "$res/TABLES.md"; then
    ok
else
    bad "TABLES.md lacks the machine or the configuration"
fi
# A user's run never rewrites the published figures: make bench stores into
# results/mine (untracked), and tables from a folder other than the project's
# shards: --shard i/N lists disjoint parts whose union is the selection; the
# schedulers' variables map to their i/N and are said; a sparse Slurm array,
# a Kubernetes index without --shards and a bad i/N are refused
all=$("$tool" bench --suite quick --list --results "$tmp/sh" 2>/dev/null | grep -v '^ ' | sed 1d | sort)
parts=
for i in 1 2 3; do
    expect "--shard $i/3" 0 "shard $i/3 (--shard $i/3)" -- "$tool" bench --suite quick --list \
        --shard "$i/3" --results "$tmp/sh"
    parts="$parts$(grep -v '^ ' "$out" | sed 1d)
"
done
if [ "$(printf '%s' "$parts" | sed '/^$/d' | sort)" = "$all" ] &&
    [ "$(printf '%s' "$parts" | sed '/^$/d' | sort | uniq -d)" = "" ]; then ok
else bad "the shards are not disjoint parts of the selection"; fi
expect "a Slurm array's task" 0 "shard 2/3 (SLURM_ARRAY_TASK_ID=5 of 3..7)" -- env \
    SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_MAX=7 SLURM_ARRAY_TASK_STEP=2 \
    SLURM_ARRAY_TASK_COUNT=3 "$tool" bench --suite quick --list --results "$tmp/sh"
expect "a sparse Slurm array" 2 "not an even progression" -- env SLURM_ARRAY_TASK_ID=4 \
    SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=9 SLURM_ARRAY_TASK_COUNT=3 \
    "$tool" bench --suite quick --list --results "$tmp/sh"
expect "Bazel's shard" 0 "shard 1/2 (TEST_SHARD_INDEX=0 of TEST_TOTAL_SHARDS=2)" -- env \
    TEST_SHARD_INDEX=0 TEST_TOTAL_SHARDS=2 TEST_SHARD_STATUS_FILE="$tmp/sh-status" \
    "$tool" bench --suite quick --list --results "$tmp/sh"
if [ -e "$tmp/sh-status" ]; then ok; else bad "Bazel's TEST_SHARD_STATUS_FILE not touched"; fi
expect "a Kubernetes index without --shards" 2 "give --shards N" -- env JOB_COMPLETION_INDEX=1 \
    "$tool" bench --suite quick --list --results "$tmp/sh"
expect "a Kubernetes index" 0 "shard 2/4 (JOB_COMPLETION_INDEX=1 of --shards 4)" -- env \
    JOB_COMPLETION_INDEX=1 "$tool" bench --suite quick --list --shards 4 --results "$tmp/sh"
expect "a shard 0/3" 2 "need i/N" -- "$tool" bench --suite quick --list --shard 0/3
expect "a shard with nothing" 0 "0 of the 1 selected" -- "$tool" bench --suite quick \
    --problem fps --filter b1/n2000 --shard 2/2 --results "$tmp/sh"

# count by shard (under callgrind, where valgrind is): the parts' rows together are the whole's
if "$tool" count --suite quick --problem fps >"$tmp/cw" 2>/dev/null; then
    : >"$tmp/cp"
    for i in 1 2; do
        "$tool" count --suite quick --problem fps --shard "$i/2" 2>/dev/null | grep '^fps/' >>"$tmp/cp"
    done
    if [ "$(grep '^fps/' "$tmp/cw" | awk '{print $1, $2}' | sort)" = \
         "$(awk '{print $1, $2}' "$tmp/cp" | sort)" ] && [ -s "$tmp/cp" ]; then ok
    else bad "count's shards are not the whole's rows"; fi
else skip=$((skip + 1)); echo "skip: count by shard: pcbench count does not run here (valgrind)"; fi

# merge: two shards' folders into one that resume, tables and compare read as one run's; a
# figure of another build refused
for i in 1 2; do
    expect "shard $i/2 of a run" 0 -- "$tool" bench $q --reps 3 --shard "$i/2" --results "$tmp/s$i"
done
expect "merge the shards" 0 "merge: 2 configuration files written" -- \
    "$tool" merge "$tmp/m" "$tmp/s1" "$tmp/s2"
if [ "$(cd "$tmp/m/testbox/quick" && ls)" = "$( (ls "$tmp/s1/testbox/quick"; ls "$tmp/s2/testbox/quick") | sort)" ]
then ok; else bad "the merged folder is not the shards' files"; fi
expect "the merged folder resumes as one run" 0 -- "$tool" bench $q --reps 3 --list --results "$tmp/m"
if grep -q "to run" "$out"; then bad "a merged configuration is to run again"; else ok; fi
expect "tables read the merged folder" 0 -- python3 scripts/tables.py "$tmp/m"
expect "a whole run beside the shards" 0 -- "$tool" bench $q --reps 3 --results "$tmp/w"
expect "tables of the whole run" 0 -- python3 scripts/tables.py "$tmp/w"
expect "the merged shards are the whole run" 0 "the same run: 2 configuration files" -- \
    python3 scripts/same_run.py "$tmp/w" "$tmp/m"
expect "a run that is not the same" 1 "not the same run" -- \
    python3 scripts/same_run.py "$tmp/w" "$tmp/s1"
expect "compare reads the merged folder" 3 "fps/uniform/b2/n3000/m64" -- \
    "$tool" compare "$tmp/m/testbox" "$tmp/m/testbox" --suite quick  # 3 samples: cannot tell
expect "merge again: nothing new" 0 "0 configuration files written" -- \
    "$tool" merge "$tmp/m" "$tmp/s1"
f=$(ls "$tmp/s1/testbox/quick/"*.json | head -n 1)
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['results'][0]['build']='0123456789abcdef'
json.dump(d, open(sys.argv[1], 'w'))" "$f"
expect "a figure of another build" 1 "measured by build 0123456789abcdef" -- \
    "$tool" merge "$tmp/m" "$tmp/s1"
printf '{"format": "another"}' >"$tmp/m/testbox/quick/$(basename "$f")"
expect "a merged file of another format" 5 "left alone" -- "$tool" merge "$tmp/m" "$tmp/s2" "$tmp/s1"
if grep -q another "$tmp/m/testbox/quick/$(basename "$f")"; then ok; else bad "merge overwrote a file it cannot read"; fi
expect "merge without a folder" 2 -- "$tool" merge "$tmp/m"
expect "merge from nothing" 3 "is not a folder" -- "$tool" merge "$tmp/m" "$tmp/none"

# the examples to copy: the Slurm array script runs as its tasks and its merge job would; the
# Kubernetes and CI examples run the same lines
root=$(cd "$(dirname "$0")/.." && pwd)
abs_tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
mkdir -p "$tmp/slurm"
for t in 1 2; do
    expect "the Slurm example, task $t of 2" 0 "shard $t/2 (SLURM_ARRAY_TASK_ID=$t of 1..2)" -- \
        env -C "$tmp/slurm" PCBENCH="$abs_tool" SUITE=quick SLURM_ARRAY_TASK_ID=$t \
        SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_TASK_COUNT=2 \
        bash "$root/bench/spread/slurm-array.sh" --problem fps --reps 3 --machine testbox
done
expect "the Slurm example's merge" 0 "merge: 2 configuration files written" -- \
    env -C "$tmp/slurm" PCBENCH="$abs_tool" MERGE=1 bash "$root/bench/spread/slurm-array.sh"
for f in indexed-job.yaml ci-matrix.yml; do
    if grep -q "pcbench bench --suite full --shard" "$root/bench/spread/$f" &&
        grep -q "pcbench merge" "$root/bench/spread/$f"; then ok
    else bad "bench/spread/$f lacks the shard's bench line or the merge"; fi
done

# --devices: the CUDA implementations as one shard a device (here, without a GPU, they are
# "unavailable", each by its own process and log), then the CPU ones in this process: the
# same configurations and entries as one run's; a bad list or another shard refused
expect "a run over two devices" 0 "device 1: done" -- "$tool" bench $q --reps 3 --devices 0,1 \
    --results "$tmp/dv"
for d in 0 1; do
    if [ -s "$tmp/dv/testbox/logs/bench-quick-device$d.log" ] &&
        grep -q "shard $((d + 1))/2" "$tmp/dv/testbox/logs/bench-quick-device$d.log"
    then ok; else bad "device $d's shard left no log of its part"; fi
done
entries() { # the configurations' entries of a results folder: "file impl device" lines
    python3 -c "import json,glob,os,sys
for f in sorted(glob.glob(sys.argv[1] + '/*.json')):
    for e in json.load(open(f))['results']: print(os.path.basename(f), e['impl'], e['device'], e['status'] if e['device'] == 'cpu' else '')" "$1"
}
if [ -n "$(entries "$tmp/dv/testbox/quick")" ] &&
    [ "$(entries "$tmp/dv/testbox/quick" | sort)" = "$( (entries "$tmp/s1/testbox/quick"; entries "$tmp/s2/testbox/quick") | sort)" ]
then ok; else bad "--devices did not store one run's entries"; entries "$tmp/dv/testbox/quick"; fi
json_holds "the gpu_bus field" "$tmp/dv/testbox/quick/fps-uniform-b1-n2000-m100.json" \
    "all('gpu_bus' in e and (e['device'] == 'cuda' or e['gpu_bus'] == '') for e in d['results'])"
expect "a device twice" 2 "device 0 twice" -- "$tool" bench $q --devices 0,0 --results "$tmp/dv"
expect "a device that is no name" 2 "is not a device" -- "$tool" bench $q --devices 0,gpu1
expect "an empty device" 2 "is not a device" -- "$tool" bench $q --devices 0,
expect "devices and a shard" 2 "excludes --shard 1/2" -- "$tool" bench $q --devices 0 --shard 1/2
expect "devices and a Slurm task" 2 "excludes SLURM_ARRAY_TASK_ID" -- env SLURM_ARRAY_TASK_ID=1 \
    SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_TASK_COUNT=2 \
    "$tool" bench $q --devices 0
expect "devices past CUDA_VISIBLE_DEVICES" 2 "not among the 1 of CUDA_VISIBLE_DEVICES=3" -- \
    env CUDA_VISIBLE_DEVICES=3 "$tool" bench $q --devices 1

# results leave the front door alone (its summary changes with --front-door only).
if make -s -n -C "$root" bench PEERS=0 2>/dev/null | grep -q -- "bench --suite seed --results results/mine" &&
    git -C "$root" check-ignore -q results/mine/x.json 2>/dev/null; then ok
else bad "make bench does not store into the untracked results/mine"; fi
mkdir -p "$tmp/proj/results"
cp -r "$res/testbox" "$tmp/proj/results/"
printf 'x\n<!-- summary: generated by make tables -->\nold\n<!-- end of summary -->\n' >"$tmp/proj/README.md"
cp "$tmp/proj/README.md" "$tmp/readme.before"
expect "tables without --front-door" 0 -- python3 scripts/tables.py "$tmp/proj/results"
if cmp -s "$tmp/proj/README.md" "$tmp/readme.before"; then ok; else bad "tables.py rewrote the front door"; fi
expect "tables with --front-door" 0 -- python3 scripts/tables.py "$tmp/proj/results" --front-door
if ! cmp -s "$tmp/proj/README.md" "$tmp/readme.before"; then ok; else bad "--front-door left the summary"; fi

finish
