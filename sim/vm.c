/* vm.c - placeholder until the address-space implementation lands. */
#include "vm.h"

int es_vm_map(es_machine *m, uint64_t va, uint64_t len, int prot) { (void)m; (void)va; (void)len; (void)prot; return -12; }
int es_vm_unmap(es_machine *m, uint64_t va, uint64_t len) { (void)m; (void)va; (void)len; return -12; }
int es_vm_protect(es_machine *m, uint64_t va, uint64_t len, int prot) { (void)m; (void)va; (void)len; (void)prot; return -12; }
uint64_t es_vm_find_free(es_machine *m, uint64_t len, uint64_t hint) { (void)m; (void)len; (void)hint; return 0; }
int es_vm_prot_at(es_machine *m, uint64_t va) { (void)m; (void)va; return -1; }
bool es_vm_range_ok(es_machine *m, uint64_t va, uint64_t len, int prot) { (void)m; (void)va; (void)len; (void)prot; return false; }
int es_vm_fault(es_machine *m, uint64_t va, int access) { (void)m; (void)va; (void)access; return -1; }
void es_vm_set_layout(es_machine *m, uint64_t top, uint64_t mmap_base) { (void)m; (void)top; (void)mmap_base; }
void es_vm_free(es_machine *m) { (void)m; }
