#!/bin/sh
# peers.sh PCBENCH - the inputs `pcbench bench --write-inputs` hands to other
# libraries, and scripts/peers/ end to end with planted peers (peers_check.py).
. "$(dirname "$0")/lib.sh"

# make peers takes PEER, PROBLEM and FILTER as written: make expands no
# $(shell ...) in them (make -n: the command is printed, nothing is run)
root=$(cd "$(dirname "$0")/.." && pwd)
make -s -n -C "$root" peers PEER="\$(shell touch $tmp/pwned)" PROBLEM="\$(shell touch $tmp/pwned2)" \
    FILTER="\$(shell touch $tmp/pwned3)" >"$tmp/make-n" 2>&1
if [ -e "$tmp/pwned" ] || [ -e "$tmp/pwned2" ] || [ -e "$tmp/pwned3" ]; then
    bad "make peers expanded a \$(shell ...) given in PEER, PROBLEM or FILTER"
elif grep -qF -- "--peer '\$(shell touch $tmp/pwned)'" "$tmp/make-n"; then ok
else bad "make peers: the peer not passed as written: $(cat "$tmp/make-n")"; fi

# the peers' Python sees what make deps installed (.deps/python): numpy there counts
if make -s -n -C "$root" bench 2>/dev/null | grep "import numpy" | grep -q "/.deps/python"; then ok
else bad "make bench's numpy check does not look in .deps/python"; fi

# The clouds written are the harness's: cloud i of a batch is generator seed
# 1 + i, the second cloud of a pair seed 1001 + i.
if "$tool" bench --suite quick --filter /b2/ --write-inputs "$tmp/in" >"$tmp/out" 2>&1; then ok
else bad "write-inputs: $(cat "$tmp/out")"; fi
if head -1 "$tmp/in/configs.tsv" | grep -q "^# suite quick reps 7 run_budget 5 machine " &&
    [ "$(grep -c "^fps/\|^nn/\|^emd/" "$tmp/in/configs.tsv")" -eq 3 ]; then ok
else bad "configs.tsv: $(cat "$tmp/in/configs.tsv")"; fi
"$tool" gen uniform -n 3000 --seed 2 -o "$tmp/g.ply" &&
if cmp -s "$tmp/g.ply" "$tmp/in/fps-uniform-b2-n3000-m64/a-1.ply"; then ok; else bad "a-1.ply differs from seed 2"; fi
"$tool" gen uniform -n 256 --seed 1002 -o "$tmp/g.ply" &&
if cmp -s "$tmp/g.ply" "$tmp/in/emd-uniform-b2-n256/b-1.ply"; then ok; else bad "b-1.ply differs from seed 1002"; fi
if [ "$(ls "$tmp/in/nn-uniform-b2-n2000-q3000" | tr '\n' ' ')" = "a-0.ply a-1.ply b-0.ply b-1.ply " ]; then ok
else bad "nn files: $(ls "$tmp/in/nn-uniform-b2-n2000-q3000")"; fi
if "$tool" bench --suite quick --filter nothing-matches --write-inputs "$tmp/none" >/dev/null 2>&1; then
    bad "write-inputs with no configuration succeeded"; else ok; fi

# Offline install from a folder of wheels: what has a wheel is installed, the
# rest is named and skipped, and the command still succeeds.
py=${PYTHON:-python3}
if "$py" -c "import fpsample" 2>/dev/null; then
    echo "skip: $py has fpsample already: the offline peers install is not tested here"
elif "$py" -m pip --version >/dev/null 2>&1; then
    mkdir -p "$tmp/wheels"
    "$py" - "$tmp/wheels/fpsample-9.9-py3-none-any.whl" <<'PYEOF'
import base64, hashlib, sys, zipfile
files = {"fpsample/__init__.py": "planted = True\n",
         "fpsample-9.9.dist-info/METADATA": "Metadata-Version: 2.1\nName: fpsample\nVersion: 9.9\n",
         "fpsample-9.9.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = "".join("%s,sha256=%s,%d\n" % (k, base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode(), len(v)) for k, v in files.items())
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for k, v in files.items():
        z.writestr(k, v)
    z.writestr("fpsample-9.9.dist-info/RECORD", rec + "fpsample-9.9.dist-info/RECORD,,\n")
PYEOF
    if WHEELS="$tmp/wheels" PEERS_DIR="$tmp/site" PYTHON="$py" sh "$(dirname "$0")/../scripts/peers-deps.sh" \
        install >"$tmp/pd" 2>&1 && PYTHONPATH="$tmp/site" "$py" -c "import fpsample; assert fpsample.planted"; then ok
    else bad "offline peers-deps: $(cat "$tmp/pd")"; fi
    if grep -q "no wheel in $tmp/wheels for:.*pykdtree" "$tmp/pd" || "$py" -c "import pykdtree" 2>/dev/null; then ok
    else bad "peers without a wheel are named: $(cat "$tmp/pd")"; fi
else
    echo "skip: $py has no pip: the offline peers install is not tested here"
fi

# make peers quotes what it is given: shell characters in PEER run nothing.
if command -v make >/dev/null 2>&1; then
    make -s --no-print-directory peers TOOL="$tool" PEERS_RESULTS="$tmp/pr" SUITE=quick \
        PEER="nosuch_module:f; touch $tmp/pwned #'" PROBLEM=fps FILTER=b1/n2000 >"$tmp/mk" 2>&1
    if [ ! -e "$tmp/pwned" ] && grep -q "nosuch_module:f; touch" "$tmp/mk"; then ok; else
        bad "make peers with shell characters in PEER: $(tail -3 "$tmp/mk")"; fi
fi

# numpy from .deps/python (make deps) where the host has none: a user's callable gets numpy arrays
root=$(cd "$(dirname "$0")/.." && pwd)

# --shard (make peers SHARD=i/N): the runner asks pcbench for its shard's configurations, and a
# shard that holds none ends well
if PYTHONPATH="$root/scripts:$root/impl/python:$root/.deps/python${PYTHONPATH:+:$PYTHONPATH}" \
    ${PYTHON:-python3} -m peers --suite quick --problem fps --filter b1/n2000 --shard 2/2 \
    --pcbench "$tool" --results "$tmp/pshard" >"$tmp/ps" 2>&1 &&
    grep -q "0 of the 1 selected" "$tmp/ps" && grep -q "no configuration falls to this shard" "$tmp/ps"
then ok; else bad "peers --shard with an empty shard: $(tail -3 "$tmp/ps")"; fi
PYTHONPATH="$root/.deps/python${PYTHONPATH:+:$PYTHONPATH}" \
    ${PYTHON:-python3} "$(dirname "$0")/peers_check.py" "$tool" "$tmp" >"$tmp/py" 2>&1
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/py" | tail -n 1)
p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
if [ -z "$line" ]; then cat "$tmp/py"; p=0; f=1; elif [ "$f" != 0 ]; then cat "$tmp/py"; fi
pass=$((pass + p)); fail=$((fail + f))
echo "$pass passed, $fail failed"
