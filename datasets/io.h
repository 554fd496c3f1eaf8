/* io.h - internal helpers shared by the cloud loaders: an input file with
 * its position (bytes and lines), error messages that name both, binary
 * scalars of either byte order, text numbers, and a growing cloud. */
#ifndef PCB_IO_H
#define PCB_IO_H

#include <stdio.h>
#include <sys/types.h>

#include "cloud.h"

#define PCB_READ_AHEAD (1 << 20)

typedef struct {
    FILE *f;
    const char *path;
    int64_t size;   /* bytes in the file */
    int64_t offset; /* bytes consumed so far */
    int64_t line;   /* lines consumed so far */
    unsigned char *buf; /* binary read-ahead, PCB_READ_AHEAD bytes */
    size_t len, at;
    char *text; /* getline buffer */
    size_t text_cap;
} pcb_src;

/* Open path for reading only if it is a regular file, deciding before any
 * read, so a FIFO or a device never blocks or streams without end; its size
 * into *size (when not NULL). NULL with errno set when it cannot be opened
 * (EISDIR for a folder), or with *not_regular = 1 for a FIFO, device or
 * socket. */
FILE *pcb_open_regular(const char *path, int *not_regular, int64_t *size);

/* PCB_EBADFILE with "PATH: line N: ..." or "PATH: byte N: ...". */
int pcb_bad_line(const pcb_src *s, int64_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pcb_bad_byte(const pcb_src *s, int64_t byte, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One header line into buf without its line end. Returns 1, 0 at the end of
 * the file, or PCB_EBADFILE for a line longer than cap - 1 or with a NUL. */
int pcb_src_header_line(pcb_src *s, char *buf, size_t cap);
/* Next text line into s->text (NUL-terminated, line end removed). Returns
 * 1, 0 at the end of the file, or PCB_EBADFILE for a line holding a NUL
 * byte (PCB_EIO for a read error). */
int pcb_src_text_line(pcb_src *s);
/* n bytes of binary data (n <= PCB_READ_AHEAD) or NULL when the file ends first;
 * the data starts at byte s->offset - n. */
const unsigned char *pcb_src_take(pcb_src *s, size_t n);
/* Skip n bytes of binary data; 0 if the file ends first. */
int pcb_src_skip(pcb_src *s, int64_t n);
/* Bytes after the current position. */
int64_t pcb_src_left(const pcb_src *s);

typedef enum {
    PCB_I8, PCB_U8, PCB_I16, PCB_U16, PCB_I32, PCB_U32, PCB_I64, PCB_U64, PCB_F32, PCB_F64
} pcb_scalar;

int pcb_scalar_size(pcb_scalar t);
double pcb_scalar_get(const unsigned char *p, pcb_scalar t, int big_endian);

/* Parse one number from *p, skipping leading spaces, tabs and commas.
 * Returns 1 and advances *p, 0 at the end of the line, -1 for a token that
 * is not a number (*p then points at it). */
int pcb_next_number(const char **p, double *v);
/* Length of the token at p (up to a separator or the end). */
int pcb_token_len(const char *p);
/* Skip one token (any text up to a separator); 0 at the end of the line. */
int pcb_skip_token(const char **p);

/* Store point i (float32); PCB_EBADFILE if a coordinate is not finite in
 * float32. pos names the line (text) or byte (binary) for the message. */
int pcb_put_point(const pcb_src *s, pcb_cloud *c, int64_t i, const double v[3], int text,
                  int64_t pos);
/* Make room for point i, doubling the capacity (text formats). */
int pcb_grow(const pcb_src *s, pcb_cloud *c, int64_t *cap, int64_t i);

/* Allocate a cloud of n points after checking 1 <= n <= PCB_MAX_POINTS. */
int pcb_alloc_points(const pcb_src *s, pcb_cloud *c, int64_t n, int text, int64_t pos);

int pcb_load_ply(pcb_src *s, pcb_cloud *out);
int pcb_load_pcd(pcb_src *s, pcb_cloud *out);

#endif
