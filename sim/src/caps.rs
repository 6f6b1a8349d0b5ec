// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The capability table the firmware reports: one struct with the defaults
//! of a HIP09 PF, optionally overridden by a `key = value` config file.
//! [`Caps::hip08`] is the HIP08 personality (`--personality hip08`): the
//! PCI revision the guest glue gives the function and the caps a HIP08
//! engine reports differ, and the firmware answers HIP08's command set.
//!
//! Values are what the hardware reports, so exponents stay exponents (the
//! driver computes `1 << x`); the comments say which.

use std::fmt::Write as _;

/// Capability flag bits (`HNS_ROCE_CAP_FLAG_*` in the C driver).
pub mod flag {
    /// Re-registration of MRs.
    pub const REREG_MR: u32 = 1 << 0;
    /// RoCEv1 and RoCEv2 GIDs.
    pub const ROCE_V1_V2: u32 = 1 << 1;
    /// Inline receive data.
    pub const RQ_INLINE: u32 = 1 << 2;
    /// CQ record doorbell.
    pub const CQ_RECORD_DB: u32 = 1 << 3;
    /// QP record doorbell.
    pub const QP_RECORD_DB: u32 = 1 << 4;
    /// Shared receive queues.
    pub const SRQ: u32 = 1 << 5;
    /// XRC transport.
    pub const XRC: u32 = 1 << 6;
    /// Memory windows.
    pub const MW: u32 = 1 << 7;
    /// Fast-register MRs.
    pub const FRMR: u32 = 1 << 8;
    /// QP flow control (SCC contexts).
    pub const QP_FLOW_CTRL: u32 = 1 << 9;
    /// Atomic operations.
    pub const ATOMIC: u32 = 1 << 10;
    /// Direct WQE through BAR4.
    pub const DIRECT_WQE: u32 = 1 << 12;
    /// Inline CQE data.
    pub const CQE_INLINE: u32 = 1 << 19;
    /// Port bonding.
    pub const BOND: u32 = 1 << 21;
    /// SRQ record doorbell.
    pub const SRQ_RECORD_DB: u32 = 1 << 22;
}

/// PCI revision of a HIP08 function (`PCI_REVISION_ID_HIP08`).
pub const REVISION_HIP08: u8 = 0x21;
/// PCI revision of a HIP09 function (`PCI_REVISION_ID_HIP09`).
pub const REVISION_HIP09: u8 = 0x30;
/// PCI device ID of the PF the glue presents (`HNAE3_DEV_ID_200G_RDMA`).
pub const DEVICE_PF: u16 = 0xa222;
/// PCI device ID of a RoCE VF (`HNAE3_DEV_ID_RDMA_DCB_PFC_VF`): the C
/// driver's PCI table gives it a non-zero `driver_data`, its `is_vf`.
pub const DEVICE_VF: u16 = 0xa22f;

/// Everything the firmware reports about the function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caps {
    /// PCI revision the guest glue gives the function (it reads it from
    /// BAR2, `device::IDENT_REVISION`): 0x30 HIP09, 0x21 HIP08. The
    /// firmware's command set follows it ([`Caps::is_hip08`]).
    pub pci_revision: u8,
    /// PCI device ID the guest glue gives the function (it reads it from
    /// BAR2, `device::IDENT_DEVICE`): 0xa222 a PF, 0xa22f a VF. The
    /// firmware's command set follows it ([`Caps::is_vf`]).
    pub pci_device: u16,
    /// The MSI-X vector of the function the RoCE engine's vectors start
    /// at (its abnormal vector; then the AEQ's and the CEQs'): hclge hands
    /// the RoCE client the vectors after the NIC's, as
    /// `rinfo.base_vector`. The guest glue reads it from BAR2
    /// (`device::IDENT_BASE_VECTOR`) and reports it the same way. Not a
    /// firmware answer: no command carries it.
    pub roce_base_vector: u8,
    /// The function's number in its PF's function space (the `vf_id` of
    /// ALLOC_VF_RES, SWITCH_PARAMETER_CFG and FUNC_CLEAR): 0 for a PF,
    /// 1.. for its VFs in device order (set by hns-sim's `--personality`
    /// list).
    pub vf_id: u32,
    /// ROCEE hardware version (QUERY_HW_VER), reported as `hw_ver`.
    pub hw_version: u16,
    /// Vendor id reported by QUERY_HW_VER.
    pub vendor_id: u16,
    /// Firmware version word (QUERY_FW_VER).
    pub fw_ver: u32,
    /// Functions of this PF (QUERY_FUNC_INFO); at least 1.
    pub func_num: u32,
    /// Local CA ACK delay.
    pub local_ca_ack_delay: u8,
    /// Max SQ SGEs.
    pub max_sq_sg: u16,
    /// Max SQ inline bytes.
    pub max_sq_inline: u16,
    /// Max RQ SGEs.
    pub max_rq_sg: u16,
    /// Max SRQ SGEs.
    pub max_srq_sges: u16,
    /// AEQ vectors.
    pub num_aeq_vectors: u8,
    /// Abnormal-interrupt vectors.
    pub num_other_vectors: u8,
    /// SQ WQE size in bytes.
    pub max_sq_desc_sz: u8,
    /// RQ WQE "descriptor" (SGE) size in bytes.
    pub max_rq_desc_sz: u8,
    /// CQE size in bytes.
    pub cqe_sz: u8,
    /// MPT entry size.
    pub mtpt_entry_sz: u8,
    /// IRRL entry size.
    pub irrl_entry_sz: u8,
    /// TRRL entry size.
    pub trrl_entry_sz: u8,
    /// CQC size.
    pub cqc_entry_sz: u8,
    /// SRQC size.
    pub srqc_entry_sz: u8,
    /// SRQ index entry size.
    pub idx_entry_sz: u8,
    /// SCC context size.
    pub sccc_sz: u8,
    /// Max MTU as `enum ib_mtu` (5 = 4096).
    pub max_mtu: u8,
    /// QPC size.
    pub qpc_sz: u16,
    /// Min CQEs.
    pub min_cqes: u8,
    /// Min WQEs.
    pub min_wqes: u8,
    /// Page size capability mask.
    pub page_size_cap: u32,
    /// P_Key table length.
    pub pkey_table_len: u8,
    /// Physical UARs.
    pub phy_num_uars: u8,
    /// Hop number of the context tables (1, 2 or 0xff).
    pub ctx_hop_num: u8,
    /// Hop number of CQE/SRQWQE/IDX/PBL buffers.
    pub pbl_hop_num: u8,
    /// Capability flags (the `flag` bits).
    pub cap_flags: u32,
    /// log2 of the number of PDs.
    pub num_pds_log: u32,
    /// log2 of the number of CQs.
    pub num_cqs_log: u32,
    /// GID table length.
    pub max_gid: u32,
    /// log2 of the max CQ depth.
    pub cq_depth_log: u32,
    /// log2 of the number of XRCDs.
    pub num_xrcds_log: u32,
    /// log2 of the number of MRs/MWs.
    pub num_mrws_log: u32,
    /// log2 of the number of QPs.
    pub num_qps_log: u32,
    /// Max outstanding RDMA reads/atomics.
    pub max_ord: u32,
    /// log2 of the max SQ/RQ depth.
    pub sq_depth_log: u16,
    /// log2 of the number of SRQs.
    pub num_srqs_log: u32,
    /// RQ WQE hop number.
    pub rqwqe_hop_num: u32,
    /// Extended SGE hop number.
    pub ex_sge_hop_num: u32,
    /// SQ WQE hop number.
    pub sqwqe_hop_num: u32,
    /// Congestion control algorithm capabilities.
    pub cong_cap: u32,
    /// log2 of the max SRQ depth.
    pub srq_depth_log: u16,
    /// log2 of the CEQ depth.
    pub ceq_depth_log: u32,
    /// Number of CEQs.
    pub num_ceqs: u32,
    /// log2 of the AEQ depth.
    pub aeq_depth_log: u32,
    /// Default congestion algorithm.
    pub default_alg: u32,
    /// Reserved PDs.
    pub rsv_pds: u32,
    /// log2 of the number of UARs.
    pub num_uars_log: u32,
    /// Reserved QPs.
    pub rsv_qps: u32,
    /// Reserved UARs.
    pub rsv_uars: u32,
    /// Reserved MRs.
    pub rsv_mrws: u32,
    /// log2 of the HEM chunk size.
    pub chunk_size_shift: u32,
    /// Reserved CQs.
    pub rsv_cqs: u32,
    /// Reserved XRCDs.
    pub rsv_xrcds: u32,
    /// Reserved SRQs.
    pub rsv_srqs: u32,
    /// Reserved local keys.
    pub rsv_lkeys: u32,
    /// Max ACK request message length (HIP09 6th caps descriptor).
    pub max_ack_req_msg_len: u32,
    /// QPC base address tables.
    pub qpc_bt_num: u32,
    /// SRQC base address tables.
    pub srqc_bt_num: u32,
    /// CQC base address tables.
    pub cqc_bt_num: u32,
    /// MPT base address tables.
    pub mpt_bt_num: u32,
    /// EQC base address tables.
    pub eqc_bt_num: u32,
    /// Scheduling queues (service levels).
    pub qid_num: u32,
    /// SCCC base address tables.
    pub sccc_bt_num: u32,
    /// GMV (GID/MAC/VLAN) base address tables.
    pub gmv_bt_num: u32,
    /// QPC timer pages.
    pub qpc_timer_num: u32,
    /// CQC timer pages.
    pub cqc_timer_num: u32,
}

impl Default for Caps {
    fn default() -> Self {
        use flag::*;
        Caps {
            pci_revision: REVISION_HIP09,
            pci_device: DEVICE_PF,
            roce_base_vector: 0,
            vf_id: 0,
            hw_version: 0x130,
            vendor_id: 0x19e5,
            fw_ver: 0x0001_0000,
            func_num: 1,
            local_ca_ack_delay: 0,
            max_sq_sg: 64,
            max_sq_inline: 32,
            max_rq_sg: 64,
            max_srq_sges: 64,
            num_aeq_vectors: 1,
            num_other_vectors: 1,
            max_sq_desc_sz: 64,
            max_rq_desc_sz: 16,
            cqe_sz: 64,
            mtpt_entry_sz: 64,
            irrl_entry_sz: 64,
            trrl_entry_sz: 48,
            cqc_entry_sz: 64,
            srqc_entry_sz: 64,
            idx_entry_sz: 4,
            sccc_sz: 64,
            max_mtu: 5,
            qpc_sz: 512,
            min_cqes: 64,
            min_wqes: 64,
            page_size_cap: 0xffff_f000,
            pkey_table_len: 1,
            phy_num_uars: 1,
            ctx_hop_num: 1,
            pbl_hop_num: 2,
            cap_flags: REREG_MR
                | ROCE_V1_V2
                | RQ_INLINE
                | CQ_RECORD_DB
                | QP_RECORD_DB
                | SRQ
                | XRC
                | FRMR
                | QP_FLOW_CTRL
                | ATOMIC
                | SRQ_RECORD_DB
                | CQE_INLINE,
            num_pds_log: 16,
            num_cqs_log: 10,
            max_gid: 256,
            cq_depth_log: 16,
            num_xrcds_log: 8,
            num_mrws_log: 12,
            num_qps_log: 8,
            max_ord: 64,
            sq_depth_log: 14,
            num_srqs_log: 8,
            rqwqe_hop_num: 2,
            ex_sge_hop_num: 1,
            sqwqe_hop_num: 2,
            cong_cap: 1,
            srq_depth_log: 14,
            ceq_depth_log: 10,
            num_ceqs: 1,
            aeq_depth_log: 10,
            default_alg: 0,
            rsv_pds: 0,
            num_uars_log: 8,
            rsv_qps: 8,
            rsv_uars: 0,
            rsv_mrws: 1,
            chunk_size_shift: 18,
            rsv_cqs: 0,
            rsv_xrcds: 0,
            rsv_srqs: 0,
            rsv_lkeys: 0,
            max_ack_req_msg_len: 0,
            qpc_bt_num: 8,
            srqc_bt_num: 8,
            cqc_bt_num: 8,
            mpt_bt_num: 8,
            eqc_bt_num: 8,
            qid_num: 8,
            sccc_bt_num: 8,
            gmv_bt_num: 2,
            qpc_timer_num: 1,
            cqc_timer_num: 1,
        }
    }
}

macro_rules! caps_keys {
    ($($name:ident),* $(,)?) => {
        impl Caps {
            /// Sets the field named `key` from `value` (decimal or 0x hex).
            pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
                let v = parse_num(value).ok_or_else(|| format!("caps: bad number '{value}' for {key}"))?;
                match key {
                    $(stringify!($name) => {
                        self.$name = v.try_into().map_err(|_| format!("caps: {key} = {value} out of range"))?;
                    })*
                    _ => return Err(format!("caps: unknown key '{key}'")),
                }
                Ok(())
            }

            /// Every field as `key = value` lines (the config file syntax).
            pub fn dump(&self) -> String {
                let mut s = String::new();
                $(let _ = writeln!(s, "{} = {:#x}", stringify!($name), self.$name);)*
                s
            }
        }
    };
}

caps_keys!(
    pci_revision,
    pci_device,
    vf_id,
    hw_version,
    vendor_id,
    fw_ver,
    func_num,
    local_ca_ack_delay,
    max_sq_sg,
    max_sq_inline,
    max_rq_sg,
    max_srq_sges,
    num_aeq_vectors,
    num_other_vectors,
    max_sq_desc_sz,
    max_rq_desc_sz,
    cqe_sz,
    mtpt_entry_sz,
    irrl_entry_sz,
    trrl_entry_sz,
    cqc_entry_sz,
    srqc_entry_sz,
    idx_entry_sz,
    sccc_sz,
    max_mtu,
    qpc_sz,
    min_cqes,
    min_wqes,
    page_size_cap,
    pkey_table_len,
    phy_num_uars,
    ctx_hop_num,
    pbl_hop_num,
    cap_flags,
    num_pds_log,
    num_cqs_log,
    max_gid,
    cq_depth_log,
    num_xrcds_log,
    num_mrws_log,
    num_qps_log,
    max_ord,
    sq_depth_log,
    num_srqs_log,
    rqwqe_hop_num,
    ex_sge_hop_num,
    sqwqe_hop_num,
    cong_cap,
    srq_depth_log,
    ceq_depth_log,
    num_ceqs,
    aeq_depth_log,
    default_alg,
    rsv_pds,
    num_uars_log,
    rsv_qps,
    rsv_uars,
    rsv_mrws,
    chunk_size_shift,
    rsv_cqs,
    rsv_xrcds,
    rsv_srqs,
    rsv_lkeys,
    max_ack_req_msg_len,
    qpc_bt_num,
    srqc_bt_num,
    cqc_bt_num,
    mpt_bt_num,
    eqc_bt_num,
    qid_num,
    sccc_bt_num,
    gmv_bt_num,
    qpc_timer_num,
    cqc_timer_num,
    roce_base_vector,
);

/// Parses decimal or `0x` hexadecimal.
pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

impl Caps {
    /// Applies a config file: `key = value` lines, `#` comments. Keys other
    /// than caps fields are returned for the caller (e.g. `fault`).
    pub fn apply_config(&mut self, text: &str) -> Result<Vec<(String, String)>, String> {
        let mut rest = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("config line {}: expected key = value", n + 1))?;
            let (k, v) = (k.trim(), v.trim());
            if k == "fault" {
                rest.push((k.to_string(), v.to_string()));
            } else {
                self.set(k, v)
                    .map_err(|e| format!("config line {}: {e}", n + 1))?;
            }
        }
        Ok(rest)
    }

    /// The HIP08 personality: a HIP09 PF's table changed where a HIP08
    /// engine differs, as the C driver's HIP08 paths read it. Revision
    /// 0x21; 256-byte QPCs, 32-byte CQEs and 32-byte SCC contexts, which
    /// the driver takes from here (it sends no CFG_ENTRY_SIZE on HIP08);
    /// no GMV table (GIDs go through CFG_SGID_TB); no flag of a HIP09-only
    /// feature (XRC, CQE inline, SRQ record doorbell). MW stays off as in
    /// the HIP09 table: the engine has no memory windows. `hw_version`
    /// 0x100: the kernel passes it to user space as `hw_ver`, and libhns
    /// (rdma-core 56.1, the guest's) takes its HIP08 paths (reserved RQ
    /// and SRQ SGE) only for exactly 0x100, as 0x130 (the HIP09 default)
    /// is its HIP09 value (what a real HIP08 firmware reports: not
    /// checked).
    pub fn hip08() -> Self {
        use flag::*;
        let hip09 = Caps::default();
        Caps {
            pci_revision: REVISION_HIP08,
            hw_version: 0x100,
            qpc_sz: 256,
            cqe_sz: 32,
            sccc_sz: 32,
            gmv_bt_num: 0,
            cap_flags: hip09.cap_flags & !(XRC | CQE_INLINE | SRQ_RECORD_DB),
            ..hip09
        }
    }

    /// The VF personality: a HIP09 virtual function (PCI device 0xa22f,
    /// revision 0x30) beside a HIP09 PF. The C driver's VF profile asks
    /// for the caps with QUERY_VF_CAPS_NUM and for its resources with
    /// QUERY_VF_RES, which it does not divide (the PF divides its own
    /// totals by its function count and gives every function that share
    /// with ALLOC_VF_RES). So a VF's `*_bt_num`, `qid_num` and
    /// `gmv_bt_num` are its share: here the PF defaults' halves (one PF,
    /// one VF); hns-sim's `--personality` list derives them from the
    /// PF's table and function count. A VF has no timer tables (no
    /// QUERY_PF_TIMER_RES, no timer chunks: `qpc_timer_num` and
    /// `cqc_timer_num` 0) and no functions of its own (`func_num` 1).
    /// Everything else is the HIP09 PF's: `qpc_sz`, `cqe_sz` and
    /// `sccc_sz` are not even read by a VF (it takes the HIP09 sizes from
    /// `apply_func_caps`, which equal the table's), and the objects a VF
    /// may create are counted per function (256 QPs, ...) as on the PF.
    pub fn vf() -> Self {
        let pf = Caps::default();
        let mut vf = Caps {
            pci_device: DEVICE_VF,
            vf_id: 1,
            qpc_timer_num: 0,
            cqc_timer_num: 0,
            ..pf.clone()
        };
        vf.take_share_of(&pf, 2);
        vf
    }

    /// Sets this VF's resource counts to its share of `pf`'s totals when
    /// the PF has `func_num` functions, as the C PF driver computes it
    /// (`load_func_res_caps`: each count divided by `func_num`) and hands
    /// it out with ALLOC_VF_RES.
    pub fn take_share_of(&mut self, pf: &Caps, func_num: u32) {
        let n = func_num.max(1);
        self.qpc_bt_num = pf.qpc_bt_num / n;
        self.srqc_bt_num = pf.srqc_bt_num / n;
        self.cqc_bt_num = pf.cqc_bt_num / n;
        self.mpt_bt_num = pf.mpt_bt_num / n;
        self.eqc_bt_num = pf.eqc_bt_num / n;
        self.qid_num = pf.qid_num / n;
        self.sccc_bt_num = pf.sccc_bt_num / n;
        self.gmv_bt_num = pf.gmv_bt_num / n;
    }

    /// The caps of a named personality: `hip09` (the default), `hip08`, or
    /// `vf` (also `hip09-vf`).
    pub fn personality(name: &str) -> Result<Self, String> {
        match name {
            "hip09" => Ok(Caps::default()),
            "hip08" => Ok(Caps::hip08()),
            "vf" | "hip09-vf" => Ok(Caps::vf()),
            _ => Err(format!("unknown personality '{name}' (hip09, hip08 or vf)")),
        }
    }

    /// Whether the function is a VF: the firmware then answers the VF
    /// queries (QUERY_VF_CAPS_NUM, QUERY_VF_RES) and refuses the PF-only
    /// commands.
    pub fn is_vf(&self) -> bool {
        self.pci_device == DEVICE_VF
    }

    /// The number of functions whose L0 BTs the driver of this function
    /// shares out: a PF divides its totals by `func_num`, a VF's counts
    /// are its share already.
    pub fn bt_divisor(&self) -> u32 {
        if self.is_vf() {
            1
        } else {
            self.func_num.max(1)
        }
    }

    /// Whether the function is a HIP08 one: the firmware then answers the
    /// commands of the C driver's HIP08 paths and refuses HIP09-only ones.
    pub fn is_hip08(&self) -> bool {
        self.pci_revision == REVISION_HIP08
    }

    /// Number of QPs.
    pub fn num_qps(&self) -> u32 {
        1 << self.num_qps_log
    }

    /// Refuses a table the model cannot serve. `cong_cap` may carry any
    /// of its four algorithm bits and `default_alg` any value of its six
    /// (the driver takes what it finds), no more. DIRECT_WQE (flag bit 12)
    /// needs a HIP09 function, whose drivers push WQEs into the QP's own
    /// page of BAR2's `mem_base` window (HIP08 kernel QPs ring the shared
    /// register 0x230, which a 64-byte push would run over), and a page
    /// there for every QPN (a QPN past the window would give the user
    /// mapping of its page memory past the end of BAR2).
    pub fn check(&self) -> Result<(), String> {
        // The widths of PF_CAPS_D_CONG_CAP and PF_CAPS_D_DEFAULT_ALG: a
        // larger value would reach the driver cut short.
        if self.cong_cap > 0xf || self.default_alg > 0x3f {
            return Err(format!(
                "caps: cong_cap {:#x} (4 bits: DCQCN, LDCP, HC3, DIP) or default_alg {:#x} \
                 (6 bits) too large",
                self.cong_cap, self.default_alg
            ));
        }
        if self.cap_flags & flag::DIRECT_WQE == 0 {
            return Ok(());
        }
        if self.is_hip08() {
            return Err(format!(
                "caps: DIRECT_WQE (cap_flags bit 12, {:#x}) is a HIP09 feature; \
                 the HIP08 personality (pci_revision {:#x}) cannot offer it",
                self.cap_flags, self.pci_revision
            ));
        }
        let pages = crate::engine::DWQE_PAGES;
        let qps = 1u64.checked_shl(self.num_qps_log).unwrap_or(u64::MAX);
        if qps > pages {
            return Err(format!(
                "caps: DIRECT_WQE (cap_flags bit 12) needs a 64 KiB page per QPN \
                 in BAR2's mem_base window, which has {pages}: num_qps_log {} \
                 ({qps} QPs) is too many",
                self.num_qps_log
            ));
        }
        Ok(())
    }

    /// MSI-X vectors the driver will use.
    pub fn vectors_needed(&self) -> u32 {
        self.num_other_vectors as u32 + self.num_aeq_vectors as u32 + self.num_ceqs
    }
}

/// Wires the functions of a `--personality` list: the VFs belong to the
/// list's first PF. They are numbered 1.. in device order (`vf_id`); the
/// PF reports 1 + the number of VFs as `func_num` (QUERY_FUNC_INFO) unless
/// a config already raised it; every VF's resource counts become its share
/// of the PF's totals (`take_share_of`). A list without a VF, or without a
/// PF, is left as it is.
pub fn wire_functions(tables: &mut [Caps]) {
    let Some(pf) = tables.iter().position(|c| !c.is_vf()) else {
        return;
    };
    let vfs = tables.iter().filter(|c| c.is_vf()).count() as u32;
    if vfs == 0 {
        return;
    }
    if tables[pf].func_num <= 1 {
        tables[pf].func_num = 1 + vfs;
    }
    let pf_caps = tables[pf].clone();
    let mut id = 0;
    for c in tables.iter_mut().filter(|c| c.is_vf()) {
        id += 1;
        c.vf_id = id;
        c.take_share_of(&pf_caps, pf_caps.func_num);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_flags_are_the_issue_list() {
        let c = Caps::default();
        // REREG_MR..ATOMIC except MW, plus CQE_INLINE (19) and SRQ_RECORD_DB (22).
        assert_eq!(c.cap_flags & 0xfff, 0b111_0111_1111);
        assert_eq!(c.cap_flags >> 12, (1 << 7) | (1 << 10));
        assert_eq!(c.cap_flags & flag::DIRECT_WQE, 0);
        assert_eq!(c.cap_flags & flag::BOND, 0);
    }

    #[test]
    fn congestion_caps_fit_their_fields() {
        let mut c = Caps::default();
        c.set("cong_cap", "15").unwrap();
        c.set("default_alg", "3").unwrap();
        assert_eq!(c.check(), Ok(()));
        c.cong_cap = 0x10;
        assert!(c.check().is_err());
        c.cong_cap = 0xf;
        c.default_alg = 0x40;
        assert!(c.check().is_err());
    }

    #[test]
    fn config_overrides_and_rejects() {
        let mut c = Caps::default();
        let rest = c
            .apply_config("num_qps_log = 9 # more\nmax_gid=0x80\nfault = 0x8408:2:once\n")
            .unwrap();
        assert_eq!(c.num_qps_log, 9);
        assert_eq!(c.max_gid, 0x80);
        assert_eq!(
            rest,
            vec![("fault".to_string(), "0x8408:2:once".to_string())]
        );
        assert!(c.apply_config("bogus = 1").is_err());
        assert!(c.apply_config("max_mtu = 300").is_err());
        assert!(c.apply_config("max_mtu 3").is_err());
    }

    #[test]
    fn hip08_personality_has_the_hip08_sizes_and_no_hip09_flags() {
        // PCI_REVISION_ID_HIP08 0x21, HNS_ROCE_V2_QPC_SZ 256 and
        // HNS_ROCE_V2_CQE_SIZE 32 (hns_roce_device.h); flag bits XRC 6,
        // CQE_INLINE 19, SRQ_RECORD_DB 22, DIRECT_WQE 12, MW 7.
        let c = Caps::personality("hip08").unwrap();
        assert!(c.is_hip08());
        assert_eq!(c.pci_revision, 0x21);
        assert_eq!((c.qpc_sz, c.cqe_sz, c.gmv_bt_num), (256, 32, 0));
        // libhns' HNS_ROCE_HW_VER2, which it compares hw_ver with.
        assert_eq!(c.hw_version, 0x100);
        for bit in [6, 7, 12, 19, 22] {
            assert_eq!(c.cap_flags & 1 << bit, 0, "flag bit {bit}");
        }
        // QP_FLOW_CTRL (9) stays: HIP08 QP creation clears the SCC context.
        assert_ne!(c.cap_flags & 1 << 9, 0);
        // The default is the HIP09 PF, and stays so.
        let d = Caps::personality("hip09").unwrap();
        assert_eq!(d, Caps::default());
        assert!(!d.is_hip08());
        assert_eq!((d.pci_revision, d.qpc_sz, d.cqe_sz), (0x30, 512, 64));
        assert!(Caps::personality("hip07").is_err());
        // The revision is a key like any other (config files, --set).
        let mut e = Caps::default();
        e.apply_config("pci_revision = 0x21").unwrap();
        assert!(e.is_hip08());
        assert!(e.dump().contains("pci_revision = 0x21\n"));
    }

    #[test]
    fn vf_personality_is_a_hip09_vf_with_its_share() {
        // HNAE3_DEV_ID_RDMA_DCB_PFC_VF 0xa22f (hnae3.h), a HIP09 revision.
        let v = Caps::personality("vf").unwrap();
        assert_eq!(Caps::personality("hip09-vf").unwrap(), v);
        assert!(v.is_vf() && !v.is_hip08());
        assert_eq!((v.pci_device, v.pci_revision), (0xa22f, 0x30));
        assert_eq!((v.qpc_timer_num, v.cqc_timer_num, v.func_num), (0, 0, 1));
        assert_eq!((v.qpc_bt_num, v.qid_num, v.gmv_bt_num), (4, 4, 1));
        assert_eq!(v.bt_divisor(), 1);
        let d = Caps::default();
        assert!(!d.is_vf());
        assert_eq!((d.pci_device, d.vf_id), (0xa222, 0));
        // The list of a PF and its VFs.
        let mut t = vec![Caps::default(), Caps::vf()];
        wire_functions(&mut t);
        assert_eq!((t[0].func_num, t[0].bt_divisor()), (2, 2));
        assert_eq!((t[1].vf_id, t[1].qpc_bt_num), (1, 4));
        let mut t = vec![Caps::default(), Caps::vf(), Caps::vf()];
        wire_functions(&mut t);
        assert_eq!(t[0].func_num, 3);
        assert_eq!((t[1].vf_id, t[2].vf_id), (1, 2));
        // 8 / 3 BTs, 2 / 3 GMV BTs: what load_func_res_caps computes.
        assert_eq!((t[2].qpc_bt_num, t[2].gmv_bt_num), (2, 0));
        // Without a VF nothing changes.
        let mut t = vec![Caps::default(), Caps::hip08()];
        wire_functions(&mut t);
        assert_eq!(t, vec![Caps::default(), Caps::hip08()]);
        // The keys are keys like any other.
        let mut e = Caps::default();
        e.apply_config("pci_device = 0xa22f\nvf_id = 1").unwrap();
        assert!(e.is_vf());
        assert!(e.dump().contains("pci_device = 0xa22f\nvf_id = 0x1\n"));
    }

    #[test]
    fn direct_wqe_only_on_hip09_with_a_page_per_qpn() {
        let dwqe = |mut c: Caps| {
            c.cap_flags |= flag::DIRECT_WQE;
            c
        };
        // Off by default, and every default table passes.
        for c in [Caps::default(), Caps::hip08(), Caps::vf()] {
            assert_eq!(c.cap_flags & flag::DIRECT_WQE, 0);
            assert_eq!(c.check(), Ok(()));
        }
        // On: fine for a HIP09 PF or VF with 256 QPs (0x48177f).
        let c = dwqe(Caps::default());
        assert_eq!(c.cap_flags, 0x48_177f);
        assert_eq!(c.check(), Ok(()));
        assert_eq!(dwqe(Caps::vf()).check(), Ok(()));
        let mut fewer = dwqe(Caps::default());
        fewer.set("num_qps_log", "7").unwrap();
        assert_eq!(fewer.check(), Ok(()));
        // Refused with the HIP08 personality (also when set after it).
        let e = dwqe(Caps::hip08()).check().unwrap_err();
        assert!(e.contains("HIP08") && e.contains("bit 12"), "{e}");
        let mut h = Caps::hip08();
        h.set("cap_flags", "0x48177f").unwrap();
        assert!(h.check().is_err());
        // Refused when a QPN would have no page: 512 QPs, and absurd logs.
        let mut big = dwqe(Caps::default());
        big.set("num_qps_log", "9").unwrap();
        let e = big.check().unwrap_err();
        assert!(e.contains("256") && e.contains("512 QPs"), "{e}");
        big.set("num_qps_log", "200").unwrap();
        assert!(big.check().is_err());
        // Without the flag, 512 QPs stay allowed.
        big.cap_flags &= !flag::DIRECT_WQE;
        assert_eq!(big.check(), Ok(()));
    }

    #[test]
    fn dump_round_trips() {
        let c = Caps {
            num_ceqs: 3,
            ..Caps::default()
        };
        let mut d = Caps::default();
        d.apply_config(&c.dump()).unwrap();
        assert_eq!(c, d);
    }
}
