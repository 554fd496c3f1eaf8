/* fuzz_load.c - libFuzzer target for the cloud loaders (make fuzz).
 *
 * The first byte of an input picks the file name's extension (so every
 * loader is reached: content decides PLY and PCD, the extension the rest),
 * the remaining bytes are the file. Beyond memory errors and undefined
 * behaviour, which the sanitizers catch, it checks the loaders' promises:
 * a loaded cloud has 1..PCB_MAX_POINTS finite points; a refusal is
 * PCB_EBADFILE naming the file and a line or byte, and leaves the cloud
 * empty. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/cloud.h"
#include "fuzz_file.h"

static const char *const ext[] = {".ply", ".pcd", ".xyz", ".txt", ".csv",
                                  ".pts", ".bin", ".pwn", ".asc", ".dat"};

static void require(int ok, const char *what, const char *msg)
{
    if (!ok) {
        fprintf(stderr, "fuzz_load: broken promise: %s (message: %s)\n", what, msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char path[256];
    fuzz_file("load", ext[data[0] % (sizeof ext / sizeof ext[0])], data + 1, size - 1, path,
              sizeof path);

    pcb_cloud c;
    int rc = pcb_load(path, &c);
    const char *msg = pcb_errmsg();
    if (rc == PCB_OK) {
        require(c.n >= 1 && c.n <= PCB_MAX_POINTS && c.xyz, "a loaded cloud has points", "");
        for (int64_t i = 0; i < 3 * c.n; i++)
            require(c.xyz[i] - c.xyz[i] == 0, "every coordinate is finite", "");
    } else {
        require(rc == PCB_EBADFILE, "a refusal is PCB_EBADFILE", msg);
        require(strstr(msg, path) != NULL, "the message names the file", msg);
        require(strstr(msg, "line ") || strstr(msg, "byte "), "the message names a position",
                msg);
        require(c.xyz == NULL && c.dxyz == NULL && c.n == 0, "a refusal leaves no cloud", msg);
    }
    pcb_cloud_free(&c);
    unlink(path);
    return 0;
}
