/* pcd.c - Point Cloud Library PCD files, DATA ascii or binary.
 *
 * FIELDS must name x, y and z, each TYPE F, SIZE 4 or 8, COUNT 1; other
 * fields are skipped by SIZE x COUNT. The point count is POINTS, or WIDTH x
 * HEIGHT (both must agree when all are given). binary_compressed data is
 * refused as unsupported. */
#include <stdlib.h>
#include <string.h>

#include "io.h"

#define MAX_FIELDS 256
#define LINE_CAP 8192

typedef struct {
    char name[64];
    int size, count;
    char type;
    int64_t offset; /* byte offset in a binary record */
    int64_t column; /* first value in an ascii line */
} pcd_field;

typedef struct {
    pcd_field f[MAX_FIELDS];
    int nfields, nsizes, ntypes, ncounts;
    int64_t width, height, points; /* -1 when absent */
    int axis[3];
    int64_t record, columns;
    enum { PCD_ASCII, PCD_BINARY } data;
    int64_t data_line;
} pcd_header;

static int parse_int(const char *s, int64_t max, int64_t *out)
{
    char *end;
    if (!s || *s == '-' || *s == '+')
        return 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < 0 || v > max)
        return 0;
    *out = v;
    return 1;
}

/* A list of values after the keyword, one per field. */
static int field_list(pcb_src *s, pcd_header *h, const char *key, char *rest, char **save,
                      int *n)
{
    int64_t v;
    *n = 0;
    for (char *tok = rest; tok; tok = strtok_r(NULL, " \t", save)) {
        if (*n == MAX_FIELDS)
            return pcb_bad_line(s, s->line, "more than %d fields", MAX_FIELDS);
        pcd_field *f = &h->f[*n];
        if (strcmp(key, "FIELDS") == 0) {
            if (strlen(tok) >= sizeof f->name)
                return pcb_bad_line(s, s->line, "field name '%.20s...' too long", tok);
            for (int k = 0; k < *n; k++) /* which x would be the x? */
                if (strcmp(h->f[k].name, tok) == 0)
                    return pcb_bad_line(s, s->line, "field '%s' named twice in FIELDS", tok);
            strcpy(f->name, tok);
        } else if (strcmp(key, "TYPE") == 0) {
            if (strlen(tok) != 1 || !strchr("IUF", tok[0]))
                return pcb_bad_line(s, s->line, "TYPE '%s' is not I, U or F", tok);
            f->type = tok[0];
        } else if (strcmp(key, "SIZE") == 0) {
            if (!parse_int(tok, 8, &v) || (v != 1 && v != 2 && v != 4 && v != 8))
                return pcb_bad_line(s, s->line, "SIZE '%s' is not 1, 2, 4 or 8", tok);
            f->size = (int)v;
        } else {
            if (!parse_int(tok, 1 << 20, &v) || v < 1)
                return pcb_bad_line(s, s->line, "COUNT '%s' is not an integer in 1..%d", tok,
                                    1 << 20);
            f->count = (int)v;
        }
        (*n)++;
    }
    if (*n == 0)
        return pcb_bad_line(s, s->line, "%s has no values", key);
    return PCB_OK;
}

/* One header line; *done is set by DATA. */
static int header_line(pcb_src *s, pcd_header *h, char *line, int *done)
{
    char *save = NULL, *key = strtok_r(line, " \t", &save);
    if (!key || key[0] == '#')
        return PCB_OK;
    char *first = strtok_r(NULL, " \t", &save);
    if (strcmp(key, "FIELDS") == 0)
        return field_list(s, h, key, first, &save, &h->nfields);
    if (strcmp(key, "SIZE") == 0)
        return field_list(s, h, key, first, &save, &h->nsizes);
    if (strcmp(key, "TYPE") == 0)
        return field_list(s, h, key, first, &save, &h->ntypes);
    if (strcmp(key, "COUNT") == 0)
        return field_list(s, h, key, first, &save, &h->ncounts);
    if (strcmp(key, "VERSION") == 0 || strcmp(key, "VIEWPOINT") == 0)
        return PCB_OK;
    int64_t *dim = strcmp(key, "WIDTH") == 0    ? &h->width
                   : strcmp(key, "HEIGHT") == 0 ? &h->height
                   : strcmp(key, "POINTS") == 0 ? &h->points
                                                : NULL;
    if (dim) {
        if (!parse_int(first, INT64_MAX, dim) || strtok_r(NULL, " \t", &save))
            return pcb_bad_line(s, s->line, "%s needs one non-negative integer", key);
        return PCB_OK;
    }
    if (strcmp(key, "DATA") == 0) {
        if (first && strcmp(first, "ascii") == 0)
            h->data = PCD_ASCII;
        else if (first && strcmp(first, "binary") == 0)
            h->data = PCD_BINARY;
        else if (first && strcmp(first, "binary_compressed") == 0)
            return pcb_bad_line(s, s->line, "unsupported PCD data 'binary_compressed'");
        else
            return pcb_bad_line(s, s->line, "unknown PCD data '%s'", first ? first : "");
        h->data_line = s->line;
        *done = 1;
        return PCB_OK;
    }
    return pcb_bad_line(s, s->line, "unknown header keyword '%.40s'", key);
}

/* Check the header as a whole and lay out the records. */
static int check_header(pcb_src *s, pcd_header *h, int64_t *points)
{
    int64_t ln = h->data_line;
    if (h->nfields == 0)
        return pcb_bad_line(s, ln, "no FIELDS line before DATA");
    if (h->nsizes != h->nfields || h->ntypes != h->nfields)
        return pcb_bad_line(s, ln, "SIZE has %d and TYPE %d entries for %d FIELDS", h->nsizes,
                            h->ntypes, h->nfields);
    if (h->ncounts != 0 && h->ncounts != h->nfields)
        return pcb_bad_line(s, ln, "COUNT has %d entries for %d FIELDS", h->ncounts, h->nfields);
    h->record = h->columns = 0;
    for (int i = 0; i < h->nfields; i++) {
        pcd_field *f = &h->f[i];
        if (h->ncounts == 0)
            f->count = 1;
        if (f->type == 'F' && f->size != 4 && f->size != 8)
            return pcb_bad_line(s, ln, "field '%s' is TYPE F of SIZE %d", f->name, f->size);
        f->offset = h->record;
        f->column = h->columns;
        h->record += (int64_t)f->size * f->count;
        h->columns += f->count;
    }
    for (int k = 0; k < 3; k++) {
        const char want[2] = {"xyz"[k], '\0'};
        h->axis[k] = -1;
        for (int i = 0; i < h->nfields && h->axis[k] < 0; i++)
            if (strcmp(h->f[i].name, want) == 0)
                h->axis[k] = i;
        if (h->axis[k] < 0)
            return pcb_bad_line(s, ln, "FIELDS has no '%s'", want);
        const pcd_field *f = &h->f[h->axis[k]];
        if (f->type != 'F' || f->count != 1)
            return pcb_bad_line(s, ln, "field '%s' must be TYPE F, SIZE 4 or 8, COUNT 1", want);
    }
    if (h->record > PCB_READ_AHEAD)
        return pcb_bad_line(s, ln, "records of %lld bytes are too large", (long long)h->record);
    int have_wh = h->width >= 0 && h->height >= 0;
    if (h->points < 0 && !have_wh)
        return pcb_bad_line(s, ln, "neither POINTS nor WIDTH and HEIGHT in the header");
    if (have_wh && (h->width > PCB_MAX_POINTS || h->height > PCB_MAX_POINTS))
        return pcb_bad_line(s, ln, "WIDTH %lld x HEIGHT %lld is more than %d points",
                            (long long)h->width, (long long)h->height, PCB_MAX_POINTS);
    if (have_wh && h->points >= 0 && h->points != h->width * h->height)
        return pcb_bad_line(s, ln, "POINTS %lld differs from WIDTH %lld x HEIGHT %lld",
                            (long long)h->points, (long long)h->width, (long long)h->height);
    *points = h->points >= 0 ? h->points : h->width * h->height;
    return PCB_OK;
}

static int axis_of(const pcd_header *h, int field)
{
    for (int k = 0; k < 3; k++)
        if (h->axis[k] == field)
            return k;
    return -1;
}

static int binary_body(pcb_src *s, const pcd_header *h, int64_t n, pcb_cloud *out)
{
    if (n > pcb_src_left(s) / h->record)
        return pcb_bad_byte(s, s->size,
                            "the file ends inside point %lld of %lld (%lld bytes each)",
                            (long long)(pcb_src_left(s) / h->record), (long long)n,
                            (long long)h->record);
    int rc = pcb_alloc_points(s, out, n, 0, s->offset);
    for (int64_t i = 0; rc == PCB_OK && i < n; i++) {
        int64_t at = s->offset;
        const unsigned char *b = pcb_src_take(s, (size_t)h->record);
        if (!b)
            return pcb_bad_byte(s, at, "the file ends inside point %lld of %lld", (long long)i,
                                (long long)n);
        double v[3];
        for (int k = 0; k < 3; k++) {
            const pcd_field *f = &h->f[h->axis[k]];
            v[k] = pcb_scalar_get(b + f->offset, f->size == 4 ? PCB_F32 : PCB_F64, 0);
        }
        rc = pcb_put_point(s, out, i, v, 0, at);
    }
    return rc;
}

static int ascii_point(pcb_src *s, const pcd_header *h, int64_t i, int64_t n, double v[3])
{
    const char *p = NULL;
    while (!p) {
        int rc = pcb_src_text_line(s);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return pcb_bad_line(s, s->line, "the file ends before point %lld of %lld",
                                (long long)i, (long long)n);
        const char *q = s->text;
        if (pcb_skip_token(&q))
            p = s->text;
    }
    for (int fi = 0; fi < h->nfields; fi++) {
        int k = axis_of(h, fi);
        for (int c = 0; c < h->f[fi].count; c++) {
            int got = k >= 0 ? pcb_next_number(&p, &v[k]) : pcb_skip_token(&p);
            if (got == 0)
                return pcb_bad_line(s, s->line, "point %lld has fewer than %lld values",
                                    (long long)i, (long long)h->columns);
            if (got < 0)
                return pcb_bad_line(s, s->line, "%s '%.*s' is not a number", h->f[fi].name,
                                    pcb_token_len(p), p);
        }
    }
    if (pcb_skip_token(&p))
        return pcb_bad_line(s, s->line, "point %lld has more than %lld values", (long long)i,
                            (long long)h->columns);
    return PCB_OK;
}

static int ascii_body(pcb_src *s, const pcd_header *h, int64_t n, pcb_cloud *out)
{
    /* Each value takes at least one character and one separator. */
    if (n > (pcb_src_left(s) + 1) / (2 * h->columns))
        return pcb_bad_line(s, h->data_line, "%lld points cannot fit in the %lld bytes after "
                                             "the header",
                            (long long)n, (long long)pcb_src_left(s));
    int rc = pcb_alloc_points(s, out, n, 1, h->data_line);
    for (int64_t i = 0; rc == PCB_OK && i < n; i++) {
        double v[3];
        if ((rc = ascii_point(s, h, i, n, v)) == PCB_OK)
            rc = pcb_put_point(s, out, i, v, 1, s->line);
    }
    return rc;
}

int pcb_load_pcd(pcb_src *s, pcb_cloud *out)
{
    pcd_header *h = calloc(1, sizeof *h);
    char *line = malloc(LINE_CAP);
    int rc = h && line ? PCB_OK : pcb_fail(PCB_ENOMEM, "%s: no memory for the header", s->path);
    if (rc == PCB_OK) {
        h->width = h->height = h->points = -1;
        int done = 0;
        while (rc == PCB_OK && !done) {
            int got = pcb_src_header_line(s, line, LINE_CAP);
            if (got == 0)
                rc = pcb_bad_line(s, s->line, "the file ends before the DATA line");
            else if (got < 0)
                rc = got;
            else
                rc = header_line(s, h, line, &done);
        }
    }
    int64_t n = 0;
    if (rc == PCB_OK && (rc = check_header(s, h, &n)) == PCB_OK) {
        if (n < 1)
            rc = pcb_bad_line(s, h->data_line, "no points (POINTS or WIDTH x HEIGHT is 0)");
        else if (n > PCB_MAX_POINTS)
            rc = pcb_bad_line(s, h->data_line, "%lld points is more than %d", (long long)n,
                              PCB_MAX_POINTS);
        else
            rc = h->data == PCD_BINARY ? binary_body(s, h, n, out) : ascii_body(s, h, n, out);
    }
    free(h);
    free(line);
    return rc;
}
