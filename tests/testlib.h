/* testlib.h - a tiny test runner: CHECK records a failure with its place and
 * goes on; TEST_MAIN runs the listed tests and ends with the plain line
 * "N passed, N failed" that scripts/run_tests.sh sums. */
#ifndef PCB_TESTLIB_H
#define PCB_TESTLIB_H

#include <stdio.h>

static int tl_checks_failed;

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
            tl_checks_failed++;                                               \
        }                                                                     \
    } while (0)

#define CHECK_RC(expr, want)                                                  \
    do {                                                                      \
        int tl_rc_ = (expr);                                                  \
        if (tl_rc_ != (want)) {                                               \
            fprintf(stderr, "%s:%d: %s returned %d (%s: %s), expected %d\n",  \
                    __FILE__, __LINE__, #expr, tl_rc_, pcb_strerror(tl_rc_),  \
                    pcb_errmsg(), (want));                                    \
            tl_checks_failed++;                                               \
        }                                                                     \
    } while (0)

typedef struct {
    const char *name;
    void (*fn)(void);
} tl_test;

static int tl_run(const tl_test *tests, int count)
{
    int passed = 0, failed = 0;
    for (int i = 0; i < count; i++) {
        int before = tl_checks_failed;
        tests[i].fn();
        if (tl_checks_failed == before) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "FAILED: %s\n", tests[i].name);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                        \
    int main(void)                                                            \
    {                                                                         \
        static const tl_test tl_tests_[] = {__VA_ARGS__};                     \
        return tl_run(tl_tests_, (int)(sizeof tl_tests_ / sizeof tl_tests_[0])); \
    }
#define T(fn) {#fn, fn}

#endif
