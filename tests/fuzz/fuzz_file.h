/* fuzz_file.h - the fuzz targets read files by name: write an input's bytes
 * to a file of this process, named for the target and with extension ext. */
#ifndef PCB_FUZZ_FILE_H
#define PCB_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void fuzz_file(const char *target, const char *ext, const uint8_t *data, size_t size,
                      char *path, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, cap, "%s/pcbench-%s-%ld%s", dir && *dir ? dir : "/tmp", target,
             (long)getpid(), ext);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
}

#endif
