// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The path fields of a QP context (`core` only): what `IB_QP_AV` writes
//! (`hns_roce_v2_set_path`), with the source GID type, the traffic class,
//! flow label and UDP source port, the service level limit and the
//! congestion control algorithm and template (`fill_cong_field`).
//! Re-exported by `qpc.rs`.

use super::{qpt, QpcImage};
use crate::hns_roce_hw_v2::fields::{qpc, qpcex};

/// `enum ib_gid_type`: the kind of the source GID of a path.
pub mod gid_type {
    /// InfiniBand.
    pub const IB: u32 = 0;
    /// RoCE v1.
    pub const ROCE: u32 = 1;
    /// RoCE v2 (UDP encapsulation).
    pub const ROCE_UDP_ENCAP: u32 = 2;
}

/// Congestion control algorithms of a QP (`enum cong_type`, the bit
/// numbers of `caps.cong_cap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum CongType {
    /// DCQCN.
    Dcqcn = 0,
    /// LDCP (window based).
    Ldcp = 1,
    /// HC3 (window based).
    Hc3 = 2,
    /// DCQCN with a per-destination-IP context.
    Dip = 3,
}

impl CongType {
    /// The algorithm numbered `v`; anything unknown is DCQCN, as
    /// `check_cong_type` falls back.
    pub fn from_u32(v: u32) -> Self {
        match v {
            1 => Self::Ldcp,
            2 => Self::Hc3,
            3 => Self::Dip,
            _ => Self::Dcqcn,
        }
    }

    /// The algorithm a new QP starts with (`default_congest_type`): DCQCN
    /// for UD and GSI, the device default otherwise.
    pub fn default_for(qp_type: u32, default_cong_type: u32) -> Self {
        if matches!(qp_type, qpt::UD | qpt::GSI) {
            Self::Dcqcn
        } else {
            Self::from_u32(default_cong_type)
        }
    }

    /// The algorithm libhns asked for in `cong_type_flags` of a user QP
    /// (`set_congest_type`): `EINVAL` for an unknown value, `EOPNOTSUPP`
    /// when the device lacks it or a UD QP asks for anything but DCQCN.
    pub fn from_user(flags: u64, qp_type: u32, cong_cap: u32) -> Result<Self, CongError> {
        let t = match flags {
            0 => Self::Dcqcn,
            1 => Self::Ldcp,
            2 => Self::Hc3,
            3 => Self::Dip,
            _ => return Err(CongError::Invalid),
        };
        if cong_cap & (1 << t as u32) == 0 || (qp_type == qpt::UD && t != Self::Dcqcn) {
            return Err(CongError::NotSupported);
        }
        Ok(t)
    }

    /// Whether the ACK request frequency is tied to the loopback packet
    /// count (window algorithms, `modify_qp_init_to_rtr`).
    pub fn window(self) -> bool {
        matches!(self, Self::Ldcp | Self::Hc3)
    }
}

/// Why [`CongType::from_user`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongError {
    /// Not an algorithm number (`-EINVAL`).
    Invalid,
    /// Not available here (`-EOPNOTSUPP`).
    NotSupported,
}

/// Templates per algorithm in the engine's congestion table
/// (`HNS_ROCE_CONG_SIZE`).
const CONG_SIZE: u32 = 64;

/// The congestion part of a path (`fill_cong_field`), written when the
/// engine is not HIP08 and the source GID is not RoCE v1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongFields {
    /// The QP's algorithm.
    pub ty: CongType,
    /// The function's first template (`cong_algo_tmpl_id`, the MAC id of
    /// QUERY_FUNC_INFO).
    pub tmpl_base: u32,
    /// DIP context index (only with [`CongType::Dip`]).
    pub dip_idx: Option<u32>,
}

/// What `IB_QP_AV` writes (`hns_roce_v2_set_path`), already checked and
/// resolved: GID L2 fields, UDP source port, traffic class, service level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathParams {
    /// VLAN of the source GID, 0xffff without one.
    pub vlan_id: u16,
    /// HIP08 (the only engine with VLAN enable bits in the QPC).
    pub hip08: bool,
    /// UDP source port (0 unless RoCE v2).
    pub udp_sport: u32,
    /// Source GID index (the GMV entry).
    pub sgid_index: u32,
    /// Hop limit.
    pub hop_limit: u32,
    /// Congestion fields, if written.
    pub cong: Option<CongFields>,
    /// Traffic class as the QPC takes it ([`tclass`]).
    pub tclass: u32,
    /// Flow label.
    pub flow_label: u32,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Service level.
    pub sl: u32,
}

/// The traffic class the engine takes (`get_tclass`): the DSCP (upper six
/// bits) for RoCE v2, the whole byte otherwise.
pub fn tclass(traffic_class: u8, gid_type: u32) -> u32 {
    if gid_type == gid_type::ROCE_UDP_ENCAP {
        u32::from(traffic_class >> 2)
    } else {
        u32::from(traffic_class)
    }
}

/// `rdma_calc_flow_label`: a flow label both ends derive from the two QPNs.
pub fn calc_flow_label(lqpn: u32, rqpn: u32) -> u32 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    // CAST: 20 bits.
    (v & 0xfffff) as u32
}

/// `rdma_get_udp_sport`: the UDP source port of a flow label, or of the
/// QPN pair when the label is 0.
pub fn udp_sport(fl: u32, lqpn: u32, rqpn: u32) -> u16 {
    let fl = if fl == 0 {
        calc_flow_label(lqpn, rqpn)
    } else {
        fl
    };
    crate::hns_roce_hw_v2::ctx::flow_label_to_udp_sport(fl)
}

/// Highest service level of the engine (`MAX_SERVICE_LEVEL`).
const MAX_SERVICE_LEVEL: u32 = 7;

/// The highest service level a device with `sl_num` levels takes; `sl` is
/// valid when not above it (`check_sl_valid`).
pub fn max_sl(sl_num: u32) -> u32 {
    MAX_SERVICE_LEVEL.min(sl_num.saturating_sub(1))
}

/// `IB_QP_AV` of a free-MR QP, which loops back to itself: the service
/// level alone.
pub fn set_sl(img: &mut QpcImage, sl: u32) {
    img.ctx.write(qpc::SL, sl);
    img.mask.clear(qpc::SL);
}

/// `IB_QP_AV`: the path fields of the context.
pub fn set_path(img: &mut QpcImage, p: &PathParams) {
    let (c, m) = (&mut img.ctx, &mut img.mask);
    if p.vlan_id < 4096 && p.hip08 {
        c.enable(qpc::RQ_VLAN_EN);
        m.clear(qpc::RQ_VLAN_EN);
        c.enable(qpc::SQ_VLAN_EN);
        m.clear(qpc::SQ_VLAN_EN);
    }
    let fields = [
        (qpc::VLAN_ID, u32::from(p.vlan_id)),
        (qpc::UDPSPN, p.udp_sport),
        (qpc::GMV_IDX, p.sgid_index),
        (qpc::HOPLIMIT, p.hop_limit),
        (qpc::TC, p.tclass),
        (qpc::FL, p.flow_label),
        (qpc::SL, p.sl),
    ];
    for (f, v) in fields {
        c.write(f, v);
        m.clear(f);
    }
    c.copy_bytes(qpc::DGID_BYTES, &p.dgid);
    m.fill_bytes(qpc::DGID_BYTES, 0);
    if let Some(cong) = &p.cong {
        // (algorithm, sub-algorithm, DIP valid, window unlimited)
        let (sel, sub, dip, wnd) = match cong.ty {
            CongType::Dcqcn => (0, 0, false, false),
            CongType::Ldcp => (1, 0, false, true),
            CongType::Hc3 => (1, 1, false, false),
            CongType::Dip => (0, 0, true, false),
        };
        c.write(
            qpc::CONG_ALGO_TMPL_ID,
            cong.tmpl_base + cong.ty as u32 * CONG_SIZE,
        );
        m.clear(qpc::CONG_ALGO_TMPL_ID);
        let (e, em) = (&mut img.ext, &mut img.mask_ext);
        for (f, v) in [
            (qpcex::CONG_ALG_SEL, sel),
            (qpcex::CONG_ALG_SUB_SEL, sub),
            (qpcex::DIP_CTX_IDX_VLD, u32::from(dip)),
            (qpcex::SQ_RQ_NOT_FORBID_EN, u32::from(wnd)),
        ] {
            e.write(f, v);
            em.clear(f);
        }
        if dip {
            if let Some(i) = cong.dip_idx {
                e.write(qpcex::DIP_CTX_IDX, i);
                em.clear(qpcex::DIP_CTX_IDX);
            }
        }
    }
}
