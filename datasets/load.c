/* load.c - pcb_load: choose the format by content, then by extension; the
 * text (XYZ, CSV, PTS) and KITTI .bin loaders. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io.h"

/* A first line naming the columns ("x,y,z,..."): skipped in text files. */
static int is_xyz_header(const char *p)
{
    for (int k = 0; k < 3; k++) {
        const char *start = p;
        if (!pcb_skip_token(&p))
            return 0;
        while (*start == ' ' || *start == '\t' || *start == ',')
            start++;
        if (p - start != 1 || (*start | 0x20) != "xyz"[k])
            return 0;
    }
    return 1;
}

/* A .pts file starts with a line holding the point count only. */
static int is_count_line(const char *p)
{
    double v;
    /* the range test first: converting inf or >= 2^63 to int64 is undefined */
    return pcb_next_number(&p, &v) == 1 && v >= 0 && v < 0x1p63 && v == (double)(int64_t)v &&
           pcb_skip_token(&p) == 0;
}

/* Whitespace- or comma-separated columns; the first three are x, y, z.
 * Blank lines and lines starting with '#' are skipped. */
static int load_text(pcb_src *s, pcb_cloud *out, int pts)
{
    int64_t cap = 0, n = 0;
    int first = 1, rc;
    while ((rc = pcb_src_text_line(s)) > 0) {
        const char *p = s->text;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        if (first) {
            first = 0;
            if (is_xyz_header(p) || (pts && is_count_line(p)))
                continue;
        }
        double v[3];
        for (int k = 0; k < 3; k++) {
            int got = pcb_next_number(&p, &v[k]);
            if (got == 0)
                return pcb_bad_line(s, s->line, "%d column%s; need at least 3 (x y z)", k,
                                    k == 1 ? "" : "s");
            if (got < 0)
                return pcb_bad_line(s, s->line, "'%.*s' is not a number", pcb_token_len(p), p);
        }
        if ((rc = pcb_grow(s, out, &cap, n)) != PCB_OK ||
            (rc = pcb_put_point(s, out, n, v, 1, s->line)) != PCB_OK)
            return rc;
        n++;
    }
    if (rc < 0)
        return rc;
    if (n == 0)
        return pcb_bad_line(s, s->line, "no points in the file");
    float *fit = realloc(out->xyz, (size_t)n * 3 * sizeof *fit);
    if (fit)
        out->xyz = fit;
    double *dfit = realloc(out->dxyz, (size_t)n * 3 * sizeof *dfit);
    if (dfit)
        out->dxyz = dfit;
    out->n = n;
    return PCB_OK;
}

/* KITTI velodyne scans: float32 x, y, z, intensity, little endian. */
static int load_kitti(pcb_src *s, pcb_cloud *out)
{
    if (s->size % 16 != 0)
        return pcb_bad_byte(s, s->size - s->size % 16,
                            "size %lld is not a multiple of 16 bytes (KITTI float32 x, y, z, "
                            "intensity)",
                            (long long)s->size);
    int rc = pcb_alloc_points(s, out, s->size / 16, 0, 0);
    for (int64_t i = 0; rc == PCB_OK && i < out->n; i++) {
        int64_t at = s->offset;
        const unsigned char *b = pcb_src_take(s, 16);
        if (!b)
            return pcb_bad_byte(s, at, "the file ends inside point %lld of %lld", (long long)i,
                                (long long)out->n);
        double v[3] = {pcb_scalar_get(b, PCB_F32, 0), pcb_scalar_get(b + 4, PCB_F32, 0),
                       pcb_scalar_get(b + 8, PCB_F32, 0)};
        rc = pcb_put_point(s, out, i, v, 0, at);
    }
    return rc;
}

static int has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

static int starts(const unsigned char *head, size_t n, const char *magic)
{
    size_t m = strlen(magic);
    return n >= m && memcmp(head, magic, m) == 0;
}

static int dispatch(pcb_src *s, pcb_cloud *out)
{
    unsigned char head[16];
    size_t n = fread(head, 1, sizeof head, s->f);
    if (ferror(s->f) || fseeko(s->f, 0, SEEK_SET) != 0)
        return pcb_fail(PCB_EIO, "%s: read error at byte 0: %s", s->path, strerror(errno));
    if (n == 0)
        return pcb_bad_byte(s, 0, "empty file");
    if (starts(head, n, "ply") && (n == 3 || head[3] == '\n' || head[3] == '\r'))
        return pcb_load_ply(s, out);
    if (starts(head, n, "# .PCD") || starts(head, n, "VERSION") || starts(head, n, "FIELDS"))
        return pcb_load_pcd(s, out);
    if (has_ext(s->path, ".ply"))
        return pcb_bad_byte(s, 0, "not a PLY file (no 'ply' magic)");
    if (has_ext(s->path, ".pcd"))
        return pcb_bad_line(s, 1, "not a PCD file (no '# .PCD', VERSION or FIELDS header)");
    if (has_ext(s->path, ".bin"))
        return load_kitti(s, out);
    static const char *const text_ext[] = {".xyz", ".txt", ".csv", ".pts", ".pwn", ".asc"};
    for (size_t i = 0; i < sizeof text_ext / sizeof text_ext[0]; i++)
        if (has_ext(s->path, text_ext[i]))
            return load_text(s, out, has_ext(s->path, ".pts"));
    return pcb_bad_byte(s, 0, "unknown format: neither PLY nor PCD by content, and the name "
                              "does not end in .xyz .txt .csv .pts .pwn .asc or .bin");
}

int pcb_load(const char *path, pcb_cloud *out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "load: no cloud to fill");
    out->xyz = NULL;
    out->dxyz = NULL;
    out->n = 0;
    if (!path)
        return pcb_fail(PCB_EINVAL, "load: no path");
    pcb_src s = {.path = path};
    int not_regular;
    if (!(s.f = pcb_open_regular(path, &not_regular, &s.size))) {
        if (not_regular)
            return pcb_bad_byte(&s, 0, "not a regular file (a FIFO, device or socket)");
        return pcb_fail(PCB_EIO, "cannot %s %s: %s", errno == EISDIR ? "read" : "open", path,
                        strerror(errno));
    }
    int rc = (s.buf = malloc(PCB_READ_AHEAD))
                 ? dispatch(&s, out)
                 : pcb_fail(PCB_ENOMEM, "%s: no memory for a read buffer", path);
    if (rc == PCB_OK && ferror(s.f))
        rc = pcb_fail(PCB_EIO, "%s: read error: %s", path, strerror(errno));
    if (rc != PCB_OK)
        pcb_cloud_free(out);
    free(s.buf);
    free(s.text);
    fclose(s.f);
    return rc;
}
