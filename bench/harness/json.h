/* json.h - the little JSON the results files need: a writer for the values
 * the harness emits and a parser for reading results back (resume, the
 * regression baseline, comparisons). Numbers are doubles. */
#ifndef PCB_JSON_H
#define PCB_JSON_H

#include <stdio.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_type;

typedef struct json {
    json_type type;
    double num;        /* JSON_NUM; JSON_BOOL is 0 or 1 */
    char *str;         /* JSON_STR */
    char *key;         /* the member name inside an object, else NULL */
    struct json *kids; /* JSON_ARR, JSON_OBJ */
    int count;
} json;

/* Parse a whole document; PCB_EBADFILE with "what: message at byte N". */
int json_parse(const char *text, const char *what, json *out);
/* Read and parse a file: a regular one (a FIFO, device or socket is refused
 * before anything is read) of at most JSON_MAX_BYTES. */
#define JSON_MAX_BYTES (64 * 1024 * 1024)
int json_load(const char *path, json *out);
void json_free(json *j);

/* Member of an object (NULL if j is not an object or has no such key). */
const json *json_get(const json *j, const char *key);
double json_num(const json *j, const char *key, double dflt);
const char *json_str(const json *j, const char *key); /* NULL if absent */

/* Writers. */
void json_put_str(FILE *f, const char *s); /* quoted, escaped */
void json_put_num(FILE *f, double v);      /* null when not finite */
void json_write(FILE *f, const json *j);   /* re-emit a parsed value */

#endif
