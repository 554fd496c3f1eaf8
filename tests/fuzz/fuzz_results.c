/* fuzz_results.c - libFuzzer target for the stored-results reader (make
 * fuzz): what `pcbench bench` resumes from and `pcbench compare` reads,
 * bench_store_read over the JSON parser.
 *
 * Beyond what the sanitizers catch, it checks the reader's promises: a
 * refusal is PCB_EBADFILE or PCB_EUNSUPPORTED naming the file; an accepted
 * file gives entries whose samples are times (finite, >= 0) and no more of
 * them than a figure holds. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/harness/harness.h"
#include "fuzz_file.h"

static void check_figure(const bench_figure *f)
{
    if (f->reps < 0 || f->reps > MAX_SAMPLES)
        abort();
    for (int i = 0; i < f->reps; i++)
        if (!isfinite(f->sample[i]) || f->sample[i] < 0)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[256];
    fuzz_file("results", ".json", data, size, path, sizeof path);
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.config.id, sizeof r.config.id, "fps/uniform/b1/n2000/m100");
    int rc = bench_store_read(path, &r);
    const char *msg = pcb_errmsg();
    if (rc != PCB_OK && (!(rc == PCB_EBADFILE || rc == PCB_EUNSUPPORTED || rc == PCB_ENOMEM) ||
                         !strstr(msg, path))) {
        fprintf(stderr, "fuzz_results: broken promise: rc %d, message: %s\n", rc, msg);
        abort();
    }
    for (int i = 0; rc == PCB_OK && i < r.count; i++) {
        check_figure(&r.entries[i].compute);
        check_figure(&r.entries[i].compute_cold);
        check_figure(&r.entries[i].e2e);
    }
    bench_result_free(&r);
    unlink(path);
    return 0;
}
