/* error.c - status codes and the per-thread last-error message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pcbench_impl.h"

static _Thread_local char last_msg[1024];

const char *pcb_strerror(int code)
{
    switch (code) {
#define MESSAGE(name, value, message) case PCB_##name: return message;
    PCB_STATUS_MAP(MESSAGE)
#undef MESSAGE
    default: return "unknown error";
    }
}

const char *pcb_status_name(int code)
{
    switch (code) {
#define NAME(name, value, message) case PCB_##name: return "PCB_" #name;
    PCB_STATUS_MAP(NAME)
#undef NAME
    default: return "PCB_?";
    }
}

const char *pcb_errmsg(void)
{
    return last_msg;
}

/* Formatted apart first: callers may pass pcb_errmsg() itself as an
 * argument, to prefix the last message ("file: <message>"). */
int pcb_fail(int code, const char *fmt, ...)
{
    char msg[sizeof last_msg];
    if (!fmt) {
        last_msg[0] = '\0';
        return code;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_msg, msg, sizeof msg);
    return code;
}
