/* bench_gate.c - the regression gate and run-to-run comparison.
 *
 * The gate must not go red by itself: development and CI machines change
 * processor from one day to the next and are shared, and CPU-time ratios
 * between implementations move 1.6x from one processor to another. So it
 * gates only what does not move with the machine or its load:
 *   (1) every implementation verified;
 *   (2) the deterministic work counters (distance evaluations, bids,
 *       iterations) equal to the baseline's;
 *   (3) the instructions one compute of each CPU implementation executes
 *       (bench_count.c), within 10% of the baseline of the same toolchain.
 * CPU-time ratios to each problem's reference are reported as information;
 * --gate-timing gates them too, by a Mann-Whitney test over the samples, and
 * only against a baseline measured on the same machine. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "bench/columns.h"

/* A count this much above the baseline fails; this much below is reported
 * as an improvement to record. */
#define ICOUNT_TOLERANCE 0.10

typedef struct {
    FILE *out;
    double tol, alpha;
    int checks, failures, improvements;
    int undecidable; /* figures whose samples cannot reach alpha */
    int need;        /* the fewest samples a side that can */
    int unusable;    /* figures without samples, or of a median of 0, on a side */
} gate;

/* The least two-sided p of a Mann-Whitney test with na and nb samples and
 * no ties: 2 / C(na + nb, na), all of one side beyond all of the other. */
static double least_p(int na, int nb)
{
    double c = 1;
    for (int k = 1; k <= na; k++)
        c = c * (double)(nb + k) / k;
    return 2 / c;
}

static void row(gate *g, const bench_config *c, const char *impl, const char *check,
                const char *base, const char *now, int ok, const char *why)
{
    g->checks++;
    g->failures += !ok;
    pcb_column(g->out, c->id, 32);
    fprintf(g->out, " %-18s %-12s %12s %12s  %s%s%s\n", impl, check, base, now,
            ok ? "ok" : "FAIL", why && *why ? ": " : "", why ? why : "");
}

/* A figure that could not be compared: said, neither passed nor failed. */
static void untold_row(gate *g, const bench_config *c, const char *impl, const char *check,
                       const char *base, const char *now, const char *why)
{
    pcb_column(g->out, c->id, 32);
    fprintf(g->out, " %-18s %-12s %12s %12s  ?: %s\n", impl, check, base, now, why);
}

/* A row that informs and gates nothing. */
static void info_row(gate *g, const bench_config *c, const char *impl, const char *check,
                     const char *base, const char *now, const char *why)
{
    pcb_column(g->out, c->id, 32);
    fprintf(g->out, " %-18s %-12s %12s %12s  info%s%s\n", impl, check, base, now,
            why && *why ? ": " : "", why ? why : "");
}

static int load_same(const char *dir, const char *suite, const bench_config *c, bench_result *b)
{
    char path[1024];
    memset(b, 0, sizeof *b);
    b->config = *c;
    int rc = bench_store_path(dir, suite, c, path, sizeof path);
    return rc == PCB_OK ? bench_store_read(path, b) : rc;
}

static const bench_entry *timed_ok(bench_result *r, const char *impl)
{
    const bench_entry *e = impl && *impl ? bench_result_entry(r, impl, 0) : NULL;
    return e && e->status == ST_OK && e->compute.reps > 0 && e->compute.cpu_median > 0 ? e : NULL;
}

static void check_counters(gate *g, const bench_config *c, const bench_entry *e,
                           const bench_entry *b)
{
    const char *names[3] = {"distance_evals", "bids", "iterations"};
    const int64_t now[3] = {e->counters.distance_evals, e->counters.bids, e->counters.iterations};
    const int64_t was[3] = {b->counters.distance_evals, b->counters.bids, b->counters.iterations};
    for (int i = 0; i < 3; i++) {
        if (now[i] < 0 && was[i] < 0)
            continue;
        char sb[32], sn[32];
        snprintf(sb, sizeof sb, "%lld", (long long)was[i]);
        snprintf(sn, sizeof sn, "%lld", (long long)now[i]);
        row(g, c, e->impl, names[i], sb, sn, now[i] == was[i],
            now[i] == was[i] ? NULL : "deterministic work changed");
    }
}

static void check_instructions(gate *g, const bench_config *c, const char *impl,
                               const bench_icounts *base, const bench_icounts *now)
{
    const bench_icount *b = bench_icounts_find(base, c->id, impl);
    const bench_icount *n = bench_icounts_find(now, c->id, impl);
    if (!n)
        return;
    char sb[32], sn[32], why[128] = "";
    snprintf(sn, sizeof sn, "%.4g", n->instructions);
    if (!b || !(b->instructions > 0)) {
        info_row(g, c, impl, "instructions", "absent", sn,
                 "not gated: absent from the baseline (refresh it)");
        return;
    }
    snprintf(sb, sizeof sb, "%.4g", b->instructions);
    double q = n->instructions / b->instructions;
    int ok = q <= 1 + ICOUNT_TOLERANCE;
    if (!ok)
        snprintf(why, sizeof why, "%+.1f%% instructions per compute (over %+.0f%%): slower code",
                 (q - 1) * 100, ICOUNT_TOLERANCE * 100);
    else if (q < 1 / (1 + ICOUNT_TOLERANCE)) {
        snprintf(why, sizeof why, "%+.1f%% instructions: an improvement, record it in the baseline",
                 (q - 1) * 100);
        g->improvements++;
    }
    row(g, c, impl, "instructions", sb, sn, ok, why);
}

/* A CPU-time check of --gate-timing: every sample over the median of its
 * reference (the problem's reference, or the anchor) in the same run, the
 * baseline's against now's, by the Mann-Whitney test (bench_mwu.c). It
 * fails only when the change is significant (p < alpha) and the ratio
 * outside the tolerance either way: noise alone never fails it. */
static void check_timing(gate *g, int gated, const bench_config *c, const char *impl,
                         const char *check, const bench_figure *was, double was_ref,
                         const bench_figure *now, double now_ref)
{
    double a[MAX_SAMPLES], b[MAX_SAMPLES];
    for (int i = 0; i < was->reps; i++)
        a[i] = was->cpu[i] / was_ref;
    for (int i = 0; i < now->reps; i++)
        b[i] = now->cpu[i] / now_ref;
    bench_mwu m;
    if (bench_mwu_test(a, was->reps, b, now->reps, g->alpha, &m) != PCB_OK)
        return;
    char sb[32], sn[32], why[200];
    snprintf(sb, sizeof sb, "%.4g", was->cpu_median / was_ref);
    snprintf(sn, sizeof sn, "%.4g", now->cpu_median / now_ref);
    const int significant = m.p < g->alpha;
    const int ok = !significant || (m.ratio <= 1 + g->tol && m.ratio >= 1 / (1 + g->tol));
    snprintf(why, sizeof why, "ratio %.2fx the baseline's [%.3g, %.3g], p %.2g%s", m.ratio, m.lo,
             m.hi, m.p,
             ok ? (significant ? ", within the tolerance" : ", no significant change")
             : m.ratio > 1 ? ": slower (or its reference faster)"
                           : ": faster (or its reference slower)");
    if (gated)
        row(g, c, impl, check, sb, sn, ok, why);
    else
        info_row(g, c, impl, check, sb, sn, why);
}

int bench_gate_ready(const char *baseline_dir, const char *suite, FILE *out)
{
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/%s", baseline_dir, suite);
    if (access(probe, R_OK | X_OK) == 0)
        return 1;
    fprintf(out, "gate: no baseline in %s; create one on purpose with\n"
                 "  pcbench bench --suite %s --update-baseline %s\n",
            probe, suite, baseline_dir);
    return 0;
}

/* The instruction-count baseline of this run's toolchain, with one line
 * saying why there is none. */
static int load_icounts(const bench_gate_opts *go, bench_icounts *base, FILE *out)
{
    if (!go->counts) {
        fprintf(out, "instructions: not counted (%s); verification and work counters still "
                     "gated\n", go->counts_why ? go->counts_why : "unavailable");
        return 0;
    }
    const bench_toolchain *tc = &go->counts->tc;
    int rc = bench_icounts_read(go->baseline_dir, tc->key, base);
    if (rc == PCB_OK) {
        fprintf(out, "instructions: gated against %s/instructions/%s.json (%s, %s; counted "
                     "with %s)\n", go->baseline_dir, tc->key, tc->compiler, tc->libc,
                go->counts->counter);
        return 1;
    }
    fprintf(out, "instructions: no baseline for this toolchain (%s, %s, flags %s: %s); counts "
                 "not gated, verification and work counters still are\n",
            tc->compiler, tc->libc, tc->cflags, tc->key);
    return 0;
}

int bench_gate(const bench_gate_opts *go, const bench_suite *suite, bench_result *results,
               int count, FILE *out)
{
    gate g = {.out = out, .tol = go->tolerance, .alpha = go->alpha};
    const char *dir = go->baseline_dir;
    if (!bench_gate_ready(dir, suite->name, out))
        return 1;
    fprintf(out, "\n== regression gate: suite %s against %s ==\n", suite->name, dir);
    bench_icounts ibase = {0};
    int have_icounts = load_icounts(go, &ibase, out);
    /* The anchor: the first configuration whose reference was timed. */
    bench_result anchor_base = {0};
    const bench_entry *anchor_now = NULL, *anchor_was = NULL;
    const bench_config *anchor_cfg = NULL;
    for (int i = 0; i < count && !anchor_cfg; i++) {
        anchor_now = timed_ok(&results[i], results[i].reference);
        if (!anchor_now)
            continue;
        anchor_cfg = &results[i].config;
        if (load_same(dir, suite->name, anchor_cfg, &anchor_base) == PCB_OK)
            anchor_was = timed_ok(&anchor_base, results[i].reference);
    }
    int same_machine = anchor_was && strcmp(anchor_base.machine, go->machine) == 0;
    int gate_timing = go->gate_timing && same_machine;
    if (go->gate_timing && !same_machine)
        fprintf(out, "timing: not gated: the baseline was measured on %s, this is %s (CPU-time "
                     "ratios move with the processor)\n",
                anchor_base.machine[0] ? anchor_base.machine : "an unknown machine", go->machine);
    else if (gate_timing)
        fprintf(out, "timing: CPU-time ratios gated where a Mann-Whitney test finds a change "
                     "(p < %g) beyond %.0f%% (same machine as the baseline)\n", go->alpha,
                go->tolerance * 100);
    else
        fprintf(out, "timing: CPU-time ratios shown as information (--gate-timing gates them "
                     "on the baseline's machine)\n");
    fprintf(out, "%-32s %-18s %-12s %12s %12s  %s\n", "configuration", "implementation",
            "check", "baseline", "now", "verdict");
    for (int i = 0; i < count; i++) {
        bench_result *r = &results[i], base;
        const bench_config *c = &r->config;
        int rc = load_same(dir, suite->name, c, &base);
        if (rc != PCB_OK) {
            row(&g, c, "-", "baseline", "missing", "-", 0, pcb_errmsg());
            bench_result_free(&base);
            continue;
        }
        const bench_entry *ref_now = timed_ok(r, r->reference);
        const bench_entry *ref_was = timed_ok(&base, r->reference);
        for (int k = 0; k < r->count; k++) {
            const bench_entry *e = &r->entries[k];
            const bench_entry *b = bench_result_entry(&base, e->impl, 0);
            if (e->status == ST_FAILED_VERIFY || e->status == ST_FAILED_RUN) {
                row(&g, c, e->impl, "verified", b ? bench_status_name(b->status) : "-",
                    bench_status_name(e->status), 0, e->detail);
                continue;
            }
            if (e->status != ST_OK) {
                if (b && b->status == ST_OK)
                    fprintf(out, "%-32s %-18s not run here: %s: %s\n", c->id, e->impl,
                            bench_status_name(e->status), e->detail);
                continue;
            }
            if (!b || b->status != ST_OK) { /* e.g. a new implementation */
                fprintf(out, "%-32s %-18s verified, not gated: %s in the baseline (refresh it)\n",
                        c->id, e->impl, b ? bench_status_name(b->status) : "absent");
                continue;
            }
            row(&g, c, e->impl, "verified", "ok", "ok", 1, NULL);
            check_counters(&g, c, e, b);
            if (e->device != PCB_CPU) /* device runs are compared with --compare */
                continue;
            if (have_icounts)
                check_instructions(&g, c, e->impl, &ibase, go->counts);
            const bench_entry *en = timed_ok(r, e->impl), *bw = timed_ok(&base, e->impl);
            if (!en || !bw)
                continue;
            if (strcmp(e->impl, r->reference) != 0) {
                if (ref_now && ref_was)
                    check_timing(&g, gate_timing, c, e->impl, "cpu/ref", &bw->compute,
                             ref_was->compute.cpu_median, &en->compute,
                             ref_now->compute.cpu_median);
            } else if (same_machine && anchor_cfg != c) {
                check_timing(&g, gate_timing, c, e->impl, "cpu/anchor", &bw->compute,
                             anchor_was->compute.cpu_median, &en->compute,
                             anchor_now->compute.cpu_median);
            }
        }
        bench_result_free(&base);
    }
    if (anchor_cfg)
        fprintf(out, "(cpu/ref: CPU time over the problem's reference on the same configuration; "
                     "cpu/anchor: a reference's CPU time over %s %s)\n",
                anchor_cfg->id, anchor_now->impl);
    bench_result_free(&anchor_base);
    bench_icounts_free(&ibase);
    fprintf(out, "gate: %d regression%s in %d checks", g.failures, g.failures == 1 ? "" : "s",
            g.checks);
    if (g.improvements)
        fprintf(out, ", %d improvement%s to record", g.improvements,
                g.improvements == 1 ? "" : "s");
    fputc('\n', out);
    if (g.failures || g.improvements)
        fprintf(out, "If the change is intended, refresh the baseline on purpose and commit it:\n"
                     "  pcbench bench --suite %s --update-baseline %s\n",
                suite->name, dir);
    return g.failures;
}

/* One figure now against the same one stored; 1 when significantly slower. */
static int compare_figure(gate *g, const bench_config *c, const char *impl, const char *name,
                          const bench_figure *was, const bench_figure *now)
{
    bench_mwu m;
    if (was->reps < 1 && now->reps < 1)
        return 0; /* a figure neither run takes (cold, where not timed) */
    char sb[32], sn[32], why[200];
    snprintf(sb, sizeof sb, "%.4g", was->median * 1e3);
    snprintf(sn, sizeof sn, "%.4g", now->median * 1e3);
    /* one side without samples, or a median of 0: said and counted, never
     * dropped silently, never a ratio of 0 */
    const char *cannot = was->reps < 1 ? "the stored figure has no samples"
                         : now->reps < 1 ? "this run's figure has no samples"
                         : !(was->median > 0) || !(now->median > 0)
                             ? "a median of 0 ms (below the clock's resolution, or a damaged file)"
                             : NULL;
    if (cannot) {
        g->unusable++;
        snprintf(why, sizeof why, "cannot compare: %s", cannot);
        untold_row(g, c, impl, name, sb, sn, why);
        return 0;
    }
    if (strcmp(was->clock, now->clock) != 0 ||
        bench_mwu_test(was->sample, was->reps, now->sample, now->reps, g->alpha, &m) != PCB_OK)
        return 0;
    if (least_p(was->reps, now->reps) >= g->alpha) { /* no change could be significant */
        int k = 1;
        while (least_p(k, k) >= g->alpha)
            k++;
        g->need = k;
        g->undecidable++;
        snprintf(why, sizeof why, "cannot tell: %d and %d samples can never reach p < %g "
                 "(at least %d a side)", was->reps, now->reps, g->alpha, k);
        untold_row(g, c, impl, name, sb, sn, why);
        return 0;
    }
    const int significant = m.p < g->alpha, worse = significant && m.ratio > 1 + g->tol,
              better = significant && m.ratio < 1 / (1 + g->tol);
    snprintf(why, sizeof why, "%s%.3fx [%.3g, %.3g], p %.2g (%d and %d samples, %s time%s)",
             worse ? "slower " : better ? "faster " : significant ? "changed within tolerance "
                                                               : "no significant change ",
             m.ratio, m.lo, m.hi, m.p, was->reps, now->reps, now->clock,
             now->unreliable || was->unreliable ? "; unreliable: throttled samples dropped" : "");
    row(g, c, impl, name, sb, sn, !worse, why);
    return worse;
}

/* The comparison of every figure of results with the same one stored in dir:
 * a two-sided Mann-Whitney test over their samples (bench_mwu.c) and the
 * Hodges-Lehmann ratio now / stored. A figure is slower only when the
 * change is significant (p < alpha) and its ratio above 1 + tolerance;
 * noise alone, or a real change within the tolerance, passes. */
int bench_compare(const char *dir, const bench_suite *suite, bench_result *results, int count,
                  double tolerance, double alpha, FILE *out)
{
    gate g = {.out = out, .tol = tolerance, .alpha = alpha};
    int slower = 0;
    fprintf(out, "\n== comparison with %s (suite %s: Mann-Whitney p < %g and a change over "
                 "%.0f%%) ==\n", dir, suite->name, alpha, tolerance * 100);
    fprintf(out, "%-32s %-18s %-12s %12s %12s  %s\n", "configuration", "implementation",
            "figure", "stored ms", "now ms", "verdict: ratio now/stored [interval], p");
    for (int i = 0; i < count; i++) {
        bench_result *r = &results[i], base;
        int rc = load_same(dir, suite->name, &r->config, &base);
        if (rc != PCB_OK) {
            const int missing = rc == PCB_EIO && errno == ENOENT;
            bench_result_free(&base);
            if (!missing) /* unreadable, or another format: never guessed at */
                return -1;
            continue;
        }
        for (int k = 0; k < r->count; k++) {
            const bench_entry *e = &r->entries[k], *b = bench_result_entry(&base, e->impl, 0);
            if (e->status != ST_OK || !b || b->status != ST_OK)
                continue;
            const char *names[3] = {"compute", "cold", "e2e"};
            const bench_figure *fn[3] = {&e->compute, &e->compute_cold, &e->e2e};
            const bench_figure *fb[3] = {&b->compute, &b->compute_cold, &b->e2e};
            for (int f = 0; f < 3; f++)
                slower += compare_figure(&g, &r->config, e->impl, names[f], fb[f], fn[f]);
        }
        bench_result_free(&base);
    }
    fprintf(out, "compare: %d of %d matching figures significantly slower than %s by more than "
                 "%.0f%%\n", slower, g.checks, dir, tolerance * 100);
    if (slower > 0) { /* a slowdown is the verdict, whatever could not be told */
        if (g.unusable + g.undecidable)
            fprintf(out, "compare: %d more figure%s could not be compared (the rows marked ?)\n",
                    g.unusable + g.undecidable, g.unusable + g.undecidable == 1 ? "" : "s");
        return slower;
    }
    if (g.unusable) {
        pcb_fail(PCB_EINVAL, "%d figure%s could not be compared: no samples on a side, or a "
                 "median of 0 (the rows say which)", g.unusable, g.unusable == 1 ? "" : "s");
        return -1;
    }
    if (g.undecidable) {
        pcb_fail(PCB_EINVAL, "%d figure%s could not be compared: their samples can never reach "
                 "p < %g (at least %d a side)", g.undecidable, g.undecidable == 1 ? "" : "s",
                 alpha, g.need);
        return -1;
    }
    if (g.checks == 0) {
        pcb_fail(PCB_EINVAL, "nothing compared: no figure here matches one stored in %s", dir);
        return -1;
    }
    return slower;
}
