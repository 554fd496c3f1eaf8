#!/bin/sh
# site.sh PCBENCH - make site's generator (scripts/site.py) on the results of
# tests/results: its pages, their data files, every link resolving; then
# the pages in headless Chromium (tests/site_browser.py: charts drawn with
# their series, no console error, a deep link, JavaScript off), where
# Chromium, its driver and Selenium are installed (make test installs them;
# in CI their absence fails), else skipped and said. The committed results'
# site is built too, and its time said. Screenshots: BUILD/site-shots/.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
shots=$(cd "$(dirname "$tool")" && pwd)/site-shots
site=$tmp/site

expect "the site of the test results" 0 "site: 31 pages of 50 results (3 machines)" -- \
    python3 "$root/scripts/site.py" "$root/tests/results" --out "$site"
for f in index.html compare.html problem-knn-sphere.html problem-emd-sphere.html \
    impl-knn-cuda_grid.html peer-emd-msn_emd_eval.html assets/charts.js \
    data/knn-sphere-gpu-nvidia-h200.csv data/json/gpu-nvidia-h200/knn/knn-sphere-b16-n4096-self-k16.json; do
    if [ -s "$site/$f" ]; then ok; else bad "the site lacks $f"; fi
done
# a wrong answer is shown, marked, never dropped: torch.cdist + topk on the lidar sweep
if grep -q 'torch_cdist_topk (peer)</a></td><td><span class="wrong">wrong' "$site/problem-knn-lidar.html"
then ok; else bad "the wrong peer answer is not marked on the lidar kNN page"; fi
if grep -q '"verdict": "wrong"' "$site/problem-emd-sphere.html"; then ok
else bad "MSN's timed wrong answers are not points of the EMD chart"; fi
# MSN's EMD is not a bijection: shown as wrong; its gap unknown, so said beside the gap chart
if grep -q 'Not on the gap chart' "$site/problem-emd-sphere.html" &&
    grep -q 'msn_emd_eval (peer)</a></td><td><span class="wrong">' "$site/problem-emd-sphere.html"
then ok; else bad "MSN's answers are not marked wrong on the EMD page"; fi
# the regression view: the H100 and H200 runs of two kNN configurations, figure by figure
if grep -q "gpu-nvidia-h200 against gpu-nvidia-h100-80gb-hbm3" "$site/compare.html" &&
    [ "$(grep -c '^knn,knn/sphere' "$site/data/compare-gpu-nvidia-h100-80gb-hbm3-gpu-nvidia-h200.csv")" -ge 6 ]
then ok; else bad "the regression view lacks the two GPUs' kNN figures"; fi
# the CSV under a chart is its table's data: the rows of one machine's configurations
rows=$(($(wc -l <"$site/data/knn-sphere-gpu-nvidia-h200.csv") - 1))
if [ "$rows" -gt 0 ] && [ "$rows" = "$(grep -c 'knn/sphere.*--force\|make peers SUITE=knn' "$site/data/knn-sphere-gpu-nvidia-h200.csv")" ]
then ok; else bad "the kNN CSV's rows lack their commands"; fi
cp -r "$site" "$tmp/broken"
printf '<a href="problem-knn-sphere.html#no-such-config">x</a><a href="nowhere.html">y</a>' \
    >>"$tmp/broken/compare.html"
expect "a planted broken link and anchor are caught" 1 "no such anchor" -- \
    python3 "$root/tests/site_browser.py" "$tmp/broken" "$tmp/shots0" --links-only
says "the missing file too" "nowhere.html: no such file"
expect "an empty results folder" 1 "no results" -- python3 "$root/scripts/site.py" "$tmp/none" --out "$tmp/s0"

# the browser
py=""
for p in "${PYTHON:-python3}" /usr/bin/python3; do
    "$p" -c "import selenium" 2>/dev/null && { py=$p; break; }
done
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
driver=$(command -v chromedriver || ls /usr/lib/chromium/chromedriver 2>/dev/null || true)
if [ -n "$py" ] && [ -n "$chrome" ] && [ -n "$driver" ]; then
    expect "the site in headless Chromium" 0 "0 failed" -- "$py" "$root/tests/site_browser.py" "$site" "$shots"
    grep '^FAIL' "$out" || true
elif [ -n "${CI:-}" ]; then
    bad "no headless Chromium, chromedriver or Selenium in CI (make test installs them: scripts/deps.sh browser)"
else
    expect "the site's links (no browser here)" 0 "0 failed" -- python3 "$root/tests/site_browser.py" \
        "$site" "$shots" --links-only
    skip=$((skip + 1))
    echo "skip: the site in a browser: no headless Chromium, chromedriver or Selenium (scripts/deps.sh browser)"
fi

# the committed results' site: built, its time said (a figure, not a gate)
began=$(date +%s.%N)
expect "the site of the committed results" 0 "site:" -- python3 "$root/scripts/site.py" "$root/results" \
    --out "$tmp/full"
echo "site: the committed results' site built in $(echo "$(date +%s.%N) $began" | awk '{ printf "%.1f", $1 - $2 }') s"
finish
