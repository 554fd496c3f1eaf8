#!/usr/bin/env python3
"""make_mwu_fixtures.py > mwu_fixtures.tsv - the Mann-Whitney U fixtures of
test_harness.c, computed independently by scipy.stats.mannwhitneyu (method
"auto", two-sided, continuity corrected): seeded samples of timings, with
and without ties, small (exact) and large (normal). Columns: the samples a
and b (comma-separated), U of b, p, exact (1) or normal (0)."""
import random

from scipy.stats import mannwhitneyu

rng = random.Random(29)
cases = []
for na, nb, shift, tied in [(3, 3, 1.0, False), (5, 5, 1.0, False), (5, 5, 1.1, False),
                            (5, 7, 1.3, False), (7, 5, 0.8, False), (4, 12, 1.05, False),
                            (10, 10, 1.0, False), (10, 10, 1.1, False), (20, 15, 1.02, False),
                            (5, 5, 1.0, True), (12, 12, 1.1, True), (30, 30, 1.01, False),
                            (64, 64, 1.03, False), (6, 9, 1.5, True), (1, 1, 2.0, False),
                            (2, 9, 1.2, False)]:
    a = [round(rng.gauss(1.0, 0.03), 6 if not tied else 2) for _ in range(na)]
    b = [round(shift * rng.gauss(1.0, 0.03), 6 if not tied else 2) for _ in range(nb)]
    cases.append((a, b))
cases.append(([1.0] * 5, [1.0] * 5))  # all tied: no evidence at all
print("# a\tb\tu_of_b\tp\texact")
for a, b in cases:
    res = mannwhitneyu(b, a, alternative="two-sided", method="auto")
    exact = int(len(set(a + b)) == len(a + b) and min(len(a), len(b)) < 8)
    print("%s\t%s\t%.17g\t%.17g\t%d" % (",".join(repr(x) for x in a),
                                       ",".join(repr(x) for x in b), res.statistic, res.pvalue,
                                       exact))
