// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The driver data of a user verb: `struct ib_udata`.
//!
//! C header: [`include/rdma/uverbs_ioctl.h`](srctree/include/rdma/uverbs_ioctl.h).
//!
//! [`UData`] is the udata of one verb call, borrowed for that call. It reads
//! the request as `ib_copy_validate_udata_in` (and `_cm`) does and writes
//! the response as `ib_respond_udata` does: the same lengths, the same
//! bytes, the same errnos (`-EINVAL` for a request shorter than its first
//! version, `-EOPNOTSUPP` for non-zero bytes past the struct or unknown
//! `comp_mask` bits, `-EFAULT` when user memory faults). Which bytes move is
//! decided in `uabi.rs` (host-tested); this file only copies them. The
//! request and answer types are the driver's: any `FromBytes`/`AsBytes`
//! type implementing [`UdataIn`]/[`UdataOut`].

use super::{
    raw,
    uabi::{self, UdataIn, UdataOut},
};
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    ffi::c_void,
    prelude::*,
    transmute::{AsBytes, FromBytes},
    uaccess::{UserPtr, UserSlice},
};

/// The udata of one verb call.
pub(crate) struct UData<'a> {
    /// The core's `ib_udata`, valid for `'a`.
    ptr: NonNull<raw::ib_udata>,
    /// Borrowed for the call.
    _call: PhantomData<&'a raw::ib_udata>,
}

impl<'a> UData<'a> {
    /// The udata at `p`, or `None` for a kernel verb (null).
    ///
    /// # Safety
    ///
    /// `p` is null or the `ib_udata` of a verb call that lasts for `'a`, in
    /// the context of the calling process (its buffers are that process's).
    pub(crate) unsafe fn from_raw(p: *mut raw::ib_udata) -> Option<Self> {
        Some(Self {
            ptr: NonNull::new(p)?,
            _call: PhantomData,
        })
    }

    /// The core's `ib_udata`.
    fn raw(&self) -> &raw::ib_udata {
        // SAFETY: valid for `'a` (`from_raw`'s contract); the core does not
        // change it during the call.
        unsafe { self.ptr.as_ref() }
    }

    /// The request's length in bytes (`inlen`).
    pub(crate) fn inlen(&self) -> usize {
        self.raw().inlen
    }

    /// The response buffer's length in bytes (`outlen`).
    pub(crate) fn outlen(&self) -> usize {
        self.raw().outlen
    }

    /// Fails unless the `len` user bytes at `addr` are zero, as
    /// `copy_struct_from_user` checks a tail (with the kernel's own
    /// `check_zeroed_user`): `-EOPNOTSUPP` (C's `-E2BIG`, which
    /// `_ib_copy_validate_udata_in` turns into it) at a non-zero byte,
    /// `-EFAULT` when the range is not user memory or faults first.
    fn check_zero(addr: *const c_void, len: usize) -> Result {
        // SAFETY: `check_zeroed_user` takes any user address and length:
        // it checks the range and reads it with fault handling.
        let r = unsafe { kernel::bindings::check_zeroed_user(addr, len) };
        match r {
            0 => Err(EOPNOTSUPP),
            r if r < 0 => Err(Error::from_errno(r)),
            _ => Ok(()),
        }
    }

    /// The request, as `ib_copy_validate_udata_in(udata, req, end_member)`:
    /// `-EINVAL` when shorter than `T::MIN`, `-EOPNOTSUPP` when a longer
    /// request has a non-zero byte past `T`, members it lacks zero.
    pub(crate) fn read_in<T: UdataIn + FromBytes + AsBytes>(&self) -> Result<T> {
        let mut req = T::default();
        self.read_bytes(req.as_bytes_mut(), T::MIN)?;
        Ok(req)
    }

    /// [`UData::read_in`] into the bytes of the request `req`, whose first
    /// version is `min` bytes long: one copy for every request type.
    #[inline(never)]
    fn read_bytes(&self, req: &mut [u8], min: usize) -> Result {
        let plan = uabi::in_plan(self.inlen(), req.len(), min).map_err(|_| EINVAL)?;
        let inbuf = self.raw().inbuf;
        if plan.tail > 0 {
            Self::check_zero(inbuf.wrapping_byte_add(req.len()), plan.tail)?;
        }
        let head = req.get_mut(..plan.head).ok_or(EINVAL)?;
        UserSlice::new(UserPtr::from_ptr(inbuf.cast_mut()), plan.head)
            .reader()
            .read_slice(head)
    }

    /// No request and an empty answer, as `ib_no_udata_io`: a request must
    /// be all zeros (`ib_is_udata_in_empty`: `-EOPNOTSUPP`, `-EFAULT`),
    /// then the response buffer is zeroed (`ib_respond_empty_udata`).
    pub(crate) fn no_io(&self) -> Result {
        let plan = uabi::in_plan(self.inlen(), 0, 0).map_err(|_| EINVAL)?;
        if plan.tail > 0 {
            Self::check_zero(self.raw().inbuf, plan.tail)?;
        }
        self.respond(&uabi::Empty)
    }

    /// Writes the response as `ib_respond_udata`: cut to the buffer,
    /// zeros after it to the buffer's end; `-EFAULT` when that faults.
    pub(crate) fn respond<T: UdataOut + AsBytes>(&self, resp: &T) -> Result {
        self.respond_bytes(resp.as_bytes())
    }

    /// [`UData::respond`] of the bytes of a response: one copy for every
    /// response type.
    #[inline(never)]
    fn respond_bytes(&self, resp: &[u8]) -> Result {
        let plan = uabi::out_plan(resp.len(), self.outlen());
        let out = self.raw().outbuf.cast::<c_void>();
        let mut w = UserSlice::new(UserPtr::from_ptr(out), self.outlen()).writer();
        w.write_slice(resp.get(..plan.copy).ok_or(EINVAL)?)?;
        let zeros = [0u8; 64];
        let mut left = plan.clear;
        while left > 0 {
            let n = left.min(zeros.len());
            w.write_slice(&zeros[..n])?;
            left -= n;
        }
        Ok(())
    }
}

// SAFETY: no bytes at all.
unsafe impl FromBytes for uabi::Empty {}
// SAFETY: no bytes at all.
unsafe impl AsBytes for uabi::Empty {}
