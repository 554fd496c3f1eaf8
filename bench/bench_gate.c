/* bench_gate.c - the regression gate and run-to-run comparison.
 *
 * Absolute times on a shared machine swing by several times, so the gate
 * rests on what does not: (1) every implementation verified; (2) the
 * deterministic work counters equal to the baseline's; (3) CPU time relative
 * to a reference measured in the same run: each implementation against its
 * problem's serial reference on the same configuration, and each reference
 * against the first configuration's reference (the anchor), within a
 * tolerance of the baseline's ratio, in both directions (a ratio that fell
 * means the reference got slower, or the baseline is out of date). */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

typedef struct {
    FILE *out;
    double tol;
    int checks, failures;
} gate;

static void row(gate *g, const bench_config *c, const char *impl, const char *check,
                const char *base, const char *now, int ok, const char *why)
{
    g->checks++;
    g->failures += !ok;
    fprintf(g->out, "%-32s %-18s %-12s %12s %12s  %s%s%s\n", c->id, impl, check, base, now,
            ok ? "ok" : "FAIL", why && *why ? ": " : "", why ? why : "");
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

static void check_ratio(gate *g, const bench_config *c, const char *impl, const char *check,
                        double base, double now)
{
    char sb[32], sn[32], why[96] = "";
    snprintf(sb, sizeof sb, "%.4g", base);
    snprintf(sn, sizeof sn, "%.4g", now);
    double q = now / base;
    int ok = q <= 1 + g->tol && q >= 1 / (1 + g->tol);
    if (!ok && q > 1)
        snprintf(why, sizeof why, "ratio %.2fx the baseline's: slower (or its reference faster)",
                 q);
    else if (!ok)
        snprintf(why, sizeof why, "ratio %.2fx the baseline's: faster (or its reference slower)",
                 q);
    row(g, c, impl, check, sb, sn, ok, why);
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

int bench_gate(const char *baseline_dir, const char *machine, const bench_suite *suite,
               bench_result *results,
               int count, double tolerance, FILE *out)
{
    gate g = {.out = out, .tol = tolerance};
    if (!bench_gate_ready(baseline_dir, suite->name, out))
        return 1;
    fprintf(out, "\n== regression gate: suite %s against %s (ratio tolerance %.0f%%) ==\n",
            suite->name, baseline_dir, tolerance * 100);
    fprintf(out, "%-32s %-18s %-12s %12s %12s  %s\n", "configuration", "implementation",
            "check", "baseline", "now", "verdict");
    /* The anchor: the first configuration whose reference was timed. */
    bench_result anchor_base = {0};
    const bench_entry *anchor_now = NULL, *anchor_was = NULL;
    const bench_config *anchor_cfg = NULL;
    for (int i = 0; i < count && !anchor_cfg; i++) {
        anchor_now = timed_ok(&results[i], results[i].reference);
        if (!anchor_now)
            continue;
        anchor_cfg = &results[i].config;
        if (load_same(baseline_dir, suite->name, anchor_cfg, &anchor_base) == PCB_OK)
            anchor_was = timed_ok(&anchor_base, results[i].reference);
    }
    if (anchor_was && strcmp(anchor_base.machine, machine) != 0) {
        fprintf(out, "(cpu/anchor not gated: the baseline was measured on %s, this is %s)\n",
                anchor_base.machine[0] ? anchor_base.machine : "an unknown machine", machine);
        anchor_was = NULL;
    }
    for (int i = 0; i < count; i++) {
        bench_result *r = &results[i], base;
        const bench_config *c = &r->config;
        int rc = load_same(baseline_dir, suite->name, c, &base);
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
            const bench_entry *en = timed_ok(r, e->impl), *bw = timed_ok(&base, e->impl);
            if (!en || !bw)
                continue;
            if (strcmp(e->impl, r->reference) != 0) {
                if (ref_now && ref_was)
                    check_ratio(&g, c, e->impl, "cpu/ref", bw->compute.cpu_median / ref_was->compute.cpu_median,
                                en->compute.cpu_median / ref_now->compute.cpu_median);
            } else if (anchor_was && anchor_cfg != c) {
                check_ratio(&g, c, e->impl, "cpu/anchor",
                            bw->compute.cpu_median / anchor_was->compute.cpu_median,
                            en->compute.cpu_median / anchor_now->compute.cpu_median);
            }
        }
        bench_result_free(&base);
    }
    if (anchor_cfg)
        fprintf(out, "(cpu/ref: CPU time over %s's reference on the same configuration; "
                     "cpu/anchor: a reference's CPU time over %s %s)\n",
                "each problem", anchor_cfg->id, anchor_now->impl);
    bench_result_free(&anchor_base);
    fprintf(out, "gate: %d regression%s in %d checks\n", g.failures, g.failures == 1 ? "" : "s",
            g.checks);
    if (g.failures)
        fprintf(out, "If the change is intended, refresh the baseline on purpose and commit it:\n"
                     "  pcbench bench --suite %s --update-baseline %s\n",
                suite->name, baseline_dir);
    return g.failures;
}

int bench_compare(const char *dir, const bench_suite *suite, bench_result *results, int count,
                  double tolerance, FILE *out)
{
    gate g = {.out = out, .tol = tolerance};
    int slower = 0;
    fprintf(out, "\n== comparison with %s (suite %s, tolerance %.0f%%) ==\n", dir, suite->name,
            tolerance * 100);
    fprintf(out, "%-32s %-18s %-12s %12s %12s  %s\n", "configuration", "implementation",
            "median ms", "stored", "now", "verdict");
    for (int i = 0; i < count; i++) {
        bench_result *r = &results[i], base;
        if (load_same(dir, suite->name, &r->config, &base) != PCB_OK) {
            bench_result_free(&base);
            continue;
        }
        for (int k = 0; k < r->count; k++) {
            const bench_entry *e = &r->entries[k], *b = bench_result_entry(&base, e->impl, 0);
            if (e->status != ST_OK || !b || b->status != ST_OK || !(b->compute.median > 0))
                continue;
            char sb[32], sn[32], why[96] = "";
            snprintf(sb, sizeof sb, "%.4g", b->compute.median * 1e3);
            snprintf(sn, sizeof sn, "%.4g", e->compute.median * 1e3);
            double q = e->compute.median / b->compute.median;
            if (q > 1 + tolerance) {
                slower++;
                snprintf(why, sizeof why, "%.2fx slower (%s time)", q, e->compute.clock);
            } else if (q < 1 / (1 + tolerance)) {
                snprintf(why, sizeof why, "%.2fx faster", 1 / q);
            }
            row(&g, &r->config, e->impl, e->compute.clock, sb, sn, q <= 1 + tolerance, why);
        }
        bench_result_free(&base);
    }
    fprintf(out, "compare: %d of %d matching results slower than %s by more than %.0f%%\n",
            slower, g.checks, dir, tolerance * 100);
    return slower;
}
