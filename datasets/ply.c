/* ply.c - PLY in (ascii, binary little and big endian) and out (binary
 * little endian float x, y, z).
 *
 * The loader reads the vertex element's x, y and z (any scalar type) and
 * skips every other property, list properties included. Elements before
 * "vertex" are parsed and skipped; elements after it are not read. */
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "io.h"

#define MAX_ELEMENTS 16
#define MAX_PROPS 128
#define LINE_CAP 4096

typedef struct {
    char name[64];
    int is_list;
    pcb_scalar type;       /* the value type (list items for a list) */
    pcb_scalar count_type; /* lists only */
} ply_prop;

typedef struct {
    char name[64];
    int64_t count;
    int64_t line; /* where the header declares it */
    ply_prop prop[MAX_PROPS];
    int nprops;
} ply_element;

typedef enum { PLY_ASCII, PLY_LE, PLY_BE } ply_format;

typedef struct {
    ply_format format;
    int have_format;
    ply_element el[MAX_ELEMENTS];
    int nel;
    int vertex;   /* index of the vertex element */
    int axis[3];  /* property index of x, y, z in it */
} ply_header;

static int parse_type(const char *s, pcb_scalar *t)
{
    static const struct {
        const char *name;
        pcb_scalar type;
    } names[] = {{"char", PCB_I8},     {"int8", PCB_I8},     {"uchar", PCB_U8},
                 {"uint8", PCB_U8},    {"short", PCB_I16},   {"int16", PCB_I16},
                 {"ushort", PCB_U16},  {"uint16", PCB_U16},  {"int", PCB_I32},
                 {"int32", PCB_I32},   {"uint", PCB_U32},    {"uint32", PCB_U32},
                 {"float", PCB_F32},   {"float32", PCB_F32}, {"double", PCB_F64},
                 {"float64", PCB_F64}};
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *t = names[i].type;
            return 1;
        }
    return 0;
}

static int parse_count(const char *s, int64_t *out)
{
    if (!s || !*s)
        return 0;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
            return 0;
        v = 10 * v + (*s - '0');
    }
    *out = v;
    return 1;
}

static int copy_name(char *dst, const char *src)
{
    if (!src || strlen(src) >= 64)
        return 0;
    strcpy(dst, src);
    return 1;
}

/* One header line after "ply"; *done is set by end_header. */
static int header_line(pcb_src *s, ply_header *h, char *line, int *done)
{
    char *save = NULL, *key = strtok_r(line, " \t", &save);
    int64_t ln = s->line;
    if (!key || strcmp(key, "comment") == 0 || strcmp(key, "obj_info") == 0)
        return PCB_OK;
    char *a = strtok_r(NULL, " \t", &save), *b = strtok_r(NULL, " \t", &save);
    char *c = strtok_r(NULL, " \t", &save), *d = strtok_r(NULL, " \t", &save);
    char *extra = strtok_r(NULL, " \t", &save);
    if (strcmp(key, "end_header") == 0) {
        *done = 1;
        return PCB_OK;
    }
    if (strcmp(key, "format") == 0) {
        if (h->have_format)
            return pcb_bad_line(s, ln, "second format line");
        if (!a || !b || c)
            return pcb_bad_line(s, ln, "expected 'format <type> 1.0'");
        if (strcmp(a, "ascii") == 0)
            h->format = PLY_ASCII;
        else if (strcmp(a, "binary_little_endian") == 0)
            h->format = PLY_LE;
        else if (strcmp(a, "binary_big_endian") == 0)
            h->format = PLY_BE;
        else
            return pcb_bad_line(s, ln, "unknown PLY format '%s'", a);
        if (strncmp(b, "1.", 2) != 0 && strcmp(b, "1") != 0)
            return pcb_bad_line(s, ln, "unsupported PLY version '%s'", b);
        h->have_format = 1;
        return PCB_OK;
    }
    if (strcmp(key, "element") == 0) {
        if (h->nel == MAX_ELEMENTS)
            return pcb_bad_line(s, ln, "more than %d elements", MAX_ELEMENTS);
        ply_element *e = &h->el[h->nel];
        if (!a || !b || c || !copy_name(e->name, a))
            return pcb_bad_line(s, ln, "expected 'element <name> <count>'");
        if (!parse_count(b, &e->count))
            return pcb_bad_line(s, ln, "element count '%s' is not a non-negative integer", b);
        e->line = ln;
        e->nprops = 0;
        h->nel++;
        return PCB_OK;
    }
    if (strcmp(key, "property") == 0) {
        if (h->nel == 0)
            return pcb_bad_line(s, ln, "property before any element");
        ply_element *e = &h->el[h->nel - 1];
        if (e->nprops == MAX_PROPS)
            return pcb_bad_line(s, ln, "more than %d properties in element '%s'", MAX_PROPS,
                                e->name);
        ply_prop *p = &e->prop[e->nprops];
        const char *name = b, *type = a;
        p->is_list = a && strcmp(a, "list") == 0;
        if (p->is_list) {
            if (!parse_type(b, &p->count_type) || p->count_type == PCB_F32 ||
                p->count_type == PCB_F64)
                return pcb_bad_line(s, ln, "list count type '%s' is not an integer type",
                                    b ? b : "");
            type = c;
            name = d;
            if (extra)
                name = NULL;
        } else if (c) {
            name = NULL;
        }
        if (!parse_type(type, &p->type))
            return pcb_bad_line(s, ln, "unknown property type '%s'", type ? type : "");
        if (!copy_name(p->name, name))
            return pcb_bad_line(s, ln, "expected 'property <type> <name>' or "
                                       "'property list <type> <type> <name>'");
        for (int i = 0; i < e->nprops; i++)
            if (strcmp(e->prop[i].name, p->name) == 0)
                return pcb_bad_line(s, ln, "property '%s' declared twice", p->name);
        e->nprops++;
        return PCB_OK;
    }
    return pcb_bad_line(s, ln, "unknown header keyword '%s'", key);
}

static int read_header(pcb_src *s, ply_header *h)
{
    char line[LINE_CAP];
    int rc = pcb_src_header_line(s, line, sizeof line), done = 0;
    if (rc == 1 && strcmp(line, "ply") != 0)
        rc = 0;
    if (rc != 1)
        return rc < 0 ? rc : pcb_bad_line(s, 1, "not a PLY file (no 'ply' magic)");
    while (!done) {
        rc = pcb_src_header_line(s, line, sizeof line);
        if (rc == 0)
            return pcb_bad_line(s, s->line, "the file ends before 'end_header'");
        if (rc < 0 || (rc = header_line(s, h, line, &done)) != PCB_OK)
            return rc;
    }
    if (!h->have_format)
        return pcb_bad_line(s, s->line, "no 'format' line in the header");
    h->vertex = -1;
    for (int i = 0; i < h->nel && h->vertex < 0; i++)
        if (strcmp(h->el[i].name, "vertex") == 0)
            h->vertex = i;
    if (h->vertex < 0)
        return pcb_bad_line(s, s->line, "no 'vertex' element in the header");
    const ply_element *v = &h->el[h->vertex];
    for (int k = 0; k < 3; k++) {
        const char want[2] = {"xyz"[k], '\0'};
        h->axis[k] = -1;
        for (int i = 0; i < v->nprops; i++)
            if (strcmp(v->prop[i].name, want) == 0)
                h->axis[k] = i;
        if (h->axis[k] < 0)
            return pcb_bad_line(s, v->line, "the vertex element has no '%s' property", want);
        if (v->prop[h->axis[k]].is_list)
            return pcb_bad_line(s, v->line, "vertex property '%s' is a list", want);
    }
    if (v->count < 1 || v->count > PCB_MAX_POINTS)
        return pcb_bad_line(s, v->line, "%lld vertices (need 1..%d)", (long long)v->count,
                            PCB_MAX_POINTS);
    return PCB_OK;
}

/* ---- binary ------------------------------------------------------------- */
static int64_t min_record(const ply_element *e)
{
    int64_t n = 0;
    for (int i = 0; i < e->nprops; i++)
        n += pcb_scalar_size(e->prop[i].is_list ? e->prop[i].count_type : e->prop[i].type);
    return n;
}

/* Read one binary record of e; coordinates go to v (when v is not NULL). */
static int binary_record(pcb_src *s, const ply_header *h, const ply_element *e, int64_t index,
                         double *v)
{
    int big = h->format == PLY_BE;
    for (int i = 0; i < e->nprops; i++) {
        const ply_prop *p = &e->prop[i];
        int64_t at = s->offset;
        const unsigned char *b = pcb_src_take(s, (size_t)pcb_scalar_size(
                                                     p->is_list ? p->count_type : p->type));
        if (!b)
            return pcb_bad_byte(s, s->size, "the file ends inside %s %lld of %lld", e->name,
                                (long long)index, (long long)e->count);
        double x = pcb_scalar_get(b, p->is_list ? p->count_type : p->type, big);
        if (p->is_list) {
            if (x < 0)
                return pcb_bad_byte(s, at, "negative list length %.0f in %s %lld", x, e->name,
                                    (long long)index);
            if (!pcb_src_skip(s, (int64_t)x * pcb_scalar_size(p->type)))
                return pcb_bad_byte(s, s->size, "the file ends inside %s %lld of %lld",
                                    e->name, (long long)index, (long long)e->count);
        } else if (v) {
            for (int k = 0; k < 3; k++)
                if (i == h->axis[k])
                    v[k] = x;
        }
    }
    return PCB_OK;
}

static int binary_body(pcb_src *s, const ply_header *h, pcb_cloud *out)
{
    int rc;
    for (int i = 0; i < h->vertex; i++) {
        const ply_element *e = &h->el[i];
        int64_t rec = min_record(e);
        if (rec > 0 && e->count > pcb_src_left(s) / rec)
            return pcb_bad_byte(s, s->size, "the file ends inside element '%s' (%lld declared "
                                            "in line %lld)",
                                e->name, (long long)e->count, (long long)e->line);
        for (int64_t j = 0; rec > 0 && j < e->count; j++)
            if ((rc = binary_record(s, h, e, j, NULL)) != PCB_OK)
                return rc;
    }
    const ply_element *v = &h->el[h->vertex];
    int64_t rec = min_record(v);
    if (v->count > pcb_src_left(s) / rec)
        return pcb_bad_byte(s, s->size,
                            "the file ends inside vertex %lld of %lld (declared in line %lld; "
                            "%lld bytes each)",
                            (long long)(pcb_src_left(s) / rec), (long long)v->count,
                            (long long)v->line, (long long)rec);
    if ((rc = pcb_alloc_points(s, out, v->count, 0, s->offset)) != PCB_OK)
        return rc;
    /* Without list properties every record has the same layout: read whole
     * records and pick the coordinates at fixed offsets (the common case). */
    int fixed = 1;
    int64_t offset[3] = {0, 0, 0};
    for (int i = 0; i < v->nprops; i++) {
        fixed &= !v->prop[i].is_list;
        for (int k = 0; k < 3; k++)
            if (i < h->axis[k])
                offset[k] += pcb_scalar_size(v->prop[i].type);
    }
    for (int64_t j = 0; j < v->count; j++) {
        double xyz[3];
        int64_t at = s->offset;
        if (fixed) {
            const unsigned char *b = pcb_src_take(s, (size_t)rec);
            if (!b) /* the size was checked; only a file shrinking under us */
                return pcb_bad_byte(s, at, "the file ends inside vertex %lld", (long long)j);
            for (int k = 0; k < 3; k++)
                xyz[k] = pcb_scalar_get(b + offset[k], v->prop[h->axis[k]].type,
                                        h->format == PLY_BE);
        } else if ((rc = binary_record(s, h, v, j, xyz)) != PCB_OK) {
            return rc;
        }
        if ((rc = pcb_put_point(s, out, j, xyz, 0, at)) != PCB_OK)
            return rc;
    }
    return PCB_OK;
}

/* ---- ascii -------------------------------------------------------------- */
/* The next non-blank line, or PCB_EBADFILE naming what was expected. */
static int ascii_line(pcb_src *s, const ply_element *e, int64_t index, const char **line)
{
    for (;;) {
        int rc = pcb_src_text_line(s);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return pcb_bad_line(s, s->line, "the file ends before %s %lld of %lld",
                                e->name, (long long)index, (long long)e->count);
        const char *p = s->text;
        if (pcb_skip_token(&p)) {
            *line = s->text;
            return PCB_OK;
        }
    }
}

static int ascii_record(pcb_src *s, const ply_header *h, const ply_element *e, int64_t index,
                        double *v)
{
    const char *p;
    int rc = ascii_line(s, e, index, &p);
    if (rc != PCB_OK)
        return rc;
    for (int i = 0; i < e->nprops; i++) {
        const ply_prop *pr = &e->prop[i];
        int is_axis = v && (i == h->axis[0] || i == h->axis[1] || i == h->axis[2]);
        double x = 0;
        if (pr->is_list || is_axis) {
            int got = pcb_next_number(&p, &x);
            if (got == 0)
                return pcb_bad_line(s, s->line, "%s %lld has fewer values than the header "
                                                "declares",
                                    e->name, (long long)index);
            if (got < 0)
                return pcb_bad_line(s, s->line, "%s '%.*s' is not a number", pr->name,
                                    pcb_token_len(p), p);
        } else if (!pcb_skip_token(&p)) {
            return pcb_bad_line(s, s->line, "%s %lld has fewer values than the header declares",
                                e->name, (long long)index);
        }
        if (pr->is_list) {
            if (!(x >= 0 && x <= INT32_MAX) || x != (double)(int64_t)x)
                return pcb_bad_line(s, s->line, "list length '%g' is not a non-negative integer",
                                    x);
            for (int64_t k = 0; k < (int64_t)x; k++)
                if (!pcb_skip_token(&p))
                    return pcb_bad_line(s, s->line, "list '%s' is shorter than its length",
                                        pr->name);
        } else if (is_axis) {
            for (int k = 0; k < 3; k++)
                if (i == h->axis[k])
                    v[k] = x;
        }
    }
    if (pcb_skip_token(&p))
        return pcb_bad_line(s, s->line, "%s %lld has more values than the header declares",
                            e->name, (long long)index);
    return PCB_OK;
}

static int ascii_body(pcb_src *s, const ply_header *h, pcb_cloud *out)
{
    int rc;
    for (int i = 0; i < h->vertex; i++)
        for (int64_t j = 0; h->el[i].nprops > 0 && j < h->el[i].count; j++)
            if ((rc = ascii_record(s, h, &h->el[i], j, NULL)) != PCB_OK)
                return rc;
    const ply_element *v = &h->el[h->vertex];
    /* Each value takes at least one character and one separator. */
    if (v->count > (pcb_src_left(s) + 1) / (2 * v->nprops))
        return pcb_bad_line(s, v->line, "%lld vertices cannot fit in the %lld bytes after the "
                                        "header",
                            (long long)v->count, (long long)pcb_src_left(s));
    if ((rc = pcb_alloc_points(s, out, v->count, 1, v->line)) != PCB_OK)
        return rc;
    for (int64_t j = 0; j < v->count; j++) {
        double xyz[3];
        if ((rc = ascii_record(s, h, v, j, xyz)) != PCB_OK ||
            (rc = pcb_put_point(s, out, j, xyz, 1, s->line)) != PCB_OK)
            return rc;
    }
    return PCB_OK;
}

int pcb_load_ply(pcb_src *s, pcb_cloud *out)
{
    ply_header *h = calloc(1, sizeof *h);
    if (!h)
        return pcb_fail(PCB_ENOMEM, "%s: no memory for the PLY header", s->path);
    int rc = read_header(s, h);
    if (rc == PCB_OK)
        rc = h->format == PLY_ASCII ? ascii_body(s, h, out) : binary_body(s, h, out);
    free(h);
    return rc;
}

/* ---- writer ------------------------------------------------------------- */
int pcb_save_ply(const char *path, const pcb_cloud *c)
{
    if (!path || !c || !c->xyz || c->n < 1 || c->n > PCB_MAX_POINTS)
        return pcb_fail(PCB_EINVAL, "save: need a path and a cloud of 1..%d points",
                        PCB_MAX_POINTS);
    pcb_outfile o;
    int rc = pcb_out_open(&o, path);
    if (rc != PCB_OK)
        return rc;
    fprintf(o.f,
            "ply\nformat binary_little_endian 1.0\ncomment written by pcbench\n"
            "element vertex %lld\nproperty float x\nproperty float y\nproperty float z\n"
            "end_header\n",
            (long long)c->n);
    static const uint16_t probe = 1;
    if (*(const unsigned char *)&probe == 1) {
        fwrite(c->xyz, sizeof *c->xyz, (size_t)(3 * c->n), o.f);
    } else {
        for (int64_t i = 0; i < 3 * c->n; i++) {
            unsigned char b[4], r[4];
            memcpy(b, &c->xyz[i], 4);
            for (int k = 0; k < 4; k++)
                r[k] = b[3 - k];
            fwrite(r, 1, 4, o.f);
        }
    }
    return pcb_out_commit(&o);
}
