#!/bin/sh
# defects.sh PCBENCH - the defect catalog: listed apart from the
# implementations, every FPS and EMD defect caught by the verify matrices
# while the accepted one passes (this also proves verify fails wrong answers:
# a masked validator would miss them all). NN's run takes a minute on two
# cores: pcbench verify --defects runs it. The two problems' runs go side by
# side (each takes a minute under the sanitizers).
. "$(dirname "$0")/lib.sh"

"$tool" list --defects >"$tmp/defects" 2>&1
if [ "$(grep -c . "$tmp/defects")" -ge 7 ] && grep -q "^fps near_origin_skip: .*from PointNet++" "$tmp/defects" &&
    grep -q "^fps ties_to_highest: .*(accepted)$" "$tmp/defects"; then ok; else bad "list --defects: $(head -3 "$tmp/defects")"; fi
if ! "$tool" list | grep -q near_origin_skip; then ok; else bad "a planted defect in list"; fi
for p in fps emd; do
    ("$tool" verify --defects --problem $p >"$tmp/vd.$p" 2>&1; echo $? >"$tmp/rc.$p") &
done
wait
for p in fps emd; do
    rc=$(cat "$tmp/rc.$p")
    if [ "$rc" -eq 0 ] && grep -q "0 defects missed" "$tmp/vd.$p" && ! grep -q MISSED "$tmp/vd.$p" &&
        [ "$(grep -c "^$p .* caught " "$tmp/vd.$p")" -ge 2 ]; then ok; else
        bad "verify --defects --problem $p: exit $rc: $(tail -5 "$tmp/vd.$p")"; fi
done
# The CUDA variant (a racing reduction) is caught where a device is and
# reported "not run" where none is, which must not fail the run.
if grep -q "^fps torn_argmax" "$tmp/defects"; then
    grep -Eq "^fps +torn_argmax +(caught|not run) " "$tmp/vd.fps" && ok ||
        bad "torn_argmax: $(grep torn_argmax "$tmp/vd.fps" | tail -2)"
fi
expect "verify --defects with --impl" 2 -- "$tool" verify --defects --problem fps --impl dp

finish
