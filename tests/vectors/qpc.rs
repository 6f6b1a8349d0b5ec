// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! QP context images against the C driver's: the MAD agent's GSI QP (QPN 1)
//! moved RESET→INIT→RTR→RTS by the unmodified C driver on hns-sim. hns-sim
//! prints the context after merging each MODIFY_QPC (context where the mask
//! is 0, old value where it is 1); the expected words below are those three
//! `ctx QPC tag=000001` lines (non-zero words only). The inputs (addresses,
//! sizes) are read off the same words by hand:
//!
//! - word 16 `0x046ce009`: RQ_RECORD_EN (bit 0) and the record doorbell at
//!   `0x046ce008` (bits 31..1 hold address bits 31..1);
//! - word 1 `0x008db200`: the WQE buffer's root BT at `0x008db200 << 3`;
//! - word 21: the first RQ page `0x46d4 << 12`; words 40/56: the first SQ
//!   page `0x46d1 << 12`; word 44: the SGE page `0x46d3 << 12`;
//! - words 32/33: TRRL at `0x79 << 20 | 0x40c0 << 4`; word 50: IRRL at
//!   `0x001e4040 << 6`;
//! - word 4 `0x9700`: SQ_SHIFT 7 (128 WQEs), RQ_SHIFT 9 (512), RQWS 0;
//!   word 0 `0x43`: TST 3 (UD) and SGE_SHIFT 8 (256 extended SGEs).

use super::{expect, Check};
use crate::hns_roce_hw_v2::consts::sge::SGE_SHIFT;
use crate::hns_roce_hw_v2::qpc::*;
use crate::hw_rev::HwRev;
use crate::rdma::access::{
    ACCESS_LOCAL_WRITE, ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE,
};

/// Non-zero words of the merged QPC after RESET→INIT.
const AFTER_INIT: &[(usize, u32)] = &[
    (0, 0x00000043),
    (4, 0x00009700),
    (5, 0x0fff0000),
    (14, 0x20000000),
    (15, 0x80010000),
    (16, 0x046ce009),
    (42, 0x00000080),
];

/// After INIT→RTR.
const AFTER_RTR: &[(usize, u32)] = &[
    (0, 0x00000043),
    (1, 0x008db200),
    (2, 0x40000000),
    (4, 0x00009706),
    (5, 0x0fff0000),
    (14, 0x40000000),
    (15, 0x80010000),
    (16, 0x046ce009),
    (21, 0x000046d4),
    (32, 0x40c00000),
    (33, 0x00000079),
    (41, 0x00c00000),
    (42, 0x00000080),
    (50, 0x001e4040),
    (51, 0x10000000),
];

/// After RTR→RTS.
const AFTER_RTS: &[(usize, u32)] = &[
    (0, 0x00000043),
    (1, 0x008db200),
    (2, 0x40000000),
    (4, 0x00009706),
    (5, 0x0fff0000),
    (14, 0x60000000),
    (15, 0x80010000),
    (16, 0x046ce009),
    (21, 0x000046d4),
    (32, 0x40c00000),
    (33, 0x00000079),
    (40, 0x000046d1),
    (41, 0x00c00000),
    (42, 0x00000080),
    (44, 0x000046d3),
    (50, 0x001e4040),
    (51, 0x10000000),
    (56, 0x000046d1),
];

/// What hns-sim does with a MODIFY_QPC: `(old & mask) | (ctx & !mask)`,
/// over the 512-byte QPC.
fn merge(engine: &mut [u32; 128], img: &QpcImage) {
    let (words, n) = img.mailbox_words(V3_QPC_SZ);
    let half = n / 2;
    for (i, e) in engine.iter_mut().enumerate() {
        let c = u32::from_le(words[i]);
        let m = u32::from_le(words[half + i]);
        *e = (*e & m) | (c & !m);
    }
}

/// The context and mask words of a MODIFY_QPC as the driver posts them
/// (512-byte QPC: context and extension, then their masks).
fn posted(img: &QpcImage) -> ([u32; 128], [u32; 128]) {
    let (words, n) = img.mailbox_words(V3_QPC_SZ);
    let half = n / 2;
    let mut ctx = [0u32; 128];
    let mut mask = [0u32; 128];
    for i in 0..128 {
        ctx[i] = u32::from_le(words[i]);
        mask[i] = u32::from_le(words[half + i]);
    }
    (ctx, mask)
}

/// `true` if `words` holds the listed words and `fill` everywhere else.
fn exactly(words: &[u32; 128], want: &[(usize, u32)], fill: u32) -> bool {
    let mut full = [fill; 128];
    for &(i, v) in want {
        full[i] = v;
    }
    *words == full
}

/// `true` if `engine` holds exactly the listed non-zero words.
fn same(engine: &[u32; 128], want: &[(usize, u32)]) -> bool {
    let mut full = [0u32; 128];
    for &(i, v) in want {
        full[i] = v;
    }
    *engine == full
}

/// The GSI QP's three modifies, merged as the engine does, give the C
/// driver's contexts.
pub fn check_gsi_modifies() -> Check {
    let mut engine = [0u32; 128];
    // RESET→INIT with the MAD agent's IB_QP_STATE | PKEY_INDEX | QKEY.
    let mut img = QpcImage::new();
    reset_to_init(
        &mut img,
        &InitParams {
            serv_type: serv::UD,
            pdn: 0,
            rq_max_gs: 1,
            sge_cnt: 256,
            sq_wqe_cnt: 128,
            rq_wqe_cnt: 512,
            rq_record_db: true,
            rdb_dma: 0x046c_e008,
            owner_db: false,
            rx_cqn: 0,
            tx_cqn: 0,
            srqn: None,
            xrcdn: None,
            v3: true,
            stash: false,
        },
    );
    opt_fields(
        &mut img,
        &OptParams {
            qkey: Some(0x8001_0000),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Init, false);
    merge(&mut engine, &img);
    expect(same(&engine, AFTER_INIT), "QPC after RESET->INIT")?;

    // INIT→RTR with IB_QP_STATE only.
    let mut img = QpcImage::new();
    init_to_rtr(
        &mut img,
        &RtrParams {
            buf: WqeBufParams {
                wqe_sge_ba: 0x008d_b200 << 3,
                sq_hop: 2,
                sge_hop: 1,
                rq_hop: 2,
                ba_pg_shift: 12,
                buf_pg_shift: 12,
                rq_cur_blk: 0x46d4 << 12,
                rq_nxt_blk: None,
            },
            irrl_ba: 0x001e_4040 << 6,
            trrl_ba: (0x79 << 20) | (0x40c0 << 4),
            sig_type: 0,
            lbi: None,
            dest_qpn: None,
            dmac: [0; 6],
            mtu_enum: None,
            mtu_bytes: 4096,
            window_cong: false,
            max_ack_req_msg_len: 0,
            rq_inline: None,
            cqe_inline: None,
        },
    );
    finish(&mut img, QpState::Rtr, false);
    merge(&mut engine, &img);
    expect(same(&engine, AFTER_RTR), "QPC after INIT->RTR")?;

    // RTR→RTS with IB_QP_STATE | SQ_PSN (0).
    let mut img = QpcImage::new();
    rtr_to_rts(&mut img, 0x46d1 << 12, 0x46d3 << 12);
    opt_fields(
        &mut img,
        &OptParams {
            sq_psn: Some(0),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Rts, false);
    merge(&mut engine, &img);
    expect(same(&engine, AFTER_RTS), "QPC after RTR->RTS")
}

/// A later modify keeps what it does not touch, and RESET→INIT overwrites
/// everything (its mask is all zeros).
pub fn check_masks() -> Check {
    let mut engine = [0xa5a5_a5a5u32; 128];
    let mut img = QpcImage::new();
    finish(&mut img, QpState::Rts, false);
    merge(&mut engine, &img);
    // Only QP_ST (word 14 bits 31..29) and INV_CREDIT (word 26 bit 0)
    // changed.
    expect(
        engine[14] == (0xa5a5_a5a5 & !0xe000_0000) | 0x6000_0000,
        "QP_ST",
    )?;
    expect(engine[26] == 0xa5a5_a5a4, "INV_CREDIT")?;
    expect(
        engine[0] == 0xa5a5_a5a5 && engine[127] == 0xa5a5_a5a5,
        "untouched words",
    )?;
    let mut img = QpcImage::new();
    reset_to_init(
        &mut img,
        &InitParams {
            v3: true,
            ..Default::default()
        },
    );
    merge(&mut engine, &img);
    expect(engine[0] == 0 && engine[127] == 0, "RESET->INIT clears")?;
    // HIP08: 256-byte halves, the mask right after the context.
    let (w, n) = QpcImage::new().mailbox_words(256);
    expect(n == 128 && w[63] == 0 && w[64] == u32::MAX, "HIP08 mailbox")
}

/// Access flags, PSNs, atomics depth and the state machine.
pub fn check_opt_fields() -> Check {
    use crate::hns_roce_hw_v2::fields::qpc;
    let mut img = QpcImage::new();
    opt_fields(
        &mut img,
        &OptParams {
            access: Some((
                ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC | ACCESS_REMOTE_WRITE,
                0,
            )),
            sq_psn: Some(0x12_3456),
            rq_psn: Some(0),
            max_dest_rd_atomic: Some(5),
            max_rd_atomic: Some(1),
            ..Default::default()
        },
    );
    // No responder resources: only remote write survives.
    expect(
        !img.ctx.read_bool(qpc::RRE) && img.ctx.read_bool(qpc::RWE) && !img.ctx.read_bool(qpc::ATE),
        "access without depth",
    )?;
    expect(img.ctx.read(qpc::RETRY_MSG_PSN_H) == 0x12, "PSN high part")?;
    expect(img.ctx.read(qpc::RAQ_PSN) == 0xff_ffff, "RAQ PSN wraps")?;
    expect(
        img.ctx.read(qpc::RR_MAX) == 3 && img.ctx.read(qpc::SR_MAX) == 0,
        "fls",
    )?;
    expect(
        img.mask.read(qpc::RR_MAX) == 0 && img.mask.read(qpc::AT) == 0x1f,
        "mask",
    )?;
    expect(
        ack_timeout(HwRev::HIP08, 20) == Some(30) && ack_timeout(HwRev::HIP08, 21).is_none(),
        "HIP08 timeout",
    )?;
    expect(
        ack_timeout(HwRev::HIP09, 31) == Some(31) && ack_timeout(HwRev::HIP09, 32).is_none(),
        "timeout",
    )?;
    use QpState::*;
    expect(
        transition_ok(Reset, Init) && transition_ok(Rts, Err) && !transition_ok(Reset, Rtr),
        "transitions",
    )?;
    expect(
        !transition_ok(Init, Rts) && !transition_ok(Rts, Sqd),
        "refused transitions",
    )
}

/// The MAD agent's GSI QP request on the sim caps, sized as C sizes it:
/// 128 SQ WQEs of 64 bytes, 2 extended SGEs per WQE → 256 SGEs (at least
/// one 4 KiB page), 512 RQ WQEs of one 16-byte SGE.
pub fn check_queue_sizes() -> Check {
    let req = QueueRequest {
        max_send_wr: 128,
        max_recv_wr: 512,
        max_send_sge: 2,
        max_recv_sge: 1,
        max_inline_data: 0,
        has_rq: true,
        ud: true,
        exsge: true,
        user_sq: None,
        hip08: false,
        max_wqes: 0x8000,
        min_wqes: 64,
        max_sq_sg: 64,
        max_rq_sg: 64,
        max_sq_inline: 1024,
        max_sq_desc_sz: 64,
        max_rq_desc_sz: 16,
    };
    let s = queue_sizes(&req).map_err(|_| "GSI sizes refused")?;
    expect(
        s == QueueSizes {
            sq_wqe_cnt: 128,
            sq_wqe_shift: 6,
            sq_max_gs: 2,
            sq_ext_sge_cnt: 2,
            sge_cnt: 256,
            rq_wqe_cnt: 512,
            rq_wqe_shift: 4,
            rq_max_gs: 1,
            rq_rsv_sge: 0,
            max_inline_data: 32,
        },
        "GSI queue sizes",
    )?;
    expect(
        entries_size(s.sq_wqe_cnt, s.sq_wqe_shift) == 8192,
        "SQ bytes",
    )?;
    expect(
        entries_shift(256, SGE_SHIFT) == 8 && entries_shift(3, SGE_SHIFT) == 8,
        "SGE shift",
    )?;
    // HIP08 (`proc_rq_sge`): the MAD layer's GSI QP reserves one RQ SGE
    // for the terminator. The C driver's QPC of that QP on hns-sim's HIP08
    // personality has RQWS 1 (two SGEs per RQ WQE) for one asked.
    let h08 = QueueRequest {
        hip08: true,
        exsge: false,
        ..req
    };
    let s = queue_sizes(&h08).map_err(|_| "HIP08 GSI sizes refused")?;
    expect(
        s.rq_max_gs == 2 && s.rq_rsv_sge == 1 && s.rq_wqe_shift == 5,
        "HIP08 kernel QP: 2 RQ SGEs, 1 reserved, 32-byte RQ WQEs",
    )?;
    // A HIP08 user QP may ask for one SGE more than the caps (64 -> 128 by
    // the rounding), and reserves none itself.
    let h08u = QueueRequest {
        user_sq: Some((3, 6)),
        max_recv_sge: 65,
        ..h08
    };
    let s = queue_sizes(&h08u).map_err(|_| "HIP08 user 65 RQ SGEs refused")?;
    expect(
        s.rq_max_gs == 128 && s.rq_rsv_sge == 0,
        "HIP08 user QP: 65 SGEs round to 128, none reserved",
    )?;
    expect(
        queue_sizes(&QueueRequest {
            max_recv_sge: 129,
            ..h08u
        }) == Err(QueueError::RqConfig),
        "HIP08 user QP: 129 RQ SGEs refused",
    )?;
    expect(
        queue_sizes(&QueueRequest {
            max_recv_sge: 65,
            ..req
        }) == Err(QueueError::RqConfig),
        "HIP09: 65 RQ SGEs refused",
    )?;
    // RC: two SGEs fit in the WQE; three need one extended SGE rounded to
    // one, and the extended area is still at least a page.
    let rc = QueueRequest {
        ud: false,
        max_send_sge: 3,
        max_send_wr: 10,
        ..req
    };
    let s = queue_sizes(&rc).map_err(|_| "RC sizes refused")?;
    expect(
        s.sq_wqe_cnt == 64 && s.sq_ext_sge_cnt == 1 && s.sq_max_gs == 3,
        "RC SQ",
    )?;
    expect(s.sge_cnt == 256 && s.max_inline_data == 32, "RC SGE area")?;
    expect(
        queue_sizes(&QueueRequest {
            max_recv_wr: 0,
            ..req
        }) == Err(QueueError::RqConfig),
        "empty RQ",
    )?;
    expect(
        queue_sizes(&QueueRequest {
            max_send_sge: 65,
            ..req
        }) == Err(QueueError::SqConfig),
        "too many SGEs",
    )?;
    // User SQs (`set_user_sq_size`): the depth and stride libhns chose are
    // taken as they are; 2^16 WQEs exceed max_wqes, strides run from 64
    // bytes to the largest WQE (64 here).
    let user = |count, stride| QueueRequest {
        user_sq: Some((count, stride)),
        hip08: false,
        max_send_wr: 0,
        ..req
    };
    let s = queue_sizes(&user(3, 6)).map_err(|_| "user SQ refused")?;
    expect(
        s.sq_wqe_cnt == 8 && s.sq_wqe_shift == 6 && s.sge_cnt == 256,
        "user SQ",
    )?;
    expect(
        queue_sizes(&user(16, 6)) == Err(QueueError::UserSqCount)
            && queue_sizes(&user(40, 6)) == Err(QueueError::UserSqCount),
        "user SQ depth",
    )?;
    expect(
        queue_sizes(&user(3, 5)) == Err(QueueError::UserSqStride)
            && queue_sizes(&user(3, 7)) == Err(QueueError::UserSqStride),
        "user SQ stride",
    )?;
    // Without extended SGEs in the context, the SGEs all count as
    // extended and inline data is not widened.
    let s = queue_sizes(&QueueRequest {
        exsge: false,
        ud: false,
        max_send_sge: 3,
        ..user(3, 6)
    })
    .map_err(|_| "user SQ without EXSGE refused")?;
    expect(
        s.sq_max_gs == 3 && s.sq_ext_sge_cnt == 3 && s.sge_cnt == 256 && s.max_inline_data == 0,
        "user SQ without EXSGE",
    )
}

/// RQ WQE segments and the RQ doorbell word.
pub fn check_rq_wqe() -> Check {
    let sges = [
        DataSeg {
            len: 256,
            lkey: 0x100,
            addr: 0x1000,
        },
        DataSeg {
            len: 0,
            lkey: 7,
            addr: 7,
        },
    ];
    let mut out = [DataSeg {
        len: 9,
        lkey: 9,
        addr: 9,
    }; 4];
    let mut n = 0;
    for (o, s) in out
        .iter_mut()
        .zip(rq_wqe_segs(sges.iter().copied(), 3, false))
    {
        *o = s;
        n += 1;
    }
    expect(n == 3 && out[0] == sges[0], "first segment")?;
    expect(
        out[1] == DataSeg::default() && out[2] == DataSeg::default(),
        "zeroed tail",
    )?;
    expect(out[3].len == 9, "beyond max_sge untouched")?;
    expect(
        rq_wqe_segs(sges.iter().copied(), 3, false).count() == 3,
        "exactly max_sge",
    )?;
    let mut it = rq_wqe_segs(sges.iter().copied(), 3, true);
    expect(it.next() == Some(sges[0]), "first segment (rsv)")?;
    let t = it.next();
    expect(
        t.is_some_and(|t| t.len == 0x8000_0000 && t.lkey == 0) && it.next().is_none(),
        "reserved SGE",
    )?;
    expect(
        sges[0].to_bytes() == [0, 1, 0, 0, 0, 1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0],
        "segment bytes",
    )?;
    // The same 16 bytes read as little-endian words.
    expect(
        sges[0].words() == [0x100, 0x100, 0x1000, 0],
        "segment words",
    )?;
    expect(
        rq_doorbell(0x12_3456, 0x1_0005) == 0x0000_0005_0112_3456,
        "RQ doorbell",
    )
}

/// The QP types the device takes: XRC QPs exactly when `caps.flags` has
/// `HNS_ROCE_CAP_FLAG_XRC` (bit 6), whatever the other bits (bit 10, the
/// ATOMIC flag, once stood in for it).
pub fn check_qp_type_support() -> Check {
    use crate::hns_roce_hw_v2::consts::cap_flag;
    for ty in [qpt::XRC_INI, qpt::XRC_TGT] {
        expect(
            qp_type_supported(ty, 1 << 6),
            "XRC QP refused with flag bit 6",
        )?;
        expect(
            !qp_type_supported(ty, cap_flag::ATOMIC),
            "XRC QP taken with only the ATOMIC flag",
        )?;
        expect(
            !qp_type_supported(ty, !(1 << 6)),
            "XRC QP taken without flag bit 6",
        )?;
    }
    for ty in [qpt::GSI, qpt::RC, qpt::UD] {
        expect(qp_type_supported(ty, 0), "RC/UD/GSI QP refused")?;
    }
    // UC (3) and raw packet (8) QPs are not supported.
    expect(!qp_type_supported(3, u32::MAX), "UC QP taken")?;
    expect(!qp_type_supported(8, u32::MAX), "raw packet QP taken")
}

/// Every cell of the C driver's `check_qp_state` table: RESET→{RESET,
/// INIT}, INIT→{RESET, INIT, RTR, ERR}, RTR→{RESET, RTS, ERR},
/// RTS→{RESET, RTS, ERR}, ERR→{RESET, ERR}; the SQD and SQE rows are
/// empty.
pub fn check_state_table() -> Check {
    use QpState::*;
    let all = [Reset, Init, Rtr, Rts, Sqd, Sqe, Err];
    // Rows of the C table, as bit sets over `all`'s order.
    let rows: [u8; 7] = [
        0b000_0011, // RESET
        0b100_0111, // INIT
        0b100_1001, // RTR
        0b100_1001, // RTS
        0,          // SQD
        0,          // SQE
        0b100_0001, // ERR
    ];
    for (i, cur) in all.iter().enumerate() {
        for (j, new) in all.iter().enumerate() {
            let want = rows[i] & (1 << j) != 0;
            expect(transition_ok(*cur, *new) == want, "check_qp_state cell")?;
        }
    }
    Ok(())
}

// A user RC QP of `ibv_rc_pingpong` on the C driver (QPN 8, looped back
// to QPN 0xa on the same hns_0, RoCE v2 GID index 1): the context and mask
// of each of its MODIFY_QPC mailboxes as the driver posted them (hns-sim's
// `# ctx QPC-in/QPC-mask` notes of `tests/guest/uqp-plan.sh` on
// `--driver c`, printed by `scripts/qpc-vector.py`). Inputs read off the
// words: PD 1, 64 SQ WQEs, 512 RQ WQEs of one SGE, no extended SGE, CQ 4
// for both queues, RQ record at 0x01b52004; WQE root BT 0x01183a00 << 3,
// hop 2 for SQ and RQ, first RQ page 0x79d2 << 12, first SQ page
// 0x45a3 << 12; IRRL 0x1e4200 << 6, TRRL 0x79 << 20 | 0x4600 << 4;
// destination MAC 02:19:e5:00:03:00 (the device's own, but the C driver
// compares with a source MAC it never fills on HIP09: no LBI), GID
// fe80::19:e5ff:fe00:300, hop limit 64, MTU 1024, PSNs 0xe84fc4 (receive)
// and 0x97595e (send), RNR timer 12, timeout 14, retries 7/7; the context
// asked for RQ and CQE inline.

/// Context of the RC QP's move to INIT (non-zero words).
const RC_INIT_CTX: &[(usize, u32)] = &[
    (3, 0x00000100),
    (4, 0x00009600),
    (5, 0x0fff0000),
    (14, 0x20000000),
    (16, 0x01b52005),
    (19, 0x00000004),
    (42, 0x00000080),
    (62, 0x00000004),
];
/// Its mask: the words that are not 0x00000000.
const RC_INIT_MASK: &[(usize, u32)] = &[];

/// Context of the RC QP's move to RTR (non-zero words).
const RC_RTR_CTX: &[(usize, u32)] = &[
    (1, 0x01183a00),
    (2, 0x40000000),
    (4, 0x00010002),
    (5, 0x3fff0040),
    (7, 0x000080fe),
    (9, 0xffe51900),
    (10, 0x000300fe),
    (11, 0x00e51902),
    (12, 0xc0500003),
    (13, 0x0000000a),
    (14, 0x40000000),
    (18, 0x10000000),
    (19, 0x62000000),
    (21, 0x000079d2),
    (26, 0xe84fc400),
    (32, 0x46000000),
    (33, 0x00000079),
    (37, 0x00e84fc3),
    (41, 0x00c00000),
    (50, 0x001e4200),
    (51, 0x10000000),
    (62, 0x01000000),
];
/// Its mask: the words that are not 0xffffffff.
const RC_RTR_MASK: &[(usize, u32)] = &[
    (1, 0x00000000),
    (2, 0x80000000),
    (3, 0xffffff00),
    (4, 0x0000fff0),
    (5, 0x00000000),
    (6, 0xff000000),
    (7, 0x00000000),
    (8, 0x00000000),
    (9, 0x00000000),
    (10, 0x00000000),
    (11, 0x00000000),
    (12, 0x00000000),
    (13, 0x0f000000),
    (14, 0x1fffff00),
    (18, 0xc1ffffff),
    (19, 0x01ffffff),
    (21, 0x00000000),
    (22, 0xfff00000),
    (23, 0xff000000),
    (26, 0x00000086),
    (27, 0x00000000),
    (32, 0x00000000),
    (33, 0x00000000),
    (34, 0xffff8000),
    (37, 0xff000000),
    (41, 0xff3fffff),
    (42, 0xffffffc0),
    (50, 0x00000000),
    (51, 0xec000000),
    (62, 0xfeffffff),
    (64, 0xff7ffff8),
];

/// Context of the RC QP's move to RTS (non-zero words).
const RC_RTS_CTX: &[(usize, u32)] = &[
    (6, 0x70000000),
    (14, 0x60000000),
    (40, 0x000045a3),
    (42, 0x97595e00),
    (48, 0x97595e00),
    (52, 0xe7000000),
    (54, 0x595e0000),
    (55, 0x97595e97),
    (56, 0x000045a3),
    (60, 0x3f97595e),
];
/// Its mask: the words that are not 0xffffffff.
const RC_RTS_MASK: &[(usize, u32)] = &[
    (6, 0x07ffffff),
    (14, 0x1fffffff),
    (26, 0xfffffffe),
    (40, 0x00000000),
    (41, 0xfff00000),
    (42, 0x000000ff),
    (44, 0x00000000),
    (45, 0xfff00000),
    (48, 0x00000000),
    (51, 0x1fffffff),
    (52, 0x00ffffff),
    (54, 0x00000000),
    (55, 0x00000000),
    (56, 0x00000000),
    (57, 0xf0000000),
    (59, 0x0000ff00),
    (60, 0xc0000000),
    (61, 0xe1000000),
];

/// Context of the RC QP's move to RESET (non-zero words).
const RC_RESET_CTX: &[(usize, u32)] = &[];
/// Its mask: the words that are not 0xffffffff.
const RC_RESET_MASK: &[(usize, u32)] = &[(14, 0x1fffffff), (26, 0xfffffffe)];

/// The RC QP's four modifies built from the inputs above give the C
/// driver's contexts and masks word for word.
pub fn check_rc_user_modifies() -> Check {
    // RESET→INIT: STATE | PKEY_INDEX | PORT | ACCESS_FLAGS (none).
    let mut img = QpcImage::new();
    reset_to_init(
        &mut img,
        &InitParams {
            serv_type: serv::RC,
            pdn: 1,
            rq_max_gs: 1,
            sge_cnt: 0,
            sq_wqe_cnt: 64,
            rq_wqe_cnt: 512,
            rq_record_db: true,
            rdb_dma: 0x01b5_2004,
            owner_db: false,
            rx_cqn: 4,
            tx_cqn: 4,
            srqn: None,
            xrcdn: None,
            v3: true,
            stash: false,
        },
    );
    opt_fields(
        &mut img,
        &OptParams {
            access: Some((0, 0)),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Init, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, RC_INIT_CTX, 0), "RC RESET->INIT context")?;
    expect(exactly(&m, RC_INIT_MASK, 0), "RC RESET->INIT mask")?;

    // INIT→RTR: STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN |
    // MAX_DEST_RD_ATOMIC (1) | MIN_RNR_TIMER.
    let mut img = QpcImage::new();
    init_to_rtr(
        &mut img,
        &RtrParams {
            buf: WqeBufParams {
                wqe_sge_ba: 0x0118_3a00 << 3,
                sq_hop: 2,
                sge_hop: 0,
                rq_hop: 2,
                ba_pg_shift: 12,
                buf_pg_shift: 12,
                rq_cur_blk: 0x79d2 << 12,
                rq_nxt_blk: None,
            },
            irrl_ba: 0x001e_4200 << 6,
            trrl_ba: (0x79 << 20) | (0x4600 << 4),
            sig_type: 1,
            lbi: loopback_indicator(HwRev::HIP09, [0x02, 0x19, 0xe5, 0x00, 0x03, 0x00], true),
            dest_qpn: Some(0xa),
            dmac: [0x02, 0x19, 0xe5, 0x00, 0x03, 0x00],
            mtu_enum: Some(3),
            mtu_bytes: 1024,
            window_cong: false,
            max_ack_req_msg_len: 0,
            rq_inline: Some(true),
            cqe_inline: Some(true),
        },
    );
    set_path(
        &mut img,
        &PathParams {
            vlan_id: 0xffff,
            hip08: false,
            udp_sport: u32::from(udp_sport(0, 8, 0xa)),
            sgid_index: 1,
            hop_limit: 64,
            cong: Some(CongFields {
                ty: CongType::Dcqcn,
                tmpl_base: 0,
                dip_idx: None,
            }),
            tclass: tclass(0, gid_type::ROCE_UDP_ENCAP),
            flow_label: 0,
            dgid: [
                0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x19, 0xe5, 0xff, 0xfe, 0x00, 0x03, 0x00,
            ],
            sl: 0,
        },
    );
    opt_fields(
        &mut img,
        &OptParams {
            rq_psn: Some(0xe8_4fc4),
            max_dest_rd_atomic: Some(1),
            access: Some((0, 1)),
            min_rnr_timer: Some(12),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Rtr, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, RC_RTR_CTX, 0), "RC INIT->RTR context")?;
    expect(exactly(&m, RC_RTR_MASK, u32::MAX), "RC INIT->RTR mask")?;

    // RTR→RTS: STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN |
    // MAX_QP_RD_ATOMIC (1).
    let mut img = QpcImage::new();
    rtr_to_rts(&mut img, 0x45a3 << 12, 0);
    opt_fields(
        &mut img,
        &OptParams {
            timeout: ack_timeout(HwRev::HIP09, 14),
            retry_cnt: Some(7),
            rnr_retry: Some(7),
            sq_psn: Some(0x97_595e),
            max_rd_atomic: Some(1),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Rts, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, RC_RTS_CTX, 0), "RC RTR->RTS context")?;
    expect(exactly(&m, RC_RTS_MASK, u32::MAX), "RC RTR->RTS mask")?;

    // Destroy: back to RESET with no attribute.
    let mut img = QpcImage::new();
    finish(&mut img, QpState::Reset, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, RC_RESET_CTX, 0), "RC ->RESET context")?;
    expect(exactly(&m, RC_RESET_MASK, u32::MAX), "RC ->RESET mask")
}

// A user UD QP of `ibv_ud_pingpong` on the C driver (QPN 0x10), from the
// same trace: PD 1, 64 SQ WQEs, 256 extended SGEs, 512 RQ WQEs, CQ 4, RQ
// record at 0x01bc5004, Q_Key 0x11111111; WQE root BT 0x01181400 << 3,
// hops 2/1/2, first RQ page 0x8c54 << 12, first SQ page 0x8c61 << 12,
// first SGE page 0x79e9 << 12; IRRL 0x1e4400 << 6, TRRL 0x79 << 20 |
// 0x4c00 << 4; send PSN 0xdeab26. No address vector: the all-zero DMAC
// equals the source MAC the C driver never fills on HIP09, so the move to
// RTR writes the loopback indicator.

/// Context of the UD QP's move to INIT (non-zero words).
const UD_INIT_CTX: &[(usize, u32)] = &[
    (0, 0x00000043),
    (3, 0x00000100),
    (4, 0x00009600),
    (5, 0x0fff0000),
    (14, 0x20000000),
    (15, 0x11111111),
    (16, 0x01bc5005),
    (19, 0x00000004),
    (42, 0x00000080),
    (62, 0x00000004),
];
/// Its mask: the words that are not 0x00000000.
const UD_INIT_MASK: &[(usize, u32)] = &[];

/// Context of the UD QP's move to RTR (non-zero words).
const UD_RTR_CTX: &[(usize, u32)] = &[
    (1, 0x01181400),
    (2, 0x40000000),
    (4, 0x00000006),
    (14, 0x40000000),
    (21, 0x00008c54),
    (32, 0x4c000000),
    (33, 0x00000079),
    (41, 0x00c00000),
    (50, 0x001e4400),
    (51, 0x10000000),
    (62, 0x01000000),
];
/// Its mask: the words that are not 0xffffffff.
const UD_RTR_MASK: &[(usize, u32)] = &[
    (1, 0x00000000),
    (2, 0x80000000),
    (3, 0xffffff00),
    (4, 0xfffffff0),
    (6, 0xfbffffff),
    (11, 0x00000000),
    (12, 0xffff0000),
    (13, 0x0fffffff),
    (14, 0x1fffffff),
    (21, 0x00000000),
    (22, 0xfff00000),
    (23, 0xff000000),
    (26, 0xffffff86),
    (27, 0x00000000),
    (32, 0x00000000),
    (33, 0x00000000),
    (34, 0xfffff000),
    (41, 0xff3fffff),
    (42, 0xffffffc0),
    (50, 0x00000000),
    (51, 0xec000000),
    (62, 0xfeffffff),
];

/// Context of the UD QP's move to RTS (non-zero words).
const UD_RTS_CTX: &[(usize, u32)] = &[
    (14, 0x60000000),
    (40, 0x00008c61),
    (42, 0xdeab2600),
    (44, 0x000079e9),
    (48, 0xdeab2600),
    (54, 0xab260000),
    (55, 0xdeab26de),
    (56, 0x00008c61),
    (60, 0x00deab26),
];
/// Its mask: the words that are not 0xffffffff.
const UD_RTS_MASK: &[(usize, u32)] = &[
    (14, 0x1fffffff),
    (26, 0xfffffffe),
    (40, 0x00000000),
    (41, 0xfff00000),
    (42, 0x000000ff),
    (44, 0x00000000),
    (45, 0xfff00000),
    (48, 0x00000000),
    (52, 0xe7ffffff),
    (54, 0x00000000),
    (55, 0x00000000),
    (56, 0x00000000),
    (57, 0xf0000000),
    (59, 0x0000ff00),
    (60, 0xff000000),
    (61, 0xe1000000),
];

/// Context of the UD QP's move to RESET (non-zero words).
const UD_RESET_CTX: &[(usize, u32)] = &[];
/// Its mask: the words that are not 0xffffffff.
const UD_RESET_MASK: &[(usize, u32)] = &[(14, 0x1fffffff), (26, 0xfffffffe)];

/// The UD QP's four modifies give the C driver's contexts and masks word
/// for word.
pub fn check_ud_user_modifies() -> Check {
    // RESET→INIT: STATE | PKEY_INDEX | PORT | QKEY.
    let mut img = QpcImage::new();
    reset_to_init(
        &mut img,
        &InitParams {
            serv_type: serv::UD,
            pdn: 1,
            rq_max_gs: 1,
            sge_cnt: 256,
            sq_wqe_cnt: 64,
            rq_wqe_cnt: 512,
            rq_record_db: true,
            rdb_dma: 0x01bc_5004,
            owner_db: false,
            rx_cqn: 4,
            tx_cqn: 4,
            srqn: None,
            xrcdn: None,
            v3: true,
            stash: false,
        },
    );
    opt_fields(
        &mut img,
        &OptParams {
            qkey: Some(0x1111_1111),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Init, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, UD_INIT_CTX, 0), "UD RESET->INIT context")?;
    expect(exactly(&m, UD_INIT_MASK, 0), "UD RESET->INIT mask")?;

    // INIT→RTR: STATE only.
    let mut img = QpcImage::new();
    init_to_rtr(
        &mut img,
        &RtrParams {
            buf: WqeBufParams {
                wqe_sge_ba: 0x0118_1400 << 3,
                sq_hop: 2,
                sge_hop: 1,
                rq_hop: 2,
                ba_pg_shift: 12,
                buf_pg_shift: 12,
                rq_cur_blk: 0x8c54 << 12,
                rq_nxt_blk: None,
            },
            irrl_ba: 0x001e_4400 << 6,
            trrl_ba: (0x79 << 20) | (0x4c00 << 4),
            sig_type: 1,
            lbi: loopback_indicator(HwRev::HIP09, [0; 6], false),
            dest_qpn: None,
            dmac: [0; 6],
            mtu_enum: None,
            mtu_bytes: 4096,
            window_cong: false,
            max_ack_req_msg_len: 0,
            rq_inline: None,
            cqe_inline: None,
        },
    );
    finish(&mut img, QpState::Rtr, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, UD_RTR_CTX, 0), "UD INIT->RTR context")?;
    expect(exactly(&m, UD_RTR_MASK, u32::MAX), "UD INIT->RTR mask")?;

    // RTR→RTS: STATE | SQ_PSN.
    let mut img = QpcImage::new();
    rtr_to_rts(&mut img, 0x8c61 << 12, 0x79e9 << 12);
    opt_fields(
        &mut img,
        &OptParams {
            sq_psn: Some(0xde_ab26),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Rts, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, UD_RTS_CTX, 0), "UD RTR->RTS context")?;
    expect(exactly(&m, UD_RTS_MASK, u32::MAX), "UD RTR->RTS mask")?;

    let mut img = QpcImage::new();
    finish(&mut img, QpState::Reset, false);
    let (c, m) = posted(&img);
    expect(exactly(&c, UD_RESET_CTX, 0), "UD ->RESET context")?;
    expect(exactly(&m, UD_RESET_MASK, u32::MAX), "UD ->RESET mask")
}

// The XRC QPs of tests/guest/xrc_objects.py on the C driver (uqp-c boot,
// `scripts/qpc-vector.py TRACE 48` and `... 25`): the XRC_TGT QP 0x30 the
// core created without udata (no PD, no CQs, the 64-WQE kernel SQ libhns'
// minimum asked for, XRC domain 0, remote write access) and the XRC_INI
// QP 0x19 (PD 1, send CQ 4, 64 SQ WQEs, no RQ). Both moves to INIT write
// the XRC service type and INV_CREDIT; only the target XRC_QP_TYPE.

/// Context of the XRC_TGT QP's move to INIT (non-zero words).
const XRC_TGT_INIT_CTX: &[(usize, u32)] = &[
    (0, 0x00000005),
    (4, 0x0000f6f0),
    (5, 0x0fff0000),
    (14, 0x20000000),
    (18, 0x04000000),
    (19, 0x01000000),
    (26, 0x00000001),
    (42, 0x00000080),
];

/// Context of the XRC_INI QP's move to INIT (non-zero words).
const XRC_INI_INIT_CTX: &[(usize, u32)] = &[
    (0, 0x00000005),
    (3, 0x00000100),
    (4, 0x0000f6f0),
    (5, 0x0fff0000),
    (14, 0x20000000),
    (26, 0x00000001),
    (42, 0x00000080),
    (62, 0x00000004),
];

/// The XRC QPs' RESET→INIT built from the inputs above give the C
/// driver's contexts; the masks are all zeros (every RESET→INIT).
pub fn check_xrc_init_modifies() -> Check {
    let base = InitParams {
        serv_type: serv::XRC,
        pdn: 0,
        rq_max_gs: 0,
        sge_cnt: 0,
        sq_wqe_cnt: 64,
        rq_wqe_cnt: 0,
        rq_record_db: false,
        rdb_dma: 0,
        owner_db: false,
        rx_cqn: 0,
        tx_cqn: 0,
        srqn: None,
        xrcdn: Some(0),
        v3: true,
        stash: false,
    };
    let mut img = QpcImage::new();
    reset_to_init(&mut img, &base);
    opt_fields(
        &mut img,
        &OptParams {
            access: Some((ACCESS_REMOTE_WRITE | ACCESS_LOCAL_WRITE, 0)),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Init, true);
    let (c, m) = posted(&img);
    expect(
        exactly(&c, XRC_TGT_INIT_CTX, 0),
        "XRC_TGT RESET->INIT context",
    )?;
    expect(exactly(&m, &[], 0), "XRC_TGT RESET->INIT mask")?;

    let mut img = QpcImage::new();
    reset_to_init(
        &mut img,
        &InitParams {
            pdn: 1,
            tx_cqn: 4,
            xrcdn: None,
            ..base
        },
    );
    opt_fields(
        &mut img,
        &OptParams {
            access: Some((0, 0)),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Init, true);
    let (c, m) = posted(&img);
    expect(
        exactly(&c, XRC_INI_INIT_CTX, 0),
        "XRC_INI RESET->INIT context",
    )?;
    expect(exactly(&m, &[], 0), "XRC_INI RESET->INIT mask")?;

    // The target's domain goes to QKEY_XRCD (the run's domain was 0).
    let mut img = QpcImage::new();
    reset_to_init(
        &mut img,
        &InitParams {
            xrcdn: Some(0x2a),
            ..base
        },
    );
    let (c, _) = posted(&img);
    expect(c[15] == 0x2a, "XRC domain in QKEY_XRCD")
}

// HIP08's free-MR QP 8 (SL 0) on hns-sim's HIP08 personality: the C
// driver's three MODIFY_QPC mailboxes at probe (`# ctx QPC-in` and
// `QPC-mask tag=000008` of a `hip08-c` trace; 256-byte QPC, no extension).
// Inputs read off the words: WQE buffer root BT `0x7f2e00 << 3`, SQ and RQ
// hop 2, no extended SGE, 4 KiB pages; RQ pages `0x3f93`/`0x3f94 << 12`;
// TRRL `0x90 << 20 | 0x4600 << 4`; IRRL `0x240200 << 6`; SQ page
// `0x3f91 << 12`; CQN 0.
/// Free-MR QP 8: INIT->INIT context (the QP is in RESET: no queue geometry).
const FMR_INIT_CTX: &[(usize, u32)] = &[(14, 0x20000000), (18, 0x04000000)];

/// Free-MR QP 8: Its mask (words not listed: all ones).
const FMR_INIT_MASK: &[(usize, u32)] = &[
    (0, 0xfffffff8),
    (3, 0x000000ff),
    (14, 0x1fffffff),
    (18, 0xd1ffffff),
    (19, 0xff000000),
    (26, 0xfffffffe),
    (62, 0xff000000),
];

/// Free-MR QP 8: INIT->RTR context: loopback (LBI), SL 0, PD 0.
const FMR_RTR_CTX: &[(usize, u32)] = &[
    (1, 0x007f2e00),
    (2, 0x40000000),
    (4, 0x00000002),
    (5, 0x10000000),
    (6, 0x04000000),
    (13, 0x20000008),
    (14, 0x40000000),
    (18, 0x04000000),
    (19, 0x08000000),
    (21, 0x00003f93),
    (24, 0x00003f94),
    (26, 0x00080800),
    (32, 0x46000000),
    (33, 0x00000090),
    (37, 0x00000807),
    (41, 0x00c00000),
    (42, 0x00000002),
    (50, 0x00240200),
    (51, 0x10000000),
];

/// Free-MR QP 8: Its mask.
const FMR_RTR_MASK: &[(usize, u32)] = &[
    (1, 0x00000000),
    (2, 0x80000000),
    (3, 0xffffff00),
    (4, 0xfffffff0),
    (5, 0x0fffffff),
    (6, 0xfb0fffff),
    (11, 0x00000000),
    (12, 0xffff0000),
    (13, 0x0f000000),
    (14, 0x1fffffff),
    (18, 0xd1ffffff),
    (19, 0x07ffffff),
    (21, 0x00000000),
    (22, 0xfff00000),
    (23, 0xff000000),
    (24, 0x00000000),
    (25, 0xfff00000),
    (26, 0x00000086),
    (27, 0x00000000),
    (32, 0x00000000),
    (33, 0x00000000),
    (34, 0xfffff000),
    (37, 0xff000000),
    (41, 0xff3fffff),
    (42, 0xffffffc0),
    (50, 0x00000000),
    (51, 0xec000000),
    (62, 0xfeffffff),
];

/// Free-MR QP 8: RTR->RTS context.
const FMR_RTS_CTX: &[(usize, u32)] = &[
    (6, 0xe0000000),
    (14, 0x60000000),
    (40, 0x00003f91),
    (42, 0x00080800),
    (48, 0x00080800),
    (52, 0xe7000000),
    (54, 0x08080000),
    (55, 0x00080800),
    (56, 0x00003f91),
    (60, 0x00000808),
];

/// Free-MR QP 8: Its mask.
const FMR_RTS_MASK: &[(usize, u32)] = &[
    (6, 0x07ffffff),
    (14, 0x1fffffff),
    (26, 0xfffffffe),
    (40, 0x00000000),
    (41, 0xfff00000),
    (42, 0x000000ff),
    (44, 0x00000000),
    (45, 0xfff00000),
    (48, 0x00000000),
    (52, 0x00ffffff),
    (54, 0x00000000),
    (55, 0x00000000),
    (56, 0x00000000),
    (57, 0xf0000000),
    (59, 0x0000ff00),
    (60, 0xc0000000),
    (61, 0xe1000000),
];

/// The context and mask words of a 256-byte (HIP08) MODIFY_QPC.
fn posted_hip08(img: &QpcImage) -> ([u32; 128], [u32; 128]) {
    let (words, n) = img.mailbox_words(256);
    let half = n / 2;
    let mut ctx = [0u32; 128];
    let mut mask = [u32::MAX; 128];
    for i in 0..half {
        ctx[i] = u32::from_le(words[i]);
        mask[i] = u32::from_le(words[half + i]);
    }
    (ctx, mask)
}

/// The free-MR QP's modifies as `qp/free_mr.rs` asks for them (INIT->INIT
/// on a RESET QP with REMOTE_WRITE; RTR with the SL alone and the loopback
/// indicator; RTS with the free-MR PSN, retry count and timeout) give the
/// C driver's words.
pub fn check_free_mr_modifies() -> Check {
    let init = InitParams {
        serv_type: serv::RC,
        pdn: 0,
        rq_max_gs: 2,
        sge_cnt: 0,
        sq_wqe_cnt: 128,
        rq_wqe_cnt: 128,
        rq_record_db: true,
        rdb_dma: 0,
        owner_db: false,
        rx_cqn: 0,
        tx_cqn: 0,
        srqn: None,
        xrcdn: None,
        v3: false,
        stash: false,
    };
    // IB_ACCESS_REMOTE_WRITE.
    let remote_write = 1 << 1;
    let mut img = QpcImage::new();
    init_to_init(&mut img, &init);
    opt_fields(
        &mut img,
        &OptParams {
            access: Some((remote_write, 0)),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Init, false);
    let (c, m) = posted_hip08(&img);
    expect(exactly(&c, FMR_INIT_CTX, 0), "free-MR INIT->INIT context")?;
    expect(
        exactly(&m, FMR_INIT_MASK, u32::MAX),
        "free-MR INIT->INIT mask",
    )?;

    let mut img = QpcImage::new();
    init_to_rtr(
        &mut img,
        &RtrParams {
            buf: WqeBufParams {
                wqe_sge_ba: 0x007f_2e00 << 3,
                sq_hop: 2,
                sge_hop: 0,
                rq_hop: 2,
                ba_pg_shift: 12,
                buf_pg_shift: 12,
                rq_cur_blk: 0x3f93 << 12,
                rq_nxt_blk: Some(0x3f94 << 12),
            },
            irrl_ba: 0x0024_0200 << 6,
            trrl_ba: (0x90 << 20) | (0x4600 << 4),
            sig_type: 0,
            lbi: Some(1),
            dest_qpn: Some(8),
            dmac: [0; 6],
            mtu_enum: Some(1),
            mtu_bytes: 256,
            window_cong: false,
            max_ack_req_msg_len: 0,
            rq_inline: None,
            cqe_inline: None,
        },
    );
    set_sl(&mut img, 0);
    opt_fields(
        &mut img,
        &OptParams {
            rq_psn: Some(0x808),
            max_dest_rd_atomic: Some(0),
            access: Some((remote_write, 0)),
            // HIP08 forces the 10 ns timer.
            min_rnr_timer: Some(1),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Rtr, false);
    let (c, m) = posted_hip08(&img);
    expect(exactly(&c, FMR_RTR_CTX, 0), "free-MR INIT->RTR context")?;
    expect(
        exactly(&m, FMR_RTR_MASK, u32::MAX),
        "free-MR INIT->RTR mask",
    )?;

    let mut img = QpcImage::new();
    rtr_to_rts(&mut img, 0x3f91 << 12, 0);
    opt_fields(
        &mut img,
        &OptParams {
            timeout: ack_timeout(HwRev::HIP08, 0x12),
            retry_cnt: Some(7),
            rnr_retry: Some(0),
            sq_psn: Some(0x808),
            max_rd_atomic: Some(0),
            ..Default::default()
        },
    );
    finish(&mut img, QpState::Rts, false);
    let (c, m) = posted_hip08(&img);
    expect(exactly(&c, FMR_RTS_CTX, 0), "free-MR RTR->RTS context")?;
    expect(exactly(&m, FMR_RTS_MASK, u32::MAX), "free-MR RTR->RTS mask")
}
