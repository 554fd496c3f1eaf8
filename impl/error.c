/* error.c - status codes and the per-thread last-error message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pcbench.h"

static _Thread_local char last_msg[1024];

const char *pcb_strerror(int code)
{
    switch (code) {
    case PCB_OK: return "ok";
    case PCB_EINVAL: return "invalid argument";
    case PCB_EUNSUPPORTED: return "unsupported";
    case PCB_EUNAVAIL: return "unavailable";
    case PCB_ENOMEM: return "out of memory";
    case PCB_EDEVICE: return "device error";
    case PCB_EBADFILE: return "bad input file";
    case PCB_EIO: return "I/O error";
    default: return "unknown error";
    }
}

const char *pcb_errmsg(void)
{
    return last_msg;
}

int pcb_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    return code;
}
