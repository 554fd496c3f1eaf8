/* outfile.c - atomic results files (temporary + fsync + rename). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcbench.h"
#include "outfile.h"

int pcb_out_open(pcb_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return PCB_OK;
    }
    size_t len = strlen(path);
    o->path = strdup(path);
    o->tmp = malloc(len + 16);
    if (!o->path || !o->tmp) {
        pcb_out_abort(o);
        return pcb_fail(PCB_ENOMEM, "out of memory");
    }
    snprintf(o->tmp, len + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    /* mkstemp makes the file 0600; results are ordinary files (0666 & ~umask). */
    mode_t mask = umask(0);
    umask(mask);
    if (fd >= 0)
        fchmod(fd, 0666 & ~mask);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        pcb_out_abort(o);
        return pcb_fail(PCB_EIO, "cannot create a temporary file next to %s: %s", path,
                        strerror(e));
    }
    return PCB_OK;
}

int pcb_out_commit(pcb_outfile *o)
{
    if (!o->path) {
        int bad = fflush(o->f) != 0 || ferror(o->f);
        return bad ? pcb_fail(PCB_EIO, "write to stdout failed: %s", strerror(errno)) : PCB_OK;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
    int e = errno;
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        e = errno;
    }
    int rc = bad ? pcb_fail(PCB_EIO, "cannot write %s: %s", o->path, strerror(e)) : PCB_OK;
    pcb_out_abort(o);
    return rc;
}

void pcb_out_abort(pcb_outfile *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp); /* harmless after a successful rename: the name is gone */
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}
