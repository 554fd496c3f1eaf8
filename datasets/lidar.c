/* lidar.c - a synthetic spinning lidar (HDL-64-like) in a procedural street.
 *
 * The street (world frame, metres) is chosen by the seed alone, so sweeps
 * from nearby poses with the same seed see the same street:
 *   - ground plane z = 0; the road runs along x, |y| < road_half (3.5..6 m);
 *   - a 0.15 m high sidewalk on each side, 2..4 m wide, up to the facades;
 *   - buildings: boxes along both facade lines, 8..30 m long, 5..25 m high,
 *     8..20 m deep, set back 0..2 m, with 5..12 m alleys between some, and a
 *     continuous back wall 25 m behind each facade line (seen through alleys);
 *   - cars (boxes about 4.5 x 1.8 x 1.5 m) parked along both kerbs and a few
 *     in the lanes; poles (vertical cylinders, r 0.1..0.15 m, 5..9 m) every
 *     20..35 m on both sidewalks; trees (a trunk cylinder and a sphere crown);
 *   - buildings line x in [-160, 160] m (the last may reach a little further),
 *     and no car stands on the road within 6 m of x = 0, so a sensor near the
 *     origin never sits inside an object. Sensor poses are limited to
 *     |x|, |y| <= 100 m (the street around them). About 300 objects in all.
 * The sensor is PCB_LIDAR_HEIGHT above (sensor_x, sensor_y) with heading yaw:
 * 64 beams, the upper 32 evenly from +2.0 to -8.33 degrees and the lower 32
 * from -8.83 to -24.8 degrees (the HDL-64 layout), LIDAR_STEPS azimuth
 * steps per revolution starting at a pose-dependent phase. A return is the
 * first surface along the beam plus gaussian range noise (2 cm); returns
 * beyond 120 m (or nearer than 1 m) are dropped, so the density falls as
 * 1/r^2 like a real scan. Points are in the world frame, ordered ring by
 * ring (top beam first), each ring in azimuth order, as in KITTI files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloud.h"

#define LIDAR_STEPS 1880 /* azimuth steps per revolution (0.19 degrees) */
#define MAX_RANGE 120.0
#define MIN_RANGE 1.0
#define RANGE_SIGMA 0.02
#define STREET_HALF_LEN 160.0
#define MAX_PRISMS 1024
#define MAX_SPHERES 128
#define DEG (3.14159265358979323846 / 180.0)
#define TWO_PI 6.28318530717958647692

/* A vertical prism: an axis-aligned box or a vertical cylinder, z0..z1. */
typedef struct {
    int cylinder;
    double x0, x1, y0, y1; /* box footprint */
    double cx, cy, r;      /* cylinder footprint */
    double z0, z1;
} prism;

typedef struct {
    double cx, cy, cz, r;
} sphere;

typedef struct {
    prism p[MAX_PRISMS];
    sphere s[MAX_SPHERES];
    int np, ns;
} street;

static double uni(pcb_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * pcb_rng_uniform(r);
}

static void add_box(street *st, double x0, double x1, double y0, double y1, double z1)
{
    if (st->np < MAX_PRISMS)
        st->p[st->np++] = (prism){.x0 = x0, .x1 = x1, .y0 = y0, .y1 = y1, .z0 = 0, .z1 = z1};
}

static void add_cylinder(street *st, double cx, double cy, double r, double z1)
{
    if (st->np < MAX_PRISMS)
        st->p[st->np++] = (prism){.cylinder = 1, .cx = cx, .cy = cy, .r = r, .z0 = 0, .z1 = z1};
}

/* One car centred at (x, y), avoiding the clear zone around the origin. */
static void add_car(street *st, pcb_rng *r, double x, double y)
{
    double len = uni(r, 4.0, 5.0), wid = uni(r, 1.7, 1.9), h = uni(r, 1.4, 1.6);
    if (fabs(x) < 6.0 + len / 2)
        return;
    add_box(st, x - len / 2, x + len / 2, y - wid / 2, y + wid / 2, h);
}

/* One side of the street; side = +1 (y > 0) or -1. */
static void build_side(street *st, pcb_rng *r, double side, double road_half)
{
    double facade = road_half + uni(r, 2.0, 4.0);
    double lo_y = side > 0 ? road_half : -facade, hi_y = side > 0 ? facade : -road_half;
    /* Sidewalk: a low box from the kerb to the facade line. */
    add_box(st, -STREET_HALF_LEN, STREET_HALF_LEN, lo_y, hi_y, 0.15);
    for (double x = -STREET_HALF_LEN; x < STREET_HALF_LEN;) {
        if (pcb_rng_uniform(r) < 0.15) { /* alley */
            x += uni(r, 5.0, 12.0);
            continue;
        }
        double len = uni(r, 8.0, 30.0), depth = uni(r, 8.0, 20.0), h = uni(r, 5.0, 25.0);
        double front = facade + uni(r, 0.0, 2.0);
        double y0 = side > 0 ? front : -front - depth, y1 = side > 0 ? front + depth : -front;
        add_box(st, x, x + len, y0, y1, h);
        x += len;
    }
    double back = facade + 25.0;
    add_box(st, -STREET_HALF_LEN, STREET_HALF_LEN, side > 0 ? back : -back - 2.0,
            side > 0 ? back + 2.0 : -back, 15.0);
    /* Parked cars along the kerb. */
    for (double x = -STREET_HALF_LEN + uni(r, 0, 8);; x += uni(r, 6.0, 14.0)) {
        if (x > STREET_HALF_LEN - 5)
            break;
        if (pcb_rng_uniform(r) < 0.6)
            add_car(st, r, x, side * (road_half - 1.1));
    }
    /* Poles near the kerb, trees towards the facades. */
    for (double x = -STREET_HALF_LEN + uni(r, 0, 20);; x += uni(r, 20.0, 35.0)) {
        if (x > STREET_HALF_LEN)
            break;
        double radius = uni(r, 0.1, 0.15), height = uni(r, 5.0, 9.0);
        add_cylinder(st, x, side * (road_half + 0.5), radius, height);
    }
    for (double x = -STREET_HALF_LEN + uni(r, 0, 15);; x += uni(r, 12.0, 30.0)) {
        if (x > STREET_HALF_LEN)
            break;
        double y = side * (facade - 1.0), trunk = uni(r, 2.5, 3.5), crown = uni(r, 1.5, 2.5);
        double radius = uni(r, 0.15, 0.25);
        add_cylinder(st, x, y, radius, trunk + 0.5);
        if (st->ns < MAX_SPHERES)
            st->s[st->ns++] = (sphere){x, y, trunk + 0.7 * crown, crown};
    }
}

static void build_street(street *st, uint64_t seed)
{
    pcb_rng r;
    pcb_rng_seed(&r, seed);
    st->np = st->ns = 0;
    double road_half = uni(&r, 3.5, 6.0);
    build_side(st, &r, +1.0, road_half);
    build_side(st, &r, -1.0, road_half);
    int moving = 4 + (int)(pcb_rng_next(&r) % 5);
    for (int i = 0; i < moving; i++) {
        double lane = pcb_rng_uniform(&r) < 0.5 ? -1.0 : 1.0;
        add_car(st, &r, uni(&r, -100.0, 100.0), lane * road_half / 2);
    }
}

/* Horizontal distances [*in, *out] along the unit direction (dx, dy) from
 * (ox, oy) where the ray is inside the prism's footprint; 0 if it misses. */
static int footprint(const prism *p, double ox, double oy, double dx, double dy, double *in,
                     double *out)
{
    double lo = 0.0, hi = INFINITY;
    if (p->cylinder) {
        double fx = ox - p->cx, fy = oy - p->cy;
        double b = fx * dx + fy * dy, c = fx * fx + fy * fy - p->r * p->r, disc = b * b - c;
        if (disc <= 0)
            return 0;
        double root = sqrt(disc);
        lo = fmax(lo, -b - root);
        hi = -b + root;
    } else {
        const double o[2] = {ox, oy}, d[2] = {dx, dy}, a[2] = {p->x0, p->y0}, z[2] = {p->x1, p->y1};
        for (int k = 0; k < 2; k++) {
            if (d[k] == 0.0) {
                if (o[k] < a[k] || o[k] > z[k])
                    return 0;
                continue;
            }
            double t0 = (a[k] - o[k]) / d[k], t1 = (z[k] - o[k]) / d[k];
            lo = fmax(lo, fmin(t0, t1));
            hi = fmin(hi, fmax(t0, t1));
        }
    }
    *in = lo;
    *out = hi;
    return lo <= hi;
}

typedef struct {
    double elev_tan[PCB_LIDAR_BEAMS], elev_sin[PCB_LIDAR_BEAMS], elev_cos[PCB_LIDAR_BEAMS];
} beams;

static void beam_table(beams *b)
{
    for (int i = 0; i < PCB_LIDAR_BEAMS; i++) {
        double deg = i < 32 ? 2.0 + (-8.33 - 2.0) * i / 31.0
                            : -8.83 + (-24.8 + 8.83) * (i - 32) / 31.0;
        b->elev_tan[i] = tan(deg * DEG);
        b->elev_sin[i] = sin(deg * DEG);
        b->elev_cos[i] = cos(deg * DEG);
    }
}

/* Objects the horizontal direction (dx, dy) from (ox, oy) passes over:
 * prisms with their [in, out] distances, and spheres. */
typedef struct {
    int prism[MAX_PRISMS], sphere[MAX_SPHERES];
    double span[2 * MAX_PRISMS];
    int np, ns;
} candidates;

static void gather(const street *st, double ox, double oy, double dx, double dy, candidates *c)
{
    c->np = c->ns = 0;
    for (int i = 0; i < st->np; i++)
        if (footprint(&st->p[i], ox, oy, dx, dy, &c->span[2 * c->np], &c->span[2 * c->np + 1]))
            c->prism[c->np++] = i;
    for (int i = 0; i < st->ns; i++) {
        const sphere *s = &st->s[i];
        prism disc = {.cylinder = 1, .cx = s->cx, .cy = s->cy, .r = s->r};
        double in, out;
        if (footprint(&disc, ox, oy, dx, dy, &in, &out))
            c->sphere[c->ns++] = i;
    }
}

/* First hit of beam `ring` at the horizontal direction (dx, dy): the
 * horizontal distance, or INFINITY. */
static double cast(const street *st, const beams *b, int ring, double ox, double oy, double h,
                   double dx, double dy, const candidates *cd)
{
    double k = b->elev_tan[ring], best = INFINITY;
    if (k < 0)
        best = -h / k; /* the ground */
    for (int c = 0; c < cd->np; c++) {
        const prism *p = &st->p[cd->prism[c]];
        double lo = cd->span[2 * c], hi = cd->span[2 * c + 1];
        if (lo >= best)
            continue;
        if (k == 0.0) {
            if (h < p->z0 || h > p->z1)
                continue;
        } else {
            double s0 = (p->z0 - h) / k, s1 = (p->z1 - h) / k;
            lo = fmax(lo, fmin(s0, s1));
            hi = fmin(hi, fmax(s0, s1));
        }
        if (lo <= hi && lo < best)
            best = lo;
    }
    /* Spheres: solve in 3D along the beam, then convert to horizontal. */
    double c = b->elev_cos[ring], sz = b->elev_sin[ring];
    for (int i = 0; i < cd->ns; i++) {
        const sphere *s = &st->s[cd->sphere[i]];
        double fx = ox - s->cx, fy = oy - s->cy, fz = h - s->cz;
        double bb = (fx * dx + fy * dy) * c + fz * sz;
        double disc = bb * bb - (fx * fx + fy * fy + fz * fz - s->r * s->r);
        if (disc <= 0)
            continue;
        double t = -bb - sqrt(disc);
        if (t > 0 && t * c < best)
            best = t * c;
    }
    return best;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    pcb_rng r;
    pcb_rng_seed(&r, h ^ (v * 0x9e3779b97f4a7c15ull));
    return pcb_rng_next(&r);
}

static uint64_t bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Ray-cast one sweep with `steps` azimuth steps into out (ring-major). */
static int sweep(const street *st, int64_t steps, uint64_t pose_seed, double sx, double sy,
                 double yaw, pcb_cloud *out)
{
    int64_t rays = PCB_LIDAR_BEAMS * steps;
    float *xyz = malloc((size_t)rays * 3 * sizeof *xyz);
    unsigned char *hit = calloc((size_t)rays, 1);
    candidates *cd = malloc(sizeof *cd);
    if (!xyz || !hit || !cd) {
        free(xyz);
        free(hit);
        free(cd);
        return pcb_fail(PCB_ENOMEM, "lidar: no memory for %lld rays", (long long)rays);
    }
    beams b;
    beam_table(&b);
    pcb_rng noise;
    pcb_rng_seed(&noise, pose_seed);
    double phase = pcb_rng_uniform(&noise), h = PCB_LIDAR_HEIGHT;
    int64_t count = 0;
    for (int64_t j = 0; j < steps; j++) {
        double az = yaw + TWO_PI * ((double)j + phase) / (double)steps;
        double dx = cos(az), dy = sin(az);
        gather(st, sx, sy, dx, dy, cd);
        for (int ring = 0; ring < PCB_LIDAR_BEAMS; ring++) {
            double s = cast(st, &b, ring, sx, sy, h, dx, dy, cd);
            double range = s / b.elev_cos[ring] + RANGE_SIGMA * pcb_rng_normal(&noise);
            if (!(range >= MIN_RANGE && range <= MAX_RANGE))
                continue;
            int64_t at = ring * steps + j;
            double horiz = range * b.elev_cos[ring];
            xyz[3 * at] = (float)(sx + horiz * dx);
            xyz[3 * at + 1] = (float)(sy + horiz * dy);
            xyz[3 * at + 2] = (float)(h + range * b.elev_sin[ring]);
            hit[at] = 1;
            count++;
        }
    }
    int rc = count > 0 ? pcb_cloud_alloc(out, count)
                       : pcb_fail(PCB_EINVAL, "lidar: the sensor at (%g, %g) sees nothing", sx, sy);
    if (rc == PCB_OK) {
        int64_t k = 0;
        for (int64_t i = 0; i < rays; i++)
            if (hit[i])
                memcpy(out->xyz + 3 * k++, xyz + 3 * i, 3 * sizeof *xyz);
    }
    free(xyz);
    free(hit);
    free(cd);
    return rc;
}

/* Keep exactly n of c's points, chosen uniformly, in their order
 * (selection sampling). */
static void keep_subset(pcb_cloud *c, int64_t n, uint64_t seed)
{
    pcb_rng r;
    pcb_rng_seed(&r, seed);
    int64_t kept = 0;
    for (int64_t i = 0; i < c->n && kept < n; i++)
        if ((double)(c->n - i) * pcb_rng_uniform(&r) < (double)(n - kept)) {
            memmove(c->xyz + 3 * kept, c->xyz + 3 * i, 3 * sizeof *c->xyz);
            kept++;
        }
    c->n = kept;
    float *smaller = realloc(c->xyz, (size_t)kept * 3 * sizeof *c->xyz);
    if (smaller)
        c->xyz = smaller;
}

int pcb_gen_lidar(int64_t n, uint64_t seed, double sensor_x, double sensor_y, double yaw,
                  pcb_cloud *out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "lidar: no cloud to fill");
    out->xyz = NULL;
    out->dxyz = NULL;
    out->n = 0;
    if (n < 0 || n > PCB_MAX_POINTS)
        return pcb_fail(PCB_EINVAL, "lidar: %lld points (need 0 for a natural sweep, or 1..%d)",
                        (long long)n, PCB_MAX_POINTS);
    if (!isfinite(sensor_x) || !isfinite(sensor_y) || !isfinite(yaw) || fabs(sensor_x) > 100 ||
        fabs(sensor_y) > 100)
        return pcb_fail(PCB_EINVAL, "lidar: sensor pose (%g, %g, yaw %g) outside the street",
                        sensor_x, sensor_y, yaw);
    street *st = malloc(sizeof *st);
    if (!st)
        return pcb_fail(PCB_ENOMEM, "lidar: no memory for the street");
    build_street(st, seed);
    uint64_t pose_seed = mix(mix(mix(seed, bits(sensor_x)), bits(sensor_y)), bits(yaw));
    int64_t steps = LIDAR_STEPS;
    int rc = sweep(st, steps, pose_seed, sensor_x, sensor_y, yaw, out);
    /* More points than the sensor gives: raise the azimuth resolution in
     * proportion (plus a margin) until the sweep has enough, then subsample. */
    while (rc == PCB_OK && n > out->n) {
        steps = (int64_t)ceil((double)steps * (double)n / (double)out->n * 1.02) + 1;
        pcb_cloud_free(out);
        rc = sweep(st, steps, pose_seed, sensor_x, sensor_y, yaw, out);
    }
    free(st);
    if (rc == PCB_OK && n > 0 && n < out->n)
        keep_subset(out, n, mix(pose_seed, (uint64_t)n));
    return rc;
}
