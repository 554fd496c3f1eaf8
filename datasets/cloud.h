/* cloud.h - point clouds in and out: loaders, writer, generators.
 *
 * pcb_load chooses the format by content first (PLY magic; PCD "# .PCD",
 * VERSION or FIELDS), then by extension (.xyz .txt .csv .pts .pwn .asc:
 * text columns, the first three are x y z; .bin: KITTI float32 x, y, z,
 * intensity). Every loader rejects truncated files, bad headers, missing
 * x/y/z, non-numeric text, counts the file cannot hold (checked against the
 * file size before allocating), zero points and NaN or infinite coordinates
 * with PCB_EBADFILE and a message "FILE: line N: ..." or "FILE: byte N: ...";
 * files that cannot be opened or read give PCB_EIO. The writer goes through
 * a temporary file and rename(). Implementation: io.c, load.c, ply.c, pcd.c. */
#ifndef PCB_CLOUD_H
#define PCB_CLOUD_H

#include <stdint.h>

#include "impl/pcbench_impl.h"

typedef struct {
    float *xyz;   /* n x 3 */
    int64_t n;
    double *dxyz; /* n x 3 as the file wrote them, before rounding to float;
                     NULL for generated clouds */
} pcb_cloud;

int pcb_cloud_alloc(pcb_cloud *c, int64_t n);
void pcb_cloud_free(pcb_cloud *c);

int pcb_load(const char *path, pcb_cloud *out);
int pcb_save_ply(const char *path, const pcb_cloud *c); /* binary little endian */

/* Geo-referenced clouds (UTM, ECEF: millions of units from the origin) lose
 * centimetres to decimetres when converted straight to float. A shift s is
 * subtracted from every cloud of one command in double, before rounding:
 * xyz = (float)(coordinate as read - s).
 * pcb_shift_auto: none (0, returns 0) when every coordinate of ref is
 * within +-1e5, else ref's bounding-box minimum rounded down to whole units
 * (returns 1); PCB_EINVAL for a NULL argument.
 * pcb_cloud_shift: applies s (from dxyz, or from xyz for generated clouds);
 * PCB_EINVAL when a shifted coordinate does not fit float32. */
int pcb_shift_auto(const pcb_cloud *ref, double shift[3]);
int pcb_cloud_shift(pcb_cloud *c, const double shift[3]);

/* Exactly `count` answers from a text file ("-": stdin), one a line: an
 * index, and optionally a number into value[] (*has_value says whether the
 * lines had it). Headers, comments and CSV are read (answer.c says which);
 * anything else is PCB_EBADFILE naming the file and line. */
int pcb_read_answers(const char *path, int64_t count, int32_t *index, double *value,
                     int *has_value);
/* kNN answers (pcbench check knn): rows lines of len (= min(k, n)) or k
 * entries, each an index or an index and its squared distance, into rows
 * of k (index[rows * k], value likewise), a short row padded with -1 and
 * +inf; *has_value 1 when the rows are pairs. len 0 reads ball rows: 0 to
 * k indices a line, a blank line an empty row (blank lines after the last
 * row ignored). Errors name file and line. */
int pcb_read_rows(const char *path, int64_t rows, int64_t k, int64_t len, int32_t *index,
                  double *value, int *has_value);

/* ---- deterministic random numbers (xoshiro256**, seeded by splitmix64) --
 * They return numbers, not statuses: a NULL generator gives 0. */
typedef struct {
    uint64_t s[4];
} pcb_rng;

void pcb_rng_seed(pcb_rng *r, uint64_t seed);
uint64_t pcb_rng_next(pcb_rng *r);
double pcb_rng_uniform(pcb_rng *r); /* [0, 1) */
double pcb_rng_normal(pcb_rng *r);  /* standard normal */

/* ---- generators: same kind, n and seed give the same cloud ------------ */
/* Kinds: uniform, sphere, clusters, lidar, equal, duplicates, collinear,
 * offset. NULL-terminated list of names. */
const char *const *pcb_generator_kinds(void);
int pcb_generate(const char *kind, int64_t n, uint64_t seed, pcb_cloud *out);

/* b = a (n points; b may be a) with its points shuffled and each coordinate
 * moved by Gaussian noise of standard deviation sigma (0: an exact permuted
 * copy): the pair a network's output and its ground truth make, for EMD. */
void pcb_noisy_copy(const float *a, int64_t n, double sigma, uint64_t seed, float *b);

/* A spinning-lidar sweep (64 beams, 1,880 azimuth steps) ray-cast against a
 * procedural street chosen by seed, seen from a sensor PCB_LIDAR_HEIGHT
 * above (x, y) with heading yaw (radians); points in the street (world)
 * frame, ring by ring. n > 0 asks for exactly n points (the sweep is
 * resampled), n = 0 for the sensor's natural resolution (about 120,000).
 * |x|, |y| <= 100 m. Same arguments, same cloud. Geometry: datasets/lidar.c. */
#define PCB_LIDAR_HEIGHT 1.73
#define PCB_LIDAR_BEAMS 64
int pcb_gen_lidar(int64_t n, uint64_t seed, double sensor_x, double sensor_y, double yaw,
                  pcb_cloud *out);

/* A batch of clouds of one kind into xyz (batch x n x 3): cloud i made with
 * seed + i (kind "lidar": a sweep from the origin), then, where snap > 0,
 * every coordinate rounded to a multiple of snap (the points on the
 * boundaries of a grid of that size, as a voxelized scan's are). */
int pcb_gen_batch(const char *kind, int64_t n, int64_t batch, uint64_t seed, double snap,
                  float *xyz);

#endif
