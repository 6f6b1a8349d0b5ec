// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Decoding the capability queries of HIP08/HIP09 (`core` only):
//! QUERY_PF_CAPS_NUM, QUERY_PF_RES and QUERY_PF_TIMER_RES, with the same
//! derivations as the C driver's `hns_roce_query_caps`, `load_func_res_caps`
//! and `load_pf_timer_res_caps`.

use crate::cmdq::desc::{chain, CmqData, Desc};
use crate::field::Field;
use crate::hem::{calc_pg_sz, hw_hopnum, HemType, PgSz, HOP_NUM_0};
use crate::hns_roce_hw_v2::consts::{cap_flag, cmq_op};
use crate::hw_rev::HwRev;

/// Shorthand for a payload field.
const fn f(h: u32, l: u32) -> Field<CmqData> {
    Field::new(h, l)
}

// caps_a: byte-oriented; a byte at offset o is bits 8*o+7..8*o.
const A_LOCAL_CA_ACK_DELAY: Field<CmqData> = f(15, 8);
const A_MAX_SQ_SG: Field<CmqData> = f(31, 16);
const A_MAX_SQ_INLINE: Field<CmqData> = f(47, 32);
const A_MAX_RQ_SG: Field<CmqData> = f(63, 48);
const A_MAX_SRQ_SGES: Field<CmqData> = f(143, 128);
const A_NUM_AEQ_VECTORS: Field<CmqData> = f(151, 144);
const A_NUM_OTHER_VECTORS: Field<CmqData> = f(159, 152);
const A_MAX_SQ_DESC_SZ: Field<CmqData> = RES_B_GMV_BT_IDX;
const A_MAX_RQ_DESC_SZ: Field<CmqData> = f(175, 168);
const A_CQE_SZ: Field<CmqData> = f(191, 184);
// caps_b.
const B_MTPT_ENTRY_SZ: Field<CmqData> = RES_A_VF_ID;
const B_IRRL_ENTRY_SZ: Field<CmqData> = f(15, 8);
const B_TRRL_ENTRY_SZ: Field<CmqData> = f(23, 16);
const B_CQC_ENTRY_SZ: Field<CmqData> = f(31, 24);
const B_SRQC_ENTRY_SZ: Field<CmqData> = RES_B_SMAC_IDX;
const B_IDX_ENTRY_SZ: Field<CmqData> = f(47, 40);
const B_SCCC_SZ: Field<CmqData> = f(55, 48);
const B_MAX_MTU: Field<CmqData> = f(63, 56);
const B_QPC_SZ: Field<CmqData> = f(79, 64);
const B_MIN_CQES: Field<CmqData> = f(119, 112);
const B_MIN_WQES: Field<CmqData> = f(127, 120);
const B_PAGE_SIZE_CAP: Field<CmqData> = f(159, 128);
const B_PKEY_TABLE_LEN: Field<CmqData> = RES_B_GMV_BT_IDX;
const B_PHY_NUM_UARS: Field<CmqData> = f(175, 168);
const B_CTX_HOP_NUM: Field<CmqData> = f(183, 176);
const B_PBL_HOP_NUM: Field<CmqData> = f(191, 184);
// caps_c (`PF_CAPS_C_*`).
const C_NUM_PDS: Field<CmqData> = f(19, 0);
const C_CAP_FLAGS: Field<CmqData> = f(31, 20);
const C_NUM_CQS: Field<CmqData> = f(51, 32);
const C_MAX_GID: Field<CmqData> = f(60, 52);
const C_CQ_DEPTH: Field<CmqData> = f(86, 64);
const C_NUM_XRCDS: Field<CmqData> = f(91, 87);
const C_NUM_MRWS: Field<CmqData> = f(115, 96);
const C_NUM_QPS: Field<CmqData> = f(147, 128);
const C_MAX_ORD: Field<CmqData> = f(155, 148);
const C_SQ_DEPTH: Field<CmqData> = f(175, 160);
// caps_d (`PF_CAPS_D_*`).
const D_NUM_SRQS: Field<CmqData> = f(19, 0);
const D_RQWQE_HOP_NUM: Field<CmqData> = f(21, 20);
const D_EX_SGE_HOP_NUM: Field<CmqData> = f(23, 22);
const D_SQWQE_HOP_NUM: Field<CmqData> = f(25, 24);
const D_CONG_CAP: Field<CmqData> = f(29, 26);
const D_SRQ_DEPTH: Field<CmqData> = f(47, 32);
const D_CAP_FLAGS_EX: Field<CmqData> = f(63, 48);
const D_CEQ_DEPTH: Field<CmqData> = f(85, 64);
const D_NUM_CEQS: Field<CmqData> = f(95, 86);
const D_AEQ_DEPTH: Field<CmqData> = f(117, 96);
const D_DEFAULT_ALG: Field<CmqData> = f(127, 122);
const D_RSV_PDS: Field<CmqData> = f(147, 128);
const D_NUM_UARS: Field<CmqData> = f(155, 148);
const D_RSV_QPS: Field<CmqData> = f(179, 160);
const D_RSV_UARS: Field<CmqData> = f(187, 180);
// caps_e (`PF_CAPS_E_*`).
const E_RSV_MRWS: Field<CmqData> = f(19, 0);
const E_CHUNK_SIZE_SHIFT: Field<CmqData> = f(31, 20);
const E_RSV_CQS: Field<CmqData> = f(51, 32);
const E_RSV_XRCDS: Field<CmqData> = f(63, 52);
const E_RSV_SRQS: Field<CmqData> = f(83, 64);
const E_RSV_LKEYS: Field<CmqData> = f(115, 96);
// caps_f.
const F_MAX_ACK_REQ_MSG_LEN: Field<CmqData> = ENTRY_SIZE_TYPE;
// QUERY_PF_RES (`FUNC_RES_*`).
const RES_A_QPC_BT_NUM: Field<CmqData> = f(59, 48);
const RES_A_SRQC_BT_NUM: Field<CmqData> = f(89, 80);
const RES_A_CQC_BT_NUM: Field<CmqData> = f(121, 112);
const RES_A_MPT_BT_NUM: Field<CmqData> = f(153, 144);
const RES_A_EQC_BT_NUM: Field<CmqData> = f(185, 176);
const RES_B_SMAC_NUM: Field<CmqData> = f(48, 40);
const RES_B_SGID_NUM: Field<CmqData> = f(80, 72);
const RES_B_QID_NUM: Field<CmqData> = f(122, 112);
const RES_B_SCCC_BT_NUM: Field<CmqData> = f(145, 137);
const RES_B_GMV_BT_NUM: Field<CmqData> = f(176, 168);
const RES_A_VF_ID: Field<CmqData> = f(7, 0);
const RES_A_QPC_BT_IDX: Field<CmqData> = f(42, 32);
const RES_A_SRQC_BT_IDX: Field<CmqData> = f(72, 64);
const RES_A_CQC_BT_IDX: Field<CmqData> = f(104, 96);
const RES_A_MPT_BT_IDX: Field<CmqData> = f(136, 128);
const RES_A_EQC_BT_IDX: Field<CmqData> = f(168, 160);
const RES_V_QID_NUM: Field<CmqData> = f(115, 112);
const RES_B_QID_IDX: Field<CmqData> = f(105, 96);
const RES_B_SCCC_BT_IDX: Field<CmqData> = f(136, 128);
const RES_V_GMV_BT_NUM: Field<CmqData> = f(184, 176);
const RES_B_GMV_BT_IDX: Field<CmqData> = f(167, 160);
const RES_B_SGID_IDX: Field<CmqData> = f(71, 64);
const RES_B_SMAC_IDX: Field<CmqData> = f(39, 32);
// CFG_ENTRY_SIZE.
const ENTRY_SIZE_TYPE: Field<CmqData> = f(31, 0);
const ENTRY_SIZE_VALUE: Field<CmqData> = f(191, 160);
// CFG_BT_ATTR: (BA_PGSZ, BUF_PGSZ, HOPNUM) for QPC, SRQC, CQC, MPT, SCCC.
const BT_ATTR: [(Field<CmqData>, Field<CmqData>, Field<CmqData>); 5] = [
    (f(3, 0), f(7, 4), f(9, 8)),
    (f(35, 32), f(39, 36), f(41, 40)),
    (f(67, 64), f(71, 68), f(73, 72)),
    (f(99, 96), f(103, 100), f(105, 104)),
    (f(131, 128), f(135, 132), f(137, 136)),
];
// QUERY_PF_TIMER_RES.
const TIMER_QPC_ITEM_NUM: Field<CmqData> = f(60, 48);
const TIMER_CQC_ITEM_NUM: Field<CmqData> = f(91, 80);

/// Shift of the extended capability flags (`HNS_ROCE_CAP_FLAGS_EX_SHIFT`).
pub const CAP_FLAGS_EX_SHIFT: u32 = 12;
/// Page sizes assumed when the firmware does not list the kernel's
/// (`HNS_ROCE_V2_PAGE_SIZE_SUPPORTED`).
pub const PAGE_SIZE_SUPPORTED: u32 = 0x0fff_f000;

/// Why the answer could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapsError {
    /// Fewer descriptors than the command has.
    TooFewDescriptors,
    /// A count the driver divides by, or shifts by, is out of range.
    BadValue(&'static str),
}

/// The capabilities the driver works with (`struct hns_roce_caps`, the
/// part filled from firmware queries).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Caps {
    pub local_ca_ack_delay: u32,
    pub max_sq_sg: u32,
    pub max_sq_inline: u32,
    pub max_rq_sg: u32,
    pub max_srq_sges: u32,
    pub num_aeq_vectors: u32,
    pub num_other_vectors: u32,
    pub max_sq_desc_sz: u32,
    pub max_rq_desc_sz: u32,
    pub cqe_sz: u32,
    pub mtpt_entry_sz: u32,
    pub irrl_entry_sz: u32,
    pub trrl_entry_sz: u32,
    pub cqc_entry_sz: u32,
    pub srqc_entry_sz: u32,
    pub idx_entry_sz: u32,
    pub sccc_sz: u32,
    pub max_mtu: u32,
    pub qpc_sz: u32,
    pub min_cqes: u32,
    pub min_wqes: u32,
    pub page_size_cap: u32,
    pub pkey_table_len: u32,
    pub phy_num_uars: u32,
    pub ctx_hop_num: u32,
    pub pbl_hop_num: u32,
    pub num_pds: u32,
    pub flags: u32,
    pub num_cqs: u32,
    pub gid_table_len: u32,
    pub max_cqes: u32,
    pub num_xrcds: u32,
    pub num_mtpts: u32,
    pub num_qps: u32,
    pub max_qp_init_rdma: u32,
    pub max_qp_dest_rdma: u32,
    pub max_wqes: u32,
    pub num_srqs: u32,
    pub wqe_rq_hop_num: u32,
    pub wqe_sge_hop_num: u32,
    pub wqe_sq_hop_num: u32,
    pub cong_cap: u32,
    pub max_srq_wrs: u32,
    pub ceqe_depth: u32,
    pub num_comp_vectors: u32,
    pub aeqe_depth: u32,
    pub default_cong_type: u32,
    pub reserved_pds: u32,
    pub num_uars: u32,
    pub reserved_qps: u32,
    pub reserved_uars: u32,
    pub reserved_mrws: u32,
    pub chunk_sz: u32,
    pub reserved_cqs: u32,
    pub reserved_xrcds: u32,
    pub reserved_srqs: u32,
    pub reserved_lkey: u32,
    pub max_ack_req_msg_len: u32,
    pub qpc_bt_num: u32,
    pub srqc_bt_num: u32,
    pub cqc_bt_num: u32,
    pub mpt_bt_num: u32,
    pub eqc_bt_num: u32,
    pub smac_bt_num: u32,
    pub sgid_bt_num: u32,
    pub sl_num: u32,
    pub sccc_bt_num: u32,
    pub gmv_bt_num: u32,
    pub qpc_timer_bt_num: u32,
    pub cqc_timer_bt_num: u32,
    // Derived by `apply_func_caps`.
    pub qpc_hop_num: u32,
    pub sccc_hop_num: u32,
    pub srqc_hop_num: u32,
    pub cqc_hop_num: u32,
    pub mpt_hop_num: u32,
    pub mtt_hop_num: u32,
    pub cqe_hop_num: u32,
    pub srqwqe_hop_num: u32,
    pub idx_hop_num: u32,
    pub qpc_timer_hop_num: u32,
    pub cqc_timer_hop_num: u32,
    pub gmv_hop_num: u32,
    pub eqe_hop_num: u32,
    pub qpc_timer_entry_sz: u32,
    pub cqc_timer_entry_sz: u32,
    pub mtt_entry_sz: u32,
    pub gmv_entry_sz: u32,
    pub gmv_entry_num: u32,
    pub num_srqwqe_segs: u32,
    pub num_idx_segs: u32,
    pub ceqe_size: u32,
    pub aeqe_size: u32,
    pub qpc_pg: PgSz,
    pub sccc_pg: PgSz,
    pub cqc_pg: PgSz,
    pub cqe_pg: PgSz,
    pub mpt_pg: PgSz,
    pub pbl_pg: PgSz,
    pub srqc_pg: PgSz,
    pub srqwqe_pg: PgSz,
    pub idx_pg: PgSz,
}

/// `1 << v`, refusing shifts that do not fit in 32 bits.
fn pow2(v: u32, what: &'static str) -> Result<u32, CapsError> {
    1u32.checked_shl(v).ok_or(CapsError::BadValue(what))
}

/// The next power of two (`roundup_pow_of_two`; 0 stays 0 here, where the C
/// macro would be undefined).
fn roundup_pow2(v: u32) -> u32 {
    if v == 0 {
        0
    } else {
        v.checked_next_power_of_two().unwrap_or(1 << 31)
    }
}

/// Decodes the QUERY_PF_CAPS_NUM answer of a PF (5 descriptors on HIP08,
/// 6 from HIP09 on). `page_size` is the kernel's `PAGE_SIZE`.
pub fn parse_pf_caps(d: &[Desc], page_size: u32) -> Result<Caps, CapsError> {
    let [a, b, c, dd, e, rest @ ..] = d else {
        return Err(CapsError::TooFewDescriptors);
    };
    let mut caps = Caps {
        local_ca_ack_delay: a.get(A_LOCAL_CA_ACK_DELAY),
        max_sq_sg: a.get(A_MAX_SQ_SG),
        max_sq_inline: a.get(A_MAX_SQ_INLINE),
        max_rq_sg: roundup_pow2(a.get(A_MAX_RQ_SG)),
        max_srq_sges: roundup_pow2(a.get(A_MAX_SRQ_SGES)),
        num_aeq_vectors: a.get(A_NUM_AEQ_VECTORS),
        num_other_vectors: a.get(A_NUM_OTHER_VECTORS),
        max_sq_desc_sz: a.get(A_MAX_SQ_DESC_SZ),
        max_rq_desc_sz: a.get(A_MAX_RQ_DESC_SZ),
        cqe_sz: a.get(A_CQE_SZ),
        mtpt_entry_sz: b.get(B_MTPT_ENTRY_SZ),
        irrl_entry_sz: b.get(B_IRRL_ENTRY_SZ),
        trrl_entry_sz: b.get(B_TRRL_ENTRY_SZ),
        cqc_entry_sz: b.get(B_CQC_ENTRY_SZ),
        srqc_entry_sz: b.get(B_SRQC_ENTRY_SZ),
        idx_entry_sz: b.get(B_IDX_ENTRY_SZ),
        sccc_sz: b.get(B_SCCC_SZ),
        max_mtu: b.get(B_MAX_MTU),
        qpc_sz: b.get(B_QPC_SZ),
        min_cqes: b.get(B_MIN_CQES),
        min_wqes: b.get(B_MIN_WQES),
        page_size_cap: b.get(B_PAGE_SIZE_CAP),
        pkey_table_len: b.get(B_PKEY_TABLE_LEN),
        phy_num_uars: b.get(B_PHY_NUM_UARS),
        ctx_hop_num: b.get(B_CTX_HOP_NUM),
        pbl_hop_num: b.get(B_PBL_HOP_NUM),
        num_pds: pow2(c.get(C_NUM_PDS), "NUM_PDS")?,
        flags: c.get(C_CAP_FLAGS) | dd.get(D_CAP_FLAGS_EX) << CAP_FLAGS_EX_SHIFT,
        num_cqs: pow2(c.get(C_NUM_CQS), "NUM_CQS")?,
        gid_table_len: c.get(C_MAX_GID),
        max_cqes: pow2(c.get(C_CQ_DEPTH), "CQ_DEPTH")?,
        num_xrcds: pow2(c.get(C_NUM_XRCDS), "NUM_XRCDS")?,
        num_mtpts: pow2(c.get(C_NUM_MRWS), "NUM_MRWS")?,
        num_qps: pow2(c.get(C_NUM_QPS), "NUM_QPS")?,
        max_qp_init_rdma: c.get(C_MAX_ORD),
        max_qp_dest_rdma: c.get(C_MAX_ORD),
        max_wqes: pow2(c.get(C_SQ_DEPTH), "SQ_DEPTH")?,
        num_srqs: pow2(dd.get(D_NUM_SRQS), "NUM_SRQS")?,
        wqe_rq_hop_num: dd.get(D_RQWQE_HOP_NUM),
        wqe_sge_hop_num: dd.get(D_EX_SGE_HOP_NUM),
        wqe_sq_hop_num: dd.get(D_SQWQE_HOP_NUM),
        cong_cap: dd.get(D_CONG_CAP),
        max_srq_wrs: pow2(dd.get(D_SRQ_DEPTH), "SRQ_DEPTH")?,
        ceqe_depth: pow2(dd.get(D_CEQ_DEPTH), "CEQ_DEPTH")?,
        num_comp_vectors: dd.get(D_NUM_CEQS),
        aeqe_depth: pow2(dd.get(D_AEQ_DEPTH), "AEQ_DEPTH")?,
        default_cong_type: dd.get(D_DEFAULT_ALG),
        reserved_pds: dd.get(D_RSV_PDS),
        num_uars: pow2(dd.get(D_NUM_UARS), "NUM_UARS")?,
        reserved_qps: dd.get(D_RSV_QPS),
        reserved_uars: dd.get(D_RSV_UARS),
        reserved_mrws: e.get(E_RSV_MRWS),
        chunk_sz: pow2(e.get(E_CHUNK_SIZE_SHIFT), "CHUNK_SIZE_SHIFT")?,
        reserved_cqs: e.get(E_RSV_CQS),
        reserved_xrcds: e.get(E_RSV_XRCDS),
        reserved_srqs: e.get(E_RSV_SRQS),
        reserved_lkey: e.get(E_RSV_LKEYS),
        max_ack_req_msg_len: rest.first().map_or(0, |x| x.get(F_MAX_ACK_REQ_MSG_LEN)),
        ..Caps::default()
    };
    let ctx_hop = caps.ctx_hop_num;
    let pbl_hop = caps.pbl_hop_num;
    caps.qpc_hop_num = ctx_hop;
    caps.sccc_hop_num = ctx_hop;
    caps.srqc_hop_num = ctx_hop;
    caps.cqc_hop_num = ctx_hop;
    caps.mpt_hop_num = ctx_hop;
    caps.mtt_hop_num = pbl_hop;
    caps.cqe_hop_num = pbl_hop;
    caps.srqwqe_hop_num = pbl_hop;
    caps.idx_hop_num = pbl_hop;
    if caps.page_size_cap & page_size == 0 {
        caps.page_size_cap = PAGE_SIZE_SUPPORTED;
    }
    Ok(caps)
}

/// Adds the QUERY_PF_RES answer, shared among `func_num` functions.
pub fn apply_pf_res(caps: &mut Caps, d: &[Desc], func_num: u32) -> Result<(), CapsError> {
    let [a, b, ..] = d else {
        return Err(CapsError::TooFewDescriptors);
    };
    if func_num == 0 {
        return Err(CapsError::BadValue("func_num"));
    }
    caps.qpc_bt_num = a.get(RES_A_QPC_BT_NUM) / func_num;
    caps.srqc_bt_num = a.get(RES_A_SRQC_BT_NUM) / func_num;
    caps.cqc_bt_num = a.get(RES_A_CQC_BT_NUM) / func_num;
    caps.mpt_bt_num = a.get(RES_A_MPT_BT_NUM) / func_num;
    caps.eqc_bt_num = a.get(RES_A_EQC_BT_NUM) / func_num;
    caps.smac_bt_num = b.get(RES_B_SMAC_NUM) / func_num;
    caps.sgid_bt_num = b.get(RES_B_SGID_NUM) / func_num;
    caps.sccc_bt_num = b.get(RES_B_SCCC_BT_NUM) / func_num;
    caps.sl_num = b.get(RES_B_QID_NUM) / func_num;
    caps.gmv_bt_num = b.get(RES_B_GMV_BT_NUM) / func_num;
    Ok(())
}

/// Adds the QUERY_PF_TIMER_RES answer.
pub fn apply_timer_res(caps: &mut Caps, d: &Desc) {
    caps.qpc_timer_bt_num = d.get(TIMER_QPC_ITEM_NUM);
    caps.cqc_timer_bt_num = d.get(TIMER_CQC_ITEM_NUM);
}

/// MTT entry size (`HNS_ROCE_V2_MTT_ENTRY_SZ`).
const MTT_ENTRY_SZ: u32 = 64;
/// Starting hop number of MR PBLs (`HNS_ROCE_PBL_HOP_NUM`).
const PBL_HOP_NUM: u32 = 2;
/// SRQ WQE and index segments (`HNS_ROCE_V2_MAX_SRQWQE_SEGS`, `..._IDX_SEGS`).
const MAX_SEGS: u32 = 0x100_0000;
/// Hardware page size.
const HW_PAGE_SIZE: u32 = 4096;
/// Largest useful GID table (sgid_index is a u8).
const MAX_GID_TBL_LEN: u32 = 256;
/// MR PBL BT pages of 16 KiB (`HNS_ROCE_BA_PG_SZ_SUPPORTED_16K`).
const PBL_BA_PG_SZ_16K: u32 = 2;

/// Fills in what the driver derives rather than reads (`apply_func_caps`
/// and `set_hem_page_size`): entry sizes, HIP09 overrides, hop numbers and
/// the page sizes of every HEM table. `num_vectors` is the handle's MSI-X
/// count, `page_size` the kernel's.
pub fn apply_func_caps(
    caps: &mut Caps,
    rev: HwRev,
    func_num: u32,
    num_vectors: u32,
    page_size: u32,
) {
    caps.qpc_timer_entry_sz = page_size;
    caps.cqc_timer_entry_sz = page_size;
    caps.mtt_entry_sz = MTT_ENTRY_SZ;
    caps.pbl_hop_num = PBL_HOP_NUM;
    caps.qpc_timer_hop_num = HOP_NUM_0;
    caps.cqc_timer_hop_num = HOP_NUM_0;
    caps.num_srqwqe_segs = MAX_SEGS;
    caps.num_idx_segs = MAX_SEGS;
    if caps.num_comp_vectors == 0 {
        // One AEQ and one abnormal vector besides the CEQs.
        caps.num_comp_vectors = caps
            .eqc_bt_num
            .saturating_sub(1)
            .min(num_vectors.saturating_sub(2));
    }
    if rev.is_hip09() {
        caps.eqe_hop_num = 1;
        caps.ceqe_size = 64;
        caps.aeqe_size = 64;
        caps.qpc_sz = 512;
        caps.cqe_sz = 64;
        caps.sccc_sz = 64;
        caps.gmv_entry_sz = 32;
        caps.gmv_hop_num = HOP_NUM_0;
        let per_page = HW_PAGE_SIZE / caps.gmv_entry_sz;
        caps.gid_table_len = MAX_GID_TBL_LEN.min(caps.gmv_bt_num.saturating_mul(per_page));
        caps.gmv_entry_num = caps.gmv_bt_num.saturating_mul(per_page);
    } else {
        caps.eqe_hop_num = 2;
        caps.ceqe_size = 4;
        caps.aeqe_size = 16;
        caps.gid_table_len /= func_num.max(1);
    }
    set_hem_page_size(caps, u64::from(page_size));
}

/// `calc_pg_sz`, keeping `old` for hop numbers it rejects (the C driver
/// zeroes both before the switch and returns early).
fn pg(n: u32, sz: u32, hop: u32, bt: u32, page: u64, ty: HemType) -> PgSz {
    calc_pg_sz(n, sz, hop, bt, page, ty).unwrap_or_default()
}

fn set_hem_page_size(c: &mut Caps, page: u64) {
    c.mpt_pg = pg(
        c.num_mtpts,
        c.mtpt_entry_sz,
        c.mpt_hop_num,
        c.mpt_bt_num,
        page,
        HemType::Mtpt,
    );
    c.pbl_pg = PgSz {
        buf: 0,
        ba: PBL_BA_PG_SZ_16K,
    };
    c.qpc_pg = pg(
        c.num_qps,
        c.qpc_sz,
        c.qpc_hop_num,
        c.qpc_bt_num,
        page,
        HemType::Qpc,
    );
    c.sccc_pg = if c.flags & cap_flag::QP_FLOW_CTRL != 0 {
        pg(
            c.num_qps,
            c.sccc_sz,
            c.sccc_hop_num,
            c.sccc_bt_num,
            page,
            HemType::Sccc,
        )
    } else {
        PgSz::default()
    };
    c.cqc_pg = pg(
        c.num_cqs,
        c.cqc_entry_sz,
        c.cqc_hop_num,
        c.cqc_bt_num,
        page,
        HemType::Cqc,
    );
    c.cqe_pg = pg(c.max_cqes, c.cqe_sz, c.cqe_hop_num, 1, page, HemType::Cqe);
    if c.flags & cap_flag::SRQ != 0 {
        c.srqc_pg = pg(
            c.num_srqs,
            c.srqc_entry_sz,
            c.srqc_hop_num,
            c.srqc_bt_num,
            page,
            HemType::Srqc,
        );
        c.srqwqe_pg = pg(
            c.num_srqwqe_segs,
            c.mtt_entry_sz,
            c.srqwqe_hop_num,
            1,
            page,
            HemType::SrqWqe,
        );
        c.idx_pg = pg(
            c.num_idx_segs,
            c.idx_entry_sz,
            c.idx_hop_num,
            1,
            page,
            HemType::Idx,
        );
    }
}

/// ALLOC_VF_RES for function `vf` (`config_vf_hem_resource`).
pub fn alloc_vf_res_cmd(c: &Caps, vf: u32, rev: HwRev) -> [Desc; 2] {
    let [mut a, mut b] = chain::<2>(cmq_op::ALLOC_VF_RES, false);
    let (ra, rb) = (&mut a.data, &mut b.data);
    ra.write(RES_A_VF_ID, vf);
    ra.write(RES_A_QPC_BT_NUM, c.qpc_bt_num);
    ra.write(RES_A_QPC_BT_IDX, vf * c.qpc_bt_num);
    ra.write(RES_A_SRQC_BT_NUM, c.srqc_bt_num);
    ra.write(RES_A_SRQC_BT_IDX, vf * c.srqc_bt_num);
    ra.write(RES_A_CQC_BT_NUM, c.cqc_bt_num);
    ra.write(RES_A_CQC_BT_IDX, vf * c.cqc_bt_num);
    ra.write(RES_A_MPT_BT_NUM, c.mpt_bt_num);
    ra.write(RES_A_MPT_BT_IDX, vf * c.mpt_bt_num);
    ra.write(RES_A_EQC_BT_NUM, c.eqc_bt_num);
    ra.write(RES_A_EQC_BT_IDX, vf * c.eqc_bt_num);
    // FUNC_RES_V_QID_NUM on both revisions, as the C driver writes it.
    rb.write(RES_V_QID_NUM, c.sl_num);
    rb.write(RES_B_QID_IDX, vf * c.sl_num);
    rb.write(RES_B_SCCC_BT_NUM, c.sccc_bt_num);
    rb.write(RES_B_SCCC_BT_IDX, vf * c.sccc_bt_num);
    if rev.is_hip09() {
        rb.write(RES_V_GMV_BT_NUM, c.gmv_bt_num);
        rb.write(RES_B_GMV_BT_IDX, vf * c.gmv_bt_num);
    } else {
        rb.write(RES_B_SGID_NUM, c.sgid_bt_num);
        rb.write(RES_B_SGID_IDX, vf * c.sgid_bt_num);
        rb.write(RES_B_SMAC_NUM, c.smac_bt_num);
        rb.write(RES_B_SMAC_IDX, vf * c.smac_bt_num);
    }
    [a, b]
}

/// CFG_BT_ATTR (`hns_roce_v2_set_bt`); `pg_shift_offset` is
/// `PAGE_SHIFT - 12`.
pub fn set_bt_cmd(c: &Caps, pg_shift_offset: u32) -> Desc {
    let mut d = Desc::new(cmq_op::CFG_BT_ATTR, false);
    let tables = [
        (c.qpc_pg, c.qpc_hop_num, c.num_qps),
        (c.srqc_pg, c.srqc_hop_num, c.num_srqs),
        (c.cqc_pg, c.cqc_hop_num, c.num_cqs),
        (c.mpt_pg, c.mpt_hop_num, c.num_mtpts),
        (c.sccc_pg, c.sccc_hop_num, c.num_qps),
    ];
    for ((p, hop, count), (ba, buf, hopf)) in tables.into_iter().zip(BT_ATTR) {
        d.data.write(ba, p.ba + pg_shift_offset);
        d.data.write(buf, p.buf + pg_shift_offset);
        d.data.write(hopf, hw_hopnum(hop, count));
    }
    d
}

/// What CFG_ENTRY_SIZE configures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntrySize {
    /// QP context size.
    Qpc = 1,
    /// SCC context size.
    Sccc = 2,
}

/// CFG_ENTRY_SIZE (`config_hem_entry_size`).
pub fn entry_size_cmd(ty: EntrySize, value: u32) -> Desc {
    let mut d = Desc::new(cmq_op::CFG_ENTRY_SIZE, false);
    d.data.write(ENTRY_SIZE_TYPE, ty as u32);
    d.data.write(ENTRY_SIZE_VALUE, value);
    d
}
