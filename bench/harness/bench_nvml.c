/* bench_nvml.c - the GPU's state around each timed sample: SM and memory
 * clocks, temperature, power and the reasons NVML gives for holding the
 * clocks down (throttling).
 *
 * NVML is opened at run time with dlopen, so building needs no header or
 * library and a machine without the driver's libnvidia-ml says "no NVML"
 * once and times as before. The few entry points used are declared here
 * from NVML's documented C interface; PCBENCH_NVML names another library
 * to load (the tests load a scripted stand-in). The NVML device is the one
 * CUDA calls device 0, found by its PCI bus id (CUDA_VISIBLE_DEVICES may
 * renumber devices; NVML does not). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_bench.h"
#include "harness.h"

typedef int nvml_ret;       /* nvmlReturn_t: 0 is success */
typedef void *nvml_device;  /* nvmlDevice_t */
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

static struct {
    int tried, ok;
    char status[256];
    void *lib;
    nvml_device dev;
    double max_sm, max_mem;
    nvml_ret (*clock)(nvml_device, int, unsigned *);
    nvml_ret (*temperature)(nvml_device, int, unsigned *);
    nvml_ret (*power)(nvml_device, unsigned *);
    nvml_ret (*reasons)(nvml_device, unsigned long long *);
    nvml_ret (*shutdown)(void);
    const char *(*error)(nvml_ret);
} nv;

static const char *nvml_error(nvml_ret r)
{
    static char buf[32];
    if (nv.error)
        return nv.error(r);
    snprintf(buf, sizeof buf, "NVML error %d", r);
    return buf;
}

static void *sym(const char *name)
{
    return nv.lib ? dlsym(nv.lib, name) : NULL;
}

static int unavailable(const char *fmt, const char *what, const char *why)
{
    char text[200];
    snprintf(text, sizeof text, fmt, what, why);
    snprintf(nv.status, sizeof nv.status, "no NVML (%s): GPU clocks not recorded per sample",
             text);
    if (nv.lib) {
        if (nv.shutdown)
            nv.shutdown();
        dlclose(nv.lib);
    }
    nv.lib = NULL;
    nv.ok = 0;
    return pcb_fail(PCB_EUNAVAIL, "%s", nv.status);
}

int bench_nvml_open(void)
{
    if (nv.tried)
        return nv.ok ? PCB_OK : pcb_fail(PCB_EUNAVAIL, "%s", nv.status);
    nv.tried = 1;
    const char *path = getenv("PCBENCH_NVML");
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    if (!(nv.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char *why = dlerror();
        return unavailable("%s: %s", path, why ? why : "cannot be loaded");
    }
    nvml_ret (*init)(void) = (nvml_ret (*)(void))sym("nvmlInit_v2");
    nvml_ret (*by_bus)(const char *, nvml_device *) =
        (nvml_ret (*)(const char *, nvml_device *))sym("nvmlDeviceGetHandleByPciBusId_v2");
    nvml_ret (*by_index)(unsigned, nvml_device *) =
        (nvml_ret (*)(unsigned, nvml_device *))sym("nvmlDeviceGetHandleByIndex_v2");
    nvml_ret (*max_clock)(nvml_device, int, unsigned *) =
        (nvml_ret (*)(nvml_device, int, unsigned *))sym("nvmlDeviceGetMaxClockInfo");
    nv.clock = (nvml_ret (*)(nvml_device, int, unsigned *))sym("nvmlDeviceGetClockInfo");
    nv.temperature = (nvml_ret (*)(nvml_device, int, unsigned *))sym("nvmlDeviceGetTemperature");
    nv.power = (nvml_ret (*)(nvml_device, unsigned *))sym("nvmlDeviceGetPowerUsage");
    /* renamed in CUDA 12.2's NVML; the old name stays for older drivers */
    nv.reasons = (nvml_ret (*)(nvml_device, unsigned long long *))sym(
        "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nv.reasons)
        nv.reasons = (nvml_ret (*)(nvml_device, unsigned long long *))sym(
            "nvmlDeviceGetCurrentClocksThrottleReasons");
    nv.shutdown = (nvml_ret (*)(void))sym("nvmlShutdown");
    nv.error = (const char *(*)(nvml_ret))sym("nvmlErrorString");
    if (!init || !by_index || !max_clock || !nv.clock || !nv.shutdown)
        return unavailable("%s: %s", path, "lacks nvmlInit_v2, a device or clock query");
    nvml_ret r = init();
    if (r != 0) {
        nv.shutdown = NULL; /* nothing to shut down */
        return unavailable("%s: %s", "nvmlInit", nvml_error(r));
    }
    pcb_gpu_info gi;
    if (by_bus && pcb_cuda_gpu_info(&gi) == PCB_OK && gi.pci_bus_id[0])
        r = by_bus(gi.pci_bus_id, &nv.dev);
    else
        r = by_index(0, &nv.dev);
    if (r != 0)
        return unavailable("%s: %s", "the GPU's NVML device", nvml_error(r));
    unsigned sm = 0, mem = 0;
    if ((r = max_clock(nv.dev, NVML_CLOCK_SM, &sm)) != 0 || sm == 0)
        return unavailable("%s: %s", "the maximum SM clock", r ? nvml_error(r) : "0 MHz");
    nv.max_sm = sm;
    nv.max_mem = max_clock(nv.dev, NVML_CLOCK_MEM, &mem) == 0 ? mem : NAN;
    snprintf(nv.status, sizeof nv.status, "NVML (%s): maximum SM clock %.0f MHz, memory %.0f MHz",
             path, nv.max_sm, nv.max_mem);
    nv.ok = 1;
    return PCB_OK;
}

const char *bench_nvml_status(void)
{
    return nv.tried ? nv.status : "NVML not opened";
}

double bench_nvml_max_sm_mhz(void)
{
    return nv.ok ? nv.max_sm : NAN;
}

int bench_nvml_read(bench_gpu_state *s)
{
    *s = (bench_gpu_state){NAN, NAN, NAN, NAN, 0};
    if (!nv.ok)
        return pcb_fail(PCB_EUNAVAIL, "%s", bench_nvml_status());
    unsigned v = 0;
    unsigned long long bits = 0;
    nvml_ret r = nv.clock(nv.dev, NVML_CLOCK_SM, &v);
    if (r != 0)
        return pcb_fail(PCB_EIO, "NVML SM clock: %s", nvml_error(r));
    s->sm_mhz = v;
    if (nv.clock(nv.dev, NVML_CLOCK_MEM, &v) == 0)
        s->mem_mhz = v;
    if (nv.temperature && nv.temperature(nv.dev, NVML_TEMPERATURE_GPU, &v) == 0)
        s->temp_c = v;
    if (nv.power && nv.power(nv.dev, &v) == 0)
        s->power_w = v / 1e3; /* milliwatts */
    if (nv.reasons && nv.reasons(nv.dev, &bits) == 0)
        s->reasons = bits;
    return PCB_OK;
}

void bench_nvml_close(void)
{
    if (nv.lib) {
        if (nv.ok && nv.shutdown)
            nv.shutdown();
        dlclose(nv.lib);
    }
    memset(&nv, 0, sizeof nv);
}

/* NVML's clock-event reason bits, in its order. */
static const char *const reason_names[] = {
    "idle",        "applications-clocks", "sw-power-cap",     "hw-slowdown", "sync-boost",
    "sw-thermal",  "hw-thermal",          "hw-power-brake",   "display-clocks"};

void bench_gpu_reasons_text(unsigned long long reasons, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < 64 && o + 1 < len; i++) {
        if (!(reasons >> i & 1))
            continue;
        const char *name = i < sizeof reason_names / sizeof *reason_names ? reason_names[i] : NULL;
        int w = name ? snprintf(buf + o, len - o, "%s%s", o ? "," : "", name)
                     : snprintf(buf + o, len - o, "%sbit%u", o ? "," : "", i);
        if (w < 0 || (size_t)w >= len - o)
            break;
        o += (size_t)w;
    }
}

/* The state over a sample from the readings around it: the lowest clocks,
 * the highest temperature and power, every reason either reading gave. */
bench_gpu_state bench_gpu_span(const bench_gpu_state *before, const bench_gpu_state *after)
{
    bench_gpu_state s = {fminf(before->sm_mhz, after->sm_mhz),
                         fminf(before->mem_mhz, after->mem_mhz),
                         fmaxf(before->temp_c, after->temp_c),
                         fmaxf(before->power_w, after->power_w),
                         before->reasons | after->reasons};
    return s;
}

int bench_gpu_throttled(const bench_gpu_state *s, double max_sm_mhz, double threshold)
{
    return isfinite(s->sm_mhz) && max_sm_mhz > 0 && s->sm_mhz < threshold * max_sm_mhz;
}
