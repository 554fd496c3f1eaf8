/* json.c - a small recursive-descent JSON parser and writer. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/io.h"
#include "impl/pcbench_impl.h"
#include "json.h"

enum { MAX_DEPTH = 64 };

typedef struct {
    const char *s, *p, *what;
    int failed;
} parser;

static int bad(parser *ps, const char *msg)
{
    if (!ps->failed)
        pcb_fail(PCB_EBADFILE, "%s: %s at byte %ld", ps->what, msg, (long)(ps->p - ps->s));
    ps->failed = 1;
    return PCB_EBADFILE;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* Encode a code point as UTF-8; returns the number of bytes. */
static int utf8(unsigned cp, char *o)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int parse_string(parser *ps, char **out)
{
    const char *p = ++ps->p; /* after the opening quote */
    size_t cap = 16, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return pcb_fail(PCB_ENOMEM, "out of memory reading %s", ps->what);
    for (;;) {
        if (len + 8 > cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                return pcb_fail(PCB_ENOMEM, "out of memory reading %s", ps->what);
            }
            buf = nb;
        }
        char c = *p;
        if (c == '"')
            break;
        if (c == '\0' || (unsigned char)c < 0x20) {
            ps->p = p;
            free(buf);
            return bad(ps, "unterminated string");
        }
        if (c != '\\') {
            buf[len++] = c;
            p++;
            continue;
        }
        c = p[1];
        p += 2;
        switch (c) {
        case '"': buf[len++] = '"'; break;
        case '\\': buf[len++] = '\\'; break;
        case '/': buf[len++] = '/'; break;
        case 'b': buf[len++] = '\b'; break;
        case 'f': buf[len++] = '\f'; break;
        case 'n': buf[len++] = '\n'; break;
        case 'r': buf[len++] = '\r'; break;
        case 't': buf[len++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (!hex4(p, &cp)) {
                ps->p = p;
                free(buf);
                return bad(ps, "bad \\u escape");
            }
            p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) &&
                lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
            len += (size_t)utf8(cp, buf + len);
            break;
        }
        default:
            ps->p = p - 1;
            free(buf);
            return bad(ps, "bad escape");
        }
    }
    buf[len] = '\0';
    ps->p = p + 1;
    *out = buf;
    return PCB_OK;
}

static int parse_value(parser *ps, json *v, int depth);

static int add_kid(parser *ps, json *v, int depth, char *key)
{
    /* room doubles (8, 16, 32, ...): 100,000 samples are 14 reallocations */
    const int c = v->count;
    if (c == 0 || (c >= 8 && (c & (c - 1)) == 0)) {
        json *nk = realloc(v->kids, (size_t)(c ? 2 * c : 8) * sizeof *nk);
        if (!nk) {
            free(key);
            return pcb_fail(PCB_ENOMEM, "out of memory reading %s", ps->what);
        }
        v->kids = nk;
    }
    json *k = &v->kids[v->count];
    memset(k, 0, sizeof *k);
    k->key = key;
    v->count++;
    return parse_value(ps, k, depth + 1);
}

static int parse_container(parser *ps, json *v, int depth)
{
    int object = *ps->p == '{';
    char close = object ? '}' : ']';
    v->type = object ? JSON_OBJ : JSON_ARR;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return PCB_OK;
    }
    for (;;) {
        char *key = NULL;
        int rc;
        skip_ws(ps);
        if (object) {
            if (*ps->p != '"')
                return bad(ps, "expected a member name");
            if ((rc = parse_string(ps, &key)) != PCB_OK)
                return rc;
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                return bad(ps, "expected ':'");
            }
            ps->p++;
        }
        if ((rc = add_kid(ps, v, depth, key)) != PCB_OK)
            return rc;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return PCB_OK;
        }
        return bad(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(parser *ps, json *v, int depth)
{
    if (depth > MAX_DEPTH)
        return bad(ps, "nesting too deep");
    skip_ws(ps);
    const char *p = ps->p;
    switch (*p) {
    case '{':
    case '[': return parse_container(ps, v, depth);
    case '"': v->type = JSON_STR; return parse_string(ps, &v->str);
    case 't':
        if (strncmp(p, "true", 4)) break;
        v->type = JSON_BOOL, v->num = 1, ps->p += 4;
        return PCB_OK;
    case 'f':
        if (strncmp(p, "false", 5)) break;
        v->type = JSON_BOOL, v->num = 0, ps->p += 5;
        return PCB_OK;
    case 'n':
        if (strncmp(p, "null", 4)) break;
        v->type = JSON_NULL, ps->p += 4;
        return PCB_OK;
    default: {
        char *end;
        errno = 0;
        double d = strtod(p, &end);
        if (end == p || !(*p == '-' || (*p >= '0' && *p <= '9')))
            break;
        v->type = JSON_NUM;
        v->num = d;
        ps->p = end;
        return PCB_OK;
    }
    }
    return bad(ps, "unexpected character");
}

int json_parse(const char *text, const char *what, json *out)
{
    parser ps = {.s = text, .p = text, .what = what ? what : "JSON"};
    memset(out, 0, sizeof *out);
    int rc = parse_value(&ps, out, 0);
    if (rc == PCB_OK) {
        skip_ws(&ps);
        if (*ps.p)
            rc = bad(&ps, "trailing characters");
    }
    if (rc != PCB_OK)
        json_free(out);
    return rc;
}

int json_load(const char *path, json *out)
{
    memset(out, 0, sizeof *out);
    int not_regular = 0;
    int64_t size = 0;
    FILE *f = pcb_open_regular(path, &not_regular, &size);
    if (!f && not_regular)
        return pcb_fail(PCB_EBADFILE, "%s: not a regular file (a FIFO, device or socket): "
                        "left alone", path);
    if (!f)
        return pcb_fail(PCB_EIO, "cannot open %s: %s", path, strerror(errno));
    if (size > JSON_MAX_BYTES) {
        fclose(f);
        return pcb_fail(PCB_EBADFILE, "%s: %lld bytes, more than the %d a results file may have",
                        path, (long long)size, JSON_MAX_BYTES);
    }
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && len <= JSON_MAX_BYTES && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (!buf)
        return pcb_fail(PCB_ENOMEM, "out of memory reading %s", path);
    if (err || len > JSON_MAX_BYTES) { /* it grew while read */
        free(buf);
        return err ? pcb_fail(PCB_EIO, "cannot read %s", path)
                   : pcb_fail(PCB_EBADFILE, "%s: more than the %d bytes a results file may have",
                              path, JSON_MAX_BYTES);
    }
    buf[len] = '\0';
    int rc = strlen(buf) != len ? pcb_fail(PCB_EBADFILE, "%s: NUL byte in JSON", path)
                                : json_parse(buf, path, out);
    free(buf);
    return rc;
}

void json_free(json *j)
{
    if (!j)
        return;
    for (int i = 0; i < j->count; i++) {
        free(j->kids[i].key);
        json_free(&j->kids[i]);
    }
    free(j->kids);
    free(j->str);
    j->kids = NULL;
    j->str = NULL;
    j->count = 0;
}

const json *json_get(const json *j, const char *key)
{
    if (!j || j->type != JSON_OBJ)
        return NULL;
    for (int i = 0; i < j->count; i++)
        if (strcmp(j->kids[i].key, key) == 0)
            return &j->kids[i];
    return NULL;
}

double json_num(const json *j, const char *key, double dflt)
{
    const json *v = json_get(j, key);
    return v && (v->type == JSON_NUM || v->type == JSON_BOOL) ? v->num : dflt;
}

const char *json_str(const json *j, const char *key)
{
    const json *v = json_get(j, key);
    return v && v->type == JSON_STR ? v->str : NULL;
}

void json_put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void json_put_num(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else if (v == (double)(long long)v && fabs(v) < 1e15)
        fprintf(f, "%lld", (long long)v);
    else
        fprintf(f, "%.9g", v);
}

void json_write(FILE *f, const json *j)
{
    switch (j->type) {
    case JSON_NULL: fputs("null", f); break;
    case JSON_BOOL: fputs(j->num ? "true" : "false", f); break;
    case JSON_NUM: json_put_num(f, j->num); break;
    case JSON_STR: json_put_str(f, j->str); break;
    case JSON_ARR:
    case JSON_OBJ:
        fputc(j->type == JSON_OBJ ? '{' : '[', f);
        for (int i = 0; i < j->count; i++) {
            if (i)
                fputc(',', f);
            if (j->type == JSON_OBJ) {
                json_put_str(f, j->kids[i].key);
                fputc(':', f);
            }
            json_write(f, &j->kids[i]);
        }
        fputc(j->type == JSON_OBJ ? '}' : ']', f);
        break;
    }
}
