/* TEMPORARY during parallel development: replaced by the real modules. */
#include "verify.h"
__attribute__((weak)) int pcb_verify_nn(const char *i, FILE *o) { (void)i; (void)o; return pcb_fail(PCB_EUNAVAIL, "pending"); }
__attribute__((weak)) int pcb_verify_emd(const char *i, FILE *o) { (void)i; (void)o; return pcb_fail(PCB_EUNAVAIL, "pending"); }
__attribute__((weak)) int pcb_bench_main(int c, char **v) { (void)c; (void)v; return 4; }
__attribute__((weak)) int pcb_nn_validate(const pcb_task *t, const pcb_result *r, int e, pcb_report *rep) { (void)t; (void)r; (void)e; (void)rep; return pcb_fail(PCB_EUNAVAIL, "pending"); }
__attribute__((weak)) int pcb_emd_validate(const pcb_task *t, const pcb_result *r, int e, pcb_report *rep) { (void)t; (void)r; (void)e; (void)rep; return pcb_fail(PCB_EUNAVAIL, "pending"); }
