// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Decoding the capability queries of HIP08/HIP09 (`core` only):
//! QUERY_PF_CAPS_NUM, QUERY_PF_RES and QUERY_PF_TIMER_RES, with the same
//! derivations as the C driver's `hns_roce_query_caps`, `load_func_res_caps`
//! and `load_pf_timer_res_caps`.

use crate::cmdq::desc::{chain, CmqData, Desc};
use crate::field::Field;
use crate::hem::{calc_pg_sz, hw_hopnum, HemType, PgSz, HOP_NUM_0, HW_PAGE_SIZE};
use crate::hns_roce_hw_v2::cmq_fields::{
    cmq_req, pf_caps_a, pf_caps_b, pf_caps_c, pf_caps_d, pf_caps_e, pf_caps_f,
};
use crate::hns_roce_hw_v2::consts::{cap_flag, cmq_op};
use crate::hw_rev::HwRev;

// The payload fields are generated from the C header
// (`hns_roce_hw_v2/cmq_fields.rs`): `pf_caps_a`..`pf_caps_f` for
// QUERY_PF_CAPS_NUM, `cmq_req` for QUERY_PF_RES (`FUNC_RES_*`),
// QUERY_PF_TIMER_RES, CFG_ENTRY_SIZE and CFG_BT_ATTR.

/// CFG_BT_ATTR: (BA_PGSZ, BUF_PGSZ, HOPNUM) for QPC, SRQC, CQC, MPT, SCCC.
const BT_ATTR: [(Field<CmqData>, Field<CmqData>, Field<CmqData>); 5] = {
    use cmq_req::*;
    [
        (
            CFG_BT_ATTR_QPC_BA_PGSZ,
            CFG_BT_ATTR_QPC_BUF_PGSZ,
            CFG_BT_ATTR_QPC_HOPNUM,
        ),
        (
            CFG_BT_ATTR_SRQC_BA_PGSZ,
            CFG_BT_ATTR_SRQC_BUF_PGSZ,
            CFG_BT_ATTR_SRQC_HOPNUM,
        ),
        (
            CFG_BT_ATTR_CQC_BA_PGSZ,
            CFG_BT_ATTR_CQC_BUF_PGSZ,
            CFG_BT_ATTR_CQC_HOPNUM,
        ),
        (
            CFG_BT_ATTR_MPT_BA_PGSZ,
            CFG_BT_ATTR_MPT_BUF_PGSZ,
            CFG_BT_ATTR_MPT_HOPNUM,
        ),
        (
            CFG_BT_ATTR_SCCC_BA_PGSZ,
            CFG_BT_ATTR_SCCC_BUF_PGSZ,
            CFG_BT_ATTR_SCCC_HOPNUM,
        ),
    ]
};

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
        local_ca_ack_delay: a.get(pf_caps_a::LOCAL_CA_ACK_DELAY),
        max_sq_sg: a.get(pf_caps_a::MAX_SQ_SG),
        max_sq_inline: a.get(pf_caps_a::MAX_SQ_INLINE),
        max_rq_sg: roundup_pow2(a.get(pf_caps_a::MAX_RQ_SG)),
        max_srq_sges: roundup_pow2(a.get(pf_caps_a::MAX_SRQ_SGES)),
        num_aeq_vectors: a.get(pf_caps_a::NUM_AEQ_VECTORS),
        num_other_vectors: a.get(pf_caps_a::NUM_OTHER_VECTORS),
        max_sq_desc_sz: a.get(pf_caps_a::MAX_SQ_DESC_SZ),
        max_rq_desc_sz: a.get(pf_caps_a::MAX_RQ_DESC_SZ),
        cqe_sz: a.get(pf_caps_a::CQE_SZ),
        mtpt_entry_sz: b.get(pf_caps_b::MTPT_ENTRY_SZ),
        irrl_entry_sz: b.get(pf_caps_b::IRRL_ENTRY_SZ),
        trrl_entry_sz: b.get(pf_caps_b::TRRL_ENTRY_SZ),
        cqc_entry_sz: b.get(pf_caps_b::CQC_ENTRY_SZ),
        srqc_entry_sz: b.get(pf_caps_b::SRQC_ENTRY_SZ),
        idx_entry_sz: b.get(pf_caps_b::IDX_ENTRY_SZ),
        sccc_sz: b.get(pf_caps_b::SCCC_SZ),
        max_mtu: b.get(pf_caps_b::MAX_MTU),
        qpc_sz: b.get(pf_caps_b::QPC_SZ),
        min_cqes: b.get(pf_caps_b::MIN_CQES),
        min_wqes: b.get(pf_caps_b::MIN_WQES),
        page_size_cap: b.get(pf_caps_b::PAGE_SIZE_CAP),
        pkey_table_len: b.get(pf_caps_b::PKEY_TABLE_LEN),
        phy_num_uars: b.get(pf_caps_b::PHY_NUM_UARS),
        ctx_hop_num: b.get(pf_caps_b::CTX_HOP_NUM),
        pbl_hop_num: b.get(pf_caps_b::PBL_HOP_NUM),
        num_pds: pow2(c.get(pf_caps_c::PF_CAPS_C_NUM_PDS), "NUM_PDS")?,
        flags: c.get(pf_caps_c::PF_CAPS_C_CAP_FLAGS)
            | dd.get(pf_caps_d::CAP_FLAGS_EX) << CAP_FLAGS_EX_SHIFT,
        num_cqs: pow2(c.get(pf_caps_c::PF_CAPS_C_NUM_CQS), "NUM_CQS")?,
        gid_table_len: c.get(pf_caps_c::PF_CAPS_C_MAX_GID),
        max_cqes: pow2(c.get(pf_caps_c::PF_CAPS_C_CQ_DEPTH), "CQ_DEPTH")?,
        num_xrcds: pow2(c.get(pf_caps_c::PF_CAPS_C_NUM_XRCDS), "NUM_XRCDS")?,
        num_mtpts: pow2(c.get(pf_caps_c::PF_CAPS_C_NUM_MRWS), "NUM_MRWS")?,
        num_qps: pow2(c.get(pf_caps_c::PF_CAPS_C_NUM_QPS), "NUM_QPS")?,
        max_qp_init_rdma: c.get(pf_caps_c::PF_CAPS_C_MAX_ORD),
        max_qp_dest_rdma: c.get(pf_caps_c::PF_CAPS_C_MAX_ORD),
        max_wqes: pow2(c.get(pf_caps_c::SQ_DEPTH), "SQ_DEPTH")?,
        num_srqs: pow2(dd.get(pf_caps_d::PF_CAPS_D_NUM_SRQS), "NUM_SRQS")?,
        wqe_rq_hop_num: dd.get(pf_caps_d::PF_CAPS_D_RQWQE_HOP_NUM),
        wqe_sge_hop_num: dd.get(pf_caps_d::PF_CAPS_D_EX_SGE_HOP_NUM),
        wqe_sq_hop_num: dd.get(pf_caps_d::PF_CAPS_D_SQWQE_HOP_NUM),
        cong_cap: dd.get(pf_caps_d::PF_CAPS_D_CONG_CAP),
        max_srq_wrs: pow2(dd.get(pf_caps_d::SRQ_DEPTH), "SRQ_DEPTH")?,
        ceqe_depth: pow2(dd.get(pf_caps_d::PF_CAPS_D_CEQ_DEPTH), "CEQ_DEPTH")?,
        num_comp_vectors: dd.get(pf_caps_d::PF_CAPS_D_NUM_CEQS),
        aeqe_depth: pow2(dd.get(pf_caps_d::PF_CAPS_D_AEQ_DEPTH), "AEQ_DEPTH")?,
        default_cong_type: dd.get(pf_caps_d::PF_CAPS_D_DEFAULT_ALG),
        reserved_pds: dd.get(pf_caps_d::PF_CAPS_D_RSV_PDS),
        num_uars: pow2(dd.get(pf_caps_d::PF_CAPS_D_NUM_UARS), "NUM_UARS")?,
        reserved_qps: dd.get(pf_caps_d::PF_CAPS_D_RSV_QPS),
        reserved_uars: dd.get(pf_caps_d::PF_CAPS_D_RSV_UARS),
        reserved_mrws: e.get(pf_caps_e::PF_CAPS_E_RSV_MRWS),
        chunk_sz: pow2(
            e.get(pf_caps_e::PF_CAPS_E_CHUNK_SIZE_SHIFT),
            "CHUNK_SIZE_SHIFT",
        )?,
        reserved_cqs: e.get(pf_caps_e::PF_CAPS_E_RSV_CQS),
        reserved_xrcds: e.get(pf_caps_e::PF_CAPS_E_RSV_XRCDS),
        reserved_srqs: e.get(pf_caps_e::PF_CAPS_E_RSV_SRQS),
        reserved_lkey: e.get(pf_caps_e::PF_CAPS_E_RSV_LKEYS),
        max_ack_req_msg_len: rest
            .first()
            .map_or(0, |x| x.get(pf_caps_f::MAX_ACK_REQ_MSG_LEN)),
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
    apply_func_res(caps, d, func_num, false)
}

/// Adds a VF's QUERY_VF_RES answer (`load_func_res_caps` of a VF): its
/// own counts, not divided, with the service levels and GMV BT count at
/// the VF's positions.
pub fn apply_vf_res(caps: &mut Caps, d: &[Desc]) -> Result<(), CapsError> {
    apply_func_res(caps, d, 1, true)
}

#[inline(never)]
fn apply_func_res(caps: &mut Caps, d: &[Desc], func_num: u32, vf: bool) -> Result<(), CapsError> {
    let [a, b, ..] = d else {
        return Err(CapsError::TooFewDescriptors);
    };
    if func_num == 0 {
        return Err(CapsError::BadValue("func_num"));
    }
    caps.qpc_bt_num = a.get(cmq_req::FUNC_RES_A_QPC_BT_NUM) / func_num;
    caps.srqc_bt_num = a.get(cmq_req::FUNC_RES_A_SRQC_BT_NUM) / func_num;
    caps.cqc_bt_num = a.get(cmq_req::FUNC_RES_A_CQC_BT_NUM) / func_num;
    caps.mpt_bt_num = a.get(cmq_req::FUNC_RES_A_MPT_BT_NUM) / func_num;
    caps.eqc_bt_num = a.get(cmq_req::FUNC_RES_A_EQC_BT_NUM) / func_num;
    caps.smac_bt_num = b.get(cmq_req::FUNC_RES_B_SMAC_NUM) / func_num;
    caps.sgid_bt_num = b.get(cmq_req::FUNC_RES_B_SGID_NUM) / func_num;
    caps.sccc_bt_num = b.get(cmq_req::FUNC_RES_B_SCCC_BT_NUM) / func_num;
    let (qid, gmv) = if vf {
        (cmq_req::FUNC_RES_V_QID_NUM, cmq_req::FUNC_RES_V_GMV_BT_NUM)
    } else {
        (cmq_req::FUNC_RES_B_QID_NUM, cmq_req::FUNC_RES_B_GMV_BT_NUM)
    };
    caps.sl_num = b.get(qid) / func_num;
    caps.gmv_bt_num = b.get(gmv) / func_num;
    Ok(())
}

/// Adds the QUERY_PF_TIMER_RES answer.
pub fn apply_timer_res(caps: &mut Caps, d: &Desc) {
    caps.qpc_timer_bt_num = d.get(cmq_req::PF_TIMER_RES_QPC_ITEM_NUM);
    caps.cqc_timer_bt_num = d.get(cmq_req::PF_TIMER_RES_CQC_ITEM_NUM);
}

/// MTT entry size (`HNS_ROCE_V2_MTT_ENTRY_SZ`).
const MTT_ENTRY_SZ: u32 = 64;
/// Starting hop number of MR PBLs (`HNS_ROCE_PBL_HOP_NUM`).
const PBL_HOP_NUM: u32 = 2;
/// SRQ WQE and index segments (`HNS_ROCE_V2_MAX_SRQWQE_SEGS`, `..._IDX_SEGS`).
const MAX_SEGS: u32 = 0x100_0000;
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
    ra.write(cmq_req::FUNC_RES_A_VF_ID, vf);
    ra.write(cmq_req::FUNC_RES_A_QPC_BT_NUM, c.qpc_bt_num);
    ra.write(cmq_req::FUNC_RES_A_QPC_BT_IDX, vf * c.qpc_bt_num);
    ra.write(cmq_req::FUNC_RES_A_SRQC_BT_NUM, c.srqc_bt_num);
    ra.write(cmq_req::FUNC_RES_A_SRQC_BT_IDX, vf * c.srqc_bt_num);
    ra.write(cmq_req::FUNC_RES_A_CQC_BT_NUM, c.cqc_bt_num);
    ra.write(cmq_req::FUNC_RES_A_CQC_BT_IDX, vf * c.cqc_bt_num);
    ra.write(cmq_req::FUNC_RES_A_MPT_BT_NUM, c.mpt_bt_num);
    ra.write(cmq_req::FUNC_RES_A_MPT_BT_IDX, vf * c.mpt_bt_num);
    ra.write(cmq_req::FUNC_RES_A_EQC_BT_NUM, c.eqc_bt_num);
    ra.write(cmq_req::FUNC_RES_A_EQC_BT_IDX, vf * c.eqc_bt_num);
    // FUNC_RES_V_QID_NUM on both revisions, as the C driver writes it.
    rb.write(cmq_req::FUNC_RES_V_QID_NUM, c.sl_num);
    rb.write(cmq_req::FUNC_RES_B_QID_IDX, vf * c.sl_num);
    rb.write(cmq_req::FUNC_RES_B_SCCC_BT_NUM, c.sccc_bt_num);
    rb.write(cmq_req::FUNC_RES_B_SCCC_BT_IDX, vf * c.sccc_bt_num);
    if rev.is_hip09() {
        rb.write(cmq_req::FUNC_RES_V_GMV_BT_NUM, c.gmv_bt_num);
        rb.write(cmq_req::FUNC_RES_B_GMV_BT_IDX, vf * c.gmv_bt_num);
    } else {
        rb.write(cmq_req::FUNC_RES_B_SGID_NUM, c.sgid_bt_num);
        rb.write(cmq_req::FUNC_RES_B_SGID_IDX, vf * c.sgid_bt_num);
        rb.write(cmq_req::FUNC_RES_B_SMAC_NUM, c.smac_bt_num);
        rb.write(cmq_req::FUNC_RES_B_SMAC_IDX, vf * c.smac_bt_num);
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
    d.data.write(cmq_req::CFG_HEM_ENTRY_SIZE_TYPE, ty as u32);
    d.data.write(cmq_req::CFG_HEM_ENTRY_SIZE_VALUE, value);
    d
}
