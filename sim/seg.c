/* seg.c - segment-register loads (see seg.h).
 *
 * Descriptors come from m->gdt[] (Linux's layout) until LGDT gives the
 * guest kernel its own table in guest memory.  A selector with TI = 1
 * names an entry of the process's LDT (m->ldt, set by modify_ldt in
 * sim/host/ldt.c); Linux gives a process none until it asks.
 */
#include "seg.h"

#include "fault.h"
#include "mem.h"
#include "ops.h"

#define NGDT ((int)(sizeof ((es_machine *)0)->gdt / sizeof(uint64_t)))

int es_desc_read(es_machine *m, uint16_t sel, uint64_t *desc)
{
    unsigned idx = sel >> 3;
    if (sel & 4) { /* the LDT: beyond its limit, #GP(sel) as for the GDT */
        if (!m->ldt || idx >= m->ldt_n)
            return -1;
        *desc = m->ldt[idx];
        return 0;
    }
    if (m->gdtr.limit) {
        /* the guest kernel's own GDT (after LGDT): an implicit supervisor
         * read, whatever the CPL */
        if (idx * 8 + 7 > m->gdtr.limit)
            return -1;
        return es_copy_from_guest(m, desc, m->gdtr.base + idx * 8, 8) ? -1 : 0;
    }
    if (idx >= NGDT)
        return -1;
    *desc = m->gdt[idx];
    return 0;
}

void es_desc_unpack(uint64_t desc, uint16_t sel, es_segreg *out)
{
    uint32_t limit = (uint32_t)((desc & 0xffff) | ((desc >> 32) & 0xf0000));
    uint16_t attr = (uint16_t)(((desc >> 40) & 0xff) | (((desc >> 52) & 0xf) << 8));
    if (attr & 0x800) /* G: limit in 4 KiB units */
        limit = (limit << 12) | 0xfff;
    out->sel = sel;
    out->attr = attr;
    out->limit = limit;
    out->base = ((desc >> 16) & 0xffffff) | (((desc >> 56) & 0xff) << 24);
}

static unsigned desc_access(uint64_t desc)
{
    return (unsigned)(desc >> 40) & 0xff;
}

static unsigned desc_dpl(uint64_t desc)
{
    return (desc_access(desc) >> 5) & 3;
}

/* Sets the accessed bit as the CPU does on a descriptor load. */
static void mark_accessed(es_machine *m, uint16_t sel)
{
    if (sel & 4) { /* Linux writes LDT entries with A set already (fill_ldt) */
        if (m->ldt && (sel >> 3) < m->ldt_n)
            m->ldt[sel >> 3] |= (uint64_t)ES_DESC_A << 40;
        return;
    }
    if (m->gdtr.limit) {
        uint8_t acc;
        uint64_t a = m->gdtr.base + (sel >> 3) * 8 + 5;
        if (es_copy_from_guest(m, &acc, a, 1) == 0 && !(acc & ES_DESC_A)) {
            acc |= ES_DESC_A;
            es_copy_to_guest(m, a, &acc, 1);
        }
        return;
    }
    m->gdt[sel >> 3] |= (uint64_t)ES_DESC_A << 40;
}

int es_check_data_seg(es_machine *m, int seg, uint16_t sel, int cpl, es_segreg *out)
{
    unsigned rpl = sel & 3;
    es_segreg r = {0};
    uint64_t desc;

    if ((sel & ~3u) == 0) {
        /* Null selector (SDM MOV: "If DS, ES, FS, or GS is loaded with a
         * null selector... the segment register is marked invalid").  For
         * SS it faults, except at CPL 0-2 in 64-bit mode with RPL = CPL. */
        if (seg == ES_SEG_SS && !(m->mode == ES_MODE_64 && cpl != 3 && rpl == (unsigned)cpl))
            return es_fail_fault(m, ES_VEC_GP, 0);
        /* Nulling FS/GS clears the base: Intel does, and so do Zen 3 and
         * later (CPUID 8000_0021h EAX[6] NullSelectorClearsBase). */
        r.sel = sel;
        *out = r;
        return 0;
    }
    if (es_desc_read(m, sel, &desc))
        return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
    unsigned acc = desc_access(desc), dpl = desc_dpl(desc);
    if (!(acc & ES_DESC_S))
        return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
    if (seg == ES_SEG_SS) {
        /* writable data, RPL = CPL = DPL (SDM MOV, "IF SS is loaded") */
        if (rpl != (unsigned)cpl || (acc & ES_DESC_CODE) || !(acc & ES_DESC_RW) ||
            dpl != (unsigned)cpl)
            return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
        if (!(acc & ES_DESC_P))
            return es_fail_fault(m, ES_VEC_SS, sel & 0xfffc);
    } else {
        /* data or readable code; for data and non-conforming code both RPL
         * and CPL must be <= DPL */
        if ((acc & ES_DESC_CODE) && !(acc & ES_DESC_RW))
            return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
        int conforming = (acc & (ES_DESC_CODE | ES_DESC_C)) == (ES_DESC_CODE | ES_DESC_C);
        if (!conforming && (rpl > dpl || (unsigned)cpl > dpl))
            return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
        if (!(acc & ES_DESC_P))
            return es_fail_fault(m, ES_VEC_NP, sel & 0xfffc);
    }
    es_desc_unpack(desc, sel, &r);
    *out = r;
    return 0;
}

int es_load_data_seg(es_machine *m, int seg, uint16_t sel)
{
    es_segreg r;
    if (es_check_data_seg(m, seg, sel, m->cpl, &r))
        return -1;
    if ((sel & ~3u) != 0) {
        mark_accessed(m, sel);
        r.attr |= ES_DESC_A;
    }
    /* 64-bit mode ignores the bases of ES/SS/DS; es_lin relies on them
     * being zero (FS/GS keep the descriptor's 32-bit base, SDM 3.4.4). */
    if (m->mode == ES_MODE_64 && seg != ES_SEG_FS && seg != ES_SEG_GS)
        r.base = 0;
    m->seg[seg] = r;
    return 0;
}

int es_check_far_cs(es_machine *m, uint16_t sel, int *mode)
{
    return es_check_ret_cs(m, sel, m->cpl, mode);
}

int es_check_ret_cs(es_machine *m, uint16_t sel, int cpl_, int *mode)
{
    uint64_t desc;
    unsigned rpl = sel & 3, cpl = (unsigned)cpl_;

    if ((sel & ~3u) == 0)
        return es_fail_fault(m, ES_VEC_GP, 0);
    if (es_desc_read(m, sel, &desc))
        return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
    unsigned acc = desc_access(desc), dpl = desc_dpl(desc);
    /* system descriptors (call gates, TSS) are not modelled: #GP as for a
     * descriptor that is not a code segment */
    if ((acc & (ES_DESC_S | ES_DESC_CODE)) != (ES_DESC_S | ES_DESC_CODE))
        return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
    if (acc & ES_DESC_C) {
        if (dpl > cpl)
            return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
    } else if (rpl > cpl || dpl != cpl) {
        return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
    }
    if (!(acc & ES_DESC_P))
        return es_fail_fault(m, ES_VEC_NP, sel & 0xfffc);
    unsigned fl = (unsigned)(desc >> 52) & 0xf; /* AVL, L, D, G */
    if (fl & 2) {
        if (fl & 4) /* L and D both set is reserved (SDM 3.4.5) */
            return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
        *mode = ES_MODE_64;
    } else if (fl & 4) {
        *mode = ES_MODE_32;
    } else {
        /* 16-bit code segments are not modelled */
        return es_fail_fault(m, ES_VEC_GP, sel & 0xfffc);
    }
    return 0;
}

void es_commit_cs(es_machine *m, uint16_t sel, int mode)
{
    es_commit_cs_cpl(m, sel, m->cpl, mode);
}

void es_commit_cs_cpl(es_machine *m, uint16_t sel, int cpl, int mode)
{
    es_segreg cs;
    uint64_t desc = 0;
    es_desc_read(m, sel, &desc); /* checked by es_check_far_cs/es_check_ret_cs */
    mark_accessed(m, sel);
    es_desc_unpack(desc | ((uint64_t)ES_DESC_A << 40), (uint16_t)((sel & ~3u) | (unsigned)cpl),
                   &cs);
    cs.base = 0; /* ignored in 64-bit mode; Linux's 32-bit CS is flat */
    m->seg[ES_SEG_CS] = cs;
    if (mode == m->mode && cpl == m->cpl)
        return;
    es_switch_mode(m, cpl, mode);
}

void es_switch_mode(es_machine *m, int cpl, int mode)
{
    /* The hidden bases of ES/SS/DS matter again in compatibility mode. */
    static const int data_segs[] = {ES_SEG_ES, ES_SEG_SS, ES_SEG_DS};
    for (int i = 0; i < 3 && mode != m->mode; i++) {
        es_segreg *s = &m->seg[data_segs[i]];
        uint64_t desc;
        if (mode == ES_MODE_64 || (s->sel & ~3u) == 0 || es_desc_read(m, s->sel, &desc))
            s->base = 0;
        else
            s->base = ((desc >> 16) & 0xffffff) | (((desc >> 56) & 0xff) << 24);
    }
    es_set_mode(m, cpl, mode);
}

int es_desc_set_access(es_machine *m, uint16_t sel, uint8_t acc)
{
    if (m->gdtr.limit) {
        if ((sel >> 3) * 8 + 7 > m->gdtr.limit)
            return -1;
        return es_copy_to_guest(m, m->gdtr.base + (sel >> 3) * 8 + 5, &acc, 1) ? -1 : 0;
    }
    if ((sel >> 3) >= NGDT)
        return -1;
    m->gdt[sel >> 3] = (m->gdt[sel >> 3] & ~(0xffull << 40)) | ((uint64_t)acc << 40);
    return 0;
}

void es_set_mode(es_machine *m, int cpl, int mode)
{
    int changed = m->cpl != cpl || m->mode != mode;
    m->cpl = (uint8_t)cpl;
    m->mode = (uint8_t)mode;
    m->need_u = cpl == 3 ? ES_TP_U : 0;
    m->ipmask = mode == ES_MODE_64 ? ~0ull : 0xffffffffull;
    m->fetch_va = 1;
    es_update_ac(m);
    if (changed)
        for (int i = 0; i < m->nobs; i++)
            if (m->obs[i].mode_change)
                m->obs[i].mode_change(m->obs[i].ctx, m, cpl, mode);
}
