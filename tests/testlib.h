/* testlib.h - a tiny test runner: CHECK records a failure with its place and
 * goes on; SKIP (or tl_skip, which goes on) says why part of a test could
 * not run here (no GPU, a library or file absent); TEST_MAIN runs the listed
 * tests and ends with the plain line "N passed, N failed, N skipped" that
 * scripts/run_tests.sh sums. A test with a failure failed; one without, that
 * skipped anything, counts as skipped, not passed.
 *
 * A test binary takes test names: `build/tests/test_fps test_fps_ties`
 * runs that one alone, `--list` prints every name; an unknown name is an
 * error (exit 2). */
#ifndef PCB_TESTLIB_H
#define PCB_TESTLIB_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* atomic: a test may CHECK inside an OpenMP loop */
static _Atomic int tl_checks_failed;
static int tl_skips;

static inline void tl_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("skip: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    tl_skips++;
}
#define SKIP(...)                                                             \
    do {                                                                      \
        tl_skip(__VA_ARGS__);                                                 \
        return;                                                               \
    } while (0)

/* A part that the sanitized build leaves out by design (it is built without
 * CUDA: CUDA's runtime and AddressSanitizer do not mix) runs in the plain
 * build of the same tests: there it is not a skip, and a test that had
 * nothing else to do counts in none of passed, failed and skipped. In every
 * other build, a part not built here is a skip. */
static int tl_elsewhere_count;
static inline void tl_elsewhere(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("elsewhere (the plain build runs it): ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    tl_elsewhere_count++;
}
#ifdef PCB_SANITIZED_BUILD
#define SKIP_NOT_BUILT(...)                                                   \
    do {                                                                      \
        tl_elsewhere(__VA_ARGS__);                                            \
        return;                                                               \
    } while (0)
#else
#define SKIP_NOT_BUILT SKIP
#endif

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
            tl_checks_failed++;                                               \
        }                                                                     \
    } while (0)

/* CHECK with a printf message of what was seen */
#define CHECK_MSG(cond, ...)                                                  \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__,  \
                    #cond);                                                   \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
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

/* Whether test name was asked for (no names: all of them). */
static int tl_wanted(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], name) == 0)
            return 1;
    return 0;
}

static int tl_run(const tl_test *tests, int count, int argc, char **argv)
{
    int passed = 0, failed = 0, skipped = 0, elsewhere = 0;
    for (int a = 1; a < argc; a++) {
        int known = strcmp(argv[a], "--list") == 0;
        for (int i = 0; i < count && !known; i++)
            known = strcmp(argv[a], tests[i].name) == 0;
        if (!known) {
            fprintf(stderr, "%s: no test named %s (--list names them)\n", argv[0], argv[a]);
            return 2;
        }
        if (strcmp(argv[a], "--list") == 0) {
            for (int i = 0; i < count; i++)
                puts(tests[i].name);
            return 0;
        }
    }
    for (int i = 0; i < count; i++) {
        if (!tl_wanted(tests[i].name, argc, argv))
            continue;
        int before = tl_checks_failed, skips = tl_skips, away = tl_elsewhere_count;
        tests[i].fn();
        if (tl_checks_failed != before) {
            failed++;
            fprintf(stderr, "FAILED: %s\n", tests[i].name);
        } else if (tl_skips != skips) {
            skipped++;
        } else if (tl_elsewhere_count != away) {
            elsewhere++;
        } else {
            passed++;
        }
    }
    if (elsewhere)
        printf("%d test%s left to the plain build\n", elsewhere, elsewhere == 1 ? "" : "s");
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                        \
    int main(int argc, char **argv)                                           \
    {                                                                         \
        static const tl_test tl_tests_[] = {__VA_ARGS__};                     \
        return tl_run(tl_tests_, (int)(sizeof tl_tests_ / sizeof tl_tests_[0]), argc, argv); \
    }
#define T(fn) {#fn, fn}

#endif
