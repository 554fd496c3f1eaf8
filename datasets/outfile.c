/* outfile.c - results files that never leave half a file, never replace
 * what is not a regular file, and leave no litter.
 *
 * What the name is decides how it is written:
 *   absent or a regular file   a new file beside it, fsync'ed and renamed
 *                              over the name at commit (atomic);
 *   a symbolic link            the same, on the file it points to (the link
 *                              stays a link); a link to nothing is refused;
 *                              links under /dev and /proc (/dev/stdout) are
 *                              open streams: written through;
 *   a FIFO or character device written through, as a shell's '>' does
 *   (/dev/null, a pipe)        (no rename could be atomic there anyway);
 *   a folder, block device     refused: replacing /dev/sda or a socket with a
 *   or socket                  regular file is never what was meant.
 *
 * The new file is made with O_TMPFILE where the file system has it: it has
 * no name until commit links it under a temporary name and renames that
 * over the target, so a run killed at any moment, even by SIGKILL, leaves
 * nothing behind. Elsewhere it is a named "NAME.tmp.XXXXXX" from mkstemp,
 * removed on failure, and by pcb_out_signal_cleanup() from a signal
 * handler (SIGKILL leaves it). PCBENCH_NAMED_TMP=1 takes that way
 * everywhere, for the tests. */
#define _GNU_SOURCE /* O_TMPFILE, linkat */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcbench_impl.h"
#include "outfile.h"

/* Named temporaries alive now, for the signal handler (async-signal-safe:
 * fixed storage, unlink only). */
#define PENDING 8
static char pending[PENDING][PATH_MAX + 16];
static volatile sig_atomic_t pending_used[PENDING];

static void pending_add(const char *tmp)
{
    for (int i = 0; i < PENDING; i++)
        if (!pending_used[i] && strlen(tmp) < sizeof pending[i]) {
            strcpy(pending[i], tmp);
            pending_used[i] = 1;
            return;
        }
}

static void pending_drop(const char *tmp)
{
    for (int i = 0; i < PENDING; i++)
        if (pending_used[i] && strcmp(pending[i], tmp) == 0)
            pending_used[i] = 0;
}

/* Making a named temporary and registering it is one step for the signal
 * handler: the signals it handles wait meanwhile (a kill between the two
 * left the file behind). */
static void hold_signals(sigset_t *old)
{
    sigset_t held;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &held, old);
}

static void release_signals(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

void pcb_out_signal_cleanup(void)
{
    for (int i = 0; i < PENDING; i++)
        if (pending_used[i])
            unlink(pending[i]);
}

static int refuse(pcb_outfile *o, const char *path, const char *what)
{
    pcb_out_abort(o);
    return pcb_fail(PCB_EINVAL, "-o %s: %s; results go to regular files (replaced whole), "
                    "FIFOs and character devices (written through)", path, what);
}

/* The folder part of path ("." when none), into dir. */
static void folder_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* An unnamed file in path's folder (O_TMPFILE), or -1. */
static int unnamed_file(const char *path, mode_t mode)
{
#ifdef O_TMPFILE
    char dir[PATH_MAX];
    folder_of(path, dir, sizeof dir);
    if (access("/proc/self/fd", X_OK) != 0) /* commit names it through /proc */
        return -1;
    const char *named = getenv("PCBENCH_NAMED_TMP");
    if (named && strcmp(named, "1") == 0)
        return -1;
    return open(dir, O_TMPFILE | O_WRONLY, mode);
#else
    (void)path, (void)mode;
    return -1;
#endif
}

int pcb_out_open(pcb_outfile *o, const char *path)
{
    if (!o)
        return pcb_fail(PCB_EINVAL, "out open: no output to fill");
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return PCB_OK;
    }
    if (!*path)
        return pcb_fail(PCB_EINVAL, "-o: an empty file name");
    struct stat st;
    const char *target = path;
    char real[PATH_MAX];
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            /* /dev/stdout, /dev/fd/N, /proc/self/fd/N: an open stream, whatever it is */
            const int stream = strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0;
            if (stat(path, &st) != 0)
                return refuse(o, path, "a symbolic link to nothing");
            if (stream && S_ISREG(st.st_mode))
                st.st_mode = S_IFCHR; /* written through below */
            else if (S_ISREG(st.st_mode)) { /* replace the file it points to */
                if (!realpath(path, real))
                    return pcb_fail(PCB_EIO, "-o %s: cannot resolve the link: %s", path,
                                    strerror(errno));
                target = real;
            }
        }
        if (S_ISDIR(st.st_mode))
            return refuse(o, path, "a folder");
        if (S_ISBLK(st.st_mode))
            return refuse(o, path, "a block device");
        if (S_ISSOCK(st.st_mode))
            return refuse(o, path, "a socket");
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
            o->through = 1;
            if (!(o->path = strdup(path)))
                return pcb_fail(PCB_ENOMEM, "out of memory");
            if (!(o->f = fopen(path, "w"))) {
                int e = errno;
                pcb_out_abort(o);
                return pcb_fail(PCB_EIO, "cannot write %s: %s", path, strerror(e));
            }
            return PCB_OK;
        }
    } else if (errno != ENOENT) {
        return pcb_fail(PCB_EIO, "-o %s: %s", path, strerror(errno));
    }

    size_t len = strlen(target);
    o->path = strdup(target);
    o->tmp = malloc(len + 16);
    if (!o->path || !o->tmp) {
        pcb_out_abort(o);
        return pcb_fail(PCB_ENOMEM, "out of memory");
    }
    /* Results are ordinary files: 0666 & ~umask (mkstemp would make 0600). */
    mode_t mask = umask(0);
    umask(mask);
    int fd = unnamed_file(target, 0666 & ~mask);
    if (fd >= 0) {
        o->fd = fd;
        o->tmp[0] = '\0';
    } else {
        snprintf(o->tmp, len + 16, "%s.tmp.XXXXXX", target);
        sigset_t old;
        hold_signals(&old);
        fd = mkstemp(o->tmp);
        if (fd >= 0)
            pending_add(o->tmp);
        release_signals(&old);
        if (fd >= 0)
            fchmod(fd, 0666 & ~mask);
    }
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0 && o->tmp[0])
            unlink(o->tmp);
        if (fd >= 0)
            close(fd);
        o->fd = -1;
        free(o->tmp);
        o->tmp = NULL;
        pcb_out_abort(o);
        return pcb_fail(PCB_EIO, "cannot create a file next to %s: %s", path, strerror(e));
    }
    return PCB_OK;
}

/* Give the unnamed file a temporary name beside path (into o->tmp). */
static int name_unnamed(pcb_outfile *o)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
    size_t size = strlen(o->path) + 16;
    for (unsigned k = 0; k < 100; k++) {
        snprintf(o->tmp, size, "%s.tmp.%06x", o->path,
                 (unsigned)((unsigned)getpid() * 2654435761u + k * 40503u) & 0xffffffu);
        sigset_t old;
        hold_signals(&old);
        const int linked = linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) == 0;
        if (linked)
            pending_add(o->tmp);
        release_signals(&old);
        if (linked)
            return 0;
        if (errno != EEXIST)
            break;
    }
    o->tmp[0] = '\0';
    return -1;
}

int pcb_out_commit(pcb_outfile *o)
{
    if (!o || !o->f)
        return pcb_fail(PCB_EINVAL, "out commit: no open output");
    if (!o->path) {
        int bad = fflush(o->f) != 0 || ferror(o->f);
        return bad ? pcb_fail(PCB_EIO, "write to stdout failed: %s", strerror(errno)) : PCB_OK;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f) || (!o->through && fsync(fileno(o->f)) != 0);
    int e = errno;
    if (!bad && o->fd >= 0 && name_unnamed(o) != 0) {
        bad = 1;
        e = errno;
    }
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    o->fd = -1;
    if (!bad && !o->through && rename(o->tmp, o->path) != 0) {
        bad = 1;
        e = errno;
    }
    int rc = bad ? pcb_fail(PCB_EIO, "cannot write %s: %s", o->path, strerror(e)) : PCB_OK;
    pcb_out_abort(o);
    return rc;
}

void pcb_out_abort(pcb_outfile *o)
{
    if (!o)
        return;
    if (o->f && o->f != stdout)
        fclose(o->f); /* an unnamed file vanishes with its descriptor */
    if (o->tmp && o->tmp[0]) {
        unlink(o->tmp); /* harmless after a successful rename: the name is gone */
        pending_drop(o->tmp);
    }
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}

int pcb_out_same_file(const char *out, const char *in)
{
    struct stat so, si;
    if (!out || !in || strcmp(out, "-") == 0 || stat(out, &so) != 0 || stat(in, &si) != 0)
        return 0;
    return so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}
