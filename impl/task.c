/* task.c - the checks of a task's arguments (the common ones here, each
 * problem's by its face) and of an implementation's limits, and the size of
 * a task's answer (from its face's layout). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "problem.h"

const pcb_problem_face *pcb_face(pcb_problem p)
{
    static const pcb_problem_face *const faces[PCB_NPROBLEMS] = {
#define FACE(ID, name, title) &pcb_##name##_problem,
        PCB_PROBLEM_MAP(FACE)
#undef FACE
    };
    return (unsigned)p < PCB_NPROBLEMS ? faces[p] : NULL;
}

int64_t pcb_face_span(const pcb_task *t, pcb_rows rows)
{
    return rows == PCB_ROWS_SAMPLES ? t->m : rows == PCB_ROWS_A ? t->n : t->nq;
}

int64_t pcb_face_width(const pcb_task *t)
{
    return pcb_face(t->problem)->row_is_k ? t->k : 1;
}

int64_t pcb_face_means(const pcb_task *t)
{
    const pcb_problem_face *f = pcb_face(t->problem);
    return f && f->means && f->means(t) ? 3 * pcb_face_span(t, f->rows[0]) : 0;
}

int pcb_sample_task(pcb_problem p, const float *a, const float *b, int64_t n, pcb_task *t)
{
    const pcb_problem_face *f = pcb_face(p);
    if (!f || !t || !a || n < 1 || (f->reads_b && !b))
        return pcb_fail(PCB_EINVAL, "pcb_sample_task: no problem %d, clouds or task", (int)p);
    *t = (pcb_task){.problem = p, .batch = 1, .n = n, .nq = f->reads_b ? n : 0, .a = a,
                    .b = f->reads_b ? b : NULL};
    if (f->sample)
        f->sample(t);
    return pcb_task_check(t);
}

int64_t pcb_answer_count(const pcb_task *t)
{
    const pcb_problem_face *f = t ? pcb_face(t->problem) : NULL;
    int64_t count = 0;
    for (int g = 0; f && g < f->groups; g++)
        count += t->batch * pcb_face_span(t, f->rows[g]) * pcb_face_width(t);
    return count;
}

void pcb_result_poison(const pcb_task *t, pcb_result *r)
{
    const int64_t count = pcb_answer_count(t);
    for (int64_t i = 0; r && r->index && i < count; i++)
        r->index[i] = PCB_POISON;
}

int pcb_result_alloc(const pcb_task *t, pcb_result *r)
{
    if (!t || !r)
        return pcb_fail(PCB_EINVAL, "result alloc: missing task or result");
    memset(r, 0, sizeof *r);
    const size_t count = (size_t)pcb_answer_count(t);
    r->index = malloc(count * sizeof *r->index);
    r->dist2 = malloc(count * sizeof *r->dist2);
    r->value = malloc((size_t)t->batch * sizeof *r->value);
    r->price = malloc(count * sizeof *r->price);
    const pcb_problem_face *f = pcb_face(t->problem);
    const int counts = f && f->counts;
    if (counts)
        r->count = malloc((size_t)(t->batch * pcb_face_span(t, f->rows[0])) * sizeof *r->count);
    const int codes = f && f->codes;
    if (codes)
        r->code = malloc((size_t)(t->batch * t->n) * sizeof *r->code);
    const size_t means = (size_t)(t->batch * pcb_face_means(t));
    if (means)
        r->mean = malloc(means * sizeof *r->mean);
    if (!r->index || !r->dist2 || !r->value || !r->price || (counts && !r->count) ||
        (codes && !r->code) || (means && !r->mean)) {
        pcb_result_free(r);
        return pcb_fail(PCB_ENOMEM, "no memory for %zu results", count);
    }
    pcb_result_poison(t, r);
    return PCB_OK;
}

/* Both absent, or both present and equal. */
static int same(const void *a, const void *b, size_t bytes)
{
    if (!a || !b)
        return a == b;
    return bytes == 0 || memcmp(a, b, bytes) == 0;
}

int pcb_result_equal(const pcb_task *t, const pcb_result *a, const pcb_result *b)
{
    const pcb_problem_face *f = t && a && b ? pcb_face(t->problem) : NULL;
    if (!f)
        return 0;
    const size_t count = (size_t)pcb_answer_count(t), batch = (size_t)t->batch;
    if (!same(a->index, b->index, count * sizeof *a->index))
        return 0;
    if (f->distances && !same(a->dist2, b->dist2, count * sizeof *a->dist2))
        return 0;
    if (f->valued && !same(a->value, b->value, batch * sizeof *a->value))
        return 0;
    if (f->priced && (!a->has_price != !b->has_price ||
                      (a->has_price && !same(a->price, b->price, count * sizeof *a->price))))
        return 0;
    const size_t rows = batch * (size_t)pcb_face_span(t, f->rows[0]);
    if (f->codes && !same(a->code, b->code, batch * (size_t)t->n * sizeof *a->code))
        return 0;
    const size_t means = batch * (size_t)pcb_face_means(t);
    if (means && !same(a->mean, b->mean, means * sizeof *a->mean))
        return 0;
    return !f->counts || same(a->count, b->count, rows * sizeof *a->count);
}

static void copy(void *dst, const void *src, size_t bytes)
{
    if (dst && src && bytes)
        memcpy(dst, src, bytes);
}

void pcb_result_copy(const pcb_task *t, pcb_result *dst, const pcb_result *src)
{
    const pcb_problem_face *f = t && dst && src ? pcb_face(t->problem) : NULL;
    if (!f)
        return;
    const size_t count = (size_t)pcb_answer_count(t), batch = (size_t)t->batch;
    copy(dst->index, src->index, count * sizeof *dst->index);
    if (f->distances)
        copy(dst->dist2, src->dist2, count * sizeof *dst->dist2);
    if (f->valued)
        copy(dst->value, src->value, batch * sizeof *dst->value);
    if (f->priced && src->has_price) {
        copy(dst->price, src->price, count * sizeof *dst->price);
        dst->has_price = dst->price != NULL;
    }
    if (f->counts)
        copy(dst->count, src->count,
             batch * (size_t)pcb_face_span(t, f->rows[0]) * sizeof *dst->count);
    if (f->codes)
        copy(dst->code, src->code, batch * (size_t)t->n * sizeof *dst->code);
    copy(dst->mean, src->mean, batch * (size_t)pcb_face_means(t) * sizeof *dst->mean);
}

void pcb_result_free(pcb_result *r)
{
    if (!r)
        return;
    free(r->index), free(r->dist2), free(r->value), free(r->price), free(r->count);
    free(r->code), free(r->mean);
    memset(r, 0, sizeof *r);
}

/* Magnitudes compared as the integers their bit patterns are (an order-
 * preserving map for non-negative floats, infinity and NaN above every
 * finite one), eight independent maxima at a time: the plain loop with
 * isfinite() ran at a third of this speed, and every host run pays it. */
float pcb_max_abs(const float *x, size_t count, size_t *bad)
{
    enum { BLOCK = 4096, LANES = 8 };
    uint32_t most = 0;
    for (size_t at = 0; at < count; at += BLOCK) {
        size_t end = count - at < BLOCK ? count : at + BLOCK, i = at;
        uint32_t lane[LANES] = {0}, u;
        for (; i + LANES <= end; i += LANES)
            for (int k = 0; k < LANES; k++) {
                memcpy(&u, x + i + k, sizeof u);
                u &= 0x7fffffffu;
                lane[k] = u > lane[k] ? u : lane[k];
            }
        for (; i < end; i++) {
            memcpy(&u, x + i, sizeof u);
            u &= 0x7fffffffu;
            lane[0] = u > lane[0] ? u : lane[0];
        }
        for (int k = 0; k < LANES; k++)
            most = lane[k] > most ? lane[k] : most;
        if (most >= 0x7f800000u) { /* an infinity or a NaN in this block */
            for (i = at; isfinite(x[i]); i++)
                ;
            if (bad)
                *bad = i;
            return INFINITY;
        }
    }
    if (bad)
        *bad = count;
    float f;
    memcpy(&f, &most, sizeof f);
    return f;
}

/* A ragged host task's lengths: each in 0..n (the padding is not read). */
static int check_lengths(const char *what, const int64_t *lengths, int64_t batch, int64_t n)
{
    for (int64_t i = 0; i < batch; i++)
        if (lengths[i] < 0 || lengths[i] > n)
            return pcb_fail(PCB_EINVAL, "%s: length %lld of cloud %lld is outside 0..%lld",
                            what, (long long)lengths[i], (long long)i, (long long)n);
    return PCB_OK;
}

/* batch * n * 3 floats must be addressable; n must fit an int32 index.
 * Host clouds are read for non-finite coordinates (in a ragged batch, the
 * points of each cloud, not its padding); device ones cannot be. */
int pcb_check_cloud(const char *what, const float *xyz, int64_t batch, int64_t n,
                    pcb_memory memory, const int64_t *lengths)
{
    if (!xyz)
        return pcb_fail(PCB_EINVAL, "%s: no points given", what);
    if (n < 1)
        return pcb_fail(PCB_EINVAL, "%s: %lld points (need at least 1)", what, (long long)n);
    if (n > PCB_MAX_POINTS)
        return pcb_fail(PCB_EINVAL, "%s: %lld points exceed the int32 index limit", what,
                        (long long)n);
    if (batch > (int64_t)(SIZE_MAX / 3 / sizeof(float)) / n)
        return pcb_fail(PCB_EINVAL, "%s: batch %lld x %lld points overflows memory sizes", what,
                        (long long)batch, (long long)n);
    if (memory == PCB_MEM_HOST && lengths) {
        int rc = check_lengths(what, lengths, batch, n);
        for (int64_t c = 0; c < batch && rc == PCB_OK; c++) {
            size_t i;
            if (!isfinite(pcb_max_abs(xyz + c * n * 3, (size_t)lengths[c] * 3, &i)))
                rc = pcb_fail(PCB_EINVAL, "%s: non-finite coordinate at cloud %lld point %zu",
                              what, (long long)c, i / 3);
        }
        return rc;
    }
    size_t count = memory == PCB_MEM_HOST ? (size_t)batch * (size_t)n * 3 : 0, i;
    if (!isfinite(pcb_max_abs(xyz, count, &i)))
        return pcb_fail(PCB_EINVAL, "%s: non-finite coordinate at cloud %zu point %zu", what,
                        i / 3 / (size_t)n, i / 3 % (size_t)n);
    return PCB_OK;
}

int pcb_task_warm(const pcb_task *t)
{
    return t->warm.price || t->warm.eps || t->warm.budget;
}

int pcb_task_self(const pcb_task *t)
{
    return t->b && t->b == t->a && t->nq == t->n && t->lengths_b == t->lengths_a;
}

int pcb_check_k_rows(const pcb_task *t, const char *queries)
{
    int rc;
    if ((rc = pcb_check_cloud("reference cloud", t->a, t->batch, t->n, t->memory,
                              t->lengths_a)) != PCB_OK ||
        (rc = pcb_check_cloud(queries, t->b, t->batch, t->nq, t->memory, t->lengths_b)) != PCB_OK)
        return rc;
    if (t->k < 1 || t->k > (t->n > PCB_PAD_K ? t->n : PCB_PAD_K))
        return pcb_fail(PCB_EINVAL, "neighbours k = %lld must be in 1..%lld: the reference's "
                        "%lld points, or up to %d with padding", (long long)t->k,
                        (long long)(t->n > PCB_PAD_K ? t->n : PCB_PAD_K), (long long)t->n,
                        PCB_PAD_K);
    if (t->batch * t->nq > (int64_t)(SIZE_MAX / sizeof(float)) / t->k)
        return pcb_fail(PCB_EINVAL, "batch %lld x %lld queries x k %lld overflows memory sizes",
                        (long long)t->batch, (long long)t->nq, (long long)t->k);
    return PCB_OK;
}

/* The tuning fields: each 0 (the implementation's choice) or one of its
 * values; a value outside them is a mistake, never ignored. */
static int check_tuning(const pcb_options *o)
{
    const int w = o->fps_warps, c = o->fps_ctas;
    if (w && w != 8 && w != 16 && w != 32)
        return pcb_fail(PCB_EINVAL, "option fps_warps = %d: need 0 (the default), 8, 16 or 32", w);
    if (c && (c < 1 || c > 16 || (c & (c - 1))))
        return pcb_fail(PCB_EINVAL, "option fps_ctas = %d: need 0 (the default), 1, 2, 4, 8 or 16",
                        c);
    if (o->fps_dense != 0 && o->fps_dense != -1)
        return pcb_fail(PCB_EINVAL, "option fps_dense = %d: need 0 (the default) or -1 (off)",
                        o->fps_dense);
    if (o->emd_ctas < 0 || o->emd_ctas > 8)
        return pcb_fail(PCB_EINVAL, "option emd_ctas = %d: need 0 (the default) to 8",
                        o->emd_ctas);
    if (o->emd_start != 0 && o->emd_start != -1)
        return pcb_fail(PCB_EINVAL, "option emd_start = %d: need 0 (the column start) or -1 "
                        "(zero prices)", o->emd_start);
    if (o->emd_gap_max_n < -1)
        return pcb_fail(PCB_EINVAL, "option emd_gap_max_n = %lld: need -1 (never), 0 (the "
                        "default) or a point count", (long long)o->emd_gap_max_n);
    return PCB_OK;
}

/* A warm start: a problem with prices (EMD), its price and eps both given
 * (budget may be NULL), no lengths. Its values need no check: a pair whose
 * start is not usable starts cold (pcbench.h). */
static int check_warm(const pcb_task *t)
{
    if (!pcb_task_warm(t))
        return PCB_OK;
    if (!pcb_face(t->problem)->priced)
        return pcb_fail(PCB_EINVAL, "a warm start is for a problem with prices (emd), not %s",
                        pcb_problem_name(t->problem));
    if (!t->warm.price || !t->warm.eps)
        return pcb_fail(PCB_EINVAL, "an EMD warm start needs its prices and eps arrays "
                        "(budget may be NULL)");
    if (t->lengths_a || t->lengths_b)
        return pcb_fail(PCB_EUNSUPPORTED, "an EMD warm start of a ragged batch");
    return PCB_OK;
}

int pcb_task_check(const pcb_task *t)
{
    if (!t)
        return pcb_fail(PCB_EINVAL, "no task given");
    if ((unsigned)t->problem >= PCB_NPROBLEMS)
        return pcb_fail(PCB_EINVAL, "unknown problem %d", (int)t->problem);
    if (t->batch < 1)
        return pcb_fail(PCB_EINVAL, "batch %lld (need at least 1)", (long long)t->batch);
    if (t->opt.threads < 0)
        return pcb_fail(PCB_EINVAL, "option threads = %d: need 0 (the default) or more",
                        t->opt.threads);
    if (t->opt.partitions < 0)
        return pcb_fail(PCB_EINVAL, "option partitions = %d: need 0 (the default) or more",
                        t->opt.partitions);
    if (!(t->opt.eps >= 0) || !isfinite(t->opt.eps))
        return pcb_fail(PCB_EINVAL, "option eps = %g: need a finite number >= 0 (0: the "
                        "default)", t->opt.eps);
    if (!(t->opt.max_gap >= 0 && t->opt.max_gap <= 1))
        return pcb_fail(PCB_EINVAL, "option max_gap = %g: need a relative gap in 0..1 (0: the "
                        "implementation's promise)", t->opt.max_gap);
    if (t->memory != PCB_MEM_HOST && t->memory != PCB_MEM_DEVICE)
        return pcb_fail(PCB_EINVAL, "unknown memory space %d", (int)t->memory);
    int rc = check_tuning(&t->opt);
    if (rc != PCB_OK)
        return rc;
    rc = check_warm(t);
    if (rc != PCB_OK)
        return rc;
    return pcb_face(t->problem)->check(t);
}

int pcb_task_fits(const pcb_impl *impl, const pcb_task *t)
{
    if (!impl || !t)
        return pcb_fail(PCB_EINVAL, "task fits: missing implementation or task");
    if (impl->problem != t->problem)
        return pcb_fail(PCB_EINVAL, "%s is a %s implementation, not %s", impl->name,
                        pcb_problem_name(impl->problem), pcb_problem_name(t->problem));
    if (t->memory == PCB_MEM_DEVICE && !impl->run_device)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s runs on host arrays only, not on device "
                        "memory", pcb_problem_name(impl->problem), impl->name);
    if (t->memory == PCB_MEM_DEVICE && (t->lengths_a || t->lengths_b) && !impl->ragged)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s takes no ragged batch on device memory (a "
                        "host batch runs cloud by cloud)", pcb_problem_name(impl->problem),
                        impl->name);
    if (pcb_task_warm(t) && !impl->warm_start)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s takes no warm start",
                        pcb_problem_name(impl->problem), impl->name);
    const pcb_limits *l = &impl->limits;
    int64_t n = t->n > t->nq ? t->n : t->nq;
    if (l->max_n && n > l->max_n)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s: %lld points exceed its limit of %lld",
                        pcb_problem_name(impl->problem), impl->name, (long long)n,
                        (long long)l->max_n);
    if (l->max_m && t->m > l->max_m)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s: %lld samples exceed its limit of %lld",
                        pcb_problem_name(impl->problem), impl->name, (long long)t->m,
                        (long long)l->max_m);
    if (l->max_k && pcb_face(t->problem)->row_is_k && t->k > l->max_k)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s: k = %lld neighbours exceed its limit of %lld",
                        pcb_problem_name(impl->problem), impl->name, (long long)t->k,
                        (long long)l->max_k);
    if (l->max_batch && t->batch > l->max_batch)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s: batch %lld exceeds its limit of %lld",
                        pcb_problem_name(impl->problem), impl->name, (long long)t->batch,
                        (long long)l->max_batch);
    return PCB_OK;
}

