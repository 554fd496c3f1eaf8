/* answer.c - answer files for `pcbench check`: one answer a line, an index
 * and optionally a number (NN: the squared distance), made by any tool.
 *
 * Read as well: blank lines and '#' comments; fields split by whitespace or
 * commas (CSV); a header line first (a first field that is not a number);
 * a pandas index column (a header whose first field is empty, e.g.
 * ",index,dist2": that column is dropped from every line); indexes written
 * as floats (numpy's savetxt: 1.700000e+01) when they are whole numbers.
 * Every error names the file and line; a file with fewer answers than
 * asked for is truncated, one with more is wrong too. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud.h"

#define MAX_FIELDS 4

/* Split line (NUL-terminated) into at most MAX_FIELDS fields, in place;
 * returns the count, or MAX_FIELDS + 1 when there are more. Empty fields
 * between commas count ("a,,b" has three). */
static int split(char *line, char **field)
{
    int count = 0;
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return 0;
    for (;;) {
        if (count == MAX_FIELDS)
            return MAX_FIELDS + 1;
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

int pcb_read_answers(const char *path, int64_t count, int32_t *index, double *value,
                     int *has_value)
{
    if (!path || count < 0 || !index || !value || !has_value)
        return pcb_fail(PCB_EINVAL, "read answers: missing argument");
    const int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "r");
    if (!f)
        return pcb_fail(PCB_EBADFILE, "%s: cannot open: %s", name, strerror(errno));
    char *line = NULL, *field[MAX_FIELDS + 1];
    size_t cap = 0;
    ssize_t len;
    int64_t lineno = 0, got = 0;
    int skip = 0, fields = -1, rc = PCB_OK, first = 1;
    *has_value = 0;
    while (rc == PCB_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)len)) {
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: a NUL byte in the line", name,
                          (long long)lineno);
            break;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        const char *lead = line + strspn(line, " \t");
        if (!*lead || *lead == '#')
            continue;
        int n = split(line, field);
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
    if (rc == PCB_OK && ferror(f))
        rc = pcb_fail(PCB_EBADFILE, "%s: read error after line %lld", name, (long long)lineno);
    if (rc == PCB_OK && got < count)
        rc = pcb_fail(PCB_EBADFILE, "%s:%lld: %lld answers, expected %lld (truncated?)", name,
                      (long long)lineno, (long long)got, (long long)count);
    *has_value = rc == PCB_OK && fields == 2;
    free(line);
    if (!is_stdin)
        fclose(f);
    return rc;
}
