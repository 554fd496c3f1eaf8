/* test_harness.c - the benchmark harness's own parts: the JSON writer and
 * reader, a figure's statistics, noise and stopping rule, the GPU's state
 * through NVML (a scripted stand-in library), and the result store's round
 * trip (what pcbench bench writes, it reads back the same: resume, gate,
 * compare). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcbench_judge.h"
#include "bench/harness/harness.h"
#include "testlib.h"

/* Parse text, re-emit it, parse the output again: same document. */
static char *reemit(const json *j)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    json_write(f, j);
    fclose(f);
    return buf;
}

static void test_json_values(void)
{
    const char *text = "{\"name\": \"a \\\"q\\\" \\\\ \\n\\t\\u00e9\", \"n\": -1.5e3, \"ok\": true,"
                       " \"no\": false, \"none\": null, \"list\": [1, 2.5, [], {}],"
                       " \"obj\": {\"k\": \"v\"}}";
    json j;
    CHECK_RC(json_parse(text, "test", &j), PCB_OK);
    CHECK(j.type == JSON_OBJ && j.count == 7);
    CHECK(strcmp(json_str(&j, "name"), "a \"q\" \\ \n\t\xc3\xa9") == 0);
    CHECK(json_num(&j, "n", 0) == -1500);
    CHECK(json_num(&j, "ok", 0) == 1 && json_num(&j, "no", 1) == 0);
    CHECK(json_get(&j, "none") && json_get(&j, "none")->type == JSON_NULL);
    CHECK(json_num(&j, "absent", 42) == 42 && json_str(&j, "absent") == NULL);
    const json *list = json_get(&j, "list");
    CHECK(list && list->type == JSON_ARR && list->count == 4 && list->kids[1].num == 2.5);
    CHECK(strcmp(json_str(json_get(&j, "obj"), "k"), "v") == 0);
    CHECK(json_get(list, "k") == NULL); /* an array has no members */
    char *again = reemit(&j);
    json k;
    CHECK(again && json_parse(again, "again", &k) == PCB_OK);
    if (again) {
        CHECK(strcmp(json_str(&k, "name"), json_str(&j, "name")) == 0);
        CHECK(json_num(&k, "n", 0) == -1500 && json_get(&k, "list")->count == 4);
        char *twice = reemit(&k);
        CHECK(twice && strcmp(twice, again) == 0); /* the writer is stable */
        free(twice);
        json_free(&k);
    }
    free(again);
    json_free(&j);

    /* the writers: escapes, and null for numbers JSON cannot hold */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_put_str(f, "x\"\\\x01y");
    fputc(' ', f);
    json_put_num(f, NAN);
    fputc(' ', f);
    json_put_num(f, INFINITY);
    fputc(' ', f);
    json_put_num(f, 0.1);
    fclose(f);
    CHECK(strncmp(buf, "\"x\\\"\\\\\\u0001y\" null null 0.1", 28) == 0);
    free(buf);
}

static void test_json_rejects(void)
{
    static const char *const bad[] = {
        "",          "{",           "{\"a\": }",  "{\"a\" 1}",     "[1, 2",      "[1,]",
        "\"open",    "{\"a\": 1} x", "tru",       "-",            "01x",        "[\"\\q\"]",
        "{1: 2}",    "nul",         "[\"\\u12\"]", "{\"a\": [1}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json j;
        int rc = json_parse(bad[i], "doc", &j);
        CHECK_RC(rc, PCB_EBADFILE);
        if (rc == PCB_EBADFILE)
            CHECK(strstr(pcb_errmsg(), "doc") && strstr(pcb_errmsg(), "byte"));
        else
            json_free(&j);
    }
    /* deep nesting ends in an error, not a stack overflow */
    enum { DEEP = 100000 };
    char *deep = malloc(2 * DEEP + 1);
    memset(deep, '[', DEEP);
    memset(deep + DEEP, ']', DEEP);
    deep[2 * DEEP] = '\0';
    json j;
    int rc = json_parse(deep, "deep", &j);
    CHECK(rc == PCB_EBADFILE);
    if (rc == PCB_OK)
        json_free(&j);
    free(deep);
}

static void test_figure_stats(void)
{
    bench_figure f = {.reps = 4, .sample = {3, 1, 2, 4}, .cpu = {6, 2, 4, 8}};
    bench_figure_stats(&f);
    CHECK(f.median == 2.5 && f.mean == 2.5 && f.min == 1 && f.cpu_median == 5);
    CHECK(fabs(f.stddev - sqrt(5.0 / 3)) < 1e-15 && fabs(f.cv - f.stddev / 2.5) < 1e-15);
    bench_figure one = {.reps = 1, .sample = {7}, .cpu = {7}};
    bench_figure_stats(&one);
    CHECK(one.median == 7 && one.stddev == 0 && one.cv == 0);
    bench_figure odd = {.reps = 5, .sample = {5, 1, 4, 2, 3}, .cpu = {0}};
    bench_figure_stats(&odd);
    CHECK(odd.median == 3 && odd.min == 1);
    bench_figure none = {.reps = 0};
    bench_figure_stats(&none);
    CHECK(isnan(none.median) && isnan(none.mean));
    bench_figure full = {.reps = MAX_SAMPLES};
    for (int i = 0; i < MAX_SAMPLES; i++)
        full.sample[i] = full.cpu[i] = MAX_SAMPLES - i;
    bench_figure_stats(&full);
    CHECK(full.median == MAX_SAMPLES / 2 + 0.5 && full.min == 1);
}

/* The median's relative standard error, and samples dropped as throttled. */
static void test_noise_and_dropped(void)
{
    double v[10] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
    /* n = 10: the order statistics 1 and 10 bound the median 5.5 */
    CHECK(fabs(bench_noise(v, 10) - (10 - 1) / 3.92 / 5.5) < 1e-15);
    double same[5] = {2, 2, 2, 2, 2};
    CHECK(bench_noise(same, 5) == 0);
    CHECK(isnan(bench_noise(v, 2)));
    double w[MAX_SAMPLES];
    for (int i = 0; i < MAX_SAMPLES; i++)
        w[i] = 100 + i % 50; /* 100..149, each twice */
    double sorted_40 = 119, sorted_61 = 130; /* n = 100: the ranks 40 and 61 */
    CHECK(fabs(bench_noise(w, MAX_SAMPLES) - (sorted_61 - sorted_40) / 3.92 / 124.5) < 1e-12);

    bench_figure f = {0};
    bench_gpu_state hot = {1980, 2619, 60, 400, 0}, slow = {900, 2619, 85, 700, 0x40};
    bench_figure_add(&f, 1.0, 1.0, &hot, 0);
    bench_figure_add(&f, 9.0, 9.0, &slow, 1);
    bench_figure_add(&f, 3.0, 3.0, &hot, 0);
    bench_figure_stats(&f);
    CHECK(f.reps == 2 && f.dropped == 1 && f.have_gpu && !f.unreliable);
    CHECK(f.median == 2 && f.dropped_sample[0] == 9 && f.dropped_gpu[0].sm_mhz == 900);
    CHECK(f.gpu[1].sm_mhz == 1980 && f.gpu[1].reasons == 0);
    bench_figure_add(&f, 8.0, 8.0, &slow, 1);
    bench_figure_add(&f, 7.0, 7.0, &slow, 1);
    bench_figure_stats(&f);
    CHECK(f.dropped == 3 && f.unreliable && f.median == 2); /* more dropped than kept */
    bench_figure many = {0};
    for (int i = 0; i < MAX_DROPPED + 5; i++)
        bench_figure_add(&many, 1.0, 1.0, NULL, 1);
    bench_figure_stats(&many);
    CHECK(many.dropped == MAX_DROPPED + 5 && many.reps == 0 && many.unreliable &&
          isnan(many.median));
}

/* When a figure stops taking samples, and how many the next round takes. */
static void test_more_samples(void)
{
    char why[16];
    const bench_sampling base = {.kept = 10, .noise = 0.004, .target = 0.005, .min = 10,
                                 .max = MAX_SAMPLES, .spent = 1, .limit = 3,
                                 .per_sample = 0.1};
    bench_sampling s = base;
    CHECK(bench_more_samples(&s, why) == 0 && strcmp(why, "noise") == 0);
    s.noise = 0.01; /* 4x the variance: 30 more wanted, at most as many as kept */
    CHECK(bench_more_samples(&s, why) == 10 && why[0] == '\0');
    s.noise = 0.0055; /* 10 (1.21 - 1) = 2.1: 3 more */
    CHECK(bench_more_samples(&s, why) == 3);
    s = base, s.noise = 0.01, s.spent = 2.85; /* time for one more */
    CHECK(bench_more_samples(&s, why) == 1);
    s.spent = 3;
    CHECK(bench_more_samples(&s, why) == 0 && strcmp(why, "time") == 0);
    s.budget_bound = 1;
    CHECK(bench_more_samples(&s, why) == 0 && strcmp(why, "budget") == 0);
    s = base, s.kept = 4; /* under the minimum (samples were dropped): make it up */
    CHECK(bench_more_samples(&s, why) == 6);
    s = base, s.target = 0, s.noise = 0.5; /* --reps: a fixed count */
    CHECK(bench_more_samples(&s, why) == 0 && strcmp(why, "fixed") == 0);
    s = base, s.noise = 0.5, s.kept = s.max = 40;
    CHECK(bench_more_samples(&s, why) == 0 && strcmp(why, "samples") == 0);
    s = base, s.noise = 0.5, s.max = 15; /* no more than the maximum */
    CHECK(bench_more_samples(&s, why) == 5);
    s = base, s.noise = 0.5, s.dropped = MAX_DROPPED;
    CHECK(bench_more_samples(&s, why) == 0 && strcmp(why, "throttled") == 0);
    s = base, s.kept = 2, s.min = 2, s.noise = NAN; /* too few to estimate: double */
    CHECK(bench_more_samples(&s, why) == 2);
}

/* A whole-run budget: a figure's least time, and the share of what is left
 * that the timing of a configuration gets. */
static void test_budget_shares(void)
{
    /* at least min samples of at least a sample's length, at most the figure time */
    CHECK(bench_figure_minimum(0.001, 10, 0.03, 1) == 10 * 0.03);
    CHECK(bench_figure_minimum(0.2, 10, 0.03, 1) == 1);
    CHECK(bench_figure_minimum(2.5, 10, 0.03, 1) == 0); /* one run: the verification run */
    const double verify[3] = {10, 0, 30}, timing[3] = {1, 3, 4};
    bench_ctx ctx = {.started = bench_now(), .total = 3, .budget = 100, .verify_cost = verify,
                     .timing_cost = timing};
    /* 100 s, less the 30 s of verifications to come, over least times 1 + 3 + 4 */
    double a = bench_timing_allowance(&ctx);
    CHECK(fabs(a - 70.0 / 8) < 0.05);
    ctx.index = 2; /* the last: all that is left */
    CHECK(fabs(bench_timing_allowance(&ctx) - 100) < 0.05);
    ctx.started -= 200; /* overspent: a token, never nothing */
    CHECK(bench_timing_allowance(&ctx) > 0 && bench_timing_allowance(&ctx) < 0.01);
    ctx.started += 200, ctx.index = 0, ctx.verify_scale = 0.5; /* verifications took half */
    CHECK(fabs(bench_timing_allowance(&ctx) - 85.0 / 8) < 0.05);
    ctx.budget = 0; /* no whole-run budget: the figure time rules */
    CHECK(bench_timing_allowance(&ctx) == 0);
}

/* bench_nvml.c through a scripted NVML (tests/fake_nvml.c, built beside this
 * test), and without one. */
static void test_nvml(void)
{
    char fake[1024];
    ssize_t len = readlink("/proc/self/exe", fake, sizeof fake - 32);
    if (len <= 0)
        SKIP("no /proc/self/exe");
    fake[len] = '\0';
    snprintf(strrchr(fake, '/'), 32, "/libfake_nvml.so");
    if (access(fake, R_OK) != 0)
        SKIP("%s was not built", fake);

    bench_nvml_close();
    setenv("PCBENCH_NVML", "/nonexistent/libnvidia-ml.so.1", 1);
    CHECK_RC(bench_nvml_open(), PCB_EUNAVAIL);
    CHECK(strncmp(bench_nvml_status(), "no NVML (/nonexistent/", 22) == 0);
    CHECK_RC(bench_nvml_open(), PCB_EUNAVAIL); /* tried once, answered the same */
    bench_gpu_state g;
    CHECK_RC(bench_nvml_read(&g), PCB_EUNAVAIL);
    CHECK(isnan(g.sm_mhz) && isnan(bench_nvml_max_sm_mhz()));

    bench_nvml_close();
    setenv("PCBENCH_NVML", fake, 1);
    setenv("FAKE_NVML_INIT", "fail", 1);
    CHECK_RC(bench_nvml_open(), PCB_EUNAVAIL);
    CHECK(strstr(bench_nvml_status(), "nvmlInit: RM has detected") != NULL);

    bench_nvml_close();
    unsetenv("FAKE_NVML_INIT");
    setenv("FAKE_NVML_SM", "1980,1000", 1);
    CHECK_RC(bench_nvml_open(), PCB_OK);
    CHECK(bench_nvml_max_sm_mhz() == 1980 && strstr(bench_nvml_status(), "1980 MHz"));
    bench_gpu_state before, after;
    CHECK_RC(bench_nvml_read(&before), PCB_OK);
    CHECK_RC(bench_nvml_read(&after), PCB_OK);
    CHECK(before.sm_mhz == 1980 && before.reasons == 0 && before.mem_mhz == 2619);
    CHECK(after.sm_mhz == 1000 && after.reasons == 0x4 && after.temp_c == 41 &&
          after.power_w == 312.5f);
    bench_gpu_state span = bench_gpu_span(&before, &after);
    CHECK(span.sm_mhz == 1000 && span.reasons == 0x4);
    CHECK(bench_gpu_throttled(&span, 1980, 0.75) && !bench_gpu_throttled(&span, 1980, 0.5));
    CHECK(!bench_gpu_throttled(&before, 1980, 0.75));
    bench_gpu_state unknown = {NAN, NAN, NAN, NAN, 0};
    CHECK(!bench_gpu_throttled(&unknown, 1980, 0.75)); /* an unread clock drops nothing */
    span = bench_gpu_span(&unknown, &after);
    CHECK(span.sm_mhz == 1000); /* a reading that failed does not hide the other */
    char text[160];
    bench_gpu_reasons_text(span.reasons, text, sizeof text);
    CHECK(strcmp(text, "sw-power-cap") == 0);
    bench_gpu_reasons_text(0x48 | 1ull << 20, text, sizeof text);
    CHECK(strcmp(text, "hw-slowdown,hw-thermal,bit20") == 0);
    bench_gpu_reasons_text(0, text, sizeof text);
    CHECK(text[0] == '\0');
    bench_nvml_close();
    unsetenv("PCBENCH_NVML");
    unsetenv("FAKE_NVML_SM");
}

static void test_status_names(void)
{
    for (int s = ST_NONE; s <= ST_UNAVAILABLE; s++)
        CHECK(bench_status_parse(bench_status_name((bench_status)s)) == (bench_status)s);
    CHECK(strcmp(bench_status_name(ST_FAILED_VERIFY), "failed-verification") == 0);
    CHECK(bench_status_parse("no-such-status") == ST_NONE && bench_status_parse(NULL) == ST_NONE);
}

/* A result with two entries written and read back field for field. */
static void test_store_round_trip(void)
{
    char dir[] = "/tmp/pcbench-store-XXXXXX";
    if (!mkdtemp(dir))
        SKIP("no temporary folder");
    bench_result w = {.config = {.problem = PCB_EMD, .dataset = "sphere", .batch = 2, .n = 256,
                                 .nq = 256, .id = "emd/sphere/b2/n256"},
                      .reference = "exact", .load_avg = 0.25};
    /* entries move when the array grows: look them up after creating both */
    CHECK(bench_result_entry(&w, "auction", 1) && bench_result_entry(&w, "cuda_auction", 1));
    bench_entry *a = bench_result_entry(&w, "auction", 0);
    bench_entry *b = bench_result_entry(&w, "cuda_auction", 0);
    CHECK(a && b && w.count == 2);
    if (!a || !b)
        return;
    a->device = PCB_CPU, a->exact = 0, a->status = ST_OK;
    snprintf(a->detail, sizeof a->detail, "bijection yes, gap 0.1%%, \"quoted\"\nline");
    a->have_rep = 1, a->rep.ok = 1, a->rep.gap = 0.001, a->rep.bound = 0.002;
    a->rep.recall = a->rep.worst_ratio = -1, a->rep.unmatched = 0;
    snprintf(a->rep.detail, sizeof a->rep.detail, "%.200s", a->detail);
    a->counters = (pcb_counters){.distance_evals = -1, .bids = 123456789012, .iterations = 7};
    a->compute = (bench_figure){.reps = 3, .iterations = 10, .clock = "real",
                                .sample = {0.002, 0.001, 0.003}, .cpu = {0.002, 0.001, 0.003}};
    bench_figure_stats(&a->compute);
    a->e2e = (bench_figure){.reps = 1, .iterations = 1, .clock = "verification run",
                            .sample = {0.5}, .cpu = {0.5}};
    bench_figure_stats(&a->e2e);
    a->compute_cold = (bench_figure){.iterations = 4, .clock = "device"};
    bench_gpu_state hot = {1980, 2619, 55, 410.5f, 0}, slow = {1100, 2619, 88, 700, 0x60};
    bench_figure_add(&a->compute_cold, 0.004, 0.004, &hot, 0);
    bench_figure_add(&a->compute_cold, 0.009, 0.009, &slow, 1);
    bench_figure_add(&a->compute_cold, 0.005, 0.005, &hot, 0);
    bench_figure_stats(&a->compute_cold);
    snprintf(a->compute_cold.stop, sizeof a->compute_cold.stop, "noise");
    a->compute_cold.seconds = 0.25;
    a->budget_s = 20, a->predicted_s = 0.4, a->total_s = 0.5;
    snprintf(a->when, sizeof a->when, "2026-11-23T10:00:00Z");
    snprintf(a->git, sizeof a->git, "abc1234+dirty");
    b->device = PCB_CUDA, b->status = ST_UNAVAILABLE, b->predicted_s = -1;
    snprintf(b->detail, sizeof b->detail, "no CUDA device");
    b->counters = (pcb_counters){-1, -1, -1};
    bench_env env = {.json = "{\"machine\": \"testbox\"}"};
    char path[256];
    CHECK_RC(bench_store_path(dir, "quick", &w.config, path, sizeof path), PCB_OK);
    CHECK(strstr(path, "/quick/emd-sphere-b2-n256.json") != NULL);
    CHECK_RC(bench_store_write(path, "quick", &env, &w), PCB_OK);

    bench_result r = {.config = w.config};
    CHECK_RC(bench_store_read(path, &r), PCB_OK);
    CHECK(r.count == 2 && strcmp(r.reference, "exact") == 0 && r.load_avg == 0.25);
    CHECK(strcmp(r.machine, "testbox") == 0);
    const bench_entry *ra = bench_result_entry(&r, "auction", 0);
    const bench_entry *rb = bench_result_entry(&r, "cuda_auction", 0);
    CHECK(ra && rb);
    if (ra && rb) {
        CHECK(ra->status == ST_OK && ra->device == PCB_CPU && !ra->exact);
        CHECK(strcmp(ra->detail, a->detail) == 0 && strcmp(ra->rep.detail, a->detail) == 0);
        CHECK(ra->have_rep && ra->rep.ok && ra->rep.gap == 0.001 && ra->rep.bound == 0.002);
        CHECK(ra->counters.bids == 123456789012 && ra->counters.iterations == 7 &&
              ra->counters.distance_evals == -1);
        CHECK(ra->compute.reps == 3 && ra->compute.iterations == 10);
        CHECK(fabs(ra->compute.median - 0.002) < 1e-12 && fabs(ra->compute.min - 0.001) < 1e-12);
        CHECK(strcmp(ra->e2e.clock, "verification run") == 0 && ra->e2e.reps == 1);
        const bench_figure *c = &ra->compute_cold;
        CHECK(c->reps == 2 && c->dropped == 1 && c->have_gpu && !c->unreliable);
        CHECK(strcmp(c->clock, "device") == 0 && strcmp(c->stop, "noise") == 0 &&
              c->seconds == 0.25);
        CHECK(fabs(c->median - 0.0045) < 1e-12 && fabs(c->dropped_sample[0] - 0.009) < 1e-12);
        CHECK(c->gpu[0].sm_mhz == 1980 && c->gpu[0].power_w == 410.5f && c->gpu[1].reasons == 0);
        CHECK(c->dropped_gpu[0].sm_mhz == 1100 && c->dropped_gpu[0].reasons == 0x60);
        CHECK(fabs(c->noise - a->compute_cold.noise) < 1e-9 || (isnan(c->noise) && isnan(a->compute_cold.noise)));
        CHECK(ra->compute.reps == 3 && !ra->compute.have_gpu && ra->e2e.dropped == 0);
        CHECK(ra->budget_s == 20 && ra->predicted_s == 0.4 && ra->total_s == 0.5);
        CHECK(strcmp(ra->when, a->when) == 0 && strcmp(ra->git, a->git) == 0);
        CHECK(rb->status == ST_UNAVAILABLE && rb->device == PCB_CUDA && !rb->have_rep);
        CHECK(strcmp(rb->detail, "no CUDA device") == 0 && rb->predicted_s == -1);
    }
    /* another configuration's file is refused, a missing one says so */
    bench_result other = {.config = {.problem = PCB_EMD, .id = "emd/sphere/b1/n256"}};
    CHECK_RC(bench_store_read(path, &other), PCB_EBADFILE);
    bench_result_free(&other);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/none.json", dir);
    bench_result gone = {.config = w.config};
    CHECK_RC(bench_store_read(missing, &gone), PCB_EIO);
    bench_result_free(&gone);
    /* a truncated results file is bad input, not a crash */
    FILE *f = fopen(path, "r+");
    CHECK(f && ftruncate(fileno(f), 200) == 0);
    if (f)
        fclose(f);
    bench_result cut = {.config = w.config};
    CHECK_RC(bench_store_read(path, &cut), PCB_EBADFILE);
    bench_result_free(&cut);
    bench_result_free(&r);
    bench_result_free(&w);
    unlink(path);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/quick", dir);
    rmdir(sub);
    rmdir(dir);
}

/* Parse "x,y,z" into v (at most MAX_SAMPLES); the count. */
static int parse_samples(char *list, double *v)
{
    int n = 0;
    for (char *tok = strtok(list, ","); tok && n < MAX_SAMPLES; tok = strtok(NULL, ","))
        v[n++] = strtod(tok, NULL);
    return n;
}

/* A copied tree states its commit: PCBENCH_GIT is recorded as it is. */
static void test_env_stated_commit(void)
{
    bench_env e;
    setenv("PCBENCH_GIT", "0123456789ab", 1);
    CHECK(bench_env_collect(&e, "testbox") == 0);
    unsetenv("PCBENCH_GIT");
    CHECK(strcmp(e.git, "0123456789ab") == 0);
    CHECK(strcmp(e.machine, "testbox") == 0);
    bench_env_free(&e);
}

/* The tuning the tool reads from the environment becomes the options'
 * fields (the library reads no environment); malformed values are 0. */
static void test_tuning_env(void)
{
    pcb_options o = {0};
    setenv("PCBENCH_FPS_WARPS", "8", 1);
    setenv("PCBENCH_FPS_CTAS", "4", 1);
    setenv("PCBENCH_FPS_DENSE", "0", 1);
    setenv("PCBENCH_EMD_CTAS", "3", 1);
    setenv("PCBENCH_EMD_START", "zero", 1);
    setenv("PCB_EMD_GAP_MAX_N", "4096", 1);
    bench_tuning_env(&o);
    CHECK(o.fps_warps == 8 && o.fps_ctas == 4 && o.fps_dense == -1 && o.emd_ctas == 3 &&
          o.emd_start == -1 && o.emd_gap_max_n == 4096);
    setenv("PCB_EMD_GAP_MAX_N", "0", 1); /* never */
    setenv("PCBENCH_FPS_WARPS", "eight", 1);
    setenv("PCBENCH_EMD_START", "column", 1);
    bench_tuning_env(&o);
    CHECK(o.emd_gap_max_n == -1 && o.fps_warps == 0 && o.emd_start == 0);
    const char *names[] = {"PCBENCH_FPS_WARPS", "PCBENCH_FPS_CTAS", "PCBENCH_FPS_DENSE",
                           "PCBENCH_EMD_CTAS", "PCBENCH_EMD_START", "PCB_EMD_GAP_MAX_N"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
    bench_tuning_env(&o);
    CHECK(o.fps_warps == 0 && o.fps_ctas == 0 && o.fps_dense == 0 && o.emd_ctas == 0 &&
          o.emd_start == 0 && o.emd_gap_max_n == 0);
}

/* The Mann-Whitney test against scipy.stats.mannwhitneyu's values
 * (tests/stats/mwu_fixtures.tsv, made by make_mwu_fixtures.py): U, the
 * two-sided p (exact or normal as scipy chose), within 1e-9 relative. */
static void test_mann_whitney(void)
{
    FILE *f = fopen("tests/stats/mwu_fixtures.tsv", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char line[16384];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char *fa = strtok(line, "\t"), *fb = strtok(NULL, "\t"), *fu = strtok(NULL, "\t"),
             *fp = strtok(NULL, "\t"), *fe = strtok(NULL, "\t\n");
        CHECK(fa && fb && fu && fp && fe);
        if (!fe)
            break;
        double want_u = strtod(fu, NULL), want_p = strtod(fp, NULL);
        int want_exact = atoi(fe);
        char la[8192], lb[8192];
        snprintf(la, sizeof la, "%s", fa);
        snprintf(lb, sizeof lb, "%s", fb);
        double a[MAX_SAMPLES], b[MAX_SAMPLES];
        int na = parse_samples(la, a), nb = parse_samples(lb, b);
        bench_mwu m;
        CHECK_RC(bench_mwu_test(a, na, b, nb, 0.01, &m), PCB_OK);
        CHECK(m.u == want_u);
        CHECK(m.exact == want_exact);
        CHECK(fabs(m.p - want_p) <= 1e-9 * want_p + 1e-15);
        if (fabs(m.p - want_p) > 1e-9 * want_p + 1e-15)
            fprintf(stderr, "case %d (%d, %d): p %.17g, scipy %.17g\n", cases, na, nb, m.p,
                    want_p);
        cases++;
    }
    fclose(f);
    CHECK(cases >= 17);

    /* Hodges-Lehmann: b = 1.1 a exactly is a ratio of 1.1, inside its interval */
    double a[12], b[12];
    for (int i = 0; i < 12; i++)
        a[i] = 1 + 0.01 * i * (i % 3), b[i] = 1.1 * a[i];
    bench_mwu m;
    CHECK_RC(bench_mwu_test(a, 12, b, 12, 0.01, &m), PCB_OK);
    CHECK(fabs(m.ratio - 1.1) < 1e-12 && m.lo <= 1.1 && m.hi >= 1.1 && m.lo < m.hi);
    CHECK_RC(bench_mwu_test(a, 2, b, 2, 0.01, &m), PCB_OK);
    CHECK(isnan(m.lo) && isnan(m.hi)); /* too few samples for a 99% interval */
    CHECK_RC(bench_mwu_test(a, 0, b, 2, 0.01, &m), PCB_EINVAL);
    CHECK_RC(bench_mwu_test(a, 2, b, 2, 1.5, &m), PCB_EINVAL);
}

/* Shards: i/N parsed as Jest and Playwright write it; every suite's
 * selection dealt into N = 1..8 shards that are disjoint and together the
 * selection, the same twice (nothing of the host is read); each scheduler's
 * variables mapped to its i/N, a sparse Slurm array refused. */
static void test_shards(void)
{
    bench_shard sh;
    CHECK_RC(bench_shard_parse("2/4", &sh), PCB_OK);
    CHECK(sh.index == 1 && sh.total == 4 && strstr(sh.source, "--shard 2/4"));
    const char *bad[] = {"0/4", "5/4", "4", "/4", "2/", "a/4", "2/4x", "1/0", "1/5000", NULL};
    for (int i = 0; bad[i]; i++)
        CHECK_RC(bench_shard_parse(bad[i], &sh), PCB_EINVAL);
    static const char *const suites[] = {"seed", "full", "train", "knn", "ball", "ragged",
                                         "grid", "quick"};
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        bench_suite suite;
        CHECK_RC(bench_suite_get(suites[s], &suite), PCB_OK);
        int *owner = malloc((size_t)suite.count * sizeof *owner);
        for (int n = 1; n <= 8; n++) {
            for (int i = 0; i < suite.count; i++)
                owner[i] = -1;
            for (int i = 0; i < n; i++) {
                bench_opts o = {.suite = suites[s], .shard = {.index = i, .total = n}};
                CHECK_RC(bench_shard_select(&o, &suite), PCB_OK);
                CHECK(o.shard_selected == suite.count);
                bench_opts again = o;
                CHECK_RC(bench_shard_select(&again, &suite), PCB_OK);
                for (int c = 0; c < suite.count; c++) {
                    CHECK(o.shard_mine[c] == again.shard_mine[c]);
                    if (!o.shard_mine[c])
                        continue;
                    CHECK(owner[c] == -1); /* disjoint */
                    owner[c] = i;
                }
                bench_shard_release(&o), bench_shard_release(&again);
            }
            for (int c = 0; c < suite.count; c++)
                CHECK(owner[c] >= 0); /* together, the whole suite */
        }
        free(owner);
        bench_suite_free(&suite);
    }
    /* the schedulers' variables */
    static const char *const vars[] = {"TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS",
                                       "TEST_SHARD_STATUS_FILE", "SLURM_ARRAY_TASK_ID",
                                       "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
                                       "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT",
                                       "JOB_COMPLETION_INDEX"};
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++)
        unsetenv(vars[v]);
    CHECK_RC(bench_shard_from_env(0, &sh), PCB_OK);
    CHECK(sh.total == 0); /* none: the whole selection */
    setenv("TEST_SHARD_INDEX", "2", 1), setenv("TEST_TOTAL_SHARDS", "3", 1);
    CHECK_RC(bench_shard_from_env(0, &sh), PCB_OK);
    CHECK(sh.index == 2 && sh.total == 3);
    setenv("TEST_SHARD_INDEX", "3", 1);
    CHECK_RC(bench_shard_from_env(0, &sh), PCB_EINVAL);
    unsetenv("TEST_SHARD_INDEX"), unsetenv("TEST_TOTAL_SHARDS");
    setenv("SLURM_ARRAY_TASK_ID", "7", 1), setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
    setenv("SLURM_ARRAY_TASK_MAX", "9", 1), setenv("SLURM_ARRAY_TASK_STEP", "2", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "5", 1); /* --array=1-9:2: 1 3 5 7 9 */
    CHECK_RC(bench_shard_from_env(0, &sh), PCB_OK);
    CHECK(sh.index == 3 && sh.total == 5);
    setenv("SLURM_ARRAY_TASK_COUNT", "3", 1); /* --array=1,7,9: not a progression */
    CHECK_RC(bench_shard_from_env(0, &sh), PCB_EINVAL);
    for (size_t v = 3; v < 8; v++)
        unsetenv(vars[v]);
    setenv("JOB_COMPLETION_INDEX", "4", 1);
    CHECK_RC(bench_shard_from_env(0, &sh), PCB_EINVAL); /* its total: --shards */
    CHECK_RC(bench_shard_from_env(8, &sh), PCB_OK);
    CHECK(sh.index == 4 && sh.total == 8);
    CHECK_RC(bench_shard_from_env(4, &sh), PCB_EINVAL);
    unsetenv("JOB_COMPLETION_INDEX");
    CHECK_RC(bench_shard_from_env(8, &sh), PCB_EINVAL); /* --shards alone */
}

TEST_MAIN(T(test_budget_shares), T(test_mann_whitney), T(test_env_stated_commit), T(test_json_values),
          T(test_json_rejects), T(test_figure_stats),
          T(test_noise_and_dropped), T(test_more_samples), T(test_nvml), T(test_status_names),
          T(test_store_round_trip), T(test_tuning_env), T(test_shards))
