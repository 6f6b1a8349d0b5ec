// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Resource tracking: what `rdma res show {cq,qp,mr,srq}` prints of this
//! driver's objects with `-dd` (driver details, named 32-bit values) and
//! `-r` (the raw context image the engine gives back).
//!
//! C: [`hns_roce_restrack.c`](srctree/drivers/infiniband/hw/hns/hns_roce_restrack.c).
//! The RDMA core calls the `fill_res_*_entry` ops of [`ResTable`] directly;
//! they ask the driver for [`ResAttrs`] or [`ResRaw`] and write the netlink
//! attributes (the nest's start, end and cancel are inline C: the shim
//! wraps them).

use super::ib::mr::own_mr_rs;
use super::ib::verbs::{cq_rs, dev_drv, qp_rs, srq_rs, CqBox, MrBox, QpBox, SrqBox};
use super::ib::Driver;
use super::raw;
use core::marker::PhantomData;
use kernel::{bindings, ffi::c_int, prelude::*, types::ForeignOwnable};

/// Most driver details one object has.
const RES_ATTRS: usize = 6;
/// Largest raw image: the QPC of HIP09 (512 bytes) and its SCC context.
const RES_RAW_MAX: usize = 512 + 64;

/// One named value of the driver details.
#[derive(Clone, Copy)]
struct ResAttr {
    /// The attribute's name.
    name: &'static CStr,
    /// Its value.
    val: u32,
    /// Printed in hex (else decimal).
    hex: bool,
}

/// The driver details of one object, as `rdma res show -dd` prints them.
///
/// # Invariants
///
/// `n` is at most `RES_ATTRS`.
pub(crate) struct ResAttrs {
    /// The first `n` entries are set.
    attr: [ResAttr; RES_ATTRS],
    /// How many are set.
    n: usize,
}

impl ResAttrs {
    /// No details yet.
    #[inline(never)]
    fn new() -> Self {
        let none = ResAttr {
            name: c"",
            val: 0,
            hex: false,
        };
        Self {
            attr: [none; RES_ATTRS],
            n: 0,
        }
    }

    /// Adds `name` with `val` printed in decimal (`rdma_nl_put_driver_u32`).
    pub(crate) fn put(&mut self, name: &'static CStr, val: u32) -> Result {
        self.push(name, val, false)
    }

    /// Adds `name` with `val` printed in hex (`rdma_nl_put_driver_u32_hex`).
    pub(crate) fn put_hex(&mut self, name: &'static CStr, val: u32) -> Result {
        self.push(name, val, true)
    }

    #[inline(never)]
    fn push(&mut self, name: &'static CStr, val: u32, hex: bool) -> Result {
        let a = self.attr.get_mut(self.n).ok_or(EMSGSIZE)?;
        *a = ResAttr { name, val, hex };
        self.n += 1;
        Ok(())
    }

    /// Writes the details as the `RDMA_NLDEV_ATTR_DRIVER` nest of `msg`;
    /// `EMSGSIZE` when they do not fit (nothing of the nest stays).
    ///
    /// # Safety
    ///
    /// `msg` is the message the core's `fill_res_*_entry` op was given.
    unsafe fn put_nest(&self, msg: *mut bindings::sk_buff) -> Result {
        // CAST: a small enum value.
        let ty = raw::rdma_nldev_attr_RDMA_NLDEV_ATTR_DRIVER as c_int;
        // SAFETY: the core's message (the function's contract).
        let nest = unsafe { raw::rdma_shim_nla_nest_start(msg, ty) };
        if nest.is_null() {
            return Err(EMSGSIZE);
        }
        for a in self.attr.iter().take(self.n) {
            let name = a.name.as_char_ptr();
            // SAFETY: the core's message; a NUL-terminated static name.
            let ret = unsafe {
                if a.hex {
                    raw::rdma_nl_put_driver_u32_hex(msg, name, a.val)
                } else {
                    raw::rdma_nl_put_driver_u32(msg, name, a.val)
                }
            };
            if ret != 0 {
                // SAFETY: the nest just started in `msg`, not ended.
                unsafe { raw::rdma_shim_nla_nest_cancel(msg, nest) };
                return Err(EMSGSIZE);
            }
        }
        // SAFETY: the nest just started in `msg`, not ended.
        unsafe { raw::rdma_shim_nla_nest_end(msg, nest) };
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
    #[inline(never)]
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

/// Asks `f` for the driver details and writes them to `msg`: 0 or the
/// errno.
///
/// # Safety
///
/// `msg` is the message the core's `fill_res_*_entry` op was given.
unsafe fn fill_attrs(
    msg: *mut bindings::sk_buff,
    f: impl FnOnce(&mut ResAttrs) -> Result,
) -> c_int {
    let mut r = ResAttrs::new();
    // SAFETY: per the function's contract.
    match f(&mut r).and_then(|()| unsafe { r.put_nest(msg) }) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// Asks `f` for the raw image and writes it to `msg` as
/// `RDMA_NLDEV_ATTR_RES_RAW`: 0 or the errno.
///
/// # Safety
///
/// `msg` is the message the core's `fill_res_*_entry_raw` op was given.
unsafe fn fill_raw(
    msg: *mut bindings::sk_buff,
    f: impl FnOnce(&mut ResRaw<'_>) -> Result,
) -> c_int {
    let mut buf = [0u8; RES_RAW_MAX];
    let mut r = ResRaw {
        buf: &mut buf,
        len: 0,
    };
    if let Err(e) = f(&mut r) {
        return e.to_errno();
    }
    // CAST: a small enum value; `len` is at most `RES_RAW_MAX`.
    let (ty, len) = (
        raw::rdma_nldev_attr_RDMA_NLDEV_ATTR_RES_RAW as c_int,
        r.len as c_int,
    );
    // SAFETY: the core's message (the function's contract); `len` readable
    // bytes at `buf`.
    unsafe { bindings::nla_put(msg, ty, len, buf.as_ptr().cast()) }
}

/// The RDMA core's `fill_res_cq_entry`.
///
/// # Safety
///
/// `ibcq` is a live CQ of this driver's registered device (restrack holds
/// a reference while it reports it); `msg` is the core's message.
unsafe extern "C" fn fill_res_cq<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibcq: *mut raw::ib_cq,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe {
        (
            dev_drv::<D>((*ibcq).device),
            CqBox::<D>::borrow(cq_rs(ibcq)),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_attrs(msg, |r| D::res_cq(d, cq, r)) }
}

/// The RDMA core's `fill_res_cq_entry_raw`.
///
/// # Safety
///
/// As [`fill_res_cq`].
unsafe extern "C" fn fill_res_cq_raw<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibcq: *mut raw::ib_cq,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe {
        (
            dev_drv::<D>((*ibcq).device),
            CqBox::<D>::borrow(cq_rs(ibcq)),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_raw(msg, |r| D::res_cq_raw(d, cq, r)) }
}

/// The RDMA core's `fill_res_qp_entry`.
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device (restrack holds
/// a reference while it reports it); `msg` is the core's message.
unsafe extern "C" fn fill_res_qp<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibqp: *mut raw::ib_qp,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, qp) = unsafe {
        (
            dev_drv::<D>((*ibqp).device),
            QpBox::<D>::borrow(qp_rs(ibqp)).get_ref(),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_attrs(msg, |r| D::res_qp(d, qp, r)) }
}

/// The RDMA core's `fill_res_qp_entry_raw`.
///
/// # Safety
///
/// As [`fill_res_qp`].
unsafe extern "C" fn fill_res_qp_raw<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibqp: *mut raw::ib_qp,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, qp) = unsafe {
        (
            dev_drv::<D>((*ibqp).device),
            QpBox::<D>::borrow(qp_rs(ibqp)).get_ref(),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_raw(msg, |r| D::res_qp_raw(d, qp, r)) }
}

/// The RDMA core's `fill_res_mr_entry`.
///
/// # Safety
///
/// `ibmr` is a live MR of this driver's registered device (restrack holds
/// a reference while it reports it); `msg` is the core's message.
unsafe extern "C" fn fill_res_mr<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibmr: *mut raw::ib_mr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, mr) = unsafe {
        (
            dev_drv::<D>((*ibmr).device),
            MrBox::<D>::borrow(own_mr_rs(ibmr)).get_ref(),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_attrs(msg, |r| D::res_mr(d, mr, r)) }
}

/// The RDMA core's `fill_res_mr_entry_raw`.
///
/// # Safety
///
/// As [`fill_res_mr`].
unsafe extern "C" fn fill_res_mr_raw<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibmr: *mut raw::ib_mr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, mr) = unsafe {
        (
            dev_drv::<D>((*ibmr).device),
            MrBox::<D>::borrow(own_mr_rs(ibmr)).get_ref(),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_raw(msg, |r| D::res_mr_raw(d, mr, r)) }
}

/// The RDMA core's `fill_res_srq_entry`.
///
/// # Safety
///
/// `ibsrq` is a live SRQ of this driver's registered device (restrack
/// holds a reference while it reports it); `msg` is the core's message.
unsafe extern "C" fn fill_res_srq<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibsrq: *mut raw::ib_srq,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq) = unsafe {
        (
            dev_drv::<D>((*ibsrq).device),
            SrqBox::<D>::borrow(srq_rs(ibsrq)),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_attrs(msg, |r| D::res_srq(d, srq, r)) }
}

/// The RDMA core's `fill_res_srq_entry_raw`.
///
/// # Safety
///
/// As [`fill_res_srq`].
unsafe extern "C" fn fill_res_srq_raw<D: Driver>(
    msg: *mut bindings::sk_buff,
    ibsrq: *mut raw::ib_srq,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq) = unsafe {
        (
            dev_drv::<D>((*ibsrq).device),
            SrqBox::<D>::borrow(srq_rs(ibsrq)),
        )
    };
    // SAFETY: the core's message (the function's contract).
    unsafe { fill_raw(msg, |r| D::res_srq_raw(d, srq, r)) }
}

/// The restrack ops of driver `D`, called by the RDMA core directly.
pub(super) struct ResTable<D>(PhantomData<fn() -> D>);

impl<D: Driver> ResTable<D> {
    /// The CQ, QP and MR entries every device has.
    pub(super) const OPS: raw::ib_device_ops = raw::ib_device_ops {
        fill_res_cq_entry: if D::HAS_RES_CQ {
            Some(fill_res_cq::<D>)
        } else {
            None
        },
        fill_res_cq_entry_raw: if D::HAS_RES_CQ_RAW {
            Some(fill_res_cq_raw::<D>)
        } else {
            None
        },
        fill_res_qp_entry: if D::HAS_RES_QP {
            Some(fill_res_qp::<D>)
        } else {
            None
        },
        fill_res_qp_entry_raw: if D::HAS_RES_QP_RAW {
            Some(fill_res_qp_raw::<D>)
        } else {
            None
        },
        fill_res_mr_entry: if D::HAS_RES_MR {
            Some(fill_res_mr::<D>)
        } else {
            None
        },
        fill_res_mr_entry_raw: if D::HAS_RES_MR_RAW {
            Some(fill_res_mr_raw::<D>)
        } else {
            None
        },
        // SAFETY: every other field of `ib_device_ops` is an optional
        // function pointer, a number or a pointer, for which zero means
        // "not set".
        ..unsafe { core::mem::zeroed() }
    };

    /// The SRQ entries, set only on devices with SRQs.
    pub(super) const SRQ: raw::ib_device_ops = raw::ib_device_ops {
        fill_res_srq_entry: if D::HAS_RES_SRQ {
            Some(fill_res_srq::<D>)
        } else {
            None
        },
        fill_res_srq_entry_raw: if D::HAS_RES_SRQ_RAW {
            Some(fill_res_srq_raw::<D>)
        } else {
            None
        },
        // SAFETY: as for `OPS`.
        ..unsafe { core::mem::zeroed() }
    };
}
