/* test_io.c - loaders, writer and generators: every corpus file is refused
 * for its stated reason with the file and position in the message, every
 * valid file loads exactly, save/load round trips are bit exact, and the
 * generators (the lidar sweep included) are deterministic and realistic.
 * Runs from the repository root. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "impl/pcbench_judge.h"
#include "datasets/cloud.h"
#include "testlib.h"

#define CORPUS "tests/corpus"
#define DATA "tests/data"

/* The points every file in tests/data holds (tests/corpus/make_corpus.py). */
static const float expected_points[3][3] = {
    {1.5f, -2.25f, 3.0f}, {0.125f, 4.0f, -8.5f}, {100.0f, 200.5f, -0.0625f}};

static char tmpdir[64];

typedef struct {
    char s[128];
} path_buf;

static const char *tmp_path(path_buf *path, const char *name)
{
    if (!tmpdir[0]) {
        strcpy(tmpdir, "/tmp/pcbench_test_io.XXXXXX");
        if (!mkdtemp(tmpdir))
            tmpdir[0] = '\0';
    }
    snprintf(path->s, sizeof path->s, "%s/%s", tmpdir, name);
    return path->s;
}

static int same_cloud(const pcb_cloud *a, const pcb_cloud *b)
{
    return a->n == b->n && memcmp(a->xyz, b->xyz, (size_t)a->n * 3 * sizeof(float)) == 0;
}

static int listed(char names[][256], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static void corpus_files_are_refused_with_file_and_position(void)
{
    FILE *f = fopen(CORPUS "/EXPECTED.tsv", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    static char names[128][256];
    int count = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (line[0] == '#' || !tab || count == 128)
            continue;
        *tab = '\0';
        char *phrase = tab + 1;
        phrase[strcspn(phrase, "\n")] = '\0';
        snprintf(names[count++], 256, "%s", line);
        char path[300];
        snprintf(path, sizeof path, CORPUS "/%s", line);
        pcb_cloud c = {(float *)1, 7, (double *)1};
        CHECK_RC(pcb_load(path, &c), PCB_EBADFILE);
        const char *msg = pcb_errmsg();
        if (!strstr(msg, path) || (!strstr(msg, "line ") && !strstr(msg, "byte ")) ||
            !strstr(msg, phrase)) {
            fprintf(stderr, "%s: message '%s' lacks the path, position or '%s'\n", path, msg,
                    phrase);
            CHECK(0);
        }
        CHECK(c.xyz == NULL && c.n == 0);
    }
    fclose(f);
    CHECK(count >= 30);
    /* Every file in the corpus folder is listed, so none goes untested. */
    DIR *d = opendir(CORPUS);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *n = e->d_name;
        if (n[0] == '.' || strcmp(n, "EXPECTED.tsv") == 0 || strcmp(n, "make_corpus.py") == 0)
            continue;
        if (!listed(names, count, n)) {
            fprintf(stderr, "corpus file %s is not in EXPECTED.tsv\n", n);
            CHECK(0);
        }
    }
    if (d)
        closedir(d);
}

static void valid_files_load_exactly(void)
{
    static const char *const files[] = {
        "ascii_extra.ply", "be_double.ply", "le_prefix.ply", "vertex_list.ply", "ascii.pcd",
        "binary.pcd",      "points.csv",    "normals.xyz",   "scan.pts",        "scan.bin"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, DATA "/%s", files[i]);
        pcb_cloud c;
        CHECK_RC(pcb_load(path, &c), PCB_OK);
        CHECK(c.n == 3);
        if (c.n == 3 && memcmp(c.xyz, expected_points, sizeof expected_points) != 0) {
            fprintf(stderr, "%s: wrong coordinates\n", path);
            CHECK(0);
        }
        pcb_cloud_free(&c);
    }
}

static void unreadable_paths_are_io_errors(void)
{
    pcb_cloud c;
    CHECK_RC(pcb_load(CORPUS "/no_such_file.ply", &c), PCB_EIO);
    CHECK(strstr(pcb_errmsg(), "no_such_file.ply") && strstr(pcb_errmsg(), "No such file"));
    CHECK_RC(pcb_load(CORPUS, &c), PCB_EIO);
    CHECK(strstr(pcb_errmsg(), CORPUS) != NULL);
    CHECK_RC(pcb_load(NULL, &c), PCB_EINVAL);
    CHECK_RC(pcb_load("x.ply", NULL), PCB_EINVAL);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void text_variants_load(void)
{
    /* CRLF line ends, tabs and commas mixed, a 6-column row. */
    path_buf pb, tb;
    const char *ply = tmp_path(&pb, "crlf.ply");
    write_file(ply, "ply\r\nformat ascii 1.0\r\nelement vertex 2\r\nproperty float x\r\n"
                    "property float y\r\nproperty float z\r\nend_header\r\n1 2 3\r\n4 5 6\r\n");
    pcb_cloud c;
    CHECK_RC(pcb_load(ply, &c), PCB_OK);
    CHECK(c.n == 2 && c.xyz[3] == 4.0f && c.xyz[5] == 6.0f);
    pcb_cloud_free(&c);
    const char *txt = tmp_path(&tb, "mixed.txt");
    write_file(txt, "  # header\n1,\t2 , 3\n\n-4e1 5.5 6 0 0 1\n");
    CHECK_RC(pcb_load(txt, &c), PCB_OK);
    CHECK(c.n == 2 && c.xyz[1] == 2.0f && c.xyz[3] == -40.0f && c.xyz[4] == 5.5f);
    pcb_cloud_free(&c);
    unlink(ply);
    unlink(txt);
}

static void save_load_round_trip_is_bit_exact(void)
{
    path_buf pb;
    const char *path = tmp_path(&pb, "round.ply");
    static const char *const kinds[] = {"clusters", "offset", "lidar"};
    for (int k = 0; k < 3; k++) {
        pcb_cloud a, b;
        CHECK_RC(pcb_generate(kinds[k], 5000, 11, &a), PCB_OK);
        CHECK_RC(pcb_save_ply(path, &a), PCB_OK);
        CHECK_RC(pcb_load(path, &b), PCB_OK);
        CHECK(same_cloud(&a, &b));
        FILE *f = fopen(path, "rb");
        CHECK(f && fseek(f, 0, SEEK_END) == 0 && ftell(f) > 5000 * 12 &&
              ftell(f) < 5000 * 12 + 256);
        if (f)
            fclose(f);
        pcb_cloud_free(&a);
        pcb_cloud_free(&b);
    }
    unlink(path);
    pcb_cloud empty = {0};
    CHECK_RC(pcb_save_ply(path, &empty), PCB_EINVAL);
    pcb_cloud one;
    CHECK_RC(pcb_generate("uniform", 1, 1, &one), PCB_OK);
    CHECK_RC(pcb_save_ply("/nonexistent_dir_pcbench/x.ply", &one), PCB_EIO);
    pcb_cloud_free(&one);
}

static void generators_are_deterministic(void)
{
    for (const char *const *k = pcb_generator_kinds(); *k; k++) {
        pcb_cloud a, b, c;
        CHECK_RC(pcb_generate(*k, 3000, 5, &a), PCB_OK);
        CHECK_RC(pcb_generate(*k, 3000, 5, &b), PCB_OK);
        CHECK_RC(pcb_generate(*k, 3000, 6, &c), PCB_OK);
        CHECK(a.n == 3000 && b.n == 3000 && c.n == 3000);
        if (!same_cloud(&a, &b) || same_cloud(&a, &c)) {
            fprintf(stderr, "generator %s: same seed differs or other seed equal\n", *k);
            CHECK(0);
        }
        pcb_cloud_free(&a);
        pcb_cloud_free(&b);
        pcb_cloud_free(&c);
    }
    pcb_cloud c;
    CHECK_RC(pcb_generate("no_such_kind", 10, 1, &c), PCB_EINVAL);
    CHECK_RC(pcb_gen_lidar(-1, 1, 0, 0, 0, &c), PCB_EINVAL);
    CHECK_RC(pcb_gen_lidar(10, 1, NAN, 0, 0, &c), PCB_EINVAL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Elevation (degrees) of every point seen from a sensor at (sx, sy). */
static double *elevations(const pcb_cloud *c, double sx, double sy)
{
    double *e = malloc((size_t)c->n * sizeof *e);
    for (int64_t i = 0; e && i < c->n; i++) {
        const float *p = c->xyz + 3 * i;
        double rad = atan2(p[2] - PCB_LIDAR_HEIGHT, hypot(p[0] - sx, p[1] - sy));
        e[i] = rad * (180 / 3.14159265358979323846);
    }
    return e;
}

/* Number of groups of elevations separated by more than 0.1 degrees. */
static int count_rings(const double *elev, int64_t n)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, elev, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    int rings = 1;
    for (int64_t i = 1; i < n; i++)
        rings += s[i] - s[i - 1] > 0.1;
    free(s);
    return rings;
}

static void lidar_sweep_looks_like_a_scan(void)
{
    pcb_cloud c;
    CHECK_RC(pcb_gen_lidar(0, 1, 0, 0, 0, &c), PCB_OK);
    CHECK(c.n >= 100000 && c.n <= 140000);
    int64_t ground = 0, near = 0, descending = 1;
    double *elev = elevations(&c, 0, 0);
    CHECK(elev != NULL);
    for (int64_t i = 0; elev && i < c.n; i++) {
        const float *p = c.xyz + 3 * i;
        ground += p[2] >= -0.1f;
        near += hypot(p[0], p[1]) < 20.0;
        /* Ring by ring, top beam first: elevations never rise by a beam step. */
        if (i > 0 && elev[i] > elev[i - 1] + 0.1)
            descending = 0;
    }
    CHECK(ground >= c.n * 99 / 100);
    CHECK(near >= c.n * 7 / 10); /* density falls with range */
    CHECK(descending);
    CHECK(elev && count_rings(elev, c.n) == PCB_LIDAR_BEAMS);
    free(elev);
    pcb_cloud_free(&c);
}

static void lidar_resamples_to_exactly_n(void)
{
    static const int64_t sizes[] = {1, 1000, 120000, 200000};
    for (int i = 0; i < 4; i++) {
        pcb_cloud c;
        CHECK_RC(pcb_gen_lidar(sizes[i], 3, 0.5, -0.5, 0.1, &c), PCB_OK);
        CHECK(c.n == sizes[i]);
        if (sizes[i] >= 1000) {
            double *elev = elevations(&c, 0.5, -0.5);
            CHECK(elev && count_rings(elev, c.n) == PCB_LIDAR_BEAMS);
            free(elev);
        }
        pcb_cloud_free(&c);
    }
}

/* The second sweep of a pair sees the same street: most of its points lie
 * within centimetres to decimetres of the first sweep's points. */
static void lidar_pair_sees_the_same_street(void)
{
    pcb_cloud a, b;
    CHECK_RC(pcb_gen_lidar(0, 2, 0.0, 0.0, 0.0, &a), PCB_OK);
    CHECK_RC(pcb_gen_lidar(0, 2, 1.0, 0.0, 0.02, &b), PCB_OK);
    CHECK(!same_cloud(&a, &b));
    int close = 0, probes = 300;
    for (int q = 0; q < probes && a.n > 0 && b.n > 0; q++) {
        const float *p = b.xyz + 3 * (int64_t)q * (b.n / probes);
        double best = INFINITY;
        for (int64_t i = 0; i < a.n; i++) {
            const float *r = a.xyz + 3 * i;
            double dx = p[0] - r[0], dy = p[1] - r[1], dz = p[2] - r[2];
            double d = dx * dx + dy * dy + dz * dz;
            if (d < best)
                best = d;
        }
        close += sqrt(best) < 0.5;
    }
    CHECK(close >= probes * 9 / 10);
    pcb_cloud_free(&a);
    pcb_cloud_free(&b);
}

/* One manifest row: the source it names really gives the points it states
 * (real files are checked only when make datasets has fetched them). */
static void check_manifest_row(const char *name, const char *kind, long long points,
                               const char *source)
{
    char what[32], path[256];
    long long n;
    unsigned long long seed;
    double x, y, yaw;
    pcb_cloud c = {0};
    int rc = PCB_OK;
    if (sscanf(source, "generate %31s %lld %llu", what, &n, &seed) == 3)
        rc = pcb_generate(what, n, seed, &c);
    else if (sscanf(source, "lidar %lld %llu %lf %lf %lf", &n, &seed, &x, &y, &yaw) == 5)
        rc = pcb_gen_lidar(n, seed, x, y, yaw, &c);
    else if (sscanf(source, "file %255s", path) == 1 && strcmp(kind, "real") == 0) {
        if (access(path, F_OK) != 0)
            SKIP("manifest %s: %s absent (make datasets fetches it)", name, path);
        rc = pcb_load(path, &c);
    } else {
        fprintf(stderr, "manifest %s: unknown source '%s'\n", name, source);
        CHECK(0);
        return;
    }
    CHECK_RC(rc, PCB_OK);
    if (c.n != points) {
        fprintf(stderr, "manifest %s: %lld points, the source gives %lld\n", name, points,
                (long long)c.n);
        CHECK(0);
    }
    pcb_cloud_free(&c);
}

static void manifest_matches_its_sources(void)
{
    FILE *f = fopen("datasets/manifest.tsv", "r");
    CHECK(f != NULL);
    char line[1024];
    int rows = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strncmp(line, "name\t", 5) == 0)
            continue;
        char *save = NULL, *name = strtok_r(line, "\t", &save);
        char *kind = strtok_r(NULL, "\t", &save), *points = strtok_r(NULL, "\t", &save);
        char *source = strtok_r(NULL, "\t", &save), *desc = strtok_r(NULL, "\t\n", &save);
        CHECK(name && kind && points && source && desc);
        if (!desc)
            continue;
        CHECK(strcmp(kind, "synthetic") == 0 || strcmp(kind, "real") == 0);
        check_manifest_row(name, kind, atoll(points), source);
        rows++;
    }
    if (f)
        fclose(f);
    CHECK(rows >= 20);
}

/* Reads `text` as an answer file of `count` answers; returns the code. */
static int answers(const char *text, size_t len, int64_t count, int32_t *idx, double *val,
                   int *has)
{
    path_buf p;
    const char *path = tmp_path(&p, "answers.txt");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
    int rc = pcb_read_answers(path, count, idx, val, has);
    if (rc != PCB_OK)
        CHECK(strstr(pcb_errmsg(), path) != NULL); /* errors name the file */
    remove(path);
    return rc;
}

#define ANSWERS(text, count) answers(text, sizeof text - 1, count, idx, val, &has)

static void answer_files(void)
{
    int32_t idx[4];
    double val[4];
    int has;
    static const char *const good[] = {
        "3\n1\n2\n", "# made by hand\n\n3\r\n1\r\n  2  \r\n",
        "index\n3\n1\n2\n", "3.000000000000000000e+00\n1.0e+00\n2\n"};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        memset(idx, 0, sizeof idx);
        CHECK_RC(answers(good[k], strlen(good[k]), 3, idx, val, &has), PCB_OK);
        CHECK(idx[0] == 3 && idx[1] == 1 && idx[2] == 2 && !has);
    }
    /* CSV with a header and distances; pandas' index column is dropped. */
    CHECK_RC(ANSWERS("index,dist2\n3,0.5\n-1,0.25\n2,1e-3\n", 3), PCB_OK);
    CHECK(idx[0] == 3 && idx[1] == -1 && idx[2] == 2 && has && val[0] == 0.5 && val[2] == 1e-3);
    CHECK_RC(ANSWERS(",index,dist2\n0,7,0.5\n1,8,2\n", 2), PCB_OK);
    CHECK(idx[0] == 7 && idx[1] == 8 && has && val[1] == 2);
    CHECK_RC(ANSWERS("5 , 0.5\n6\t,\t1\n", 2), PCB_OK);
    CHECK(idx[0] == 5 && idx[1] == 6 && val[1] == 1);
    /* Wrong: every one names the file and the line. */
    static const struct {
        const char *text, *want;
    } bad[] = {{"3\n1\n", ":2: 2 answers, expected 3"},
               {"3\nx\n2\n", ":2: 'x' is not an index"},
               {"3\n1.5\n2\n", ":2: '1.5' is not an index"},
               {"3\n99999999999\n2\n", ":2: '99999999999' is not an index"},
               {"3\n1\n2\n4\n", ":4: more than the 3 answers"},
               {"3 0.5\n1\n2 0.1\n", ":2: 1 fields where the lines before have 2"},
               {"3\n1,2,3,4,5\n2\n", ":2: more than 4 fields"},
               {"3\n1,2,3\n2\n", ":2: 3 fields, expected an index"},
               {"3 1\n1 zz\n2 1\n", ":2: 'zz' is not a number"},
               {"3 1\n1 1e999\n2 1\n", ":2: '1e999' is not a number"},
               {"", ":0: 0 answers, expected 3"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc = answers(bad[k].text, strlen(bad[k].text), 3, idx, val, &has);
        CHECK_RC(rc, PCB_EBADFILE);
        if (rc == PCB_EBADFILE && !strstr(pcb_errmsg(), bad[k].want))
            fprintf(stderr, "  '%s' lacks '%s'\n", pcb_errmsg(), bad[k].want);
        CHECK(rc != PCB_EBADFILE || strstr(pcb_errmsg(), bad[k].want));
    }
    CHECK_RC(ANSWERS("3\n1\0\n2\n", 3), PCB_EBADFILE);
    CHECK(strstr(pcb_errmsg(), ":2: a NUL byte") != NULL);
    /* A hostile line: a megabyte of digits is not an index, and nothing breaks. */
    size_t big = 1 << 20;
    char *huge = malloc(2 * big + 2);
    CHECK(huge != NULL);
    if (huge) {
        memset(huge, '7', big);
        huge[big] = '\n';
        CHECK_RC(answers(huge, big + 1, 1, idx, val, &has), PCB_EBADFILE);
        CHECK(strstr(pcb_errmsg(), ":1: a line longer than 4096 characters") != NULL);
        /* Endless blank lines or comments: bounded by what the answers need. */
        memset(huge, '\n', 2 * big);
        CHECK_RC(answers(huge, 2 * big, 1, idx, val, &has), PCB_EBADFILE);
        CHECK(strstr(pcb_errmsg(), "more than the answers expected can need") != NULL);
        free(huge);
    }
    path_buf p;
    CHECK_RC(pcb_read_answers(tmp_path(&p, "none.txt"), 1, idx, val, &has), PCB_EBADFILE);
    CHECK(strstr(pcb_errmsg(), "none.txt") != NULL);
    /* Not regular files: refused before any read (a FIFO would block, a
     * device stream without end). */
    CHECK_RC(pcb_read_answers("/dev/zero", 1, idx, val, &has), PCB_EBADFILE);
    CHECK(strstr(pcb_errmsg(), "/dev/zero: not a regular file") != NULL);
    const char *fifo = tmp_path(&p, "answers.fifo");
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_RC(pcb_read_answers(fifo, 1, idx, val, &has), PCB_EBADFILE);
    CHECK(strstr(pcb_errmsg(), "not a regular file") != NULL);
    pcb_cloud c;
    CHECK_RC(pcb_load(fifo, &c), PCB_EBADFILE);
    CHECK(strstr(pcb_errmsg(), "byte 0: not a regular file") != NULL);
    CHECK_RC(pcb_load("/dev/zero", &c), PCB_EBADFILE);
    unlink(fifo);
}

/* Writes cloud c moved by off, as text with 0.1 mm resolution; loads it. */
static void geo_cloud(const pcb_cloud *c, const double off[3], const char *name, pcb_cloud *out)
{
    path_buf p;
    const char *path = tmp_path(&p, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int64_t i = 0; f && i < c->n; i++)
        fprintf(f, "%.4f %.4f %.4f\n", c->xyz[3 * i] + off[0], c->xyz[3 * i + 1] + off[1],
                c->xyz[3 * i + 2] + off[2]);
    if (f)
        fclose(f);
    CHECK_RC(pcb_load(path, out), PCB_OK);
    CHECK(out->dxyz != NULL);
    remove(path);
}

/* Queries whose answer is farther (in double, from the coordinates as read)
 * than the true nearest by more than tol units, and those with another index. */
static void against_oracle(const pcb_cloud *ref, const pcb_cloud *qry, const int32_t *idx,
                           double tol, int64_t *far, int64_t *other)
{
    *far = *other = 0;
    for (int64_t i = 0; i < qry->n; i++) {
        const double *q = qry->dxyz + 3 * i;
        double best = HUGE_VAL, got = 0;
        int64_t at = -1;
        for (int64_t k = 0; k < ref->n; k++) {
            const double *r = ref->dxyz + 3 * k;
            double d = (r[0] - q[0]) * (r[0] - q[0]) + (r[1] - q[1]) * (r[1] - q[1]) +
                       (r[2] - q[2]) * (r[2] - q[2]);
            if (d < best)
                best = d, at = k;
            if (k == idx[i])
                got = d;
        }
        *far += sqrt(got) > sqrt(best) + tol;
        *other += at != idx[i];
    }
}

/* Lidar sweeps 5,000 km from the origin (UTM-like): straight to float, the
 * coordinates lose decimetres and most queries get another neighbour than
 * the double-precision truth; shifted first, the answers agree with it. */
static void geo_shift_keeps_centimetres(void)
{
    pcb_cloud a, b, ra, rb;
    CHECK_RC(pcb_gen_lidar(6000, 3, 0, 0, 0, &a), PCB_OK);
    CHECK_RC(pcb_gen_lidar(3000, 3, 0.8, 0.05, 0.01, &b), PCB_OK);
    const double off[3] = {4987654.321, 3012345.678, 123.456};
    geo_cloud(&a, off, "geo_a.xyz", &ra);
    geo_cloud(&b, off, "geo_b.xyz", &rb);
    int32_t *idx = malloc((size_t)rb.n * sizeof *idx);
    CHECK(idx != NULL);
    int64_t far, other;
    double shift[3];
    if (idx && ra.dxyz && rb.dxyz) {
        CHECK_RC(pcb_nn(ra.xyz, rb.xyz, 1, ra.n, rb.n, idx, NULL), PCB_OK);
        against_oracle(&ra, &rb, idx, 1e-3, &far, &other);
        printf("note: unshifted, %lld of %lld queries got another neighbour, %lld over 1 mm "
               "farther\n", (long long)other, (long long)rb.n, (long long)far);
        CHECK(far > rb.n / 10);
        CHECK(pcb_shift_auto(&ra, shift) == 1);
        CHECK(shift[0] == floor(shift[0]) && shift[0] > 4.98e6 && shift[0] < off[0]);
        CHECK_RC(pcb_cloud_shift(&ra, shift), PCB_OK);
        CHECK_RC(pcb_cloud_shift(&rb, shift), PCB_OK);
        CHECK_RC(pcb_nn(ra.xyz, rb.xyz, 1, ra.n, rb.n, idx, NULL), PCB_OK);
        against_oracle(&ra, &rb, idx, 1e-4, &far, &other); /* float ulps at 200 m: 1.5e-5 */
        printf("note: shifted, %lld of %lld queries got another neighbour, %lld over 0.1 mm "
               "farther\n", (long long)other, (long long)rb.n, (long long)far);
        CHECK(far == 0);
        CHECK(other <= rb.n / 1000); /* only near-ties within float rounding */
        /* No shift for clouds near the origin; a shift that leaves float32 is refused. */
        CHECK(pcb_shift_auto(&a, shift) == 0 && shift[0] == 0 && shift[2] == 0);
        const double away[3] = {-1e39, 0, 0};
        CHECK_RC(pcb_cloud_shift(&a, away), PCB_EINVAL);
    }
    free(idx);
    pcb_cloud_free(&a), pcb_cloud_free(&b), pcb_cloud_free(&ra), pcb_cloud_free(&rb);
}

static void cleanup(void)
{
    if (tmpdir[0])
        CHECK(rmdir(tmpdir) == 0);
}

TEST_MAIN(T(corpus_files_are_refused_with_file_and_position), T(valid_files_load_exactly),
          T(unreadable_paths_are_io_errors), T(text_variants_load),
          T(save_load_round_trip_is_bit_exact), T(generators_are_deterministic),
          T(lidar_sweep_looks_like_a_scan), T(lidar_resamples_to_exactly_n),
          T(lidar_pair_sees_the_same_street), T(manifest_matches_its_sources), T(answer_files),
          T(geo_shift_keeps_centimetres), T(cleanup))
