// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `hns_roce_hw_v2/caps.rs`: capability answers written out as raw
//! little-endian words by hand (from the C structs' byte and bit layout),
//! and the values the C driver derives from them.

use super::{expect, Check};
use crate::cmdq::desc::Desc;
use crate::hns_roce_hw_v2::caps::{
    alloc_vf_res_cmd, apply_func_caps, apply_pf_res, apply_timer_res, entry_size_cmd,
    parse_pf_caps, set_bt_cmd, EntrySize,
};
use crate::hns_roce_hw_v2::consts::cmq_op;
use crate::hw_rev::HwRev;

fn desc(words: [u32; 6]) -> Desc {
    let mut w = [0u32; 8];
    w[0] = u32::from(cmq_op::QUERY_PF_CAPS_NUM).to_le();
    for (d, s) in w[2..].iter_mut().zip(words) {
        *d = s.to_le();
    }
    Desc::from_le_words(&w)
}

/// A HIP09 PF answer, word by word.
fn answer() -> [Desc; 6] {
    [
        // caps_a: ports 1, ack delay 0, max_sq_sg 64 | max_sq_inline 32,
        // max_rq_sg 5 | rsv, rsv, timers, max_srq_sges 17 | aeq 1, other 1,
        // sq desc 64 | rq desc 16, rsv, cqe_sz 64.
        desc([0x0040_0001, 0x0005_0020, 0, 0, 0x0101_0011, 0x4000_1040]),
        // caps_b: mtpt 64, irrl 64, trrl 48, cqc 64 | srqc 64, idx 4, sccc 64,
        // mtu 5 | qpc_sz 512 | min_cqes 64, min_wqes 64 | page_size_cap |
        // pkey 1, uars 1, ctx hop 1, pbl hop 2.
        desc([
            0x4030_4040,
            0x0540_0440,
            0x0000_0200,
            0x4040_0000,
            0xffff_f000,
            0x0201_0101,
        ]),
        // caps_c: NUM_PDS 16 | flags 0x77f; NUM_CQS 10 | MAX_GID 256;
        // CQ_DEPTH 16 | XRCDS 8; MRWS 12; QPS 8 | ORD 64; sq/rq depth 14.
        desc([
            0x77f0_0010,
            0x1000_000a,
            0x0400_0010,
            0x0000_000c,
            0x0400_0008,
            0x000e_000e,
        ]),
        // caps_d: SRQS 8 | hops rq 2, sge 1, sq 2 | cong 1; srq depth 14 |
        // flags_ex 0x480; CEQ depth 10 | 1 CEQ; AEQ depth 10; NUM_UARS 8;
        // RSV_QPS 8.
        desc([
            0x0660_0008,
            0x0480_000e,
            0x0040_000a,
            0x0000_000a,
            0x0080_0000,
            0x0000_0008,
        ]),
        // caps_e: RSV_MRWS 1 | chunk shift 18; rest 0.
        desc([0x0120_0001, 0, 0, 0, 0, 0]),
        // caps_f: max_ack_req_msg_len 0.
        desc([0; 6]),
    ]
}

/// The decoder derives what `hns_roce_query_caps` derives.
pub fn check_decode() -> Check {
    let c = parse_pf_caps(&answer(), 4096).map_err(|_| "the answer decodes")?;
    expect(
        c.max_sq_sg == 64 && c.max_sq_inline == 32,
        "SQ SGEs and inline",
    )?;
    expect(c.max_rq_sg == 8, "max_rq_sg 5 rounds up to 8")?;
    expect(c.max_srq_sges == 32, "max_srq_sges 17 rounds up to 32")?;
    expect(
        c.num_aeq_vectors == 1 && c.num_other_vectors == 1,
        "vectors",
    )?;
    expect(
        c.max_sq_desc_sz == 64 && c.max_rq_desc_sz == 16 && c.cqe_sz == 64,
        "descriptor sizes",
    )?;
    expect(
        c.mtpt_entry_sz == 64 && c.irrl_entry_sz == 64 && c.trrl_entry_sz == 48,
        "MPT/IRRL/TRRL sizes",
    )?;
    expect(c.qpc_sz == 512 && c.max_mtu == 5, "QPC size, MTU")?;
    expect(
        c.ctx_hop_num == 1 && c.pbl_hop_num == 2 && c.qpc_hop_num == 1 && c.cqe_hop_num == 2,
        "hops",
    )?;
    expect(
        c.num_pds == 1 << 16 && c.num_cqs == 1024 && c.gid_table_len == 256,
        "PDs, CQs, GIDs",
    )?;
    expect(
        c.max_cqes == 1 << 16 && c.num_xrcds == 256 && c.num_mtpts == 4096,
        "CQEs, XRCDs, MRs",
    )?;
    expect(
        c.num_qps == 256 && c.max_qp_init_rdma == 64 && c.max_wqes == 1 << 14,
        "QPs, ORD, WQEs",
    )?;
    expect(c.flags == 0x0048_077f, "flags: low 12 bits | ex << 12")?;
    expect(c.num_srqs == 256 && c.max_srq_wrs == 1 << 14, "SRQs")?;
    expect(
        c.wqe_rq_hop_num == 2 && c.wqe_sge_hop_num == 1 && c.wqe_sq_hop_num == 2,
        "WQE hops",
    )?;
    expect(
        c.ceqe_depth == 1024 && c.num_comp_vectors == 1 && c.aeqe_depth == 1024,
        "EQs",
    )?;
    expect(
        c.num_uars == 256 && c.reserved_qps == 8,
        "UARs, reserved QPs",
    )?;
    expect(
        c.reserved_mrws == 1 && c.chunk_sz == 1 << 18,
        "reserved MRs, chunk size",
    )
}

/// PF resources, timers, the derived caps and the commands built from them.
pub fn check_derived_and_commands() -> Check {
    let mut c = parse_pf_caps(&answer(), 4096).map_err(|_| "the answer decodes")?;
    // QUERY_PF_RES: QPC BT 8 (bits 59..48), SRQC 8, CQC 8, MPT 8, EQC 8;
    // QID 8 (122..112), SCCC 8 (145..137), GMV 2 (176..168).
    let res = [
        desc([0, 8 << 16, 8 << 16, 8 << 16, 8 << 16, 8 << 16]),
        desc([0, 0, 0, 8 << 16, 8 << 9, 2 << 8]),
    ];
    apply_pf_res(&mut c, &res, 1).map_err(|_| "PF_RES decodes")?;
    expect(
        c.qpc_bt_num == 8 && c.eqc_bt_num == 8 && c.sl_num == 8,
        "BT numbers",
    )?;
    expect(
        c.sccc_bt_num == 8 && c.gmv_bt_num == 2,
        "SCCC/GMV BT numbers",
    )?;
    // QUERY_PF_TIMER_RES: QPC items 1 (60..48), CQC items 1 (91..80).
    apply_timer_res(&mut c, &desc([0, 1 << 16, 1 << 16, 0, 0, 0]));
    expect(
        c.qpc_timer_bt_num == 1 && c.cqc_timer_bt_num == 1,
        "timer pages",
    )?;
    apply_func_caps(&mut c, HwRev::HIP09, 1, 8, 4096);
    expect(
        c.gid_table_len == 256 && c.gmv_entry_num == 256,
        "GMV: 2 pages of 128 GIDs",
    )?;
    expect(
        c.eqe_hop_num == 1 && c.aeqe_size == 64 && c.pbl_hop_num == 2,
        "HIP09 EQs and PBL hop",
    )?;
    // CFG_BT_ATTR word 0 (QPC): BA 0, BUF 0, hop 1 -> 0x100; the same for
    // SRQC, CQC, MPT and SCCC with these small tables.
    let bt = set_bt_cmd(&c, 0).to_le_words();
    expect(
        bt[2..7].iter().all(|w| u32::from_le(*w) == 0x100),
        "CFG_BT_ATTR: hop 1, 4K pages",
    )?;
    // ALLOC_VF_RES for function 0: word 1 = QPC_BT_NUM 8 << 16, NEXT on
    // the first descriptor only.
    let [a, b] = alloc_vf_res_cmd(&c, 0, HwRev::HIP09);
    expect(
        u32::from_le(a.to_le_words()[3]) == 8 << 16,
        "ALLOC_VF_RES QPC BTs",
    )?;
    expect(
        a.flag & 4 != 0 && b.flag & 4 == 0,
        "NEXT chains the two descriptors",
    )?;
    // CFG_ENTRY_SIZE: type in word 0, size in word 5.
    let e = entry_size_cmd(EntrySize::Qpc, 512).to_le_words();
    expect(
        u32::from_le(e[2]) == 1 && u32::from_le(e[7]) == 512,
        "CFG_ENTRY_SIZE QPC 512",
    )
}
