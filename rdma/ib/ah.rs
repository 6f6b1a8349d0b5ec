// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The AH verbs, `ib_device_ops` entries the RDMA core calls without the
//! shim, and the request and address vector a driver sees.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! `create_ah` reads the core's `rdma_ah_attr` into an [`AhIn`], the driver
//! fills an [`AddrVec`], which lives in the shim's container of the
//! `ib_ah` (`rdma_shim_ah`) until the core frees it: the UD sends read it
//! ([`ah_av`]), `query_ah` answers from it.

use super::{verbs::counted, verbs::dev_drv, Driver, FailedVerb};
use crate::rdma::{raw, UData};
use core::mem::{align_of, offset_of, size_of};
use kernel::{ffi::c_int, prelude::*};

/// What `create_ah` was asked for, read from the core's `rdma_ah_attr`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AhIn {
    /// The port.
    pub(crate) port: u8,
    /// The source GID's index.
    pub(crate) sgid_index: u8,
    /// 1 when a static rate was asked for, else 0.
    pub(crate) static_rate: u8,
    /// The GRH's hop limit.
    pub(crate) hop_limit: u8,
    /// The GRH's flow label.
    pub(crate) flow_label: u32,
    /// The GRH's traffic class.
    pub(crate) traffic_class: u8,
    /// The service level.
    pub(crate) sl: u8,
    /// 1 when the source GID is RoCE v2 (`IB_GID_TYPE_ROCE_UDP_ENCAP`).
    pub(crate) roce_v2: u8,
    /// 1 for a user AH (one with udata).
    pub(crate) user: u8,
    /// The destination GID.
    pub(crate) dgid: [u8; 16],
    /// The destination MAC.
    pub(crate) dmac: [u8; 6],
    /// A random UDP source port in the RoCE v2 range
    /// (`IB_ROCE_UDP_ENCAP_VALID_PORT_MIN..=MAX`).
    pub(crate) random_sport: u16,
    /// The source GID's VLAN (`rdma_read_gid_l2_fields`, 0xffff for none).
    pub(crate) vlan_id: u16,
    /// What `rdma_read_gid_l2_fields` returned.
    pub(crate) l2_ret: c_int,
}

/// The software address vector of an AH (C's `struct hns_roce_av`),
/// filled by the driver.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AddrVec {
    /// The port.
    pub(crate) port: u8,
    /// The source GID's index.
    pub(crate) gid_index: u8,
    /// The static rate.
    pub(crate) stat_rate: u8,
    /// The hop limit.
    pub(crate) hop_limit: u8,
    /// The flow label.
    pub(crate) flowlabel: u32,
    /// The UDP source port.
    pub(crate) udp_sport: u16,
    /// The service level (priority).
    pub(crate) sl: u8,
    /// The traffic class.
    pub(crate) tclass: u8,
    /// The destination GID.
    pub(crate) dgid: [u8; 16],
    /// The destination MAC.
    pub(crate) mac: [u8; 6],
    /// The VLAN id.
    pub(crate) vlan_id: u16,
    /// Whether the VLAN is used.
    pub(crate) vlan_en: u8,
    /// The TC mode of the priority.
    pub(crate) tc_mode: u8,
}

// The AH's container keeps an `AddrVec` in its `av` words.
const _: () = assert!(size_of::<AddrVec>() <= size_of::<[u64; 6]>());
const _: () = assert!(align_of::<AddrVec>() <= align_of::<u64>());
const _: () = assert!(offset_of!(raw::rdma_shim_ah, av) % align_of::<AddrVec>() == 0);

/// Where the address vector of `ibah` is stored.
///
/// # Safety
///
/// `ibah` is the `ibah` of a live `rdma_shim_ah` (every AH of this driver's
/// device: the core allocates the container's size).
unsafe fn av_slot(ibah: *mut raw::ib_ah) -> *mut AddrVec {
    // SAFETY: per the function's contract; `av` has the room and alignment
    // of an `AddrVec` (asserted above).
    unsafe {
        core::ptr::addr_of_mut!((*kernel::container_of!(ibah, raw::rdma_shim_ah, ibah)).av)
            .cast::<AddrVec>()
    }
}

/// The address vector of an AH, or `None` for a null AH.
///
/// # Safety
///
/// `ibah` is null or a live AH of this driver's device, created by
/// [`create_ah`].
pub(in crate::rdma) unsafe fn ah_av(ibah: *mut raw::ib_ah) -> Option<AddrVec> {
    if ibah.is_null() {
        return None;
    }
    // SAFETY: a live AH of this device whose `create_ah` stored an
    // `AddrVec` (the function's contract).
    Some(unsafe { av_slot(ibah).read() })
}

/// The request of `attr`, as the driver reads it.
///
/// # Safety
///
/// `attr` is the core's `rdma_ah_attr` of a RoCE AH: its GRH's `sgid_attr`
/// is null or a live GID attribute for the call.
unsafe fn ah_in(attr: &raw::rdma_ah_attr, user: bool) -> Result<AhIn> {
    let grh = &attr.grh;
    // SAFETY: null or live for the call (the function's contract).
    let sgid = unsafe { grh.sgid_attr.as_ref() }.ok_or(EINVAL)?;
    let sport = super::random_u32_inclusive(
        raw::IB_ROCE_UDP_ENCAP_VALID_PORT_MIN,
        raw::IB_ROCE_UDP_ENCAP_VALID_PORT_MAX,
    );
    let mut vlan_id = 0xffff;
    // SAFETY: `sgid` is live for the call; `vlan_id` is writable and the
    // MAC is not asked for (null).
    let l2_ret = unsafe { raw::rdma_read_gid_l2_fields(sgid, &mut vlan_id, core::ptr::null_mut()) };
    Ok(AhIn {
        // CAST: the core's port numbers of this one-port device fit u8, as
        // C's `hns_roce_av` keeps them.
        port: attr.port_num as u8,
        sgid_index: grh.sgid_index,
        static_rate: u8::from(attr.static_rate != 0),
        hop_limit: grh.hop_limit,
        flow_label: grh.flow_label,
        traffic_class: grh.traffic_class,
        sl: attr.sl,
        roce_v2: u8::from(sgid.gid_type == raw::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP),
        user: u8::from(user),
        // SAFETY: every bit pattern of the union is a valid `raw`.
        dgid: *unsafe { grh.dgid.raw.as_ref() },
        // SAFETY: a RoCE AH's address is the union's `roce` member, bytes.
        dmac: unsafe { attr.__bindgen_anon_1.roce.as_ref() }.dmac,
        // CAST: within the RoCE v2 port range, which fits u16.
        random_sport: sport as u16,
        vlan_id,
        l2_ret,
    })
}

/// The RDMA core's `create_ah` and `create_user_ah`; a failure is reported
/// as [`FailedVerb::CreateAh`].
///
/// # Safety
///
/// `ibah` is the AH being created on this driver's registered device, in
/// its container; `init` is valid for the call; `udata` is null (a kernel
/// AH) or the command's, in which the driver's answer
/// ([`AhOps::AhResp`](super::AhOps)) is written.
pub(super) unsafe extern "C" fn create_ah<D: Driver>(
    ibah: *mut raw::ib_ah,
    init: *mut raw::rdma_ah_init_attr,
    udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, attr, udata) = unsafe {
        (
            dev_drv::<D>((*ibah).device),
            &*(*init).ah_attr,
            UData::from_raw(udata),
        )
    };
    let mut av = AddrVec::default();
    // SAFETY: the core's attributes of a RoCE AH (the function's contract).
    let r = unsafe { ah_in(attr, udata.is_some()) }
        .and_then(|req| d.create_ah(&req, &mut av))
        .and_then(|resp| match &udata {
            Some(u) => u.respond(&resp),
            None => Ok(()),
        });
    match counted(d, FailedVerb::CreateAh, r) {
        Ok(()) => {
            // SAFETY: `ibah` is in its container (the function's contract).
            unsafe { av_slot(ibah).write(av) };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// The RDMA core's `query_ah`: the address vector back as an
/// `rdma_ah_attr` with a GRH.
///
/// # Safety
///
/// `ibah` is a live AH of this driver's device; `attr` is valid for
/// writing.
pub(super) unsafe extern "C" fn query_ah(
    ibah: *mut raw::ib_ah,
    attr: *mut raw::rdma_ah_attr,
) -> c_int {
    // SAFETY: per the function's contract; every field of `rdma_ah_attr`
    // is a number, a byte array or a pointer, for which zero is valid.
    let (av, attr) = unsafe {
        attr.write_bytes(0, 1);
        (av_slot(ibah).read(), &mut *attr)
    };
    attr.sl = av.sl;
    attr.port_num = u32::from(av.port);
    attr.static_rate = av.stat_rate;
    // CAST: `IB_AH_GRH` is 1.
    attr.ah_flags = raw::ib_ah_flags_IB_AH_GRH as u8;
    attr.grh.flow_label = av.flowlabel;
    attr.grh.sgid_index = av.gid_index;
    attr.grh.hop_limit = av.hop_limit;
    attr.grh.traffic_class = av.tclass;
    attr.grh.sgid_attr = core::ptr::null();
    // SAFETY: the GID's bytes are the union's `raw` member.
    *unsafe { attr.grh.dgid.raw.as_mut() } = av.dgid;
    0
}

/// The RDMA core's `destroy_ah`: the address vector goes with the
/// container the core frees; nothing to undo.
///
/// # Safety
///
/// Called by the RDMA core only (the arguments are not read).
pub(super) unsafe extern "C" fn destroy_ah(_ibah: *mut raw::ib_ah, _flags: u32) -> c_int {
    0
}
