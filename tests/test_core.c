/* test_core.c - status codes, registry, argument checks and the simple entry
 * points: the parts every implementation relies on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/pcbench_judge.h"
#include "testlib.h"

static void test_status_strings(void)
{
    int codes[] = {PCB_OK, PCB_EINVAL, PCB_EUNSUPPORTED, PCB_EUNAVAIL,
                   PCB_ENOMEM, PCB_EDEVICE, PCB_EBADFILE, PCB_EIO};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK(pcb_strerror(codes[i]) != NULL);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(pcb_strerror(codes[i]), pcb_strerror(codes[j])) != 0);
    }
    CHECK(strcmp(pcb_strerror(12345), "unknown error") == 0);
    /* One list makes the codes, names and messages: they agree. */
    CHECK(strcmp(pcb_status_name(PCB_EBADFILE), "PCB_EBADFILE") == 0);
    CHECK(strcmp(pcb_status_name(PCB_OK), "PCB_OK") == 0);
    CHECK(strcmp(pcb_status_name(12345), "PCB_?") == 0);
    int listed = 0;
#define COUNT(name, code, message)                                                      \
    listed++;                                                                           \
    CHECK(PCB_##name == (code) && strcmp(pcb_strerror(code), message) == 0);
    PCB_STATUS_MAP(COUNT)
#undef COUNT
    CHECK(listed == (int)(sizeof codes / sizeof codes[0]));
    CHECK(pcb_fail(PCB_EINVAL, "value %d", 42) == PCB_EINVAL);
    CHECK(strcmp(pcb_errmsg(), "value 42") == 0);
}

static void test_registry(void)
{
    const pcb_impl *const *all = pcb_registry();
    int per_problem[PCB_NPROBLEMS] = {0};
    for (const pcb_impl *const *it = all; *it; it++) {
        const pcb_impl *impl = *it;
        CHECK(impl->name && impl->summary && impl->prepare && impl->compute && impl->fetch);
        CHECK((unsigned)impl->problem < PCB_NPROBLEMS);
        CHECK(pcb_find(impl->problem, impl->name) == impl); /* names unique per problem */
        CHECK((impl->device == PCB_CUDA) == (impl->sync != NULL));
        /* What the harness needs to know comes from the entry, not the name. */
        if (impl->cost == PCB_COST_UNSET || impl->cost > PCB_COST_GPU_PAIRS)
            fprintf(stderr, "%s %s: no cost model\n", pcb_problem_name(impl->problem), impl->name);
        CHECK(impl->cost > PCB_COST_UNSET && impl->cost <= PCB_COST_GPU_PAIRS);
        CHECK(impl->reference == 0 || impl->reference == 1);
        if (impl->reference) /* one a problem, serial, exact */
            CHECK(pcb_reference(impl->problem) == impl && impl->promise.exact && impl->device == PCB_CPU);
        per_problem[impl->problem]++;
    }
    for (int p = 0; p < PCB_NPROBLEMS; p++)
        CHECK(pcb_reference((pcb_problem)p) != NULL);
    CHECK(pcb_reference(PCB_FPS)->promise.canonical); /* verify compares canonical answers with it */
    CHECK(per_problem[PCB_FPS] >= 1 && per_problem[PCB_NN] >= 1);
    CHECK(pcb_find(PCB_FPS, "no-such-impl") == NULL);
    for (const pcb_missing *m = pcb_not_built(); m->name; m++) {
        pcb_problem p;
        CHECK_RC(pcb_problem_parse(m->problem, &p), PCB_OK);
        CHECK(pcb_find(p, m->name) == NULL && m->needs && *m->needs);
        CHECK(pcb_not_built_find(p, m->name) == m);
    }
    CHECK(pcb_not_built_find(PCB_FPS, "dp") == NULL && pcb_not_built_find(PCB_FPS, NULL) == NULL);
}

static void test_problem_names(void)
{
    pcb_problem p;
    for (int i = 0; i < PCB_NPROBLEMS; i++) {
        CHECK_RC(pcb_problem_parse(pcb_problem_name((pcb_problem)i), &p), PCB_OK);
        CHECK((int)p == i);
    }
    CHECK_RC(pcb_problem_parse("ballquery", &p), PCB_EINVAL);
    CHECK_RC(pcb_problem_parse(NULL, &p), PCB_EINVAL);
}

static void test_task_checks(void)
{
    float pts[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .n = 4, .m = 2, .a = pts};
    CHECK_RC(pcb_task_check(&t), PCB_OK);
    t.m = 5;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL); /* m > n */
    t.m = 0;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    t.m = 2, t.start = 4;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    t.start = -1;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    t.start = 0, t.batch = 0;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    t.batch = 1, t.n = (int64_t)PCB_MAX_POINTS + 1;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    t.n = 4, t.batch = INT64_MAX / 2;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL); /* size overflow, caught before reading */
    t.batch = 1;
    pts[7] = NAN;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "point 2") != NULL);
    pts[7] = INFINITY;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    pts[7] = 1;
    t.a = NULL;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    CHECK_RC(pcb_task_check(NULL), PCB_EINVAL);

    pcb_task nn = {.problem = PCB_NN, .batch = 1, .n = 4, .nq = 0, .a = pts, .b = pts};
    CHECK_RC(pcb_task_check(&nn), PCB_EINVAL); /* empty query cloud */
    nn.nq = 2;
    CHECK_RC(pcb_task_check(&nn), PCB_OK);
    pcb_task emd = {.problem = PCB_EMD, .batch = 1, .n = 4, .nq = 3, .a = pts, .b = pts};
    CHECK_RC(pcb_task_check(&emd), PCB_EINVAL); /* different sizes */
    emd.nq = 4;
    CHECK_RC(pcb_task_check(&emd), PCB_OK);
    emd.opt.eps = -1;
    CHECK_RC(pcb_task_check(&emd), PCB_EINVAL);
}

/* pcb_max_abs: the largest magnitude whatever the length's remainders; the
 * first non-finite value found, in a later block too. */
static void test_max_abs(void)
{
    enum { N = 9000 }; /* two blocks and a remainder */
    static float x[N];
    size_t bad = 1;
    CHECK(pcb_max_abs(x, 0, &bad) == 0 && bad == 0);
    for (size_t i = 0; i < N; i++)
        x[i] = (float)((i * 37) % 1000) - 500.0f;
    CHECK(pcb_max_abs(x, N, &bad) == 500.0f && bad == N);
    x[N - 1] = -1e30f;
    CHECK(pcb_max_abs(x, N, &bad) == 1e30f && bad == N);
    CHECK(pcb_max_abs(x, N - 1, NULL) == 500.0f);
    x[8193] = NAN;
    x[8200] = INFINITY;
    CHECK(isinf(pcb_max_abs(x, N, &bad)) && bad == 8193);
    x[8193] = 1;
    CHECK(isinf(pcb_max_abs(x, N, &bad)) && bad == 8200);
    x[5] = -INFINITY;
    CHECK(isinf(pcb_max_abs(x, 7, &bad)) && bad == 5);
}

static void test_limits(void)
{
    static const pcb_impl limited = {.name = "limited", .problem = PCB_FPS,
                                     .limits = {.max_n = 8, .max_m = 4, .max_batch = 2}};
    float pts[16 * 3] = {0};
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .n = 8, .m = 4, .a = pts};
    CHECK_RC(pcb_task_fits(&limited, &t), PCB_OK);
    t.n = 9;
    CHECK_RC(pcb_task_fits(&limited, &t), PCB_EUNSUPPORTED);
    CHECK(strstr(pcb_errmsg(), "limited") != NULL);
    t.n = 8, t.m = 5;
    CHECK_RC(pcb_task_fits(&limited, &t), PCB_EUNSUPPORTED);
    t.m = 4, t.batch = 3;
    CHECK_RC(pcb_task_fits(&limited, &t), PCB_EUNSUPPORTED);
    t.batch = 1, t.problem = PCB_NN;
    CHECK_RC(pcb_task_fits(&limited, &t), PCB_EINVAL); /* wrong problem */
}

/* Every CPU implementation is unaffected by input it must not change, and
 * the entry points pick an available exact implementation. */
static void test_entry_points(void)
{
    pcb_cloud c;
    CHECK_RC(pcb_generate("uniform", 200, 7, &c), PCB_OK);
    if (!c.xyz)
        return;
    int32_t idx[10];
    CHECK_RC(pcb_fps(c.xyz, 1, c.n, 10, 3, idx), PCB_OK);
    CHECK(idx[0] == 3);
    for (int i = 1; i < 10; i++)
        CHECK(idx[i] >= 0 && idx[i] < 200 && idx[i] != 3);
    CHECK_RC(pcb_fps(c.xyz, 1, c.n, 201, 0, idx), PCB_EINVAL);

    int32_t nn[200];
    float d2[200];
    CHECK_RC(pcb_nn(c.xyz, c.xyz, 1, c.n, c.n, nn, d2), PCB_OK);
    for (int i = 0; i < 200; i++)
        CHECK(d2[i] == 0.0f); /* every point is its own nearest neighbour */

    const pcb_impl *best;
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .n = c.n, .m = 4, .a = c.xyz};
    CHECK_RC(pcb_best(&t, &best), PCB_OK);
    CHECK(best->promise.exact && best->problem == PCB_FPS && pcb_impl_available(best) == PCB_OK);
    pcb_cloud_free(&c);
}

/* Device-resident tasks: only the implementations with run_device take
 * them; every other says unsupported, before touching a pointer (those
 * here point nowhere a host may read). The choice follows the device. */
static void test_device_tasks(void)
{
    const float *nowhere = (const float *)(uintptr_t)0x10; /* never dereferenced */
    int32_t idx[8];
    pcb_result r = {.index = idx};
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .n = 100, .m = 8, .a = nowhere,
                  .memory = PCB_MEM_DEVICE};
    int devices = 0;
    pcb_cloud host;
    CHECK_RC(pcb_generate("uniform", 100, 3, &host), PCB_OK);
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        /* the problem's sample task, its clouds then moved to the device */
        CHECK_RC(pcb_sample_task(impl->problem, host.xyz, host.xyz, 100, &t), PCB_OK);
        t.a = nowhere, t.b = t.b ? nowhere : NULL, t.memory = PCB_MEM_DEVICE;
        if (impl->run_device) {
            devices++;
            CHECK(impl->device == PCB_CUDA && pcb_task_fits(impl, &t) == PCB_OK);
        } else {
            CHECK_RC(pcb_run(impl, &t, &r, NULL), PCB_EUNSUPPORTED);
            CHECK(strstr(pcb_errmsg(), "host arrays only") != NULL);
        }
    }
#ifdef PCB_HAVE_CUDA
    CHECK(devices == 15); /* cuda_pruned, nn's and chamfer's cuda_tiles, cuda_grid and
                             cuda_bvh, cuda_auction, knn's cuda_grid, cuda_tiles and
                             cuda_brute, ball's cuda_grid and cuda_classic, grid's and
                             serialize's cuda_sort */
#else
    CHECK(devices == 0);
#endif
    const pcb_impl *chosen = NULL;
    pcb_cloud_free(&host);
    t = (pcb_task){.problem = PCB_FPS, .batch = 1, .n = 100, .m = 8, .a = nowhere,
                   .memory = PCB_MEM_DEVICE};
    int rc = pcb_choose(&t, PCB_CUDA, &chosen);
    CHECK(rc == PCB_OK ? !strcmp(pcb_impl_name(chosen), "cuda_pruned") : rc == PCB_EUNAVAIL);
    CHECK_RC(pcb_choose(&t, PCB_CPU, &chosen), PCB_EUNAVAIL); /* no CPU one runs on device memory */
    t.memory = 7;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    t.memory = PCB_MEM_HOST, t.opt.max_gap = -0.5;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    t.opt.max_gap = 0;
    /* the tuning fields: 0 or one of their values, never a value ignored */
    static const pcb_options bad[] = {{.fps_warps = 7},  {.fps_warps = -8}, {.fps_ctas = 3},
                                      {.fps_ctas = 32},  {.fps_dense = 1},  {.emd_ctas = 9},
                                      {.emd_ctas = -1},  {.emd_start = 2},  {.emd_gap_max_n = -2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t.opt = bad[i];
        CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
        CHECK(strstr(pcb_errmsg(), "option "));
    }
    static const pcb_options good[] = {{.fps_warps = 32, .fps_ctas = 16, .fps_dense = -1},
                                       {.emd_ctas = 8, .emd_start = -1, .emd_gap_max_n = -1}};
    t.memory = PCB_MEM_DEVICE; /* its points are nowhere: not read on the device */
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        t.opt = good[i];
        CHECK_RC(pcb_task_check(&t), PCB_OK);
    }
    t.opt = (pcb_options){0};
    CHECK(pcb_abi_size("pcb_task") == sizeof(pcb_task) && pcb_abi_size("nonesuch") == 0);

    /* a device index: only device-resident NN tasks, only cuda_bvh */
    pcb_nn_index *index = (pcb_nn_index *)&t; /* must be cleared on failure */
    pcb_task nn = {.problem = PCB_NN, .batch = 1, .n = 100, .nq = 100, .a = nowhere,
                   .memory = PCB_MEM_DEVICE};
    const pcb_impl *kd = pcb_find(PCB_NN, "kdtree");
    CHECK(kd && !kd->device_index);
    CHECK_RC(pcb_nn_index_build(kd, &nn, NULL, &index), PCB_EUNSUPPORTED);
    CHECK(index == NULL);
    nn.memory = PCB_MEM_HOST;
    CHECK_RC(pcb_nn_index_build(kd, &nn, NULL, &index), PCB_EINVAL);
    CHECK_RC(pcb_nn_index_query(NULL, nowhere, 10, &r, NULL), PCB_EINVAL);
    pcb_nn_index_free(NULL);
    const pcb_impl *bvh = pcb_find(PCB_NN, "cuda_bvh");
    CHECK(!bvh || (bvh->device_index && bvh->run_device));
}

/* pcb_choose on the CPU: exact FPS and NN, a certified EMD; pcb_emd_bound
 * certifies a CPU auction's answer and refuses one without prices. */
static void test_choose_and_bound(void)
{
    pcb_cloud a, b;
    CHECK_RC(pcb_generate("uniform", 64, 3, &a), PCB_OK);
    CHECK_RC(pcb_generate("uniform", 64, 4, &b), PCB_OK);
    if (!a.xyz || !b.xyz)
        return;
    pcb_task t = {.problem = PCB_EMD, .batch = 1, .n = 64, .nq = 64, .a = a.xyz, .b = b.xyz};
    const pcb_impl *chosen = NULL;
    CHECK_RC(pcb_choose(&t, PCB_CPU, &chosen), PCB_OK);
    CHECK(chosen && chosen->device == PCB_CPU && chosen->promise.max_gap > 0 && !chosen->promise.known_defect);
    pcb_result r;
    double bound = -1;
    CHECK_RC(pcb_result_alloc(&t, &r), PCB_OK);
    CHECK_RC(pcb_run(chosen, &t, &r, NULL), PCB_OK);
    CHECK_RC(pcb_emd_bound(&t, &r, &bound), PCB_OK);
    CHECK(bound >= 0 && bound < 1e-3);
    r.index[1] = r.index[0]; /* not a bijection: no bound */
    CHECK_RC(pcb_emd_bound(&t, &r, &bound), PCB_OK);
    CHECK(isnan(bound));
    r.has_price = 0;
    CHECK_RC(pcb_emd_bound(&t, &r, &bound), PCB_EINVAL);
    pcb_result_free(&r);
    t.problem = PCB_FPS, t.m = 4, t.b = NULL, t.nq = 0;
    CHECK_RC(pcb_choose(&t, PCB_CPU, &chosen), PCB_OK);
    CHECK(chosen->promise.exact && chosen->device == PCB_CPU);
    pcb_cloud_free(&a);
    pcb_cloud_free(&b);
}

/* The GPU choice by size (limits.best_max_n): NN's cuda_tiles up to 1,024
 * points a cloud, cuda_grid to 16,384, cuda_bvh beyond; chamfer's cuda_tiles
 * to 1,024; a task no preferred one takes (a ragged batch beyond 16,384 on
 * device memory: cuda_bvh takes none) goes to one that accepts it. */
static void test_choice_by_size(void)
{
    const pcb_impl *grid = pcb_find(PCB_NN, "cuda_grid");
    if (!grid || pcb_impl_available(grid) != PCB_OK)
        SKIP_NOT_BUILT("the GPU choice by size: no CUDA device here");
    static const struct {
        pcb_problem p;
        int64_t n;
        const char *want;
    } cases[] = {{PCB_NN, 1024, "cuda_tiles"},      {PCB_NN, 2048, "cuda_grid"},
                 {PCB_NN, 1025, "cuda_grid"},       {PCB_NN, 16384, "cuda_grid"},
                 {PCB_NN, 16385, "cuda_bvh"},       {PCB_CHAMFER, 1024, "cuda_tiles"},
                 {PCB_CHAMFER, 2048, "cuda_grid"},  {PCB_CHAMFER, 20000, "cuda_bvh"}};
    float *nowhere = (float *)(uintptr_t)4096; /* never read: nothing runs */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pcb_task t = {.problem = cases[i].p, .batch = 4, .n = cases[i].n, .nq = cases[i].n,
                      .a = nowhere, .b = nowhere, .memory = PCB_MEM_DEVICE};
        const pcb_impl *chosen = NULL;
        CHECK_RC(pcb_choose(&t, PCB_CUDA, &chosen), PCB_OK);
        if (!chosen || strcmp(pcb_impl_name(chosen), cases[i].want))
            fprintf(stderr, "n %lld: chose %s, not %s\n", (long long)cases[i].n,
                    pcb_impl_name(chosen), cases[i].want);
        CHECK(chosen && !strcmp(pcb_impl_name(chosen), cases[i].want));
    }
    int64_t lengths[4] = {20000, 1, 0, 30000};
    pcb_task ragged = {.problem = PCB_NN, .batch = 4, .n = 30000, .nq = 30000, .a = nowhere,
                       .b = nowhere, .memory = PCB_MEM_DEVICE, .lengths_a = lengths,
                       .lengths_b = lengths};
    const pcb_impl *chosen = NULL;
    CHECK_RC(pcb_choose(&ragged, PCB_CUDA, &chosen), PCB_OK);
    CHECK(chosen == grid);
}

static void test_generators(void)
{
    for (const char *const *k = pcb_generator_kinds(); *k; k++) {
        if (strcmp(*k, "lidar") == 0)
            continue; /* covered by the loader and dataset tests */
        pcb_cloud a, b, c;
        CHECK_RC(pcb_generate(*k, 500, 11, &a), PCB_OK);
        CHECK_RC(pcb_generate(*k, 500, 11, &b), PCB_OK);
        CHECK_RC(pcb_generate(*k, 500, 12, &c), PCB_OK);
        if (a.xyz && b.xyz && c.xyz) {
            CHECK(a.n == 500 && memcmp(a.xyz, b.xyz, 500 * 3 * sizeof(float)) == 0);
            CHECK(memcmp(a.xyz, c.xyz, 500 * 3 * sizeof(float)) != 0);
            for (int i = 0; i < 1500; i++)
                CHECK(isfinite(a.xyz[i]));
        }
        pcb_cloud_free(&a), pcb_cloud_free(&b), pcb_cloud_free(&c);
    }
    pcb_cloud x;
    CHECK_RC(pcb_generate("nope", 10, 1, &x), PCB_EINVAL);
    CHECK_RC(pcb_generate("uniform", 0, 1, &x), PCB_EINVAL);
    CHECK(x.xyz == NULL);
}

/* pcb_fail may be handed the last message itself, to prefix it. */
static void test_error_prefixes_itself(void)
{
    pcb_fail(PCB_ENOMEM, "no memory for %d points", 100000000);
    CHECK(pcb_fail(PCB_ENOMEM, "%s: %s", "big.bin", pcb_errmsg()) == PCB_ENOMEM);
    CHECK(strcmp(pcb_errmsg(), "big.bin: no memory for 100000000 points") == 0);
}

/* Every exported function given NULL where it expects a pointer returns
 * PCB_EINVAL (or NULL / 0 where it returns no status) instead of crashing;
 * run under AddressSanitizer as well. */
static void test_null_arguments(void)
{
    float xyz[6] = {0, 0, 0, 1, 1, 1};
    int32_t idx[2];
    float d2[2];
    double v = 0, shift[3] = {0, 0, 0};
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .n = 2, .m = 1, .a = xyz};
    pcb_result r = {.index = idx};
    pcb_report rep;
    pcb_cloud c = {0};
    pcb_problem p;
    const pcb_impl *impl = pcb_registry()[0];
    CHECK_RC(pcb_problem_parse("fps", NULL), PCB_EINVAL);
    CHECK_RC(pcb_problem_parse(NULL, &p), PCB_EINVAL);
    CHECK(pcb_find(PCB_FPS, NULL) == NULL && strstr(pcb_errmsg(), "no name"));
    CHECK_RC(pcb_impl_available(NULL), PCB_EINVAL);
    CHECK_RC(pcb_task_check(NULL), PCB_EINVAL);
    CHECK_RC(pcb_task_fits(NULL, &t), PCB_EINVAL);
    CHECK_RC(pcb_task_fits(impl, NULL), PCB_EINVAL);
    CHECK_RC(pcb_run(NULL, &t, &r, NULL), PCB_EINVAL);
    CHECK_RC(pcb_run(impl, NULL, &r, NULL), PCB_EINVAL);
    CHECK_RC(pcb_run(impl, &t, NULL, NULL), PCB_EINVAL);
    CHECK_RC(pcb_best(&t, NULL), PCB_EINVAL);
    CHECK_RC(pcb_best(NULL, &impl), PCB_EINVAL);
    CHECK_RC(pcb_fps(NULL, 1, 2, 1, 0, idx), PCB_EINVAL);
    CHECK_RC(pcb_fps(xyz, 1, 2, 1, 0, NULL), PCB_EINVAL);
    CHECK_RC(pcb_nn(NULL, xyz, 1, 2, 2, idx, d2), PCB_EINVAL);
    CHECK_RC(pcb_nn(xyz, NULL, 1, 2, 2, idx, d2), PCB_EINVAL);
    CHECK_RC(pcb_nn(xyz, xyz, 1, 2, 2, NULL, d2), PCB_EINVAL);
    CHECK_RC(pcb_emd(NULL, xyz, 1, 2, idx, &v), PCB_EINVAL);
    CHECK_RC(pcb_emd(xyz, NULL, 1, 2, idx, &v), PCB_EINVAL);
    CHECK_RC(pcb_emd(xyz, xyz, 1, 2, NULL, &v), PCB_EINVAL);
    CHECK_RC(pcb_fps_validate(NULL, &r, &rep), PCB_EINVAL);
    CHECK_RC(pcb_fps_validate(&t, NULL, &rep), PCB_EINVAL);
    CHECK_RC(pcb_fps_validate(&t, &r, NULL), PCB_EINVAL);
    CHECK_RC(pcb_nn_validate(NULL, &r, 1, &rep), PCB_EINVAL);
    CHECK_RC(pcb_nn_validate(&t, NULL, 1, &rep), PCB_EINVAL);
    CHECK_RC(pcb_emd_validate(NULL, &r, 1, 0, &rep), PCB_EINVAL);
    CHECK_RC(pcb_emd_validate(&t, &r, 1, 0, NULL), PCB_EINVAL);
    CHECK_RC(pcb_validate(NULL, &t, &r, &rep), PCB_EINVAL);
    CHECK_RC(pcb_validate(impl, NULL, &r, &rep), PCB_EINVAL);
    CHECK_RC(pcb_validate(impl, &t, NULL, &rep), PCB_EINVAL);
    CHECK_RC(pcb_validate(impl, &t, &r, NULL), PCB_EINVAL);
    CHECK_RC(pcb_cloud_alloc(NULL, 4), PCB_EINVAL);
    pcb_cloud_free(NULL);
    CHECK_RC(pcb_load(NULL, &c), PCB_EINVAL);
    CHECK_RC(pcb_load("tests/data/none.ply", NULL), PCB_EINVAL);
    CHECK_RC(pcb_save_ply(NULL, &c), PCB_EINVAL);
    CHECK_RC(pcb_save_ply("x.ply", NULL), PCB_EINVAL);
    CHECK_RC(pcb_generate("uniform", 10, 1, NULL), PCB_EINVAL);
    CHECK_RC(pcb_generate(NULL, 10, 1, &c), PCB_EINVAL);
    CHECK_RC(pcb_gen_lidar(100, 1, 0, 0, 0, NULL), PCB_EINVAL);
    CHECK_RC(pcb_shift_auto(NULL, shift), PCB_EINVAL);
    CHECK_RC(pcb_cloud_shift(NULL, shift), PCB_EINVAL);
    CHECK_RC(pcb_generate("uniform", 10, 1, &c), PCB_OK);
    CHECK_RC(pcb_shift_auto(&c, NULL), PCB_EINVAL);
    CHECK_RC(pcb_cloud_shift(&c, NULL), PCB_EINVAL);
    pcb_cloud_free(&c);
    CHECK_RC(pcb_read_answers(NULL, 1, idx, &v, &(int){0}), PCB_EINVAL);
    CHECK_RC(pcb_read_answers("-", 1, NULL, &v, &(int){0}), PCB_EINVAL);
    pcb_rng_seed(NULL, 1);
    CHECK(pcb_rng_next(NULL) == 0 && pcb_rng_uniform(NULL) == 0 && pcb_rng_normal(NULL) == 0);
}

/* Every problem's sample task (pcb_sample_task, from its face) on every
 * implementation of it that runs here: each answer judged right under the
 * implementation's own promise, so a problem added to the list is run and
 * judged by every implementation it registers without a test of its own
 * here. Unit-cube clouds of 300 points. */
static void test_every_problem_sample(void)
{
    pcb_cloud a, b;
    CHECK_RC(pcb_generate("uniform", 300, 21, &a), PCB_OK);
    CHECK_RC(pcb_generate("uniform", 300, 22, &b), PCB_OK);
    int judged = 0;
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        pcb_task t;
        CHECK_RC(pcb_sample_task((pcb_problem)p, a.xyz, b.xyz, a.n, &t), PCB_OK);
        for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
            const pcb_impl *im = *it;
            if (im->problem != (pcb_problem)p || pcb_impl_available(im) != PCB_OK ||
                pcb_task_fits(im, &t) != PCB_OK)
                continue;
            pcb_result r;
            CHECK_RC(pcb_result_alloc(&t, &r), PCB_OK);
            CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_OK);
            const pcb_promise promise = pcb_promise_of(im, &t);
            pcb_judgement j;
            CHECK_RC(pcb_judge_full(&t, &r, &promise, &j), PCB_OK);
            if (j.verdict == PCB_VERDICT_FAIL)
                printf("  %s %s on its sample: %s\n", pcb_problem_name((pcb_problem)p), im->name,
                       j.detail);
            CHECK(j.verdict != PCB_VERDICT_FAIL);
            judged++;
            pcb_result_free(&r);
        }
    }
    CHECK(judged >= 2 * PCB_NPROBLEMS);
    pcb_task t;
    CHECK_RC(pcb_sample_task(PCB_NPROBLEMS, a.xyz, b.xyz, a.n, &t), PCB_EINVAL);
    CHECK_RC(pcb_sample_task(PCB_NN, a.xyz, NULL, a.n, &t), PCB_EINVAL);
    CHECK_RC(pcb_sample_task(PCB_FPS, a.xyz, NULL, a.n, &t), PCB_OK);
    pcb_cloud_free(&a);
    pcb_cloud_free(&b);
}

/* The judge's rules, each on a tiny case: the validator, the canonical
 * comparison (and saying when the reference's answer is not at hand), the
 * known-defect rule, and the promise an implementation's entry makes. */
static void test_judge(void)
{
    /* four points, two pairs of copies: from 0, points 2 and 3 tie */
    float xyz[12] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0};
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .n = 4, .m = 2, .a = xyz};
    int32_t lowest[2] = {0, 2}, highest[2] = {0, 3}, wrong[2] = {0, 1};
    pcb_result r = {.index = highest};
    pcb_judgement j;
    const pcb_impl *dp = pcb_reference(PCB_FPS), *omp = pcb_find(PCB_FPS, "omp");
    CHECK(dp && dp->promise.canonical && omp && omp->promise.canonical);
    pcb_promise any = {.exact = 1}, canon = pcb_promise_of(omp, NULL), self = pcb_promise_of(dp, NULL);
    CHECK(canon.canonical && !self.canonical && pcb_judge_reference(&t, &canon) == dp);
    CHECK(pcb_judge_reference(&t, &any) == NULL);
    CHECK_RC(pcb_judge(&t, &r, &any, NULL, &j), PCB_OK); /* a tie: any choice is right */
    CHECK(j.verdict == PCB_VERDICT_PASS && j.compared == 0);
    CHECK_RC(pcb_judge(&t, &r, &canon, lowest, &j), PCB_OK); /* but not dp's */
    CHECK(j.verdict == PCB_VERDICT_FAIL && j.compared == 1 && strstr(j.detail, "not canonical"));
    CHECK_RC(pcb_judge_full(&t, &r, &canon, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_FAIL && strstr(j.detail, "dp took 2"));
    CHECK_RC(pcb_judge(&t, &r, &canon, NULL, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_PASS && j.compared == -1 && strstr(j.detail, "not compared"));
    r.index = lowest;
    CHECK_RC(pcb_judge_full(&t, &r, &canon, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_PASS && j.compared == 1);
    r.index = wrong;
    CHECK_RC(pcb_judge(&t, &r, &any, NULL, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_FAIL && j.compared == 0);

    /* An equal answer's report: the canonical rule still applies to it. */
    r.index = highest;
    pcb_judgement first;
    CHECK_RC(pcb_judge(&t, &r, &any, NULL, &first), PCB_OK);
    CHECK_RC(pcb_judge_with_report(&t, &r, &canon, lowest, &first.rep, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_FAIL && j.compared == 1 && strstr(j.detail, "not canonical"));
    CHECK_RC(pcb_judge_with_report(&t, &r, &canon, highest, &first.rep, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_PASS && j.compared == 1 && !strcmp(j.detail, first.detail));
    CHECK_RC(pcb_judge_with_report(&t, &r, &canon, highest, NULL, &j), PCB_EINVAL);

    /* EMD: an unmatched point fails, or is "known" under a promised defect */
    float b[12] = {0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1};
    pcb_task e = {.problem = PCB_EMD, .batch = 1, .n = 4, .nq = 4, .a = xyz, .b = b};
    int32_t match[4] = {0, 1, 2, -1};
    pcb_result er = {.index = match};
    pcb_promise bij = {.max_gap = PCB_EMD_ANY_GAP};
    CHECK_RC(pcb_judge(&e, &er, &bij, NULL, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_FAIL && j.rep.unmatched == 1);
    bij.known_defect = "a forced stop";
    CHECK_RC(pcb_judge(&e, &er, &bij, NULL, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_KNOWN && strstr(j.detail, "known defect: a forced stop"));
    match[3] = 3;
    CHECK_RC(pcb_judge(&e, &er, &bij, NULL, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_PASS);
    bij.max_gap = -1; /* a malformed promise is an error, never a pass */
    CHECK_RC(pcb_judge(&e, &er, &bij, NULL, &j), PCB_EINVAL);
    CHECK(j.verdict == PCB_VERDICT_FAIL && strstr(j.detail, "validator"));
    CHECK_RC(pcb_judge(&e, NULL, &bij, NULL, &j), PCB_EINVAL);
    CHECK_RC(pcb_judge(&e, &er, &bij, NULL, NULL), PCB_EINVAL);

    /* Answers equal bit for bit in every array the problem's answer has. */
    int32_t m2[4] = {0, 1, 2, 3};
    double v1 = 0.5, v2 = 0.5, p1[4] = {0}, p2[4] = {0};
    pcb_result ea = {.index = match, .value = &v1, .price = p1}, eb = {.index = m2, .value = &v2, .price = p2};
    CHECK(pcb_result_equal(&e, &ea, &eb) && !pcb_result_equal(NULL, &ea, &eb));
    v2 = 0.25;
    CHECK(!pcb_result_equal(&e, &ea, &eb));
    v2 = 0.5, eb.has_price = 1;
    CHECK(!pcb_result_equal(&e, &ea, &eb));
    ea.has_price = 1, p2[3] = 1;
    CHECK(!pcb_result_equal(&e, &ea, &eb));
    m2[3] = 2, p2[3] = 0;
    CHECK(!pcb_result_equal(&e, &ea, &eb));
    float d1[2] = {1, 2}, d2[2] = {1, 2};
    pcb_task nn = {.problem = PCB_NN, .batch = 1, .n = 4, .nq = 2, .a = xyz, .b = b};
    pcb_result na = {.index = lowest, .dist2 = d1}, nb = {.index = lowest, .dist2 = d2};
    CHECK(pcb_result_equal(&nn, &na, &nb));
    d2[1] = 2.5f;
    CHECK(!pcb_result_equal(&nn, &na, &nb));
    nb.dist2 = NULL;
    CHECK(!pcb_result_equal(&nn, &na, &nb));
    CHECK(pcb_result_equal(&t, &(pcb_result){.index = lowest, .dist2 = d1}, &(pcb_result){.index = lowest}));

    /* the answer's size and the poison */
    CHECK(pcb_answer_count(&t) == 2 && pcb_answer_count(&e) == 4 && pcb_answer_count(NULL) == 0);
    pcb_result_poison(&e, &er);
    CHECK(match[0] == PCB_POISON && match[3] == PCB_POISON);
}

TEST_MAIN(T(test_judge), T(test_every_problem_sample), T(test_status_strings), T(test_error_prefixes_itself), T(test_null_arguments), T(test_registry), T(test_problem_names), T(test_task_checks), T(test_max_abs),
          T(test_limits), T(test_entry_points), T(test_device_tasks), T(test_choose_and_bound), T(test_choice_by_size),
          T(test_generators))
