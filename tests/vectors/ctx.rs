// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Context images and doorbell words against what the C driver produced:
//! the expected words are copied from the hns-sim trace of the unmodified
//! C driver (`ctx` lines of a probe on the default caps); the inputs are the
//! addresses and numbers read off those same words by hand.

use super::{expect, Check};
use crate::hns_roce_hw_v2::ctx::*;
use crate::hw_rev::HwRev;

/// CEQ 0 and the AEQ (EQ 1) of the C driver on HIP09: 1024 64-byte EQEs,
/// hop 1, 4 KiB pages.
pub fn check_eq_contexts() -> Check {
    let ceq = EqcParams {
        eqn: 0,
        hop: 1,
        ba_pg_shift: 12,
        buf_pg_shift: 12,
        entries: 1024,
        eqe_size: 64,
        bt_ba: 0x45f_3000,
        cur: 0x45e_3000,
        next: 0x45e_4000,
    };
    let want: [u32; 16] = [
        0x000000c5, 0, 0, 0, 0x008be600, 0, 0x45e3000a, 0, 0, 0x000045e4, 0x00100000, 0, 0, 0, 0, 0,
    ];
    expect(
        eq_context(&ceq).as_le_words().map(u32::from_le) == want,
        "CEQC words",
    )?;
    let aeq = EqcParams {
        eqn: 1,
        bt_ba: 0x460_5000,
        cur: 0x45f_5000,
        next: 0x45f_6000,
        ..ceq
    };
    let want: [u32; 16] = [
        0x000001c5, 0, 0, 0, 0x008c0a00, 0, 0x45f5000a, 0, 0, 0x000045f6, 0x00100000, 0, 0, 0, 0, 0,
    ];
    expect(
        eq_context(&aeq).as_le_words().map(u32::from_le) == want,
        "AEQC words",
    )?;
    // High address bits land in the _M/_H fields, not in the low ones.
    let high = EqcParams {
        cur: 0x1234_5678_9000,
        ..ceq
    };
    let c = eq_context(&high);
    expect(
        c.read(crate::hns_roce_hw_v2::fields::eqc::CUR_EQE_BA_L) == 0x6789,
        "CUR_EQE_BA_L",
    )?;
    expect(
        c.read(crate::hns_roce_hw_v2::fields::eqc::CUR_EQE_BA_M) == 0x1_2345,
        "CUR_EQE_BA_M",
    )
}

/// ib_mad's CQ 0 on the C driver: 1024 64-byte CQEs, hop 2, record doorbell.
pub fn check_cq_context() -> Check {
    let p = CqcParams {
        cqn: 0,
        ceqn: 0,
        depth: 1024,
        cqe_size: 64,
        stash: false,
        hop: 2,
        ba_pg_shift: 12,
        buf_pg_shift: 12,
        bt_ba: 0x46c_f000,
        cur: 0x46b_e000,
        next: 0x46b_f000,
        db: Some(0x46d_0000),
    };
    let want: [u32; 16] = [
        0x00000a01, 0x08000000, 0x000046be, 0x80000000, 0x000046bf, 0, 0, 0, 0x008d9e00, 0,
        0x046d0001, 0, 0, 0, 0, 0,
    ];
    expect(
        cq_context(&p).as_le_words().map(u32::from_le) == want,
        "CQC words",
    )?;
    let nodb = cq_context(&CqcParams { db: None, ..p });
    expect(nodb.word(10) == 0, "no record doorbell: word 10 empty")
}

/// CQ moderation (`ibv_modify_cq` through the uverbs extended command, in
/// tests/guest/user-objects.py) on the C driver: the CQC of CQ 4 as
/// CREATE_CQC wrote it, and as hns-sim holds it after each MODIFY_CQC
/// (16 CQEs / 10 us, then 0xffff / 0xffff). Our context and mask, merged
/// as the engine merges them, must give the same words; HIP08 counts the
/// period in its clock and caps it at 65 us.
pub fn check_cq_moderation() -> Check {
    let created: [u32; 16] = [
        0x00000601, 0x00000004, 0x00004bd1, 0x80000000, 0, 0, 0, 0, 0x0097ea00, 0, 0x04bf9001, 0,
        0, 0, 0, 0,
    ];
    let merge = |count, period, rev| {
        let (c, m, capped) = cq_moderation(count, period, rev);
        let c = c.as_le_words().map(u32::from_le);
        let m = m.as_le_words().map(u32::from_le);
        let mut out = [0u32; 16];
        for (i, o) in out.iter_mut().enumerate() {
            *o = (created[i] & m[i]) | (c[i] & !m[i]);
        }
        (out, capped)
    };
    let mut want = created;
    want[13] = 0x000a_0010;
    expect(
        merge(16, 10, HwRev::HIP09) == (want, false),
        "16 CQEs / 10 us",
    )?;
    want[13] = 0xffff_ffff;
    expect(
        merge(0xffff, 0xffff, HwRev::HIP09) == (want, false),
        "0xffff / 0xffff",
    )?;
    // HIP08: 10 us is 10000 clocks; 0xffff us is over the limit, so 65 us.
    want[13] = (10_000 << 16) | 16;
    expect(merge(16, 10, HwRev::HIP08) == (want, false), "HIP08 10 us")?;
    want[13] = (65_000 << 16) | 0xffff;
    expect(
        merge(0xffff, 0xffff, HwRev::HIP08) == (want, true),
        "HIP08 capped",
    )
}

/// ib_mad's DMA MR on the C driver: PD 0, local write, MPT 1.
pub fn check_dma_mr_mpt() -> Check {
    let access = MrAccess {
        local_write: true,
        ..MrAccess::default()
    };
    let want: [u32; 16] = [1, 0x80, 2, 0, 0, 0, 0x100, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let key = index_to_key(1);
    expect(key == 0x100, "key of MPT 1")?;
    expect(key_to_index(key) == 1, "key round trip")?;
    expect(
        key_to_index(index_to_key(0x1234_5678)) == 0x1234_5678,
        "key round trip, high bits",
    )?;
    expect(
        dma_mr_mpt(0, access, key).as_le_words().map(u32::from_le) == want,
        "MPT words",
    )
}

/// A fast-register MR of nvme-rdma (257 pages, PD 1) on the C driver:
/// the CREATE_MPT words of the hns-sim trace of `tests/guest/ulp-plan.sh`:
/// a FREE entry with remote access and invalidation, fast
/// registration and a one-hop page list in 16 KiB BT pages at bus address
/// 0x0884_d000 (the trace's PBL_BA 0x01109a00 in 8-byte units).
pub fn check_frmr_mpt() -> Check {
    let want: [u32; 16] = [
        0x126,
        0x3,
        0x21,
        0,
        0,
        0,
        0,
        0,
        0,
        0x101,
        0x0110_9a00,
        0,
        0,
        0,
        0,
        0,
    ];
    let c = frmr_mpt(&FrmrMptParams {
        pdn: 1,
        pbl_ba: 0x0110_9a00 << 3,
        npages: 257,
        ba_pg_shift: 14,
        buf_pg_shift: 12,
    });
    expect(c.as_le_words().map(u32::from_le) == want, "FRMR MPT words")
}

/// User MRs of 4 KiB (one page: direct, hop 0), 2 MiB (512 pages, hop 1)
/// and 64 MiB (16384 pages, hop 2) on PD 1, local write + remote read and
/// write, against the C driver's CREATE_MPT words (hns-sim trace of
/// tests/guest/user-objects.py). Inputs read off those words:
/// PBL_BA in 8-byte units, PA0/PA1 in 64-byte units.
pub fn check_user_mr_mpt() -> Check {
    let access = MrAccess {
        local_write: true,
        remote_write: true,
        remote_read: true,
        ..MrAccess::default()
    };
    let cases: [(UserMptParams, [u32; 16], &str); 3] = [
        (
            UserMptParams {
                pdn: 1,
                access,
                key: 0x200,
                iova: 0x3768_f000,
                size: 0x1000,
                hop: 0,
                ba_pg_shift: 12,
                pbl: MptPbl {
                    npages: 1,
                    pbl_ba: 0x0ffa_c200 << 3,
                    pages: [0x01ff_5840 << 6, 0],
                    buf_pg_shift: 12,
                },
            },
            [
                0x101,
                0xe0,
                0x80,
                0,
                0x1000,
                0,
                0x200,
                0x3768_f000,
                0,
                1,
                0x0ffa_c200,
                0,
                0x01ff_5840,
                0,
                0,
                0,
            ],
            "4 KiB MR",
        ),
        (
            UserMptParams {
                pdn: 1,
                access,
                key: 0x300,
                iova: 0x7f63_af29_8000,
                size: 0x20_0000,
                hop: 1,
                ba_pg_shift: 14,
                pbl: MptPbl {
                    npages: 0x200,
                    pbl_ba: 0x0118_b000 << 3,
                    pages: [0x01fd_cfc0 << 6, 0x01fd_cf80 << 6],
                    buf_pg_shift: 12,
                },
            },
            [
                0x125,
                0xe0,
                0x80,
                0,
                0x20_0000,
                0,
                0x300,
                0xaf29_8000,
                0x7f63,
                0x200,
                0x0118_b000,
                0,
                0x01fd_cfc0,
                0,
                0x01fd_cf80,
                0,
            ],
            "2 MiB MR",
        ),
        (
            UserMptParams {
                pdn: 1,
                access,
                key: 0x400,
                iova: 0x7f63_ab29_6000,
                size: 0x400_0000,
                hop: 2,
                ba_pg_shift: 14,
                pbl: MptPbl {
                    npages: 0x4000,
                    pbl_ba: 0x0119_3a00 << 3,
                    pages: [0x01fd_4f80 << 6, 0x01fd_4f40 << 6],
                    buf_pg_shift: 12,
                },
            },
            [
                0x129,
                0xe0,
                0x80,
                0,
                0x400_0000,
                0,
                0x400,
                0xab29_6000,
                0x7f63,
                0x4000,
                0x0119_3a00,
                0,
                0x01fd_4f80,
                0,
                0x01fd_4f40,
                0,
            ],
            "64 MiB MR",
        ),
    ];
    for (p, want, what) in cases {
        expect(
            user_mr_mpt(&p).as_le_words().map(u32::from_le) == want,
            what,
        )?;
    }
    Ok(())
}

/// The words of a C `ctx MPT` trace line.
fn mpt(words: [u32; 16]) -> crate::field::Ctx<crate::hns_roce_hw_v2::fields::Mpt, 16> {
    crate::field::Ctx::from_le_words(words.map(u32::to_le))
}

/// Re-registration with a new translation (`hns_roce_v2_rereg_write_mtpt`
/// on the queried entry), against the C driver's CREATE_MPT words after
/// `ibv_rereg_mr(CHANGE_TRANSLATION)` (docs/c-driver-findings.md, finding
/// 1: both traces). Everything `set_mtpt_pbl` writes must equal C's; the
/// hop number and BT page size are the new page list's (hop 1, 16 KiB),
/// where C left the old MR's (hop 0, 4 KiB): word 0 differs by exactly
/// those two fields.
pub fn check_rereg_mpt_writes_the_new_hop() -> Check {
    // test_mr_rereg_addr: 1 KiB at VA 0x34562cc0 over two pages.
    let c = [
        0x0000_0401,
        0x80,
        0x80,
        0,
        0x400,
        0,
        0x300,
        0x3456_2cc0,
        0,
        2,
        0x0112_9200,
        0,
        0x01ff_25c0,
        0,
        0x01ff_2200,
        0,
    ];
    let p = UserMptParams {
        pdn: 4,
        access: MrAccess {
            local_write: true,
            ..MrAccess::default()
        },
        key: 0x300,
        iova: 0x3456_2cc0,
        size: 0x400,
        hop: 1,
        ba_pg_shift: 14,
        pbl: MptPbl {
            npages: 2,
            pbl_ba: 0x0112_9200 << 3,
            pages: [0x7fc9_7000, 0x7fc8_8000],
            buf_pg_shift: 12,
        },
    };
    let trans = Rereg {
        trans: true,
        access: false,
    };
    let mut want = c;
    want[0] = 0x401 | (1 << 2) | (2 << 4);
    expect(
        rereg_mpt(&mpt(c), trans, &p)
            .as_le_words()
            .map(u32::from_le)
            == want,
        "2 pages: C's words, new hop 1 and 16 KiB BT pages",
    )?;
    // rereg_hop.py: one page re-registered to three (12 KiB at
    // 0x247aa000).
    let c = [
        0x0000_0101,
        0xc0,
        0x80,
        0,
        0x3000,
        0,
        0x200,
        0x247a_a000,
        0,
        3,
        0x0118_b000,
        0,
        0x01ff_44c0,
        0,
        0x01ff_4500,
        0,
    ];
    let p = UserMptParams {
        pdn: 1,
        access: MrAccess {
            local_write: true,
            remote_write: true,
            ..MrAccess::default()
        },
        key: 0x200,
        iova: 0x247a_a000,
        size: 0x3000,
        hop: 1,
        ba_pg_shift: 14,
        pbl: MptPbl {
            npages: 3,
            pbl_ba: 0x0118_b000 << 3,
            pages: [0x01ff_44c0 << 6, 0x01ff_4500 << 6],
            buf_pg_shift: 12,
        },
    };
    let mut want = c;
    want[0] = 0x101 | (1 << 2) | (2 << 4);
    expect(
        rereg_mpt(&mpt(c), trans, &p)
            .as_le_words()
            .map(u32::from_le)
            == want,
        "3 pages: C's words, new hop 1",
    )?;
    // Access only: the translation words stay as queried.
    let acc = Rereg {
        trans: false,
        access: true,
    };
    let mut want = c;
    want[1] = 0xe0; // RR_EN joins RW_EN and LW_EN (bits 37..39).
    let mut p2 = p;
    p2.access.remote_read = true;
    p2.hop = 3; // ignored without a new translation
    expect(
        rereg_mpt(&mpt(c), acc, &p2).as_le_words().map(u32::from_le) == want,
        "access only",
    )
}

/// Doorbell words, by the field positions of `hns_roce_hw_v2.h`
/// (TAG 23:0, CMD 27:24 / EQ CMD 17:16, CI 55:32, NOTIFY 56, CMD_SN 58:57).
pub fn check_doorbells() -> Check {
    expect(
        eq_doorbell(true, 1, 5) == 0x0000_0005_0000_0000,
        "AEQ doorbell",
    )?;
    expect(
        eq_doorbell(false, 3, 0x1ff_ffff) == 0x00ff_ffff_0002_0003,
        "CEQ doorbell, CI wraps",
    )?;
    expect(
        cq_notify_doorbell(0x12, 7, 1, true) == 0x0300_0007_0400_0012,
        "CQ arm, solicited",
    )?;
    expect(
        cq_notify_doorbell(0x12, 7, 2, false) == 0x0400_0007_0400_0012,
        "CQ arm, next",
    )?;
    // rdma_flow_label_to_udp_sport: fl 0x12345 -> (0x2345 ^ 0x4) | 0xc000.
    expect(
        flow_label_to_udp_sport(0x12345) == 0xe341,
        "UDP sport from flow label",
    )
}

/// The two SRQs of `ibv_srq_pingpong -n 10` (server and client, one boot)
/// on the C driver: CREATE_SRQ of SRQ 0 (PD 1) and SRQ 1 (PD 2), 512 WQEs
/// of one SGE, WQE buffer and index queue at hop 2 with 4 KiB pages, record
/// doorbells (the `ctx SRQC` lines of the hns-sim trace of a C-driver boot
/// running `data/srq-pingpong` of tests/guest/data-plan.sh alone; the
/// addresses are that boot's).
pub fn check_srq_context() -> Check {
    let queue = SrqQueue {
        hop: 2,
        ba_pg_shift: 12,
        buf_pg_shift: 12,
        ..SrqQueue::default()
    };
    let srq0 = SrqcParams {
        srqn: 0,
        pdn: 1,
        wqe_cnt: 512,
        max_gs: 1,
        wqe: SrqQueue {
            bt_ba: 0x4bc_9000,
            ..queue
        },
        idx: SrqQueue {
            bt_ba: 0x4bc_5000,
            cur: 0x4bc_3000,
            next: 0,
            ..queue
        },
        db: Some(0x1b5_7000),
        ..SrqcParams::default()
    };
    let want: [u32; 16] = [
        0x00000099, 0, 0, 0, 0x00979200, 0, 0x00000001, 0x00978a00, 0, 0x00004bc3, 0x00800000, 0,
        0, 0, 0x01b57001, 0,
    ];
    expect(
        srq_context(&srq0).as_le_words().map(u32::from_le) == want,
        "SRQC words of SRQ 0",
    )?;
    let srq1 = SrqcParams {
        srqn: 1,
        pdn: 2,
        wqe: SrqQueue {
            bt_ba: 0x4c6_5000,
            ..queue
        },
        idx: SrqQueue {
            bt_ba: 0x4c6_0000,
            cur: 0x4c5_e000,
            next: 0,
            ..queue
        },
        db: Some(0x17d_6000),
        ..srq0
    };
    let want: [u32; 16] = [
        0x00000199, 0, 0, 0, 0x0098ca00, 0, 0x00000002, 0x0098c000, 0, 0x00004c5e, 0x00800000, 0,
        0, 0, 0x017d6001, 0,
    ];
    expect(
        srq_context(&srq1).as_le_words().map(u32::from_le) == want,
        "SRQC words of SRQ 1",
    )?;
    // pyverbs' test_srq (tests/guest/pyverbs-plan.sh, `test_srq` alone) on
    // the C driver: 2048 WQEs, an index queue of two pages (the next page
    // is in the context too).
    let pyv = SrqcParams {
        srqn: 0,
        pdn: 1,
        wqe_cnt: 2048,
        max_gs: 1,
        wqe: SrqQueue {
            bt_ba: 0x4aa_1000,
            ..queue
        },
        idx: SrqQueue {
            bt_ba: 0x7c6_e000,
            cur: 0x47e_1000,
            next: 0x47b_0000,
            ..queue
        },
        db: Some(0x7fe6_b000),
        ..SrqcParams::default()
    };
    let want: [u32; 16] = [
        0x000000b9, 0, 0, 0, 0x00954200, 0, 0x00000001, 0x00f8dc00, 0, 0x000047e1, 0x00800000,
        0x000047b0, 0, 0, 0x7fe6b001, 0,
    ];
    expect(
        srq_context(&pyv).as_le_words().map(u32::from_le) == want,
        "SRQC words with two index pages",
    )?;
    // The XRC SRQ of tests/guest/xrc_objects.py on the C driver (uqp-c
    // boot): 16 WQEs, PD 1, XRC domain 0, completions to CQ 4 (SRQ_TYPE
    // in word 5, XRC_CQN in word 13).
    let xrc = SrqcParams {
        srqn: 0,
        pdn: 1,
        xrc: true,
        xrcdn: 0,
        cqn: 4,
        wqe_cnt: 16,
        max_gs: 1,
        wqe: SrqQueue {
            bt_ba: 0x598_2000,
            ..queue
        },
        idx: SrqQueue {
            bt_ba: 0x5ca_1000,
            cur: 0x59e_0000,
            next: 0,
            ..queue
        },
        db: Some(0x7fcc_1000),
    };
    let want: [u32; 16] = [
        0x00000049, 0, 0, 0, 0x00b30400, 0x80000000, 0x00000001, 0x00b94200, 0, 0x000059e0,
        0x00800000, 0, 0, 0x00000004, 0x7fcc1001, 0,
    ];
    expect(
        srq_context(&xrc).as_le_words().map(u32::from_le) == want,
        "SRQC words of an XRC SRQ",
    )?;
    // The run's domain was 0: the field's place for another one.
    let c = srq_context(&SrqcParams { xrcdn: 0x2a, ..xrc });
    expect(c.word(2) == 0x2a, "XRC domain in word 2")?;
    // Without a record doorbell word 14 stays empty; four SGEs are RQWS 2.
    let c = srq_context(&SrqcParams {
        db: None,
        max_gs: 4,
        ..srq0
    });
    expect(c.word(14) == 0, "no record doorbell: word 14 empty")?;
    expect(
        c.read(crate::hns_roce_hw_v2::fields::srqc::RQWS) == 2,
        "RQWS of 4 SGEs",
    )
}

/// `test_modify_srq_limit` of pyverbs' test_srq on the C driver: SRQ 1 as
/// CREATE_SRQ wrote it, and as hns-sim holds it after MODIFY_SRQC set the
/// limit to 7. Our context and mask, merged as the engine merges them,
/// must give the same words; QUERY_SRQC reads the limit back.
pub fn check_srq_limit() -> Check {
    let created: [u32; 16] = [
        0x000001b9, 0, 0, 0, 0x0094a000, 0, 0x00000002, 0x0077dc00, 0, 0x00007c6d, 0x00800000,
        0x00003bec, 0, 0, 0x7fe7c001, 0,
    ];
    let (c, m) = srq_limit(7);
    let c = c.as_le_words().map(u32::from_le);
    let m = m.as_le_words().map(u32::from_le);
    let mut merged = [0u32; 16];
    for (i, o) in merged.iter_mut().enumerate() {
        *o = (created[i] & m[i]) | (c[i] & !m[i]);
    }
    let mut want = created;
    want[1] = 7;
    expect(merged == want, "SRQC after MODIFY_SRQC (limit 7)")?;
    expect(srq_limit_of(want) == 7, "limit read back")?;
    expect(srq_limit_of(created) == 0, "no limit at creation")
}
