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
//! decided in `uabi.rs` (host-tested); this file only copies them.

use super::{
    raw,
    uabi::{self, UdataIn, UdataInCm, UdataOut},
};
use core::{marker::PhantomData, mem::offset_of, mem::size_of, ptr::NonNull};
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
        let plan = uabi::in_plan(self.inlen(), size_of::<T>(), T::MIN).map_err(|_| EINVAL)?;
        let inbuf = self.raw().inbuf;
        if plan.tail > 0 {
            Self::check_zero(inbuf.wrapping_byte_add(size_of::<T>()), plan.tail)?;
        }
        let mut req = T::default();
        let head = req.as_bytes_mut().get_mut(..plan.head).ok_or(EINVAL)?;
        UserSlice::new(UserPtr::from_ptr(inbuf.cast_mut()), plan.head)
            .reader()
            .read_slice(head)?;
        Ok(req)
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

    /// The `comp_mask` check that `ib_copy_validate_udata_in_cm` adds to
    /// [`Self::read_in`]: `-EOPNOTSUPP` for a bit outside `valid`. Apart,
    /// because C's copy has filled the request when this check refuses it
    /// and the driver still reads its members.
    pub(crate) fn check_cm<T: UdataInCm>(req: &T, valid: u64) -> Result {
        if uabi::cm_ok(req.comp_mask(), valid) {
            Ok(())
        } else {
            Err(EOPNOTSUPP)
        }
    }

    /// Writes the response as `ib_respond_udata`: cut to the buffer,
    /// zeros after it to the buffer's end; `-EFAULT` when that faults.
    pub(crate) fn respond<T: UdataOut + AsBytes>(&self, resp: &T) -> Result {
        let plan = uabi::out_plan(size_of::<T>(), self.outlen());
        let out = self.raw().outbuf.cast::<c_void>();
        let mut w = UserSlice::new(UserPtr::from_ptr(out), self.outlen()).writer();
        w.write_slice(resp.as_bytes().get(..plan.copy).ok_or(EINVAL)?)?;
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

/// Marks the uapi copies as plain bytes and checks them against the
/// bindings' structs: same size, each member at the same offset, and the
/// members' sizes adding up to the struct's (no padding).
macro_rules! uapi_type {
    ($t:ty, $raw:ty, [$($m:ident: $f:ty),*]) => {
        // SAFETY: `#[repr(C)]` of integers and integer arrays with no
        // padding (the size checks below), so every byte pattern is a valid
        // value and every byte is initialised.
        unsafe impl FromBytes for $t {}
        // SAFETY: as above.
        unsafe impl AsBytes for $t {}
        const _: () = assert!(size_of::<$t>() == size_of::<$raw>());
        const _: () = assert!(size_of::<$t>() == 0 $(+ size_of::<$f>())*);
        $(const _: () = assert!(offset_of!($t, $m) == offset_of!($raw, $m));)*
    };
}

uapi_type!(
    uabi::CreateCq,
    raw::hns_roce_ib_create_cq,
    [buf_addr: u64, db_addr: u64, cqe_size: u32, reserved: u32]
);
uapi_type!(
    uabi::CreateCqResp,
    raw::hns_roce_ib_create_cq_resp,
    [cqn: u64, cap_flags: u64]
);
uapi_type!(
    uabi::CreateSrq,
    raw::hns_roce_ib_create_srq,
    [buf_addr: u64, db_addr: u64, que_addr: u64, req_cap_flags: u32, reserved: u32]
);
uapi_type!(
    uabi::CreateSrqResp,
    raw::hns_roce_ib_create_srq_resp,
    [srqn: u32, cap_flags: u32]
);
uapi_type!(
    uabi::CreateQp,
    raw::hns_roce_ib_create_qp,
    [
        buf_addr: u64,
        db_addr: u64,
        log_sq_bb_count: u8,
        log_sq_stride: u8,
        sq_no_prefetch: u8,
        reserved: [u8; 5],
        sdb_addr: u64,
        comp_mask: u64,
        create_flags: u64,
        cong_type_flags: u64
    ]
);
uapi_type!(
    uabi::CreateQpResp,
    raw::hns_roce_ib_create_qp_resp,
    [cap_flags: u64, dwqe_mmap_key: u64]
);
uapi_type!(
    uabi::ModifyQpResp,
    raw::hns_roce_ib_modify_qp_resp,
    [tc_mode: u8, priority: u8, reserved: [u8; 6]]
);
uapi_type!(
    uabi::AllocUcontextResp,
    raw::hns_roce_ib_alloc_ucontext_resp,
    [
        qp_tab_size: u32,
        cqe_size: u32,
        srq_tab_size: u32,
        reserved: u32,
        config: u32,
        max_inline_data: u32,
        congest_type: u8,
        reserved0: [u8; 7]
    ]
);
uapi_type!(
    uabi::AllocUcontext,
    raw::hns_roce_ib_alloc_ucontext,
    [config: u32, reserved: u32]
);
// SAFETY: no bytes at all.
unsafe impl AsBytes for uabi::Empty {}

uapi_type!(uabi::AllocPdResp, raw::hns_roce_ib_alloc_pd_resp, [pdn: u32]);
uapi_type!(
    uabi::CreateAhResp,
    raw::hns_roce_ib_create_ah_resp,
    [dmac: [u8; 6], priority: u8, tc_mode: u8]
);

const _: () = assert!(
    uabi::CREATE_QP_MASK_CONGEST_TYPE
        == raw::hns_roce_create_qp_comp_mask_HNS_ROCE_CREATE_QP_MASK_CONGEST_TYPE as u64
);
