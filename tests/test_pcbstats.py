"""pytest: scripts/pcbstats.py, the Mann-Whitney test of the site's
regression view, against the scipy fixtures test_harness.c reads
(tests/stats/mwu_fixtures.tsv), and its verdicts in pcbench compare's words."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import pcbstats  # noqa: E402


def test_the_scipy_fixtures():
    seen = 0
    with open(os.path.join(HERE, "stats", "mwu_fixtures.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            a, b, u, p, exact = line.rstrip("\n").split("\t")
            a = [float(v) for v in a.split(",")]
            b = [float(v) for v in b.split(",")]
            got_u, got_p, got_exact = pcbstats.mann_whitney(a, b)
            assert got_u == float(u) and got_exact == (exact == "1")
            assert abs(got_p - float(p)) <= 1e-9 + 1e-6 * float(p), (a, b, got_p, p)
            seen += 1
    assert seen >= 8


def test_verdicts():
    a = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01]
    assert pcbstats.verdict(a, [2 * x for x in a])[0] == "slower"
    assert pcbstats.verdict(a, [x / 2 for x in a])[0] == "faster"
    assert pcbstats.verdict(a, [x * 1.001 for x in a])[0] == "same"
    assert pcbstats.verdict(a, [1.1 * x for x in a])[0] == "same"  # significant, within 25%
    assert pcbstats.verdict(a[:3], [2 * x for x in a[:3]])[0] == "cannot tell"  # 3 and 3
    assert pcbstats.verdict([], a)[0] == "cannot tell"
    assert abs(pcbstats.verdict(a, [2 * x for x in a])[1] - 2) < 1e-12
