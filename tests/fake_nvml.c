/* fake_nvml.c - a stand-in for libnvidia-ml with NVML's C entry points, so
 * test_harness can drive bench_nvml.c on a machine without a GPU. One
 * device, maximum SM clock 1980 MHz; the SM clock of successive readings is
 * the list in FAKE_NVML_SM ("1980,900,..."; it repeats), the throttle
 * reasons say sw-power-cap (0x4) whenever the clock is under the maximum.
 * FAKE_NVML_INIT=fail makes nvmlInit fail. */
#include <stdlib.h>
#include <string.h>

static int readings;

static unsigned sm_clock(void)
{
    const char *list = getenv("FAKE_NVML_SM");
    if (!list || !*list)
        return 1980;
    int count = 1;
    for (const char *p = list; *p; p++)
        count += *p == ',';
    int k = readings++ % count;
    const char *p = list;
    while (k-- > 0)
        p = strchr(p, ',') + 1;
    return (unsigned)strtoul(p, NULL, 10);
}

int nvmlInit_v2(void)
{
    const char *f = getenv("FAKE_NVML_INIT");
    return f && strcmp(f, "fail") == 0 ? 12 : 0; /* 12: NVML_ERROR_LIB_RM_VERSION_MISMATCH */
}

int nvmlShutdown(void)
{
    return 0;
}

const char *nvmlErrorString(int r)
{
    return r == 12 ? "RM has detected an NVML/RM version mismatch" : "fake NVML error";
}

static int device = 7;

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **dev)
{
    if (index != 0)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = &device;
    return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    (void)bus;
    *dev = &device;
    return 0;
}

int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz)
{
    (void)dev;
    *mhz = type == 1 ? 1980 : 2619;
    return 0;
}

static unsigned last_sm = 1980;

int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
    (void)dev;
    if (type == 1)
        last_sm = sm_clock();
    *mhz = type == 1 ? last_sm : 2619;
    return 0;
}

int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *c)
{
    (void)dev, (void)sensor;
    *c = 41;
    return 0;
}

int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw)
{
    (void)dev;
    *mw = 312500;
    return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *bits)
{
    (void)dev;
    *bits = last_sm < 1980 ? 0x4 : 0;
    return 0;
}
