// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! User memory pinned for the device: a safe [`Umem`] over `struct ib_umem`
//! (`ib_umem_get_va`, `ib_umem_release` on drop, `ib_umem_find_best_pgsz`,
//! DMA block iteration as `rdma_umem_for_each_dma_block`), and the handle
//! a user verb gets to pin memory with ([`UmemDev`]) or to reach its user
//! context ([`UserCtx`]).
//!
//! C headers: [`include/rdma/ib_umem.h`](srctree/include/rdma/ib_umem.h),
//! [`include/rdma/iter.h`](srctree/include/rdma/iter.h).
//!
//! Part of the rdma layer (`rdma.rs` and `rdma/`), the only code that calls
//! bindings or the shim.

use super::raw;
use core::{
    marker::PhantomData,
    ptr::{null, NonNull},
};
use kernel::{
    error::{from_err_ptr, to_result},
    prelude::*,
    sync::ArcBorrow,
};

/// The device a user verb pins memory for, valid for the verb's call.
///
/// # Invariants
///
/// `ibdev` is a registered `ib_device` that outlives `'a`; the verb runs in
/// the process whose memory is pinned (`current->mm`), as every uverbs
/// command does.
#[derive(Clone, Copy)]
pub(crate) struct UmemDev<'a> {
    ibdev: NonNull<raw::ib_device>,
    _p: PhantomData<&'a raw::ib_device>,
}

impl UmemDev<'_> {
    /// Wraps the `ib_device` a uverbs command was called on.
    ///
    /// # Safety
    ///
    /// `ibdev` is a registered `ib_device` that stays valid while the
    /// returned value exists, and the caller runs a uverbs command of the
    /// process that owns the memory to be pinned.
    pub(super) unsafe fn from_raw(ibdev: *mut raw::ib_device) -> Option<Self> {
        // INVARIANT: per the function's contract.
        NonNull::new(ibdev).map(|ibdev| Self {
            ibdev,
            _p: PhantomData,
        })
    }

    /// Pins `size` bytes of the calling process at user address `addr` and
    /// maps them for DMA (`ib_umem_get_va`); `access` are `IB_ACCESS_*`
    /// flags (writable unless only remote reads are allowed, as the core
    /// decides).
    ///
    /// # Errors
    ///
    /// The core's errno: `EINVAL` for an empty or wrapping range, `ENOMEM`
    /// over the locked-memory limit or out of memory, `EFAULT` for an
    /// unmapped address, `EOPNOTSUPP` for on-demand paging.
    #[inline(never)]
    pub(crate) fn pin(&self, addr: u64, size: u64, access: u32) -> Result<Umem> {
        let size = usize::try_from(size)?;
        let access = i32::try_from(access)?;
        // SAFETY: `self.ibdev` is a registered device (type invariant) and
        // we run in the process that owns the range; no attribute bundle,
        // so the range is `addr` and `size` (`ib_umem_get_va`).
        let out = from_err_ptr(unsafe {
            raw::ib_umem_get_attr_or_va(self.ibdev.as_ptr(), null(), 0, addr, size, access)
        })?;
        // INVARIANT: not an error, so `out` is a live umem we own.
        NonNull::new(out).map(|ptr| Umem { ptr }).ok_or(ENOMEM)
    }
}

/// The caller's `ib_ucontext`, through which device pages are offered to
/// the process for `mmap`.
///
/// # Invariants
///
/// `uctx` is the live user context of the uverbs command being run; it
/// outlives `'a` and every object the command creates (the core destroys
/// a context's objects before the context).
#[derive(Clone, Copy)]
pub(crate) struct MmapCtx<'a> {
    uctx: NonNull<raw::ib_ucontext>,
    _p: PhantomData<&'a raw::ib_ucontext>,
}

impl MmapCtx<'_> {
    /// Wraps the context a uverbs command runs in.
    ///
    /// # Safety
    ///
    /// `uctx` is null or the live `ib_ucontext` of the running uverbs
    /// command.
    pub(super) unsafe fn from_raw(uctx: *mut raw::ib_ucontext) -> Option<Self> {
        // INVARIANT: per the function's contract.
        NonNull::new(uctx).map(|uctx| Self {
            uctx,
            _p: PhantomData,
        })
    }

    /// Offers `len` bytes of device memory at bus address `address` to the
    /// process, at an mmap offset after the doorbell page's
    /// (`rdma_user_mmap_entry_insert_range` from page 1).
    ///
    /// # Errors
    ///
    /// `ENOMEM`: out of memory or of offsets.
    pub(crate) fn insert_io(&self, address: u64, len: usize) -> Result<MmapEntry> {
        let mut key = 0u64;
        // SAFETY: a live context (type invariant); `key` is a live local.
        let e = unsafe { raw::rdma_shim_mmap_insert(self.uctx.as_ptr(), address, len, &mut key) };
        // INVARIANT: a non-null entry was inserted for us alone.
        NonNull::new(e)
            .map(|entry| MmapEntry { entry, key })
            .ok_or(ENOMEM)
    }
}

/// Device memory the process may map; withdrawn when this drops
/// (`rdma_user_mmap_entry_remove`; mappings made already stay until the
/// process unmaps them or the device is disassociated).
///
/// # Invariants
///
/// `entry` was inserted by [`MmapCtx::insert_io`] and only this value
/// removes it.
pub(crate) struct MmapEntry {
    entry: NonNull<raw::rdma_user_mmap_entry>,
    key: u64,
}

// SAFETY: the entry is reference-counted by the RDMA core, which removes
// entries from any task (context teardown); this value only removes it.
unsafe impl Send for MmapEntry {}
// SAFETY: `&MmapEntry` only reads `key`.
unsafe impl Sync for MmapEntry {}

impl MmapEntry {
    /// The mmap offset the process passes to `mmap`.
    pub(crate) fn key(&self) -> u64 {
        self.key
    }
}

impl Drop for MmapEntry {
    fn drop(&mut self) {
        // SAFETY: inserted and not yet removed (type invariant).
        unsafe { raw::rdma_shim_mmap_remove(self.entry.as_ptr()) }
    }
}

/// A user verb's view of its caller: the device to pin memory for, the
/// driver's state of the caller's user context (`U`, the driver's
/// `UcontextOps::Ucontext`) and, for the verbs that map device pages, the
/// context itself.
pub(crate) struct UserCtx<'a, U> {
    dev: UmemDev<'a>,
    uctx: ArcBorrow<'a, U>,
    mmap: Option<MmapCtx<'a>>,
}

impl<'a, U> UserCtx<'a, U> {
    /// Builds the view (rdma.rs does, from what the shim passes).
    pub(super) fn new(dev: UmemDev<'a>, uctx: ArcBorrow<'a, U>) -> Self {
        Self {
            dev,
            uctx,
            mmap: None,
        }
    }

    /// The view with the context to offer device pages through.
    pub(super) fn with_mmap(self, mmap: Option<MmapCtx<'a>>) -> Self {
        Self { mmap, ..self }
    }

    /// Offers device pages to the process; `None` in verbs whose shim
    /// does not pass the context.
    pub(crate) fn mmap(&self) -> Option<MmapCtx<'a>> {
        self.mmap
    }

    /// Pins user memory (see [`UmemDev::pin`]).
    pub(crate) fn dev(&self) -> UmemDev<'a> {
        self.dev
    }

    /// The driver's state of the user context; `Arc::from` it for a
    /// reference of one's own.
    pub(crate) fn uctx(&self) -> ArcBorrow<'a, U> {
        self.uctx
    }
}

/// Pinned, DMA-mapped user memory (`struct ib_umem`), released when it
/// drops.
///
/// # Invariants
///
/// `ptr` is a umem from `ib_umem_get_va` that only this value releases.
pub(crate) struct Umem {
    ptr: NonNull<raw::ib_umem>,
}

// SAFETY: a umem is a plain kernel object; releasing it from another task
// is what the RDMA core does itself (ucontext teardown), and the shared
// accessors only read fields that never change after creation, except
// `iova`, which only `find_best_pgsz` (`&mut self`) writes.
unsafe impl Send for Umem {}
// SAFETY: see `Send`; `&Umem` methods only read.
unsafe impl Sync for Umem {}

impl Umem {
    fn raw(&self) -> &raw::ib_umem {
        // SAFETY: live while `self` is (type invariant).
        unsafe { self.ptr.as_ref() }
    }

    /// The user address the memory starts at (`umem->address`).
    pub(crate) fn address(&self) -> u64 {
        // CAST: an unsigned long, at most 64 bits.
        self.raw().address as u64
    }

    /// Bytes pinned (`umem->length`).
    pub(crate) fn length(&self) -> u64 {
        // CAST: a size_t, at most 64 bits.
        self.raw().length as u64
    }

    /// The I/O virtual address of the first byte (`umem->iova`): the user
    /// address, or what [`Umem::find_best_pgsz`] was given.
    pub(crate) fn iova(&self) -> u64 {
        self.raw().iova
    }

    /// The largest page size of `pgsz_bitmap` that maps the memory at I/O
    /// address `virt` in the fewest pages (`ib_umem_find_best_pgsz`), 0 if
    /// none fits. Sets [`Umem::iova`] to `virt`, as the core does.
    pub(crate) fn find_best_pgsz(&mut self, pgsz_bitmap: u64, virt: u64) -> u64 {
        // CAST: unsigned long is 64 bits on the supported architectures.
        let bitmap = pgsz_bitmap as kernel::ffi::c_ulong;
        // SAFETY: a live umem we own exclusively here (`&mut self`).
        let r = unsafe { raw::ib_umem_find_best_pgsz(self.ptr.as_ptr(), bitmap, virt) };
        // CAST: unsigned long to u64, lossless.
        r as u64
    }

    /// Bus address of the first page's start (`sg_dma_address` of the
    /// first scatterlist entry, before the offset into the page).
    pub(crate) fn first_page_dma(&self) -> u64 {
        // SAFETY: a live umem (type invariant); a umem always has at least
        // one mapped entry.
        unsafe { kernel::bindings::sg_dma_address((*self.ptr.as_ptr()).sgt_append.sgt.sgl) }
    }

    /// Reads the 32-bit word at byte `offset` of the first pinned page,
    /// as the device or the process left it (a record doorbell); `None`
    /// past the page or unaligned.
    pub(crate) fn read_first_page_u32(&self, offset: usize) -> Option<u32> {
        if offset % 4 != 0 || offset + 4 > kernel::page::PAGE_SIZE {
            return None;
        }
        // SAFETY: a live umem (type invariant): its first page is pinned
        // and, as every page the kernel pins, in the linear mapping; the
        // word lies inside it.
        Some(unsafe { raw::rdma_shim_umem_read_u32(self.ptr.as_ptr(), offset) })
    }

    /// The bus addresses of the memory's blocks of `pgsz` bytes, aligned
    /// down to `pgsz`, in order (`rdma_umem_for_each_dma_block`): exactly
    /// `ib_umem_num_dma_blocks` of them. `pgsz` must be at most `PAGE_SIZE`
    /// or come from [`Umem::find_best_pgsz`] (else the addresses are
    /// meaningless, though nothing unsafe happens); a `pgsz` that is not a
    /// power of two yields nothing.
    pub(crate) fn dma_blocks(&self, pgsz: u64) -> DmaBlocks<'_> {
        let mut it = raw::ib_block_iter::default();
        let ok = pgsz.is_power_of_two();
        if ok {
            // SAFETY: a live umem (type invariant), not written while `self`
            // is borrowed.
            let u = unsafe { &*self.ptr.as_ptr() };
            // CAST: unsigned long is 64 bits on the supported
            // architectures.
            let pgsz_ul = pgsz as kernel::ffi::c_ulong;
            // SAFETY: `it` is ours, the scatterlist and its mapped entry
            // count the umem's (`__rdma_umem_block_iter_start`), `pgsz` a
            // power of two.
            unsafe {
                raw::__rdma_block_iter_start(
                    &mut it,
                    u.sgt_append.sgt.sgl,
                    u.sgt_append.sgt.nents,
                    pgsz_ul,
                )
            };
            // The first block starts at the user address's offset in its
            // page, aligned down to `pgsz` (`ib_umem_offset`).
            let offset = u.address & (kernel::page::PAGE_SIZE - 1);
            // CAST: below PAGE_SIZE.
            it.__sg_advance = (offset & !(pgsz_ul - 1)) as u32;
            // CAST: usize is 64 bits on the supported architectures.
            it.__sg_numblocks = num_dma_blocks(u.iova, u.length as u64, pgsz) as usize;
        }
        DmaBlocks {
            it,
            done: !ok,
            _u: PhantomData,
        }
    }

    /// Whether a re-registration with `IB_MR_REREG_*` `flags` and new
    /// `access` may keep this memory (`ib_umem_check_rereg`).
    ///
    /// # Errors
    ///
    /// The core's errno (`EOPNOTSUPP` for on-demand-paging or dma-buf
    /// memory with a changed translation or access).
    pub(crate) fn check_rereg(&self, flags: u32, access: u32) -> Result {
        // The core takes C `int`s: the same bits, as C's callers pass them
        // (access flags with bit 31 set are the core's to refuse, not
        // EINVAL here, as the uverbs fuzzer's rereg_mr checks).
        let flags = i32::from_ne_bytes(flags.to_ne_bytes());
        let access = i32::from_ne_bytes(access.to_ne_bytes());
        // SAFETY: a live umem (type invariant).
        to_result(unsafe { raw::ib_umem_check_rereg(self.ptr.as_ptr(), flags, access) })
    }
}

impl Drop for Umem {
    #[inline(never)]
    fn drop(&mut self) {
        // SAFETY: we own the umem (type invariant) and never touch it again.
        unsafe { raw::ib_umem_release(self.ptr.as_ptr()) }
    }
}

/// How many blocks of `pgsz` bytes (a power of two) cover `length` bytes
/// at I/O virtual address `iova`: from `iova` aligned down to the end
/// aligned up (`ib_umem_num_dma_blocks`, whose arithmetic wraps as C's).
fn num_dma_blocks(iova: u64, length: u64, pgsz: u64) -> u64 {
    let mask = pgsz.wrapping_sub(1);
    let end = iova.wrapping_add(length).wrapping_add(mask) & !mask;
    end.wrapping_sub(iova & !mask) / pgsz
}

/// Iterator over the DMA blocks of a [`Umem`] (see [`Umem::dma_blocks`]).
pub(crate) struct DmaBlocks<'a> {
    it: raw::ib_block_iter,
    done: bool,
    _u: PhantomData<&'a Umem>,
}

impl DmaBlocks<'_> {
    /// Stores the next blocks' bus addresses at the start of `out`, as many
    /// as there are and fit, in one call into the core; returns how many.
    /// Fewer than `out.len()` means the blocks are exhausted.
    pub(crate) fn fill(&mut self, out: &mut [u64]) -> usize {
        if self.done || out.is_empty() {
            return 0;
        }
        let mut got = 0;
        for slot in out.iter_mut() {
            // SAFETY: `it` was started on a umem that outlives `'a` and
            // holds no pointer into itself.
            if !unsafe { raw::__rdma_block_iter_next(&mut self.it) } {
                self.done = true;
                break;
            }
            // At most the umem's blocks (`__rdma_umem_block_iter_next`):
            // the last one's scatterlist entry may map more.
            let left = self.it.__sg_numblocks;
            self.it.__sg_numblocks = left.wrapping_sub(1);
            if left == 0 {
                self.done = true;
                break;
            }
            // The block's address aligned down to its size
            // (`rdma_block_iter_dma_address`).
            *slot = self.it.__dma_addr & u64::MAX.checked_shl(self.it.__pg_bit).unwrap_or(0);
            got += 1;
        }
        got
    }
}

impl Iterator for DmaBlocks<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let mut one = [0u64];
        (self.fill(&mut one) == 1).then_some(one[0])
    }
}

/// Lets other tasks run (`cond_resched`), for loops over many pages.
pub(crate) fn cond_resched() {
    // SAFETY: no precondition; callers are in process context (verbs).
    unsafe { raw::rdma_shim_cond_resched() }
}
