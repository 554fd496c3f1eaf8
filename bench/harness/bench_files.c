/* bench_files.c - folders for results files. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

int bench_mkdirs(const char *dir)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return pcb_fail(PCB_EINVAL, "path too long: %s", dir);
    for (char *p = buf + 1;; p++) {
        char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return pcb_fail(PCB_EIO, "cannot create %s: %s", buf, strerror(errno));
        *p = c;
        if (!c)
            return PCB_OK;
    }
}
