"""The Mann-Whitney test and the Hodges-Lehmann ratio of `pcbench compare`
(bench/harness/bench_mwu.c, bench_gate.c) for the scripts that read results
without the tool: the site's regression view (Python 3 stdlib only). The
rules are the tool's: U of b, exact two-sided p without ties when a side has
fewer than 8 samples, else the normal approximation with the tie correction
and a continuity correction of 0.5; tests/test_pcbstats.py holds them to the
scipy fixtures the C test reads."""
import math

EXACT_BELOW = 8


def _exact_sf(m, n, u):
    """P(U >= u) without ties, for m a's and n b's."""
    count = [[[0] * (m * n + 1) for _ in range(n + 1)] for _ in range(m + 1)]
    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0 or j == 0:
                count[i][j][0] = 1
                continue
            for v in range(i * j + 1):
                count[i][j][v] = (count[i][j - 1][v - i] if v >= i else 0) + count[i - 1][j][v]
    total = sum(count[m][n])
    return sum(c for v, c in enumerate(count[m][n]) if v >= u - 1e-9) / total


def mann_whitney(a, b):
    """(U of b, two-sided p, exact?) for samples a and b."""
    na, nb = len(a), len(b)
    u = sum(1.0 if y > x else 0.5 if y == x else 0.0 for x in a for y in b)
    pooled = sorted(list(a) + list(b))
    ties, i, n = 0.0, 0, na + nb
    while i < n:
        j = i + 1
        while j < n and pooled[j] == pooled[i]:
            j += 1
        t = j - i
        ties += t * t * t - t
        i = j
    mn = float(na * nb)
    mean, far = mn / 2, max(u, mn - u)
    exact = ties == 0 and (na < EXACT_BELOW or nb < EXACT_BELOW)
    if exact:
        p = min(1.0, 2 * _exact_sf(na, nb, far))
    else:
        var = mn / 12 * ((n + 1) - ties / (n * (n - 1.0)))
        z = (far - mean - 0.5) / math.sqrt(var) if var > 0 else None
        p = min(1.0, math.erfc(z / math.sqrt(2))) if z is not None else 1.0
    return u, p, exact


def hodges_lehmann(a, b):
    """The median of the ratios b_j / a_i."""
    return median([y / x for x in a for y in b if x > 0])


def least_p(na, nb):
    """The smallest two-sided p samples of these sizes can reach."""
    return min(1.0, 2.0 / math.comb(na + nb, na)) if na and nb else 1.0


def verdict(a, b, alpha=0.01, tolerance=0.25):
    """b against a as `pcbench compare` words it: ("faster" | "slower" |
    "same" | "cannot tell", the ratio b/a, p)."""
    if not a or not b:
        return "cannot tell", None, None
    ratio = hodges_lehmann(a, b)
    if least_p(len(a), len(b)) >= alpha or ratio is None:
        return "cannot tell", ratio, None
    _, p, _ = mann_whitney(a, b)
    if p < alpha and ratio > 1 + tolerance:
        return "slower", ratio, p
    if p < alpha and ratio < 1 / (1 + tolerance):
        return "faster", ratio, p
    return "same", ratio, p


def median(v):
    """The median of a list, or None for none."""
    v = sorted(v)
    k = len(v)
    return None if not k else v[k // 2] if k % 2 else 0.5 * (v[k // 2 - 1] + v[k // 2])
