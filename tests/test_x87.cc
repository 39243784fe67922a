// x87 FPU, FXSAVE/FXRSTOR and XSAVE family tests.
//
// Two kinds of test:
//  - explicit cases: instruction bytes (disassembly in comments), initial
//    state, expected state; the expected values were checked by running the
//    same bytes natively on the AMD Zen 4 host;
//  - host comparisons (64-bit mode): the same bytes run natively in this
//    process and in the simulator, each followed by FNSAVE [rbx+0xe00]; the
//    data area (results and the FNSAVE image) and the arithmetic flags must
//    match.  Fields that legitimately differ are skipped: FIP and FDP hold
//    addresses (the code and data live elsewhere natively) and FDS is the
//    host's DS selector.  Transcendental results are compared bit for bit
//    here because the oracle is the very CPU the simulator borrows them
//    from; on other hardware the last ulp may differ (see sim/x87.c).

#include <gtest/gtest.h>

#include "x87_util.h"

TEST(X87, InitialState)
{
    es_machine *m = est_new(ES_MODE_64);
    EXPECT_EQ(m->fpu.fcw, 0x37f);
    EXPECT_EQ(fsw(m), 0);
    EXPECT_EQ(m->fpu.ftw, 0xffff);
    es_machine_free(m);
}

TEST(X87, Fld1FldpiFaddp)
{
    // d9 e8  fld1 / d9 eb  fldpi / de c1  faddp st(1), st0 / dd 1b  fstp qword [rbx]
    SimOut s;
    sim_run(s, ES_MODE_64, {0xd9, 0xe8, 0xd9, 0xeb, 0xde, 0xc1, 0xdd, 0x1b}, {});
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(rd<double>(s, 0), 1.0 + M_PI);
    EXPECT_EQ(s.m->fpu.top, 0);
    EXPECT_EQ(s.m->fpu.ftw, 0xffff);
    // 1 + pi is inexact in 64 and in 53 bits, both times rounded down:
    // PE with C1 = 0 (host: FSW 0x0020)
    EXPECT_EQ(fsw(s.m), 0x0020);
    EXPECT_EQ(s.m->fpu.fop, 0x51b); // dd 1b
}

TEST(X87, StackOverflowMasked)
{
    // nine times d9 e8  fld1: the ninth overflows (host: FSW 0x3a41, FTW 0x8000)
    Bytes code;
    for (int i = 0; i < 9; i++)
        code.insert(code.end(), {0xd9, 0xe8});
    SimOut s;
    sim_run(s, ES_MODE_64, code, {});
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(fsw(s.m), 0x3a41); // TOP 7, C1 (overflow), SF, IE
    EXPECT_EQ(s.m->fpu.ftw, 0x8000);
    EXPECT_EQ(st_mant(s.m, 0), 0xc000000000000000ull); // QNaN indefinite
    EXPECT_EQ(st_se(s.m, 0), 0xffff);
    EXPECT_EQ(st_se(s.m, 1), 0x3fff);
}

TEST(X87, StackUnderflowMasked)
{
    // de c1  faddp st(1), st0 on an empty stack: IE+SF, C1 = 0, st(1) gets
    // the indefinite and the pop leaves it as st(0) (host: FSW 0x0841)
    SimOut s;
    sim_run(s, ES_MODE_64, {0xde, 0xc1}, {});
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(fsw(s.m), 0x0841);
    EXPECT_EQ(s.m->fpu.top, 1);
    EXPECT_EQ(st_mant(s.m, 0), 0xc000000000000000ull);
    EXPECT_EQ(st_se(s.m, 0), 0xffff);
    EXPECT_EQ(s.m->fpu.ftw, 0xfffb); // phys 1 special, the rest empty
}

TEST(X87, StoreFromEmptyWritesIndefinite)
{
    // d9 5b 08  fstp dword [rbx+8] / df 7b 10  fistp qword [rbx+16] /
    // df 73 20  fbstp tbyte [rbx+0x20], all on an empty stack
    SimOut s;
    sim_run(s, ES_MODE_64, {0xd9, 0x5b, 0x08, 0xdf, 0x7b, 0x10, 0xdf, 0x73, 0x20}, {});
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(rd<uint32_t>(s, 8), 0xffc00000u);
    EXPECT_EQ(rd<uint64_t>(s, 16), 0x8000000000000000ull);
    EXPECT_EQ(rd<uint64_t>(s, 0x20), 0xc000000000000000ull); // BCD indefinite
    EXPECT_EQ(rd<uint16_t>(s, 0x28), 0xffff);
    EXPECT_EQ(s.m->fpu.fsw & 0x7f, 0x41);
}

TEST(X87, RoundingControlOnStore)
{
    // d9 6b 10  fldcw [rbx+0x10] / d9 e8  fld1 / dc 33  fdiv qword [rbx]
    // (st0 = 1 / 3) / d9 5b 08  fstp dword [rbx+8]
    const Bytes code = {0xd9, 0x6b, 0x10, 0xd9, 0xe8, 0xdc, 0x33, 0xd9, 0x5b, 0x08};
    const uint16_t cws[4] = {0x037f, 0x077f, 0x0b7f, 0x0f7f};
    // 1/3 as float: nearest 0x3eaaaaab, down 0x3eaaaaaa, up 0x3eaaaaab, zero 0x3eaaaaaa
    const uint32_t want[4] = {0x3eaaaaab, 0x3eaaaaaa, 0x3eaaaaab, 0x3eaaaaaa};
    for (int i = 0; i < 4; i++) {
        Bytes d;
        put(d, 0, 3.0);
        put(d, 0x10, cws[i]);
        SimOut s;
        sim_run(s, ES_MODE_64, code, d);
        ASSERT_EQ(s.rc, 0);
        EXPECT_EQ(rd<uint32_t>(s, 8), want[i]) << "fcw " << std::hex << cws[i];
        EXPECT_EQ(s.m->fpu.fcw, cws[i]);
    }
}

TEST(X87, PrecisionControl)
{
    // d9 6b 10  fldcw [rbx+0x10] / d9 e8  fld1 / dc 33  fdiv qword [rbx]
    const Bytes code = {0xd9, 0x6b, 0x10, 0xd9, 0xe8, 0xdc, 0x33};
    const uint16_t cws[3] = {0x037f, 0x027f, 0x007f}; // PC 64, 53, 24 bits
    const uint64_t want[3] = {0xaaaaaaaaaaaaaaabull, 0xaaaaaaaaaaaaa800ull,
                              0xaaaaab0000000000ull};
    for (int i = 0; i < 3; i++) {
        Bytes d;
        put(d, 0, 3.0);
        put(d, 0x10, cws[i]);
        SimOut s;
        sim_run(s, ES_MODE_64, code, d);
        ASSERT_EQ(s.rc, 0);
        EXPECT_EQ(st_mant(s.m, 0), want[i]) << "fcw " << std::hex << cws[i];
        EXPECT_EQ(st_se(s.m, 0), 0x3ffd);
    }
}

TEST(X87, FcomiFlags)
{
    // dd 03  fld qword [rbx] / dd 43 08  fld qword [rbx+8] /
    // db f1  fcomi st0, st(1)   (st0 = b, st1 = a)
    const Bytes code = {0xdd, 0x03, 0xdd, 0x43, 0x08, 0xdb, 0xf1};
    struct {
        double a, b;
        uint64_t fl;
        uint16_t exc;
    } cases[] = {
        {2.0, 1.0, ES_CF, 0},                        // b < a
        {1.0, 2.0, 0, 0},                            // b > a
        {1.5, 1.5, ES_ZF, 0},                        // equal
        {NAN, 1.0, ES_ZF | ES_PF | ES_CF, 1}, // unordered: FCOMI signals on QNaN
    };
    for (auto &c : cases) {
        Bytes d;
        put(d, 0, c.a);
        put(d, 8, c.b);
        SimOut s;
        sim_run(s, ES_MODE_64, code, d, [](es_machine *m) { m->rflags |= ES_OF | ES_SF | ES_AF; });
        ASSERT_EQ(s.rc, 0);
        EXPECT_EQ(s.m->rflags & ES_ARITH_FLAGS, c.fl) << c.a << " vs " << c.b;
        EXPECT_EQ(s.m->fpu.fsw & 1, c.exc);
        EXPECT_EQ(s.m->fpu.top, 6); // no pop
    }
    // db e9  fucomi: a QNaN is not an invalid operation
    Bytes d;
    put(d, 0, (double)NAN);
    put(d, 8, 1.0);
    SimOut s;
    sim_run(s, ES_MODE_64, {0xdd, 0x03, 0xdd, 0x43, 0x08, 0xdb, 0xe9}, d);
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(s.m->rflags & ES_ARITH_FLAGS, ES_ZF | ES_PF | ES_CF);
    EXPECT_EQ(s.m->fpu.fsw & 1, 0);
    // df f1  fcomip: pops
    SimOut p;
    put(d, 0, 1.0);
    sim_run(p, ES_MODE_64, {0xdd, 0x03, 0xdd, 0x43, 0x08, 0xdf, 0xf1}, d);
    ASSERT_EQ(p.rc, 0);
    EXPECT_EQ(p.m->rflags & ES_ARITH_FLAGS, ES_ZF);
    EXPECT_EQ(p.m->fpu.top, 7);
}

TEST(X87, UnmaskedExceptionIsDeferredToNextWaitingInsn)
{
    // d9 6b 10  fldcw [rbx+0x10] (0x037b: ZE unmasked) / d9 e8  fld1 /
    // d9 ee  fldz / de f9  fdivp st(1), st0 / 9b  fwait
    const Bytes code = {0xd9, 0x6b, 0x10, 0xd9, 0xe8, 0xd9, 0xee, 0xde, 0xf9, 0x9b};
    Bytes d;
    put(d, 0x10, (uint16_t)0x037b);
    SimOut s;
    sim_run(s, ES_MODE_64, code, d);
    EXPECT_EQ(s.rc, ES_STOP_FAULT);
    EXPECT_EQ(s.m->fault.vector, ES_VEC_MF);
    EXPECT_EQ(s.m->rip, EST_CODE + 9); // at the FWAIT, the FDIVP retired
    EXPECT_EQ(fsw(s.m), 0xb084);       // B, TOP 6, ES, ZE
    EXPECT_EQ(st_se(s.m, 0), 0);       // no result stored, no pop: 0 / 1 still there
    EXPECT_EQ(st_se(s.m, 1), 0x3fff);
    // db e2  fnclex is not a waiting instruction and clears the condition
    SimOut c;
    Bytes code2 = code;
    code2.back() = 0xdb;
    code2.insert(code2.end(), {0xe2, 0x9b});
    sim_run(c, ES_MODE_64, code2, d);
    EXPECT_EQ(c.rc, 0);
    EXPECT_EQ(fsw(c.m), 0x3000);
}

TEST(X87, DeviceNotAvailable)
{
    // d9 e8  fld1 with CR0.TS: #NM, nothing changes
    SimOut s;
    sim_run(s, ES_MODE_64, {0xd9, 0xe8}, {}, [](es_machine *m) { m->cr0 |= 8; });
    EXPECT_EQ(s.rc, ES_STOP_FAULT);
    EXPECT_EQ(s.m->fault.vector, ES_VEC_NM);
    EXPECT_EQ(s.m->fpu.ftw, 0xffff);
    // 9b  fwait: only with CR0.MP and CR0.TS
    SimOut w;
    sim_run(w, ES_MODE_64, {0x9b}, {}, [](es_machine *m) { m->cr0 = (m->cr0 | 8) & ~2ull; });
    EXPECT_EQ(w.rc, 0);
    SimOut w2;
    sim_run(w2, ES_MODE_64, {0x9b}, {}, [](es_machine *m) { m->cr0 |= 8 | 2; });
    EXPECT_EQ(w2.m->fault.vector, ES_VEC_NM);
    // 0f ae 03  fxsave [rbx] with CR0.EM
    SimOut f;
    sim_run(f, ES_MODE_64, {0x0f, 0xae, 0x03}, {}, [](es_machine *m) { m->cr0 |= 4; });
    EXPECT_EQ(f.m->fault.vector, ES_VEC_NM);
}

TEST(X87, IntegerStores)
{
    // dd 03  fld qword [rbx] / db 53 10  fist dword [rbx+0x10] /
    // db 4b 14  fisttp dword [rbx+0x14]  -- then 1e20 overflows a dword:
    // dd 43 08  fld qword [rbx+8] / db 5b 18  fistp dword [rbx+0x18]
    const Bytes code = {0xdd, 0x03, 0xdb, 0x53, 0x10, 0xdb, 0x4b, 0x14,
                        0xdd, 0x43, 0x08, 0xdb, 0x5b, 0x18};
    Bytes d;
    put(d, 0, -2.5);
    put(d, 8, 1e20);
    SimOut s;
    sim_run(s, ES_MODE_64, code, d);
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(rd<int32_t>(s, 0x10), -2); // round to nearest even
    EXPECT_EQ(rd<int32_t>(s, 0x14), -2); // truncation
    EXPECT_EQ(rd<uint32_t>(s, 0x18), 0x80000000u);
    EXPECT_EQ(s.m->fpu.fsw & 0x3f, 0x21);
    EXPECT_EQ(s.m->fpu.ftw, 0xffff);
}

TEST(X87, FnstenvLayout64)
{
    // d9 e8  fld1 / dd 53 08  fst qword [rbx+8] / d9 33  fnstenv [rbx]
    SimOut s;
    sim_run(s, ES_MODE_64, {0xd9, 0xe8, 0xdd, 0x53, 0x08, 0xd9, 0x33}, {});
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(rd<uint32_t>(s, 0), 0xffff037fu);
    EXPECT_EQ(rd<uint32_t>(s, 4), 0xffff3800u);
    EXPECT_EQ(rd<uint32_t>(s, 8), 0xffff3fffu);              // phys 7 valid
    EXPECT_EQ(rd<uint32_t>(s, 12), (uint32_t)EST_CODE + 2); // FIP: the FST
    // Intel (the default vendor): FOP and FDP only from an instruction that
    // incurred an unmasked exception (none here), FCS and FDS deprecated
    // (SDM Vol. 1, 8.1.8-8.1.9); X87.IntelPointersFollowTheLastUnmaskedException
    EXPECT_EQ(rd<uint32_t>(s, 16), 0x00000000u);            // FOP, FCS
    EXPECT_EQ(rd<uint32_t>(s, 20), 0u);                     // FDP
    EXPECT_EQ(rd<uint32_t>(s, 24), 0xffff0000u);            // FDS
    EXPECT_EQ(s.m->fpu.fcw, 0x037f);                        // all already masked
}

TEST(X87, IntelPointersFollowTheLastUnmaskedException)
{
    // d9 6b 40  fldcw [rbx+0x40] (0x37b: ZE unmasked) / d9 e8  fld1 /
    // d8 73 08  fdiv dword [rbx+8] (by 0: unmasked ZE, pending) /
    // db e2  fnclex / d9 43 0c  fld dword [rbx+0xc] / d9 33  fnstenv [rbx]
    const Bytes code = {0xd9, 0x6b, 0x40, 0xd9, 0xe8, 0xd8, 0x73, 0x08, 0xdb, 0xe2,
                        0xd9, 0x43, 0x0c, 0xd9, 0x33};
    Bytes d;
    put(d, 8, 0.0f);
    put(d, 0xc, 2.0f);
    put(d, 0x40, (uint16_t)0x37b);
    // Intel: FOP and FDP stay those of the FDIV that incurred the unmasked
    // exception; FIP is the last instruction's; FCS/FDS are stored as 0
    SimOut in;
    sim_run(in, ES_MODE_64, code, d, [](es_machine *m) { m->vendor = 0; });
    ASSERT_EQ(in.rc, 0);
    EXPECT_EQ(rd<uint32_t>(in, 12), (uint32_t)EST_CODE + 10); // FIP: the FLD
    EXPECT_EQ(rd<uint32_t>(in, 16), 0x00730000u);             // FOP d8 73, FCS 0
    EXPECT_EQ(rd<uint32_t>(in, 20), (uint32_t)EST_DATA + 8);  // FDP: the divisor
    EXPECT_EQ(rd<uint32_t>(in, 24), 0xffff0000u);             // FDS 0
    // AMD: the last non-control instruction's, selectors included
    SimOut am;
    sim_run(am, ES_MODE_64, code, d, [](es_machine *m) { m->vendor = 1; });
    ASSERT_EQ(am.rc, 0);
    EXPECT_EQ(rd<uint32_t>(am, 12), (uint32_t)EST_CODE + 10);
    EXPECT_EQ(rd<uint32_t>(am, 16), 0x01430033u);             // FOP d9 43, FCS 0x33
    EXPECT_EQ(rd<uint32_t>(am, 20), (uint32_t)EST_DATA + 0xc);
    EXPECT_EQ(rd<uint32_t>(am, 24), 0xffff002bu);
}

TEST(X87, ThirtyTwoBitFloatFunction)
{
    // i386 code returning a float in st(0), as a cdecl callee does:
    // d9 03  fld dword [ebx] / d8 4b 04  fmul dword [ebx+4] /
    // db 43 08  fild dword [ebx+8] / de c1  faddp st(1), st0 /
    // dd 5b 10  fstp qword [ebx+0x10] / d9 73 20  fnstenv [ebx+0x20]
    Bytes d;
    put(d, 0, 1.5f);
    put(d, 4, 4.0f);
    put(d, 8, (int32_t)-10);
    SimOut s;
    sim_run(s, ES_MODE_32,
            {0xd9, 0x03, 0xd8, 0x4b, 0x04, 0xdb, 0x43, 0x08, 0xde, 0xc1, 0xdd, 0x5b, 0x10, 0xd9,
             0x73, 0x20},
            d);
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(rd<double>(s, 0x10), -4.0);
    EXPECT_EQ(rd<uint32_t>(s, 0x20 + 12), (uint32_t)EST_CODE + 10);  // FIP = EIP
    // Intel: no unmasked exception, so FOP/FDP are 0; FCS deprecated
    EXPECT_EQ(rd<uint32_t>(s, 0x20 + 16), 0u); // FOP, FCS
    EXPECT_EQ(rd<uint32_t>(s, 0x20 + 20), 0u); // FDP
}

TEST(X87, FnsaveFrstorRoundTrip32)
{
    // d9 eb  fldpi / d9 e8  fld1 / dd 33  fnsave [ebx] / dd 23  frstor [ebx] /
    // de f9  fdivp st(1), st0 / dd 5b 70  fstp qword [ebx+0x70]
    SimOut s;
    sim_run(s, ES_MODE_32, {0xd9, 0xeb, 0xd9, 0xe8, 0xdd, 0x33, 0xdd, 0x23, 0xde, 0xf9, 0xdd,
                            0x5b, 0x70},
            {});
    ASSERT_EQ(s.rc, 0);
    EXPECT_EQ(rd<double>(s, 0x70), M_PI);
    EXPECT_EQ(rd<uint32_t>(s, 0), 0xffff037fu);
    EXPECT_EQ(rd<uint32_t>(s, 8), 0xffff0fffu); // two valid registers in the image
    EXPECT_EQ(s.m->fpu.ftw, 0xffff);
}

TEST(X87, FaultsArePrecise)
{
    // d9 e8 fld1 / dd 1b fstp qword [rbx] with RBX unmapped: #PF, the stack
    // keeps its value, FOP/FIP still describe the FLD1
    SimOut s;
    sim_run(s, ES_MODE_64, {0xd9, 0xe8, 0xdd, 0x1b}, {},
            [](es_machine *m) { m->gpr[ES_RBX] = 0x10000000; });
    EXPECT_EQ(s.rc, ES_STOP_FAULT);
    EXPECT_EQ(s.m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(s.m->fpu.top, 7);
    EXPECT_EQ(s.m->fpu.ftw, 0x3fff);
    EXPECT_EQ(s.m->fpu.fop, 0x1e8);
    // 48 0f ae 03 fxsave64 [rbx] into the read-only code page: #PF, no change
    SimOut f;
    sim_run(f, ES_MODE_64, {0xd9, 0xe8, 0x48, 0x0f, 0xae, 0x03}, {},
            [](es_machine *m) { m->gpr[ES_RBX] = EST_CODE + 0x1000; });
    EXPECT_EQ(f.m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(f.m->fpu.top, 7);
    // d9 e8 fld1 / dd 23 frstor [rbx] from an unmapped page: #PF, no change
    SimOut r;
    sim_run(r, ES_MODE_64, {0xd9, 0xe8, 0xdd, 0x23}, {},
            [](es_machine *m) { m->gpr[ES_RBX] = 0x10000000; });
    EXPECT_EQ(r.m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(r.m->fpu.ftw, 0x3fff);
    EXPECT_EQ(r.m->fpu.fcw, 0x37f);
}

TEST(X87, FinitWaitsForPendingException)
{
    // d9 6b 10 fldcw [rbx+0x10] (0x037e) / d9 e8 fld1 / d9 e0 fchs / d9 fa fsqrt (IE
    // pending) / 9b db e3 finit: the FWAIT half reports #MF; fnsave (non-waiting) does not
    Bytes d;
    put(d, 0x10, (uint16_t)0x37e);
    SimOut s;
    sim_run(s, ES_MODE_64, {0xd9, 0x6b, 0x10, 0xd9, 0xe8, 0xd9, 0xe0, 0xd9, 0xfa, 0x9b, 0xdb,
                            0xe3},
            d);
    EXPECT_EQ(s.m->fault.vector, ES_VEC_MF);
    EXPECT_EQ(s.m->rip, EST_CODE + 9);
    EXPECT_EQ(st_se(s.m, 0), 0xbfff); // -1 still there: no result for an unmasked IE
    SimOut n;
    sim_run(n, ES_MODE_64, {0xd9, 0x6b, 0x10, 0xd9, 0xe8, 0xd9, 0xe0, 0xd9, 0xfa, 0xdd, 0x73,
                            0x20, 0xdb, 0xe3},
            d); // dd 73 20 fnsave [rbx+0x20] / db e3 fninit
    EXPECT_EQ(n.rc, 0);
    EXPECT_EQ(rd<uint16_t>(n, 0x24), 0xb881); // B, TOP 7, ES, IE
    EXPECT_EQ(fsw(n.m), 0);
}
