/* io.c - positions, messages, binary scalars and text numbers for the
 * cloud loaders. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

FILE *pcb_open_regular(const char *path, int *not_regular, int64_t *size)
{
    *not_regular = 0;
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (!S_ISREG(st.st_mode))
        *not_regular = 1;
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        e = errno;
    else if (size)
        *size = (int64_t)st.st_size;
    FILE *f = e || *not_regular ? NULL : fdopen(fd, "rb");
    if (!f) {
        e = e ? e : errno;
        close(fd);
        errno = e;
    }
    return f;
}

static int bad_at(const pcb_src *s, const char *unit, int64_t pos, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return pcb_fail(PCB_EBADFILE, "%s: %s %lld: %s", s->path, unit, (long long)pos, msg);
}

int pcb_bad_line(const pcb_src *s, int64_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = bad_at(s, "line", line, fmt, ap);
    va_end(ap);
    return rc;
}

int pcb_bad_byte(const pcb_src *s, int64_t byte, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = bad_at(s, "byte", byte, fmt, ap);
    va_end(ap);
    return rc;
}

static int read_failed(const pcb_src *s)
{
    return pcb_fail(PCB_EIO, "%s: read error at byte %lld: %s", s->path, (long long)s->offset,
                    strerror(errno));
}

int pcb_src_header_line(pcb_src *s, char *buf, size_t cap)
{
    size_t n = 0;
    int ch;
    int64_t start = s->offset;
    while ((ch = getc(s->f)) != EOF) {
        s->offset++;
        if (ch == '\n')
            break;
        if (ch == '\0')
            return pcb_bad_line(s, s->line + 1, "NUL byte in a header line (byte %lld)",
                                (long long)(s->offset - 1));
        if (n + 1 >= cap)
            return pcb_bad_line(s, s->line + 1, "header line longer than %zu characters",
                                cap - 1);
        buf[n++] = (char)ch;
    }
    if (ch == EOF && ferror(s->f))
        return read_failed(s);
    if (ch == EOF && s->offset == start)
        return 0;
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    s->line++;
    return 1;
}

int pcb_src_text_line(pcb_src *s)
{
    ssize_t n = getline(&s->text, &s->text_cap, s->f);
    if (n < 0)
        return ferror(s->f) ? read_failed(s) : 0;
    const char *nul = memchr(s->text, '\0', (size_t)n);
    if (nul) /* the rest of the line would be ignored silently */
        return pcb_bad_line(s, s->line + 1, "NUL byte in the line (byte %lld)",
                            (long long)(s->offset + (nul - s->text)));
    s->offset += n;
    s->line++;
    if (n > 0 && s->text[n - 1] == '\n')
        s->text[--n] = '\0';
    if (n > 0 && s->text[n - 1] == '\r')
        s->text[--n] = '\0';
    return 1;
}

const unsigned char *pcb_src_take(pcb_src *s, size_t n)
{
    if (s->len - s->at < n) {
        memmove(s->buf, s->buf + s->at, s->len - s->at);
        s->len -= s->at;
        s->at = 0;
        s->len += fread(s->buf + s->len, 1, PCB_READ_AHEAD - s->len, s->f);
        if (s->len < n)
            return NULL;
    }
    const unsigned char *p = s->buf + s->at;
    s->at += n;
    s->offset += (int64_t)n;
    return p;
}

int64_t pcb_src_left(const pcb_src *s)
{
    return s->size - s->offset;
}

int pcb_src_skip(pcb_src *s, int64_t n)
{
    if (n > pcb_src_left(s))
        return 0;
    int64_t buffered = (int64_t)(s->len - s->at);
    if (n <= buffered) {
        s->at += (size_t)n;
    } else {
        if (fseeko(s->f, (off_t)(n - buffered), SEEK_CUR) != 0)
            return 0;
        s->at = s->len = 0;
    }
    s->offset += n;
    return 1;
}

int pcb_scalar_size(pcb_scalar t)
{
    static const int size[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return size[t];
}

double pcb_scalar_get(const unsigned char *p, pcb_scalar t, int big_endian)
{
    static const uint16_t probe = 1;
    int host_big = *(const unsigned char *)&probe == 0;
    unsigned char b[8];
    int n = pcb_scalar_size(t);
    for (int i = 0; i < n; i++)
        b[i] = p[big_endian != host_big ? n - 1 - i : i];
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
        int64_t i64; uint64_t u64; float f32; double f64;
    } v;
    memcpy(&v, b, (size_t)n);
    switch (t) {
    case PCB_I8: return v.i8;
    case PCB_U8: return v.u8;
    case PCB_I16: return v.i16;
    case PCB_U16: return v.u16;
    case PCB_I32: return v.i32;
    case PCB_U32: return v.u32;
    case PCB_I64: return (double)v.i64;
    case PCB_U64: return (double)v.u64;
    case PCB_F32: return v.f32;
    default: return v.f64;
    }
}

static int is_separator(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\v' || c == '\f';
}

int pcb_next_number(const char **p, double *v)
{
    const char *q = *p;
    while (is_separator(*q))
        q++;
    *p = q;
    if (!*q)
        return 0;
    char *end;
    *v = strtod(q, &end);
    if (end == q || (*end && !is_separator(*end)))
        return -1;
    *p = end;
    return 1;
}

int pcb_token_len(const char *p)
{
    int n = 0;
    while (p[n] && !is_separator(p[n]) && n < 40)
        n++;
    return n;
}

int pcb_skip_token(const char **p)
{
    const char *q = *p;
    while (is_separator(*q))
        q++;
    if (!*q) {
        *p = q;
        return 0;
    }
    while (*q && !is_separator(*q))
        q++;
    *p = q;
    return 1;
}

int pcb_put_point(const pcb_src *s, pcb_cloud *c, int64_t i, const double v[3], int text,
                  int64_t pos)
{
    float *out = c->xyz + 3 * i;
    if (c->dxyz)
        memcpy(c->dxyz + 3 * i, v, 3 * sizeof *v);
    for (int k = 0; k < 3; k++) {
        out[k] = (float)v[k];
        if (!isfinite(out[k])) {
            const char *what = isnan(v[k]) ? "NaN" : isinf(v[k]) ? "infinite" : "out-of-range";
            return text ? pcb_bad_line(s, pos, "%s %c coordinate", what, "xyz"[k])
                        : pcb_bad_byte(s, pos, "%s %c coordinate", what, "xyz"[k]);
        }
    }
    return PCB_OK;
}

int pcb_grow(const pcb_src *s, pcb_cloud *c, int64_t *cap, int64_t i)
{
    if (i < *cap)
        return PCB_OK;
    if (i >= PCB_MAX_POINTS)
        return pcb_bad_line(s, s->line, "more than %d points", PCB_MAX_POINTS);
    int64_t want = *cap ? 2 * *cap : 4096;
    if (want > PCB_MAX_POINTS)
        want = PCB_MAX_POINTS;
    float *xyz = realloc(c->xyz, (size_t)want * 3 * sizeof *xyz);
    if (xyz)
        c->xyz = xyz;
    double *dxyz = xyz ? realloc(c->dxyz, (size_t)want * 3 * sizeof *dxyz) : NULL;
    if (!dxyz)
        return pcb_fail(PCB_ENOMEM, "%s: no memory for %lld points", s->path, (long long)want);
    c->dxyz = dxyz;
    *cap = want;
    return PCB_OK;
}

int pcb_alloc_points(const pcb_src *s, pcb_cloud *c, int64_t n, int text, int64_t pos)
{
    if (n < 1 || n > PCB_MAX_POINTS) {
        const char *why = n < 1 ? "no points" : "more points than the limit";
        return text ? pcb_bad_line(s, pos, "%s (%lld; at most %d)", why, (long long)n,
                                   PCB_MAX_POINTS)
                    : pcb_bad_byte(s, pos, "%s (%lld; at most %d)", why, (long long)n,
                                   PCB_MAX_POINTS);
    }
    int rc = pcb_cloud_alloc(c, n);
    if (rc == PCB_OK && !(c->dxyz = malloc((size_t)n * 3 * sizeof *c->dxyz)))
        rc = pcb_fail(PCB_ENOMEM, "no memory for %lld points", (long long)n);
    return rc == PCB_OK ? rc : pcb_fail(rc, "%s: %s", s->path, pcb_errmsg());
}

int pcb_shift_auto(const pcb_cloud *ref, double shift[3])
{
    if (!ref || !shift || (ref->n > 0 && !ref->xyz))
        return pcb_fail(PCB_EINVAL, "shift: no cloud or no shift to fill");
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, far = 0;
    for (int64_t i = 0; i < ref->n; i++)
        for (int k = 0; k < 3; k++) {
            double v = ref->dxyz ? ref->dxyz[3 * i + k] : ref->xyz[3 * i + k];
            lo[k] = v < lo[k] ? v : lo[k];
            far = fabs(v) > far ? fabs(v) : far;
        }
    for (int k = 0; k < 3; k++)
        shift[k] = far > 1e5 ? floor(lo[k]) : 0;
    return far > 1e5;
}

int pcb_cloud_shift(pcb_cloud *c, const double shift[3])
{
    if (!c || !shift || (c->n > 0 && !c->xyz))
        return pcb_fail(PCB_EINVAL, "shift: no cloud or no shift given");
    for (int64_t i = 0; i < c->n; i++)
        for (int k = 0; k < 3; k++) {
            double v = (c->dxyz ? c->dxyz[3 * i + k] : c->xyz[3 * i + k]) - shift[k];
            float f = (float)v;
            if (!isfinite(f))
                return pcb_fail(PCB_EINVAL, "point %lld: %c coordinate %.17g minus the shift "
                                "%.17g does not fit float32", (long long)i, "xyz"[k],
                                v + shift[k], shift[k]);
            c->xyz[3 * i + k] = f;
        }
    return PCB_OK;
}
