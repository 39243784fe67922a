// vm_fixture.h - the bare machine the address-space suites share
// (tests/test_vm.cc, tests/test_vm_fork.cc).
#ifndef ENTRYSIM_TEST_VM_FIXTURE_H
#define ENTRYSIM_TEST_VM_FIXTURE_H

#include <gtest/gtest.h>

#include "machine.h"
#include "mem.h"
#include "seg.h"

namespace {

// A 64 MiB machine at CPL 3 with an empty PML4, no process.
struct VmBase : ::testing::Test {
    es_machine *m = nullptr;
    void SetUp() override { make(64ull << 20); }
    void make(uint64_t cap)
    {
        if (m)
            es_machine_free(m);
        m = es_machine_new(cap);
        ASSERT_NE(m, nullptr);
        m->cr3 = es_new_pml4(m);
        ASSERT_NE(m->cr3, 0u);
        es_set_mode(m, 3, ES_MODE_64);
    }
    void TearDown() override { es_machine_free(m); }

    // Reads 8 bytes as the user program would; returns -1 on fault.
    int rd(uint64_t va, uint64_t *v) { return es_read(m, va, v, 8); }
    int wr(uint64_t va, uint64_t v) { return es_write(m, va, &v, 8); }
};

} // namespace

#endif
