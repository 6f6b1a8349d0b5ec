// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The GID verbs, `add_gid` and `del_gid`: `ib_device_ops` entries the
//! RDMA core calls without the shim when a GID table entry of the port
//! changes.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use super::{verbs::dev_drv, Driver, GidEntry, SgidType};
use crate::rdma::raw;
use core::marker::PhantomData;
use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
};

/// The GID ops, instantiated for a driver.
pub(super) struct GidTable<D>(PhantomData<fn() -> D>);

impl<D: Driver> GidTable<D> {
    /// The table.
    pub(super) const OPS: raw::ib_device_ops = raw::ib_device_ops {
        add_gid: if D::HAS_SET_GID {
            Some(add_gid::<D>)
        } else {
            None
        },
        del_gid: if D::HAS_SET_GID {
            Some(del_gid::<D>)
        } else {
            None
        },
        // SAFETY: every other field of `ib_device_ops` is an optional
        // function pointer, a number or a pointer, for which zero means
        // "not set".
        ..unsafe { core::mem::zeroed() }
    };
}

/// Writes (`add`) or clears the entry of `attr` in the driver's GID table.
/// The device has one port: an entry of any other is refused with
/// `EINVAL`. A new entry takes its VLAN and MAC from the entry's netdev
/// (`rdma_read_gid_l2_fields`, whose error is returned).
///
/// # Safety
///
/// `attr` is a live GID attribute of this driver's registered device for
/// the call.
unsafe fn set_gid<D: Driver>(attr: *const raw::ib_gid_attr, add: bool) -> Result {
    // SAFETY: per the function's contract.
    let (d, a) = unsafe { (dev_drv::<D>((*attr).device), &*attr) };
    if a.port_num != 1 {
        return Err(EINVAL);
    }
    if !add {
        return d.set_gid(u32::from(a.index), None);
    }
    let mut vlan_id = 0xffff;
    let mut mac = [0u8; 6];
    // SAFETY: `attr` is live for the call; `vlan_id` and the 6-byte `mac`
    // are writable.
    kernel::error::to_result(unsafe {
        raw::rdma_read_gid_l2_fields(attr, &mut vlan_id, mac.as_mut_ptr())
    })?;
    // SAFETY: every bit pattern of the union is a valid `raw`.
    let gid = unsafe { a.gid.raw.as_ref() };
    let roce_v2 = a.gid_type == raw::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP;
    d.set_gid(
        u32::from(a.index),
        Some(GidEntry {
            gid,
            ty: SgidType::of(gid, roce_v2),
            vlan_id,
            mac: &mac,
        }),
    )
}

/// The RDMA core's `add_gid` (no per-entry context is kept).
///
/// # Safety
///
/// `attr` is a live GID attribute of this driver's registered device for
/// the call (`context` is not read).
unsafe extern "C" fn add_gid<D: Driver>(
    attr: *const raw::ib_gid_attr,
    _context: *mut *mut c_void,
) -> c_int {
    // SAFETY: per the function's contract.
    match unsafe { set_gid::<D>(attr, true) } {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The RDMA core's `del_gid`.
///
/// # Safety
///
/// As for [`add_gid`].
unsafe extern "C" fn del_gid<D: Driver>(
    attr: *const raw::ib_gid_attr,
    _context: *mut *mut c_void,
) -> c_int {
    // SAFETY: per the function's contract.
    match unsafe { set_gid::<D>(attr, false) } {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}
