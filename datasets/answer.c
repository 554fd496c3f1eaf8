/* answer.c - answer files for `pcbench check`: one answer a line, an index
 * and optionally a number (NN: the squared distance), made by any tool.
 *
 * Read as well: blank lines and '#' comments; fields split by whitespace or
 * commas (CSV); a header line first (a first field that is not a number);
 * a pandas index column (a header whose first field is empty, e.g.
 * ",index,dist2": that column is dropped from every line); indexes written
 * as floats (numpy's savetxt: 1.700000e+01) when they are whole numbers.
 * Every error names the file and line; a file with fewer answers than
 * asked for is truncated, one with more is wrong too.
 *
 * Hostile input: a path that is not a regular file (a FIFO, /dev/zero) is
 * refused before any read; '-' (stdin) may be a stream, so every source is
 * read under two bounds, a line of at most LINE_CAP characters and at most
 * byte_cap(count) bytes in all, far above what count answers can need. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

#define MAX_FIELDS 4
#define LINE_CAP 4096

/* 1 MiB for headers and comments, and 256 bytes an answer. */
static int64_t byte_cap(int64_t count)
{
    return ((int64_t)1 << 20) + 256 * count;
}

/* The next line into buf (line_cap + 1 bytes) without its line end: 1, 0
 * at the end of the input, or PCB_EBADFILE naming file and line. */
static int read_line(FILE *f, const char *name, int64_t lineno, char *buf, size_t line_cap,
                     int64_t *bytes, int64_t cap)
{
    size_t n = 0;
    int ch;
    while ((ch = getc(f)) != EOF) {
        if (++*bytes > cap)
            return pcb_fail(PCB_EBADFILE, "%s:%lld: more than %lld bytes, more than the answers "
                            "expected can need", name, (long long)lineno, (long long)cap);
        if (ch == '\n')
            break;
        if (ch == '\0')
            return pcb_fail(PCB_EBADFILE, "%s:%lld: a NUL byte in the line", name,
                            (long long)lineno);
        if (n == line_cap)
            return pcb_fail(PCB_EBADFILE, "%s:%lld: a line longer than %zu characters", name,
                            (long long)lineno, line_cap);
        buf[n++] = (char)ch;
    }
    if (ch == EOF && (ferror(f) || n == 0))
        return ferror(f) ? pcb_fail(PCB_EBADFILE, "%s: read error at line %lld: %s", name,
                                    (long long)lineno, strerror(errno))
                         : 0;
    while (n > 0 && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    return 1;
}

/* The next line that is not blank or a '#' comment (read_line's results;
 * *lineno counts every line read). */
static int next_data_line(FILE *f, const char *name, int64_t *lineno, char *buf, size_t line_cap,
                          int64_t *bytes, int64_t cap, int keep_blank)
{
    int more;
    while ((more = read_line(f, name, *lineno + 1, buf, line_cap, bytes, cap)) > 0) {
        ++*lineno;
        const char *lead = buf + strspn(buf, " \t\r");
        if ((*lead || keep_blank) && *lead != '#')
            return 1;
    }
    if (more < 0)
        ++*lineno;
    return more;
}

/* Split line (NUL-terminated) into at most most fields, in place;
 * returns the count, or most + 1 when there are more. Empty fields
 * between commas count ("a,,b" has three). */
static int64_t split(char *line, char **field, int64_t most)
{
    int64_t count = 0;
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return 0;
    for (;;) {
        if (count == most)
            return most + 1;
        field[count++] = p;
        while (*p && *p != ',' && *p != ' ' && *p != '\t')
            p++;
        char *end = p;
        while (*p == ' ' || *p == '\t')
            p++;
        const int comma = *p == ',';
        if (comma)
            p++;
        *end = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p && !comma)
            return count;
    }
}

/* An index: an integer, or a float that is a whole number within int32. */
static int parse_index(const char *s, int32_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s && !*end && !errno && v >= INT32_MIN && v <= INT32_MAX) {
        *out = (int32_t)v;
        return 1;
    }
    double d = strtod(s, &end);
    if (!*s || *end || !isfinite(d) || d != floor(d) || d < INT32_MIN || d > INT32_MAX)
        return 0;
    *out = (int32_t)d;
    return 1;
}

static int parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return *s && !*end && errno != ERANGE;
}

/* The answers' file ('-': stdin) into *f, or PCB_EBADFILE naming it. */
static int open_source(const char *path, const char *name, FILE **f)
{
    int not_regular = 0;
    *f = strcmp(path, "-") == 0 ? stdin : pcb_open_regular(path, &not_regular, NULL);
    if (*f)
        return PCB_OK;
    return not_regular ? pcb_fail(PCB_EBADFILE, "%s: not a regular file (a FIFO, device or "
                                  "socket; use '-' for a stream)", name)
                       : pcb_fail(PCB_EBADFILE, "%s: cannot open: %s", name, strerror(errno));
}

int pcb_read_answers(const char *path, int64_t count, int32_t *index, double *value,
                     int *has_value)
{
    if (!path || count < 0 || !index || !value || !has_value)
        return pcb_fail(PCB_EINVAL, "read answers: missing argument");
    const int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f;
    int rc = open_source(path, name, &f);
    if (rc != PCB_OK)
        return rc;
    char line[LINE_CAP + 1], *field[MAX_FIELDS + 1];
    int64_t lineno = 0, got = 0, bytes = 0;
    const int64_t cap = byte_cap(count);
    int skip = 0, fields = -1, first = 1, more;
    *has_value = 0;
    while (rc == PCB_OK &&
           (more = next_data_line(f, name, &lineno, line, LINE_CAP, &bytes, cap, 0)) != 0) {
        if (more < 0) {
            rc = more;
            break;
        }
        int n = (int)split(line, field, MAX_FIELDS);
        if (n > MAX_FIELDS) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: more than %d fields", name, (long long)lineno,
                          MAX_FIELDS);
            break;
        }
        int32_t probe;
        if (first) { /* a header: its first field is not a number */
            first = 0;
            double num;
            if (!parse_index(field[0], &probe) && !parse_number(field[0], &num)) {
                skip = field[0][0] == '\0'; /* pandas' unnamed index column */
                continue;
            }
        }
        n -= skip;
        if (n < 1 || n > 2) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: %d fields, expected an index and at most one "
                          "number", name, (long long)lineno, n);
            break;
        }
        if (fields < 0)
            fields = n;
        else if (n != fields) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: %d fields where the lines before have %d", name,
                          (long long)lineno, n, fields);
            break;
        }
        if (got == count) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: more than the %lld answers expected", name,
                          (long long)lineno, (long long)count);
            break;
        }
        if (!parse_index(field[skip], &index[got])) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: '%.40s' is not an index", name,
                          (long long)lineno, field[skip]);
            break;
        }
        if (n == 2 && !parse_number(field[skip + 1], &value[got])) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: '%.40s' is not a number", name,
                          (long long)lineno, field[skip + 1]);
            break;
        }
        got++;
    }
    if (rc == PCB_OK && got < count)
        rc = pcb_fail(PCB_EBADFILE, "%s:%lld: %lld answers, expected %lld (truncated?)", name,
                      (long long)lineno, (long long)got, (long long)count);
    *has_value = rc == PCB_OK && fields == 2;
    if (!is_stdin)
        fclose(f);
    return rc;
}

/* kNN rows: a line a query, its len neighbours' indices, or index and
 * squared-distance pairs; a row may also carry its padding (k entries).
 * No header or pandas column here: every field is an answer. */
int pcb_read_rows(const char *path, int64_t rows, int64_t k, int64_t len, int32_t *index,
                  double *value, int *has_value)
{
    if (!path || rows < 0 || k < 1 || len < 0 || len > k || !index || !value || !has_value)
        return pcb_fail(PCB_EINVAL, "read rows: missing argument");
    const int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f;
    int rc = open_source(path, name, &f);
    if (rc != PCB_OK)
        return rc;
    const size_t line_cap = LINE_CAP + (size_t)k * 2 * 48; /* 48 characters a number */
    const int64_t cap = ((int64_t)1 << 20) + rows * (int64_t)line_cap;
    char *line = malloc(line_cap + 1), **field = malloc((size_t)(2 * k + 1) * sizeof *field);
    int64_t lineno = 0, got = 0, bytes = 0, pairs = -1;
    int more;
    if (!line || !field)
        rc = pcb_fail(PCB_ENOMEM, "%s: no memory for rows of %lld", name, (long long)k);
    while (rc == PCB_OK &&
           (more = next_data_line(f, name, &lineno, line, line_cap, &bytes, cap, len == 0)) != 0) {
        if (more < 0) {
            rc = more;
            break;
        }
        const int64_t n = split(line, field, 2 * k);
        if (len == 0 && got == rows && n == 0)
            continue; /* blank lines after the last row */
        /* len or k indices, or len or k pairs; the first row says which; len 0
         * (ball rows): 0 to k indices, a blank line an empty row. Where k = 2
         * len, a row of k fields is either len pairs (what pcbench knn writes)
         * or k indices ending in the padding's -1 (what pcbench.knn returns):
         * a pair ends in a distance, never -1. */
        int32_t last = 0;
        const int ambiguous = len > 0 && n == k && n == 2 * len;
        const int padded = ambiguous && parse_index(field[n - 1], &last) && last == -1;
        const int64_t p = len == 0   ? (n <= k ? 0 : -1)
                          : padded   ? 0
                          : n == len ? 0
                          : n == 2 * len ? 1
                          : n == k       ? 0
                          : n == 2 * k   ? 1
                                         : -1;
        if (p < 0 && len == 0) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: more than %lld indices; a row holds at most k",
                          name, (long long)lineno, (long long)k);
            break;
        }
        if (p < 0 || n > 2 * k) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: %lld fields; a row holds %lld neighbours (or "
                          "%lld with padding), as indices or index and distance pairs", name,
                          (long long)lineno, (long long)(n > 2 * k ? 2 * k + 1 : n),
                          (long long)len, (long long)k);
            break;
        }
        if (pairs < 0)
            pairs = p;
        else if (p != pairs) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: %s where the rows before have %s", name,
                          (long long)lineno, p ? "pairs" : "indices",
                          pairs ? "pairs" : "indices");
            break;
        }
        if (got == rows) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: more than the %lld rows expected", name,
                          (long long)lineno, (long long)rows);
            break;
        }
        const int64_t entries = p ? n / 2 : n;
        int32_t *id = index + got * k;
        double *v = value + got * k;
        for (int64_t s = 0; s < k; s++)
            id[s] = -1, v[s] = INFINITY; /* the declared padding where the row stops */
        for (int64_t s = 0; s < entries && rc == PCB_OK; s++) {
            const char *fi = field[p ? 2 * s : s];
            if (!parse_index(fi, &id[s]))
                rc = pcb_fail(PCB_EBADFILE, "%s:%lld: field %lld '%.40s' is not an index", name,
                              (long long)lineno, (long long)(p ? 2 * s + 1 : s + 1), fi);
            else if (p && !parse_number(field[2 * s + 1], &v[s]))
                rc = pcb_fail(PCB_EBADFILE, "%s:%lld: field %lld '%.40s' is not a number", name,
                              (long long)lineno, (long long)(2 * s + 2), field[2 * s + 1]);
        }
        got++;
    }
    if (rc == PCB_OK && got < rows)
        rc = pcb_fail(PCB_EBADFILE, "%s:%lld: %lld rows, expected %lld (truncated?)", name,
                      (long long)lineno, (long long)got, (long long)rows);
    *has_value = rc == PCB_OK && pairs == 1;
    free(line);
    free(field);
    if (!is_stdin)
        fclose(f);
    return rc;
}
