// taint_fixture.h - the machine-with-taint fixture of the taint tests
// (test_taint.cc, test_taint_vec.cc): a 64-bit machine with the given
// registers, taint attached, every user GPR labelled with itself (rax with
// `nr`); run() executes code, reg/lo/hi read a GPR's or a vector register
// lane's labels.
#ifndef ENTRYSIM_TAINT_FIXTURE_H
#define ENTRYSIM_TAINT_FIXTURE_H

#include "ctl_util.h"

#include "taint.h"

struct TaintRun {
    ctl::M m{ES_MODE_64};
    es_taint *t = es_taint_new();
    explicit TaintRun(std::vector<ctl::Reg> regs = {})
    {
        for (auto &r : regs)
            m->gpr[r.r] = r.v;
        EXPECT_EQ(es_taint_attach(m.m, t), 0);
        es_taint_label_user_regs(t, m.m, 0);
    }
    ~TaintRun() { es_taint_free(t); }
    TaintRun(const TaintRun &) = delete;
    TaintRun &operator=(const TaintRun &) = delete;
    void run(const std::vector<uint8_t> &code) { ASSERT_EQ(m.run(code), 0) << m->message; }
    es_label reg(int r) { return es_taint_reg(t, r); }
    es_label lo(int x) { return es_taint_vreg(t, x, 0); }
    es_label hi(int x) { return es_taint_vreg(t, x, 1); }
};

#endif
