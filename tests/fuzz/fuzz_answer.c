/* fuzz_answer.c - libFuzzer target for the answer-file reader of pcbench
 * check (make fuzz).
 *
 * The first byte of an input is the count of answers expected (0..255),
 * the rest the file, read twice: as one answer a line, and as kNN rows (the
 * byte's low 4 bits the rows, the next 3 bits k - 1, the top bit whether
 * the reference is short of k). Beyond what the sanitizers catch, it checks
 * the readers' promises: success fills exactly what was asked; a refusal is
 * PCB_EBADFILE naming the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/cloud.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int64_t count = data[0];
    char path[256];
    fuzz_file("answer", ".txt", data + 1, size - 1, path, sizeof path);

    /* Canaries one past the end: the reader must write exactly count. */
    int32_t *index = malloc((size_t)(count + 1) * sizeof *index);
    double *value = malloc((size_t)(count + 1) * sizeof *value);
    if (!index || !value)
        abort();
    index[count] = INT32_MIN + 7;
    value[count] = -7.0;
    int has = -1;
    int rc = pcb_read_answers(path, count, index, value, &has);
    const char *msg = pcb_errmsg();
    if (index[count] != INT32_MIN + 7 || value[count] != -7.0 || (has != 0 && has != 1) ||
        (rc != PCB_OK && (rc != PCB_EBADFILE || !strstr(msg, path)))) {
        fprintf(stderr, "fuzz_answer: broken promise: rc %d, has %d, message: %s\n", rc, has,
                msg);
        abort();
    }
    free(index);
    free(value);

    const int64_t rows = data[0] & 15, k = 1 + (data[0] >> 4 & 7);
    const int64_t len = data[0] >> 7 && k > 1 ? k - 1 : k, cells = rows * k;
    index = malloc((size_t)(cells + 1) * sizeof *index);
    value = malloc((size_t)(cells + 1) * sizeof *value);
    if (!index || !value)
        abort();
    index[cells] = INT32_MIN + 7;
    value[cells] = -7.0;
    has = -1;
    rc = pcb_read_rows(path, rows, k, len, index, value, &has);
    msg = pcb_errmsg();
    if (index[cells] != INT32_MIN + 7 || value[cells] != -7.0 || (has != 0 && has != 1) ||
        (rc != PCB_OK && (rc != PCB_EBADFILE || !strstr(msg, path)))) {
        fprintf(stderr, "fuzz_answer: rows: broken promise: rc %d, has %d, message: %s\n", rc,
                has, msg);
        abort();
    }
    /* ball rows: 0 to k indices a line, blank lines empty balls */
    has = -1;
    rc = pcb_read_rows(path, rows, k, 0, index, value, &has);
    msg = pcb_errmsg();
    if (index[cells] != INT32_MIN + 7 || value[cells] != -7.0 || has != 0 ||
        (rc != PCB_OK && (rc != PCB_EBADFILE || !strstr(msg, path)))) {
        fprintf(stderr, "fuzz_answer: ball rows: broken promise: rc %d, has %d, message: %s\n",
                rc, has, msg);
        abort();
    }
    free(index);
    free(value);
    unlink(path);
    return 0;
}
