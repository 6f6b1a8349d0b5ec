// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Memory translate regions (MTR) of kernel buffers: a buffer made of
//! hardware pages plus the base-address table (BT) the engine walks to find
//! them.
//!
//! So far what the event queues and kernel CQs need: a kernel buffer of one
//! region with one or two BT levels (hop 1 or 2), as `hns_roce_mtr_create`
//! builds it on HIP09: one DMA allocation per buffer page, and a root BT
//! page listing their addresses (hop 1) or the addresses of L1 BT pages that
//! list them (hop 2). User memory, hop 0 and several regions (QP buffers)
//! come with the objects that use them.

use crate::hem::BA_BYTE_LEN;
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    prelude::*, //
};

use crate::hw_v2_ctx::HW_PAGE_SHIFT;

/// A kernel buffer and its BT levels.
///
/// # Invariants
///
/// `pages` holds `npages` buffers of `1 << page_shift` bytes each. With one
/// level `root` holds the bus address of page `i` at entry `i`; with two,
/// root entry `j` points to L1 page `j`, whose entry `k` holds page
/// `j * per_bt + k`.
pub(crate) struct KernelMtr {
    pages: KVec<Coherent<[u8]>>,
    /// The L1 BT pages of a hop-2 buffer.
    _mid: KVec<Coherent<[u64]>>,
    root: Coherent<[u64]>,
    page_shift: u32,
    ba_pg_shift: u32,
}

impl KernelMtr {
    /// Allocates `size` bytes in pages of `1 << page_shift` bytes and a BT
    /// page of `1 << ba_pg_shift` bytes pointing to them.
    ///
    /// # Errors
    ///
    /// `EINVAL` if the pages do not fit the BT levels
    /// (hop 1: one page of pointers; hop 2: one page of L1 pages) or `hop`
    /// is not 1 or 2 (not needed yet), `ENOMEM` on allocation failure.
    pub(crate) fn new(
        dev: &Device<Bound>,
        size: usize,
        page_shift: u32,
        ba_pg_shift: u32,
        hop: u32,
    ) -> Result<Self> {
        let page_shift = page_shift.max(HW_PAGE_SHIFT);
        if !(1..=2).contains(&hop)
            || !(HW_PAGE_SHIFT..=30).contains(&page_shift)
            || ba_pg_shift > 30
        {
            return Err(EINVAL);
        }
        let page = 1usize << page_shift;
        let npages = size.div_ceil(page);
        // CAST: BA_BYTE_LEN is 8.
        let per_bt = (1usize << ba_pg_shift) / BA_BYTE_LEN as usize;
        let nmid = if hop == 2 { npages.div_ceil(per_bt) } else { 0 };
        if npages == 0 || (hop == 1 && npages > per_bt) || nmid > per_bt {
            return Err(EINVAL);
        }
        let root = Coherent::<u64>::zeroed_slice(dev, per_bt, GFP_KERNEL)?;
        let mut mid = KVec::with_capacity(nmid, GFP_KERNEL)?;
        for j in 0..nmid {
            let m = Coherent::<u64>::zeroed_slice(dev, per_bt, GFP_KERNEL)?;
            // SAFETY: `j < nmid <= per_bt`, the root's length in entries.
            unsafe {
                root.as_mut_ptr()
                    .cast::<u64>()
                    .add(j)
                    .write_volatile(m.dma_address().to_le())
            };
            mid.push(m, GFP_KERNEL)?;
        }
        let mut pages = KVec::with_capacity(npages, GFP_KERNEL)?;
        for i in 0..npages {
            let p = Coherent::<u8>::zeroed_slice(dev, page, GFP_KERNEL)?;
            let (bt, slot) = if hop == 2 {
                (mid.get(i / per_bt).ok_or(EINVAL)?, i % per_bt)
            } else {
                (&root, i)
            };
            // SAFETY: `slot < per_bt`, the BT page's length in entries.
            unsafe {
                bt.as_mut_ptr()
                    .cast::<u64>()
                    .add(slot)
                    .write_volatile(p.dma_address().to_le())
            };
            pages.push(p, GFP_KERNEL)?;
        }
        // INVARIANT: every page allocated and listed in the BTs.
        Ok(Self {
            pages,
            _mid: mid,
            root,
            page_shift,
            ba_pg_shift,
        })
    }

    /// Bus address of the root BT (`hns_roce_get_mtr_ba`).
    pub(crate) fn root_ba(&self) -> u64 {
        self.root.dma_address()
    }

    /// Bus address of buffer page `i`, or 0 past the end (as
    /// `hns_roce_mtr_find` leaves unused slots).
    pub(crate) fn page_ba(&self, i: usize) -> u64 {
        self.pages.get(i).map_or(0, |p| p.dma_address())
    }

    /// Buffer page size exponent.
    pub(crate) fn page_shift(&self) -> u32 {
        self.page_shift
    }

    /// BT page size exponent.
    pub(crate) fn ba_pg_shift(&self) -> u32 {
        self.ba_pg_shift
    }

    /// Reads the little-endian word `word` of the `len`-byte entry at byte
    /// offset `off`; `None` past the end.
    pub(crate) fn read_word(&self, off: usize, word: usize) -> Option<u32> {
        let at = off.checked_add(word.checked_mul(4)?)?;
        let page = self.pages.get(at >> self.page_shift)?;
        let inner = at & ((1usize << self.page_shift) - 1);
        if inner + 4 > page.len() {
            return None;
        }
        // SAFETY: `inner + 4 <= page.len()`; the device writes this memory,
        // so read it volatile and only as plain words.
        let v = unsafe {
            page.as_mut_ptr()
                .cast::<u8>()
                .add(inner)
                .cast::<u32>()
                .read_volatile()
        };
        Some(u32::from_le(v))
    }
}
