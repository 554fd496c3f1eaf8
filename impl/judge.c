/* judge.c - the one place where an answer is judged: the problem's validator
 * with the promises the answer comes with, the canonical comparison with the
 * reference's answer, and the known-defect rule. pcbench verify, bench,
 * check and the defect catalog all ask here, so they cannot disagree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problem.h"
#include "ragged.h"

pcb_promise pcb_promise_of(const pcb_impl *impl, const pcb_task *t)
{
    pcb_promise p = {.exact = 1, .max_gap = PCB_EMD_ANY_GAP};
    if (!impl)
        return p;
    p = impl->promise;
    /* an implementation's max_gap of 0 promises nothing beyond a bijection */
    if (!(p.max_gap > 0))
        p.max_gap = PCB_EMD_ANY_GAP;
    if (impl->gap_option && t && t->opt.max_gap > 0) /* it stops on the task's gap */
        p.max_gap = t->opt.max_gap;
    p.canonical = p.canonical && !impl->reference;
    return p;
}

static int validate(const pcb_task *t, const pcb_result *r, const pcb_promise *p,
                    pcb_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->recall = rep->worst_ratio = rep->gap = rep->bound = -1;
    const pcb_problem_face *f = pcb_face(t->problem);
    if (!f)
        return pcb_fail(PCB_EINVAL, "unknown problem %d", (int)t->problem);
    return f->validate_promised ? f->validate_promised(t, r, p, rep) : f->validate(t, r, rep);
}

int pcb_validate(const pcb_impl *impl, const pcb_task *t, const pcb_result *r, pcb_report *rep)
{
    if (!impl || !t || !rep)
        return pcb_fail(PCB_EINVAL, "pcb_validate: missing implementation, task or report");
    const pcb_promise p = pcb_promise_of(impl, t);
    return validate(t, r, &p, rep);
}

const pcb_impl *pcb_judge_reference(const pcb_task *t, const pcb_promise *p)
{
    const pcb_problem_face *f = t ? pcb_face(t->problem) : NULL;
    if (!p || !p->canonical || !f || !f->canonical)
        return NULL;
    const pcb_impl *ref = pcb_reference(t->problem);
    return ref && ref->promise.canonical ? ref : NULL;
}

static void append(pcb_judgement *j, const char *fmt, const char *arg)
{
    const size_t len = strlen(j->detail);
    snprintf(j->detail + len, sizeof j->detail - len, fmt, arg);
}

/* A ragged host task's answer: every cloud judged as its own task, the
 * slots around its answer checked to be padding, a pair with an empty
 * cloud to have a NaN value. */
static int ragged_judge(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                        const int32_t *reference, pcb_judgement *j);

/* The rules after the validator (its report in j->rep): the canonical
 * comparison, the known-defect rule. */
static void conclude(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                     const int32_t *reference, pcb_judgement *j)
{
    snprintf(j->detail, sizeof j->detail, "%s", j->rep.detail);
    int ok = j->rep.ok;
    const pcb_impl *ref = pcb_judge_reference(t, p);
    if (ok && ref && !reference) {
        j->compared = -1;
        append(j, "; not compared with %s (its answer was not at hand)", ref->name);
    } else if (ok && ref) {
        j->compared = 1;
        const int64_t count = pcb_answer_count(t);
        int64_t i = 0;
        while (i < count && answer->index[i] == reference[i])
            i++;
        if (i < count) {
            ok = 0;
            const pcb_problem_face *f = pcb_face(t->problem);
            /* a row: a query's neighbours, or a cloud's samples */
            const int64_t row = f->row_is_k ? t->k : pcb_face_span(t, f->rows[0]);
            snprintf(j->detail, sizeof j->detail, f->canonical, (long long)(i / row),
                     (long long)(i % row), (long)answer->index[i], ref->name,
                     (long)reference[i]);
        }
    }
    if (ok)
        j->verdict = PCB_VERDICT_PASS;
    else if (j->rep.unmatched > 0 && p->known_defect) {
        /* unmatched points from an implementation that reproduces a forced
         * stop on purpose: shown, not counted as a failure */
        j->verdict = PCB_VERDICT_KNOWN;
        append(j, " (known defect: %s)", p->known_defect);
    }
}

static int judge(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                 const int32_t *reference, const pcb_report *report, pcb_judgement *j)
{
    if (!j)
        return pcb_fail(PCB_EINVAL, "pcb_judge: nowhere to put the judgement");
    memset(j, 0, sizeof *j);
    j->verdict = PCB_VERDICT_FAIL;
    if (!t || !answer || !p) {
        snprintf(j->detail, sizeof j->detail, "nothing to judge");
        return pcb_fail(PCB_EINVAL, "pcb_judge: missing task, answer or promise");
    }
    if (t->memory == PCB_MEM_HOST && (t->lengths_a || t->lengths_b) &&
        !pcb_face(t->problem)->whole_ragged) {
        int rc = pcb_task_check(t);
        return rc == PCB_OK ? ragged_judge(t, answer, p, reference, j) : rc;
    }
    if (report)
        j->rep = *report;
    else {
        int rc = validate(t, answer, p, &j->rep);
        if (rc != PCB_OK) {
            snprintf(j->detail, sizeof j->detail, "validator: %s: %s", pcb_strerror(rc),
                     pcb_errmsg());
            return rc;
        }
    }
    conclude(t, answer, p, reference, j);
    return PCB_OK;
}

int pcb_judge(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
              const int32_t *reference, pcb_judgement *j)
{
    return judge(t, answer, p, reference, NULL, j);
}

int pcb_judge_with_report(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                          const int32_t *reference, const pcb_report *report, pcb_judgement *j)
{
    if (!report)
        return pcb_fail(PCB_EINVAL, "pcb_judge_with_report: no report");
    return judge(t, answer, p, reference, report, j);
}

int pcb_judge_full(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                   pcb_judgement *j)
{
    const pcb_impl *ref = t ? pcb_judge_reference(t, p) : NULL;
    if (!ref)
        return pcb_judge(t, answer, p, NULL, j);
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return pcb_judge(t, answer, p, NULL, j);
    int32_t *want = malloc((size_t)pcb_answer_count(t) * sizeof *want);
    if (!want)
        return pcb_judge(t, answer, p, NULL, j);
    pcb_result r = {.index = want};
    rc = pcb_run(ref, t, &r, NULL);
    rc = pcb_judge(t, answer, p, rc == PCB_OK ? want : NULL, j);
    free(want);
    return rc;
}

static int ragged_judge(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                        const int32_t *reference, pcb_judgement *j)
{
    memset(j, 0, sizeof *j);
    j->verdict = PCB_VERDICT_PASS;
    j->rep.recall = j->rep.worst_ratio = j->rep.gap = j->rep.bound = -1;
    j->rep.ok = 1;
    int64_t clouds = 0;
    for (int64_t i = 0; i < t->batch; i++) {
        pcb_task cloud;
        const int has = pcb_ragged_cloud(t, i, &cloud);
        const int64_t slot = pcb_ragged_not_padding(t, i, answer);
        if (slot >= 0) {
            j->verdict = PCB_VERDICT_FAIL, j->rep.ok = 0;
            snprintf(j->detail, sizeof j->detail,
                     "cloud %lld: answer slot %lld beyond its %lld / %lld points is not padding",
                     (long long)i, (long long)slot, (long long)cloud.n, (long long)cloud.nq);
            return PCB_OK;
        }
        if (!has) {
            if (pcb_face(t->problem)->valued && answer->value && !isnan(answer->value[i])) {
                j->verdict = PCB_VERDICT_FAIL, j->rep.ok = 0;
                snprintf(j->detail, sizeof j->detail,
                         "cloud %lld: a pair with an empty cloud has value %g, not NaN",
                         (long long)i, answer->value[i]);
                return PCB_OK;
            }
            continue;
        }
        pcb_result part, want = {0};
        int rc = pcb_ragged_part(&cloud, answer, &part);
        if (rc == PCB_OK && reference && !(want.index = malloc(
                                              (size_t)pcb_answer_count(&cloud) * sizeof(int32_t))))
            rc = pcb_fail(PCB_ENOMEM, "judge: out of memory");
        if (rc != PCB_OK) {
            pcb_result_free(&part);
            return rc;
        }
        pcb_result whole = *answer;
        double bound = answer->bound ? answer->bound[i] : 0;
        part.bound = answer->bound ? &bound : NULL;
        part.has_price = answer->has_price;
        pcb_ragged_move(t, i, &whole, &part, 0);
        if (reference) {
            pcb_result ref_whole = {.index = (int32_t *)reference}, ref_part = {.index = want.index};
            pcb_ragged_move(t, i, &ref_whole, &ref_part, 0);
        }
        pcb_judgement one;
        rc = pcb_judge(&cloud, &part, p, want.index, &one);
        part.bound = NULL;
        pcb_result_free(&part);
        free(want.index);
        if (rc != PCB_OK)
            return rc;
        clouds++;
        if (one.verdict == PCB_VERDICT_FAIL || (one.verdict == PCB_VERDICT_KNOWN &&
                                                j->verdict == PCB_VERDICT_PASS)) {
            const pcb_verdict v = one.verdict;
            *j = one;
            snprintf(j->detail, sizeof j->detail, "cloud %lld: %.280s", (long long)i, one.detail);
            if (v == PCB_VERDICT_FAIL)
                return PCB_OK;
        } else if (j->verdict == PCB_VERDICT_PASS) {
            j->compared = one.compared;
            j->rep.gap = one.rep.gap > j->rep.gap ? one.rep.gap : j->rep.gap;
            j->rep.bound = one.rep.bound > j->rep.bound ? one.rep.bound : j->rep.bound;
        }
    }
    if (j->verdict == PCB_VERDICT_PASS)
        snprintf(j->detail, sizeof j->detail, "%lld of %lld clouds judged one by one, padding "
                 "checked", (long long)clouds, (long long)t->batch);
    return PCB_OK;
}
