// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The QP verbs, `ib_device_ops` entries the RDMA core calls without the
//! shim, and the requests and answers a driver sees.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! Each entry reads the core's structs (`ib_qp_init_attr`, `ib_qp_attr`
//! and its `rdma_ah_attr`) into a Rust request ([`QpInit`], [`QpAttr`]),
//! calls the driver, and writes the answer back into the core's structs
//! ([`QpQuery`] into `ib_qp_attr` and `ib_qp_init_attr`). A failed
//! `create_qp` or `modify_qp` is reported to the driver as a
//! [`FailedVerb`], as C counts it.

use super::{
    ah,
    verbs::{counted, cq_rs, dev_drv, errno, qp_rs, read_deferred, user_ctx, CqBox, QpBox},
    Driver, FailedVerb,
};
use crate::rdma::{raw, try_borrow, IbQp, MmapCtx, UData};
use core::marker::PhantomData;
use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
    types::ForeignOwnable,
};

/// A QP request (`struct ib_qp_init_attr`); the capacities are updated to
/// what the QP got.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QpInit {
    /// `enum ib_qp_type`.
    pub(crate) qp_type: u32,
    /// The PD's number (0 for an XRC target, which has none).
    pub(crate) pdn: u32,
    /// `enum ib_sig_type`.
    pub(crate) sq_sig_type: u32,
    /// `IB_QP_CREATE_*`.
    pub(crate) create_flags: u32,
    /// Send WRs.
    pub(crate) max_send_wr: u32,
    /// Receive WRs.
    pub(crate) max_recv_wr: u32,
    /// SGEs per send WR.
    pub(crate) max_send_sge: u32,
    /// SGEs per receive WR.
    pub(crate) max_recv_sge: u32,
    /// Inline bytes.
    pub(crate) max_inline_data: u32,
    /// The QP receives through an SRQ.
    pub(crate) has_srq: bool,
    /// The QP has an XRC domain (an XRC target).
    pub(crate) has_xrcd: bool,
    /// The SRQ's number when `has_srq`.
    pub(crate) srqn: u32,
    /// The XRC domain's number when `has_xrcd`.
    pub(crate) xrcdn: u32,
    /// A user QP (the driver's request comes with `create_qp`'s `user`).
    pub(crate) user: bool,
    /// The user context's config (see [`UctxNew::config`](super::UctxNew)).
    pub(crate) uctx_config: u32,
}

/// The `struct ib_qp_attr` fields of a modify, and what only the core and
/// the netdev know.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QpAttr {
    /// `enum ib_qp_attr_mask` bits.
    pub(crate) mask: u32,
    /// `enum ib_qp_state`.
    pub(crate) qp_state: u32,
    /// The state the caller asserts.
    pub(crate) cur_qp_state: u32,
    /// The port.
    pub(crate) port_num: u32,
    /// The P_Key index.
    pub(crate) pkey_index: u32,
    /// The Q_Key.
    pub(crate) qkey: u32,
    /// The send PSN.
    pub(crate) sq_psn: u32,
    /// The receive PSN.
    pub(crate) rq_psn: u32,
    /// The destination QPN.
    pub(crate) dest_qp_num: u32,
    /// The ACK timeout.
    pub(crate) timeout: u32,
    /// The retry count.
    pub(crate) retry_cnt: u32,
    /// The RNR retry count.
    pub(crate) rnr_retry: u32,
    /// The RNR timer.
    pub(crate) min_rnr_timer: u32,
    /// The initiator depth.
    pub(crate) max_rd_atomic: u32,
    /// The responder resources.
    pub(crate) max_dest_rd_atomic: u32,
    /// `IB_ACCESS_*`.
    pub(crate) access: u32,
    /// `enum ib_mtu`.
    pub(crate) path_mtu: u32,
    /// The MTU port 1's netdev allows (`iboe_get_mtu`, 0 without one).
    pub(crate) active_mtu: u32,
    /// The destination MAC (`IB_QP_AV`).
    pub(crate) dmac: [u8; 6],
    /// The destination MAC is port 1's netdev's own.
    pub(crate) dmac_local: bool,
    /// `IB_QP_AV`: the address vector has a GRH on an Ethernet port.
    pub(crate) av_grh: bool,
    /// `IB_QP_AV`: the address vector is RoCE's.
    pub(crate) av_roce: bool,
    /// `IB_QP_AV`: the source GID's type (`enum ib_gid_type`).
    pub(crate) gid_type: u8,
    /// `IB_QP_AV`: the source GID's index.
    pub(crate) sgid_index: u8,
    /// `IB_QP_AV`: the hop limit.
    pub(crate) hop_limit: u8,
    /// `IB_QP_AV`: the traffic class.
    pub(crate) traffic_class: u8,
    /// `IB_QP_AV`: the service level.
    pub(crate) sl: u8,
    /// `IB_QP_AV`: the flow label.
    pub(crate) flow_label: u32,
    /// `IB_QP_AV`: the destination GID.
    pub(crate) dgid: [u8; 16],
    /// `IB_QP_AV`: the source GID's VLAN (0xffff for none).
    pub(crate) vlan_id: u16,
    /// `IB_QP_AV`: what `rdma_read_gid_l2_fields` returned.
    pub(crate) l2_ret: c_int,
    /// The modify came with udata (from user space).
    pub(crate) udata: bool,
    /// That udata's user context's config (`HNS_ROCE_*_FLAGS`).
    pub(crate) uctx_config: u32,
}

/// What `query_qp` answers, filled by the driver: the path fields only
/// with `queried` (the QP was not in RESET), the GRH ones only with `grh`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QpQuery {
    /// The engine's context was read.
    pub(crate) queried: bool,
    /// The path has a GRH.
    pub(crate) grh: bool,
    /// `enum ib_qp_state`.
    pub(crate) state: u32,
    /// `enum ib_mtu`.
    pub(crate) path_mtu: u32,
    /// The Q_Key.
    pub(crate) qkey: u32,
    /// The receive PSN.
    pub(crate) rq_psn: u32,
    /// The send PSN.
    pub(crate) sq_psn: u32,
    /// The destination QPN.
    pub(crate) dest_qp_num: u32,
    /// `IB_ACCESS_*`.
    pub(crate) access: u32,
    /// The service level.
    pub(crate) sl: u8,
    /// The source GID's index.
    pub(crate) sgid_index: u8,
    /// The hop limit.
    pub(crate) hop_limit: u8,
    /// The traffic class.
    pub(crate) traffic_class: u8,
    /// The flow label.
    pub(crate) flow_label: u32,
    /// The destination GID.
    pub(crate) dgid: [u8; 16],
    /// The initiator depth.
    pub(crate) max_rd_atomic: u32,
    /// The responder resources.
    pub(crate) max_dest_rd_atomic: u32,
    /// The RNR timer.
    pub(crate) min_rnr_timer: u8,
    /// The ACK timeout.
    pub(crate) timeout: u8,
    /// The retry count.
    pub(crate) retry_cnt: u8,
    /// The RNR retry count.
    pub(crate) rnr_retry: u8,
    /// Send WRs.
    pub(crate) max_send_wr: u32,
    /// Receive WRs.
    pub(crate) max_recv_wr: u32,
    /// SGEs per send WR.
    pub(crate) max_send_sge: u32,
    /// SGEs per receive WR.
    pub(crate) max_recv_sge: u32,
    /// Inline bytes.
    pub(crate) max_inline_data: u32,
    /// `enum ib_sig_type`.
    pub(crate) sq_sig_type: u32,
}

/// The QP and AH ops of driver `D`, set on the device by the registration
/// (`rdma_shim_ib_ops`' `qp_ah`).
pub(super) struct QpAhTable<D>(PhantomData<fn() -> D>);

impl<D: Driver> QpAhTable<D> {
    /// The table.
    pub(super) const OPS: raw::ib_device_ops = raw::ib_device_ops {
        create_qp: Some(create_qp::<D>),
        modify_qp: Some(modify_qp::<D>),
        query_qp: Some(query_qp::<D>),
        destroy_qp: Some(destroy_qp::<D>),
        create_ah: if D::HAS_CREATE_AH {
            Some(ah::create_ah::<D>)
        } else {
            None
        },
        create_user_ah: if D::HAS_CREATE_AH {
            Some(ah::create_ah::<D>)
        } else {
            None
        },
        query_ah: if D::HAS_CREATE_AH {
            Some(ah::query_ah)
        } else {
            None
        },
        destroy_ah: if D::HAS_CREATE_AH {
            Some(ah::destroy_ah)
        } else {
            None
        },
        // SAFETY: every other field of `ib_device_ops` is an optional
        // function pointer, a number or a pointer, for which zero means
        // "not set".
        ..unsafe { core::mem::zeroed() }
    };
}

pub(super) use super::containers::udata_ctx;

/// The RDMA core's `create_qp`; a failure is reported as
/// [`FailedVerb::CreateQp`].
///
/// # Safety
///
/// `ibqp` is the QP being created on this driver's registered device, in
/// its container (`rdma_shim_qp`), with its PD (if any) set by the core;
/// `attr` is valid for the call, its CQs, SRQ and XRC domain null or live
/// objects of this device that outlive the QP (the core holds
/// references); `udata` is null (a kernel QP) or the command's, in the
/// uverbs command of its process.
unsafe extern "C" fn create_qp<D: Driver>(
    ibqp: *mut raw::ib_qp,
    attr: *mut raw::ib_qp_init_attr,
    udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, attr) = unsafe { (dev_drv::<D>((*ibqp).device), &mut *attr) };
    // SAFETY: per the function's contract.
    let r = unsafe { create_qp_in::<D>(d, ibqp, attr, udata) };
    if r != 0 {
        d.verb_failed(FailedVerb::CreateQp);
    }
    r
}

/// [`create_qp`] after the device is known.
///
/// # Safety
///
/// As for [`create_qp`]; `d` is the driver of `ibqp`'s device.
unsafe fn create_qp_in<D: Driver>(
    d: &D,
    ibqp: *mut raw::ib_qp,
    attr: &mut raw::ib_qp_init_attr,
    udata: *mut raw::ib_udata,
) -> c_int {
    let mut init = QpInit {
        qp_type: attr.qp_type,
        sq_sig_type: attr.sq_sig_type,
        create_flags: attr.create_flags,
        max_send_wr: attr.cap.max_send_wr,
        max_recv_wr: attr.cap.max_recv_wr,
        max_send_sge: attr.cap.max_send_sge,
        max_recv_sge: attr.cap.max_recv_sge,
        max_inline_data: attr.cap.max_inline_data,
        has_srq: !attr.srq.is_null(),
        has_xrcd: !attr.xrcd.is_null(),
        ..QpInit::default()
    };
    // SAFETY: `ibqp` is the QP being created (the function's contract).
    let pd = unsafe { (*ibqp).pd };
    if !pd.is_null() {
        // SAFETY: a live PD of this device.
        init.pdn = unsafe { super::pd_pdn(pd) };
    }
    if init.has_srq {
        // SAFETY: a live SRQ of this device, in its container.
        init.srqn = unsafe { (*kernel::container_of!(attr.srq, raw::rdma_shim_srq, ibsrq)).srqn };
    }
    if init.has_xrcd {
        // SAFETY: a live XRC domain of this device.
        init.xrcdn = unsafe { super::xrcd_xrcdn(attr.xrcd) };
    }
    // SAFETY: the QP's device is registered (the function's contract).
    if !udata.is_null() && unsafe { (*(*ibqp).device).dma_device }.is_null() {
        // A device without a DMA device reads its SGEs as kernel virtual
        // addresses ([`super::VirtDma`]); the SGEs of a user QP's posts
        // (uverbs' post commands) are user addresses: no user QPs there.
        return EOPNOTSUPP.to_errno();
    }
    let (uctx, ibuctx) = if udata.is_null() {
        (core::ptr::null_mut(), core::ptr::null_mut())
    } else {
        // SAFETY: the command's udata (the function's contract).
        let (uctx, ibuctx, config) = unsafe { udata_ctx(udata) };
        init.uctx_config = config;
        (uctx, ibuctx)
    };
    // SAFETY: null or the command's udata (the function's contract).
    let udata = unsafe { UData::from_raw(udata) };
    let ureq = udata.as_ref().map(read_deferred::<D::QpReq>);
    init.user = ureq.is_some();
    let user = match &ureq {
        Some(r) => {
            // SAFETY: `ibqp` is the QP being created on the registered
            // device; `uctx` is the command's context from
            // `alloc_ucontext`.
            match unsafe { user_ctx::<D>((*ibqp).device, uctx) } {
                // SAFETY: `ibuctx` is the command's context.
                Some(u) => Some((u.with_mmap(unsafe { MmapCtx::from_raw(ibuctx) }), r)),
                None => return EINVAL.to_errno(),
            }
        }
        None => None,
    };
    let cq = |c: *mut raw::ib_cq| {
        if c.is_null() {
            core::ptr::null_mut()
        } else {
            // SAFETY: a live CQ of this device (the function's contract).
            unsafe { cq_rs(c) }
        }
    };
    // SAFETY: null or live CQs from `into_foreign` in `create_cq`, which
    // outlive the QP (the function's contract).
    let (scq, rcq) = unsafe {
        (
            try_borrow::<CqBox<D>>(cq(attr.send_cq)),
            try_borrow::<CqBox<D>>(cq(attr.recv_cq)),
        )
    };
    // SAFETY: the `ib_qp` being created; the driver drops every use of it
    // before `destroy_qp` returns (table entry and flush work go first).
    let Some(qp_ref) = (unsafe { IbQp::new(ibqp) }) else {
        return EINVAL.to_errno();
    };
    match d.create_qp(&mut init, scq, rcq, qp_ref, user) {
        Ok((b, n, resp)) => {
            // The pinned box is taken back with `from_foreign` in
            // `destroy_qp`.
            let raw_qp = b.into_foreign();
            // SAFETY: `ibqp` is in its container (the function's contract);
            // the core uses the QP only after this returns.
            unsafe {
                (*kernel::container_of!(ibqp, raw::rdma_shim_qp, ibqp)).rs_qp = raw_qp;
                (*ibqp).qp_num = n;
            }
            // SAFETY: `raw_qp` is the box handed over just above, live until
            // `destroy_qp`.
            d.publish_qp(unsafe { QpBox::<D>::borrow(raw_qp) }.get_ref());
            if let Some(u) = &udata {
                if let Err(e) = u.respond(&resp) {
                    // SAFETY: the QP set up above, which the core frees
                    // without a `destroy_qp` after this error.
                    unsafe { destroy_qp_rs::<D>(d, raw_qp) };
                    return e.to_errno();
                }
            }
            attr.cap.max_send_wr = init.max_send_wr;
            attr.cap.max_recv_wr = init.max_recv_wr;
            attr.cap.max_recv_sge = init.max_recv_sge;
            attr.cap.max_inline_data = init.max_inline_data;
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// The address vector of a modify with `IB_QP_AV`, as
/// `hns_roce_v2_set_path` reads it.
///
/// # Safety
///
/// `dev` is this driver's registered device; the GRH's `sgid_attr` of
/// `attr` is null or live for the call.
unsafe fn qp_av(dev: *mut raw::ib_device, attr: &raw::ib_qp_attr, mask: u32, a: &mut QpAttr) {
    let ah = &attr.ah_attr;
    let grh = &ah.grh;
    let port = if mask & raw::ib_qp_attr_mask_IB_QP_PORT != 0 {
        attr.port_num
    } else {
        1
    };
    // SAFETY: a RoCE address vector's address is the union's `roce`
    // member; any other's bytes are copied and not used (bytes have no
    // invalid values).
    a.dmac = unsafe { ah.__bindgen_anon_1.roce.as_ref() }.dmac;
    a.av_roce = ah.type_ == raw::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
    // SAFETY: `dev` is registered; the core checked `port` (an
    // `IB_QP_PORT` outside the device is refused before the driver).
    a.av_grh = unsafe { super::cap_eth_ah(dev, port) }
        && u32::from(ah.ah_flags) & raw::ib_ah_flags_IB_AH_GRH != 0;
    a.sgid_index = grh.sgid_index;
    a.hop_limit = grh.hop_limit;
    a.traffic_class = grh.traffic_class;
    a.flow_label = grh.flow_label;
    a.sl = ah.sl;
    // SAFETY: every bit pattern of the union is a valid `raw`.
    a.dgid = *unsafe { grh.dgid.raw.as_ref() };
    a.vlan_id = 0xffff;
    // SAFETY: null or live for the call (the function's contract).
    let sgid = unsafe { grh.sgid_attr.as_ref() };
    // CAST: `enum ib_gid_type` has four members.
    a.gid_type = sgid.map_or(raw::ib_gid_type_IB_GID_TYPE_IB, |g| g.gid_type) as u8;
    if let Some(g) = sgid.filter(|_| a.av_grh) {
        // SAFETY: `g` is live for the call; `vlan_id` is writable and the
        // MAC is not asked for (null).
        let ret = unsafe { raw::rdma_read_gid_l2_fields(g, &mut a.vlan_id, core::ptr::null_mut()) };
        a.l2_ret = ret;
    }
}

/// The RDMA core's `modify_qp`; a failure is reported as
/// [`FailedVerb::ModifyQp`].
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device; `attr` is valid
/// for the call; `udata` is null (a kernel modify) or the command's. A
/// user modify with a response buffer is answered in it (the driver's
/// [`QpOps::QpModifyResp`](super::QpOps)) when the driver has an answer.
unsafe extern "C" fn modify_qp<D: Driver>(
    ibqp: *mut raw::ib_qp,
    attr: *mut raw::ib_qp_attr,
    mask: c_int,
    udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let (dev, attr) = unsafe { ((*ibqp).device, &*attr) };
    // SAFETY: `dev` is this driver's registered device.
    let d = unsafe { dev_drv::<D>(dev) };
    // CAST: the core's mask is `enum ib_qp_attr_mask` bits in an int.
    let mask = mask as u32;
    let mut a = QpAttr {
        mask,
        qp_state: attr.qp_state,
        cur_qp_state: attr.cur_qp_state,
        port_num: attr.port_num,
        pkey_index: u32::from(attr.pkey_index),
        qkey: attr.qkey,
        sq_psn: attr.sq_psn,
        rq_psn: attr.rq_psn,
        dest_qp_num: attr.dest_qp_num,
        timeout: u32::from(attr.timeout),
        retry_cnt: u32::from(attr.retry_cnt),
        rnr_retry: u32::from(attr.rnr_retry),
        min_rnr_timer: u32::from(attr.min_rnr_timer),
        max_rd_atomic: u32::from(attr.max_rd_atomic),
        max_dest_rd_atomic: u32::from(attr.max_dest_rd_atomic),
        // CAST: `IB_ACCESS_*` bits in an int, kept bit for bit.
        access: attr.qp_access_flags as u32,
        path_mtu: attr.path_mtu,
        ..QpAttr::default()
    };
    if mask & raw::ib_qp_attr_mask_IB_QP_AV != 0 {
        // SAFETY: `dev` is registered; the core's address vector names a
        // live source GID or none.
        unsafe { qp_av(dev, attr, mask, &mut a) };
    }
    if !udata.is_null() {
        a.udata = true;
        // SAFETY: the command's udata (the function's contract).
        a.uctx_config = unsafe { udata_ctx(udata) }.2;
    }
    // SAFETY: `dev` is this driver's registered device; no state is
    // asked for (the MTU and MAC only).
    if let Ok(n) = unsafe { super::netdev::port_netdev::<D>(dev, 1, false) } {
        a.active_mtu = n.mtu;
        a.dmac_local = a.dmac == n.mac;
    }
    // SAFETY: per the function's contract: a live QP whose `rs_qp` is the
    // box from `create_qp`; `udata` null or the command's.
    let (qp, udata) = unsafe {
        (
            QpBox::<D>::borrow(qp_rs(ibqp)).get_ref(),
            UData::from_raw(udata),
        )
    };
    let ret = d.modify_qp(qp, &a).and_then(|r| match (&udata, r) {
        (Some(u), Some(r)) if u.outlen() > 0 => u.respond(&r),
        _ => Ok(()),
    });
    errno(counted(d, FailedVerb::ModifyQp, ret))
}

/// The RDMA core's `query_qp`: the driver's answer written into the core's
/// structs, every field the driver does not answer zero. The path
/// migration state (armed), port (1) and address vector type (RoCE) are
/// constant; `sq_draining` is 0.
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device; `attr` and
/// `init` are valid for writing.
unsafe extern "C" fn query_qp<D: Driver>(
    ibqp: *mut raw::ib_qp,
    attr: *mut raw::ib_qp_attr,
    _mask: c_int,
    init: *mut raw::ib_qp_init_attr,
) -> c_int {
    // SAFETY: per the function's contract; every field of both structs is
    // a number, a byte array or a pointer (null for none), for which zero
    // is valid.
    let (d, qp, q_ib, attr, init) = unsafe {
        attr.write_bytes(0, 1);
        init.write_bytes(0, 1);
        (
            dev_drv::<D>((*ibqp).device),
            QpBox::<D>::borrow(qp_rs(ibqp)).get_ref(),
            &*ibqp,
            &mut *attr,
            &mut *init,
        )
    };
    let mut q = QpQuery::default();
    if let Err(e) = d.query_qp(qp, &mut q) {
        return e.to_errno();
    }
    attr.qp_state = q.state;
    if q.queried {
        attr.path_mtu = q.path_mtu;
        attr.path_mig_state = raw::ib_mig_state_IB_MIG_ARMED;
        attr.ah_attr.type_ = raw::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
        attr.qkey = q.qkey;
        attr.rq_psn = q.rq_psn;
        attr.sq_psn = q.sq_psn;
        attr.dest_qp_num = q.dest_qp_num;
        // CAST: `IB_ACCESS_*` bits, kept bit for bit in the core's int.
        attr.qp_access_flags = q.access as c_int;
        if q.grh {
            let ah = &mut attr.ah_attr;
            ah.sl = q.sl;
            ah.port_num = 1;
            // CAST: `IB_AH_GRH` is 1.
            ah.ah_flags = raw::ib_ah_flags_IB_AH_GRH as u8;
            ah.grh.flow_label = q.flow_label;
            ah.grh.sgid_index = q.sgid_index;
            ah.grh.hop_limit = q.hop_limit;
            ah.grh.traffic_class = q.traffic_class;
            // SAFETY: the GID's bytes are the union's `raw` member.
            *unsafe { ah.grh.dgid.raw.as_mut() } = q.dgid;
        }
        attr.port_num = 1;
        attr.sq_draining = 0;
        // CAST: the core keeps these in 8 bits, as C's assignment does.
        attr.max_rd_atomic = q.max_rd_atomic as u8;
        // CAST: as above.
        attr.max_dest_rd_atomic = q.max_dest_rd_atomic as u8;
        attr.min_rnr_timer = q.min_rnr_timer;
        attr.timeout = q.timeout;
        attr.retry_cnt = q.retry_cnt;
        attr.rnr_retry = q.rnr_retry;
    }
    attr.cur_qp_state = attr.qp_state;
    // The capacities, in both answers.
    for cap in [&mut attr.cap, &mut init.cap] {
        cap.max_recv_wr = q.max_recv_wr;
        cap.max_recv_sge = q.max_recv_sge;
        cap.max_inline_data = q.max_inline_data;
        cap.max_send_wr = q.max_send_wr;
        cap.max_send_sge = q.max_send_sge;
    }
    init.qp_context = q_ib.qp_context;
    init.qp_type = q_ib.qp_type;
    init.recv_cq = q_ib.recv_cq;
    init.send_cq = q_ib.send_cq;
    init.srq = q_ib.srq;
    init.sq_sig_type = q.sq_sig_type;
    0
}

/// Stops and frees the driver's QP behind `qp`.
///
/// # Safety
///
/// `qp` is the box [`create_qp`] handed over, live and not used after this
/// call; `d` is its device's driver.
unsafe fn destroy_qp_rs<D: Driver>(d: &D, qp: *mut c_void) {
    // The flush work borrows the QP through its `ib_qp` until it is
    // stopped: only then is the box taken back.
    // A test build with `variant_destroy_unquiesced` skips this (and
    // `stop_flush`), to show that hip08/qp-destroy-during-flush-work
    // sees a QP taken back while its flush work runs (docs/harness.md).
    #[cfg(not(variant_destroy_unquiesced))]
    // SAFETY: `qp` is the live box from `create_qp`; the borrow ends
    // before `from_foreign` below.
    d.quiesce_qp(unsafe { QpBox::<D>::borrow(qp) }.get_ref());
    // SAFETY: the pointer owns the pinned box `create_qp` handed over
    // with `into_foreign`, and no flush work borrows it any more.
    let b = unsafe { QpBox::<D>::from_foreign(qp) };
    d.destroy_qp(b)
}

/// The RDMA core's `destroy_qp`.
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device, not used by
/// the driver after this call.
unsafe extern "C" fn destroy_qp<D: Driver>(
    ibqp: *mut raw::ib_qp,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract: its `rs_qp` is the box from
    // `create_qp`, given up here.
    unsafe { destroy_qp_rs::<D>(dev_drv::<D>((*ibqp).device), qp_rs(ibqp)) };
    0
}

/// Moves `ibqp` to ERR through the device's own `modify_qp` (the C
/// driver's flush work calls its modify the same way, failures counted).
///
/// # Safety
///
/// `ibqp` is a live QP of a registered device of this driver; process
/// context.
pub(in crate::rdma) unsafe fn modify_to_err(ibqp: *mut raw::ib_qp) -> Result {
    // SAFETY: every field of `ib_qp_attr` is a number, a byte array or a
    // pointer, for which zero is valid.
    let mut attr: raw::ib_qp_attr = unsafe { core::mem::zeroed() };
    attr.qp_state = raw::ib_qp_state_IB_QPS_ERR;
    // SAFETY: the QP's device is registered, its ops set (the function's
    // contract).
    let f = unsafe { (*(*ibqp).device).ops.modify_qp }.ok_or(EINVAL)?;
    // CAST: `IB_QP_STATE` is bit 0.
    let mask = raw::ib_qp_attr_mask_IB_QP_STATE as c_int;
    // SAFETY: this driver's `modify_qp` (set by the registration), with a
    // live QP, an attribute valid for the call and no udata.
    let r = unsafe { f(ibqp, &mut attr, mask, core::ptr::null_mut()) };
    if r == 0 {
        Ok(())
    } else {
        Err(Error::from_errno(r))
    }
}
