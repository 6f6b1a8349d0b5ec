// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Resource tracking: what `rdma res show {cq,qp,mr}` prints of this
//! driver's objects with `-dd` (driver details, named 32-bit values) and
//! `-r` (the raw context image the engine gives back).
//!
//! C: [`hns_roce_restrack.c`](srctree/drivers/infiniband/hw/hns/hns_roce_restrack.c).
//! The shim does the netlink attributes (`nla_nest_start` and friends are
//! inline C); the driver only fills [`ResAttrs`] and [`ResRaw`].

use super::ib::verbs::{drv, CqBox, MrBox, QpBox, SrqBox};
use super::ib::IbDriver;
use super::raw;
use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
    types::ForeignOwnable,
};

/// The driver details of one object, as `rdma res show -dd` prints them.
///
/// # Invariants
///
/// `0.n` is at most the length of `0.attr`, and every name among the first
/// `0.n` entries points to a `'static` C string.
pub(crate) struct ResAttrs(raw::hns_shim_res);

impl ResAttrs {
    /// Adds `name` with `val` printed in decimal (`rdma_nl_put_driver_u32`).
    pub(crate) fn put(&mut self, name: &'static CStr, val: u32) -> Result {
        self.push(name, val, false)
    }

    /// Adds `name` with `val` printed in hex (`rdma_nl_put_driver_u32_hex`).
    pub(crate) fn put_hex(&mut self, name: &'static CStr, val: u32) -> Result {
        self.push(name, val, true)
    }

    fn push(&mut self, name: &'static CStr, val: u32, hex: bool) -> Result {
        // CAST: `n` is at most the array length (type invariant).
        let a = self.0.attr.get_mut(self.0.n as usize).ok_or(EMSGSIZE)?;
        a.name = name.as_char_ptr();
        a.val = val;
        a.hex = hex;
        self.0.n += 1;
        Ok(())
    }
}

/// The raw image of one object (`RDMA_NLDEV_ATTR_RES_RAW`): context words
/// as the engine wrote them into the mailbox, appended in order.
pub(crate) struct ResRaw<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl ResRaw<'_> {
    /// Appends `words` (the mailbox's words, in memory order).
    pub(crate) fn push_words(&mut self, words: &[u32]) -> Result {
        for w in words {
            let end = self.len + 4;
            self.buf
                .get_mut(self.len..end)
                .ok_or(EMSGSIZE)?
                .copy_from_slice(&w.to_ne_bytes());
            self.len = end;
        }
        Ok(())
    }
}

/// Runs `f` on fresh driver details and copies them to `out`.
///
/// # Safety
///
/// `out` is valid for writing.
unsafe fn fill_attrs(
    out: *mut raw::hns_shim_res,
    f: impl FnOnce(&mut ResAttrs) -> Result,
) -> c_int {
    let mut r = ResAttrs(raw::hns_shim_res::default());
    match f(&mut r) {
        Ok(()) => {
            // SAFETY: valid for writing (the caller's contract).
            unsafe { out.write(r.0) };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Runs `f` on the shim's raw buffer; its length or the errno.
///
/// # Safety
///
/// `buf` is valid for writing `HNS_SHIM_RES_RAW_MAX` bytes and not
/// otherwise used during the call.
unsafe fn fill_raw(buf: *mut u8, f: impl FnOnce(&mut ResRaw<'_>) -> Result) -> c_int {
    // CAST: a small constant.
    let max = raw::HNS_SHIM_RES_RAW_MAX as usize;
    // SAFETY: `max` writable bytes, exclusively ours (the caller's contract).
    let buf = unsafe { core::slice::from_raw_parts_mut(buf, max) };
    let mut r = ResRaw { buf, len: 0 };
    match f(&mut r) {
        // CAST: at most `max`.
        Ok(()) => r.len as c_int,
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's `fill_res_cq_entry`.
///
/// # Safety
///
/// `rs` is the device's pointer (see `drv`); `cq` is a live CQ of it
/// (restrack holds a reference while it reports it); `out` is writable.
pub(super) unsafe extern "C" fn res_cq<D: IbDriver>(
    rs: *mut c_void,
    cq: *mut c_void,
    out: *mut raw::hns_shim_res,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe { (drv::<D>(rs), CqBox::<D>::borrow(cq)) };
    // SAFETY: `out` is writable (the function's contract).
    unsafe { fill_attrs(out, |r| D::res_cq(d, cq, r)) }
}

/// Called by the shim's `fill_res_cq_entry_raw`.
///
/// # Safety
///
/// As `res_cq`; `buf` holds `HNS_SHIM_RES_RAW_MAX` writable bytes.
pub(super) unsafe extern "C" fn res_cq_raw<D: IbDriver>(
    rs: *mut c_void,
    cq: *mut c_void,
    buf: *mut u8,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe { (drv::<D>(rs), CqBox::<D>::borrow(cq)) };
    // SAFETY: `buf` as the function's contract says.
    unsafe { fill_raw(buf, |r| D::res_cq_raw(d, cq, r)) }
}

/// Called by the shim's `fill_res_srq_entry`.
///
/// # Safety
///
/// `rs` is the device's pointer (see `drv`); `srq` is a live SRQ of it
/// (restrack holds a reference while it reports it); `out` is writable.
pub(super) unsafe extern "C" fn res_srq<D: IbDriver>(
    rs: *mut c_void,
    srq: *mut c_void,
    out: *mut raw::hns_shim_res,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq) = unsafe { (drv::<D>(rs), SrqBox::<D>::borrow(srq)) };
    // SAFETY: `out` is writable (the function's contract).
    unsafe { fill_attrs(out, |r| D::res_srq(d, srq, r)) }
}

/// Called by the shim's `fill_res_srq_entry_raw`.
///
/// # Safety
///
/// As `res_srq`; `buf` holds `HNS_SHIM_RES_RAW_MAX` writable bytes.
pub(super) unsafe extern "C" fn res_srq_raw<D: IbDriver>(
    rs: *mut c_void,
    srq: *mut c_void,
    buf: *mut u8,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq) = unsafe { (drv::<D>(rs), SrqBox::<D>::borrow(srq)) };
    // SAFETY: `buf` as the function's contract says.
    unsafe { fill_raw(buf, |r| D::res_srq_raw(d, srq, r)) }
}

/// Called by the shim's `fill_res_qp_entry`.
///
/// # Safety
///
/// `rs` is the device's pointer; `qp` is a live QP of it; `out` is
/// writable.
pub(super) unsafe extern "C" fn res_qp<D: IbDriver>(
    rs: *mut c_void,
    qp: *mut c_void,
    out: *mut raw::hns_shim_res,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, qp) = unsafe { (drv::<D>(rs), QpBox::<D>::borrow(qp).get_ref()) };
    // SAFETY: `out` is writable (the function's contract).
    unsafe { fill_attrs(out, |r| D::res_qp(d, qp, r)) }
}

/// Called by the shim's `fill_res_qp_entry_raw`.
///
/// # Safety
///
/// As `res_qp`; `buf` holds `HNS_SHIM_RES_RAW_MAX` writable bytes.
pub(super) unsafe extern "C" fn res_qp_raw<D: IbDriver>(
    rs: *mut c_void,
    qp: *mut c_void,
    buf: *mut u8,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, qp) = unsafe { (drv::<D>(rs), QpBox::<D>::borrow(qp).get_ref()) };
    // SAFETY: `buf` as the function's contract says.
    unsafe { fill_raw(buf, |r| D::res_qp_raw(d, qp, r)) }
}

/// Called by the shim's `fill_res_mr_entry`.
///
/// # Safety
///
/// `rs` is the device's pointer; `mr` is a live MR of it; `out` is
/// writable.
pub(super) unsafe extern "C" fn res_mr<D: IbDriver>(
    rs: *mut c_void,
    mr: *mut c_void,
    out: *mut raw::hns_shim_res,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, mr) = unsafe { (drv::<D>(rs), MrBox::<D>::borrow(mr).get_ref()) };
    // SAFETY: `out` is writable (the function's contract).
    unsafe { fill_attrs(out, |r| D::res_mr(d, mr, r)) }
}

/// Called by the shim's `fill_res_mr_entry_raw`.
///
/// # Safety
///
/// As `res_mr`; `buf` holds `HNS_SHIM_RES_RAW_MAX` writable bytes.
pub(super) unsafe extern "C" fn res_mr_raw<D: IbDriver>(
    rs: *mut c_void,
    mr: *mut c_void,
    buf: *mut u8,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, mr) = unsafe { (drv::<D>(rs), MrBox::<D>::borrow(mr).get_ref()) };
    // SAFETY: `buf` as the function's contract says.
    unsafe { fill_raw(buf, |r| D::res_mr_raw(d, mr, r)) }
}
