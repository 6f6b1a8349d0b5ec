// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Memory translate regions (MTR) of kernel buffers: a buffer made of
//! hardware pages plus the base-address table (BT) the engine walks to find
//! them.
//!
//! A kernel buffer of one to three regions laid out back to back (a QP's
//! SQ, extended SGE and RQ; one region for EQs and CQs), each with its own
//! hop number, as `hns_roce_mtr_create` builds it on HIP09: one DMA
//! allocation per buffer page, a root BT whose entries go region after
//! region, holding the page addresses of a hop-1 region directly and the
//! addresses of the L1 BT pages of a hop-2 region, which list its pages. The
//! arithmetic (region pages, BT page size, which entry holds which page) is
//! `hem.rs`'s [`MtrLayout`]; this file allocates and fills what it says.
//! User memory, hop 0 (direct) and hop 3 come with the objects that use
//! them.

use crate::hem::{BtSlot, MtrError, MtrLayout, RegionAttr, MAX_BT_REGION};
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    prelude::*, //
};

use crate::hns_roce_hw_v2::ctx::HW_PAGE_SHIFT;

/// One region of a kernel buffer: its size in bytes and the hop number from
/// the caps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    /// Bytes.
    pub(crate) size: usize,
    /// Hop number from the caps (`caps.wqe_sq_hop_num` and the like).
    pub(crate) hop: u32,
}

/// The C errno of a layout error.
fn errno(e: MtrError) -> Error {
    match e {
        MtrError::Inval => EINVAL,
        MtrError::NoBufs => ENOBUFS,
        MtrError::Range => ERANGE,
        MtrError::NoMem => ENOMEM,
    }
}

/// Stores `ba` little-endian in entry `i` of the BT page `bt`.
fn set_ba(bt: &Coherent<[u64]>, i: u32, ba: u64) -> Result {
    let i = usize::try_from(i)?;
    if i >= bt.len() {
        return Err(EINVAL);
    }
    // SAFETY: `i < bt.len()`, the BT page's length in entries; the device
    // has not been told about this BT yet, a volatile store is still used
    // as for all device-visible memory.
    unsafe {
        bt.as_mut_ptr()
            .cast::<u64>()
            .add(i)
            .write_volatile(ba.to_le())
    };
    Ok(())
}

/// A kernel buffer and its BT levels.
///
/// # Invariants
///
/// `pages` holds the buffer pages of all regions in order, each of
/// `1 << page_shift` bytes. Their addresses are in the BTs where the
/// layout's [`crate::hem::HemList::locate`] says: `root` entry `i` for
/// [`BtSlot::Root`], entry `slot` of `mid[page]` for [`BtSlot::L1`]; root
/// entry [`crate::hem::HemList::l1_root`]`(j)` holds `mid[j]`'s address.
/// Every BT page has `1 << ba_pg_shift` bytes, the root as many entries as
/// it uses.
pub(crate) struct KernelMtr {
    pages: KVec<Coherent<[u8]>>,
    /// The L1 BT pages of the hop-2 regions, region after region.
    _mid: KVec<Coherent<[u64]>>,
    root: Coherent<[u64]>,
    page_shift: u32,
    ba_pg_shift: u32,
}

impl KernelMtr {
    /// Allocates one region of `size` bytes in pages of `1 << page_shift`
    /// bytes (at least 4 KiB) with BT pages of `1 << ba_pg_shift` bytes:
    /// [`KernelMtr::with_regions`] with one region and only that BT page
    /// size allowed (no growth).
    ///
    /// # Errors
    ///
    /// As [`KernelMtr::with_regions`]: `EINVAL` for hop 0 or 3 (not needed
    /// yet), `ERANGE` if the root does not fit one BT page, `ENOMEM`.
    pub(crate) fn new(
        dev: &Device<Bound>,
        size: usize,
        page_shift: u32,
        ba_pg_shift: u32,
        hop: u32,
    ) -> Result<Self> {
        let cap = 1u64.checked_shl(ba_pg_shift).ok_or(EINVAL)?;
        Self::with_regions(
            dev,
            &[Region { size, hop }],
            page_shift.max(HW_PAGE_SHIFT),
            ba_pg_shift,
            cap,
        )
    }

    /// Allocates a buffer of `regions` laid out back to back in page order
    /// (region `r` starts at the page after region `r - 1`), in pages of
    /// `1 << page_shift` bytes, and its BTs (`hns_roce_mtr_create` for a
    /// kernel buffer). BT pages are `1 << ba_pg_shift` bytes or, if the
    /// root does not fit, the next larger size of `page_size_cap`
    /// (`cal_best_bt_pg_sz`; [`KernelMtr::ba_pg_shift`] tells which).
    ///
    /// # Errors
    ///
    /// `EINVAL` for no region or more than three, a page shift below 12, a
    /// region with pages and hop 0/0xff or 3 (not needed yet: C gives hop-0
    /// regions a BT outside the root, and no caller uses hop 3), or no
    /// pages at all; `ERANGE` if no BT page size of `page_size_cap` holds
    /// the root; `ENOBUFS` if the regions are not whole pages and the
    /// buffer C would allocate for their total is short of pages; `ENOMEM`.
    pub(crate) fn with_regions(
        dev: &Device<Bound>,
        regions: &[Region],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
    ) -> Result<Self> {
        if regions.len() > MAX_BT_REGION {
            return Err(EINVAL);
        }
        let mut attrs = [RegionAttr::default(); MAX_BT_REGION];
        for (a, r) in attrs.iter_mut().zip(regions) {
            *a = RegionAttr {
                size: u64::try_from(r.size)?,
                hop: r.hop,
            };
        }
        let attrs = attrs.get(..regions.len()).ok_or(EINVAL)?;
        let layout =
            MtrLayout::new(attrs, page_shift, ba_pg_shift, page_size_cap).map_err(errno)?;
        let hem = &layout.hem;
        let unit = usize::try_from(hem.unit)?;
        let page = 1usize.checked_shl(page_shift).ok_or(EINVAL)?;

        let root = Coherent::<u64>::zeroed_slice(dev, usize::try_from(hem.root_len)?, GFP_KERNEL)?;
        let mut mid = KVec::with_capacity(usize::try_from(hem.l1_len)?, GFP_KERNEL)?;
        for j in 0..hem.l1_len {
            let m = Coherent::<u64>::zeroed_slice(dev, unit, GFP_KERNEL)?;
            set_ba(&root, hem.l1_root(j).ok_or(EINVAL)?, m.dma_address())?;
            mid.push(m, GFP_KERNEL)?;
        }
        let mut pages = KVec::with_capacity(usize::try_from(hem.page_count)?, GFP_KERNEL)?;
        for i in 0..hem.page_count {
            let p = Coherent::<u8>::zeroed_slice(dev, page, GFP_KERNEL)?;
            match hem.locate(i).ok_or(EINVAL)? {
                BtSlot::Root(j) => set_ba(&root, j, p.dma_address())?,
                BtSlot::L1 { page: l1, slot } => set_ba(
                    mid.get(usize::try_from(l1)?).ok_or(EINVAL)?,
                    slot,
                    p.dma_address(),
                )?,
            }
            pages.push(p, GFP_KERNEL)?;
        }
        // INVARIANT: every page allocated in order and listed where the
        // layout says, every L1 page in its root entry.
        Ok(Self {
            pages,
            _mid: mid,
            root,
            page_shift,
            ba_pg_shift: hem.ba_pg_shift,
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

    /// Bus address of the buffer page holding byte `offset`
    /// (`hns_roce_mtr_find(offset)` → `mtts[0]`); `None` past the end.
    pub(crate) fn find(&self, offset: usize) -> Option<u64> {
        let i = offset.checked_shr(self.page_shift)?;
        self.pages.get(i).map(|p| p.dma_address())
    }

    /// Copies `data` into the buffer at byte `offset`, across pages if it
    /// must.
    ///
    /// # Errors
    ///
    /// `EINVAL` if the bytes do not all fall inside the buffer.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        let end = offset.checked_add(data.len()).ok_or(EINVAL)?;
        let total = self
            .pages
            .len()
            .checked_shl(self.page_shift)
            .ok_or(EINVAL)?;
        if end > total {
            return Err(EINVAL);
        }
        let mask = (1usize << self.page_shift) - 1;
        let mut at = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let page = self.pages.get(at >> self.page_shift).ok_or(EINVAL)?;
            let inner = at & mask;
            let n = rest.len().min(page.len().saturating_sub(inner));
            if n == 0 {
                return Err(EINVAL);
            }
            let (now, later) = rest.split_at(n);
            let dst = page.as_mut_ptr().cast::<u8>();
            for (k, b) in now.iter().enumerate() {
                // SAFETY: `inner + k < inner + n <= page.len()`; the device
                // may read this memory, so store volatile, byte by byte.
                unsafe { dst.add(inner + k).write_volatile(*b) };
            }
            at += n;
            rest = later;
        }
        Ok(())
    }

    /// Buffer page size exponent.
    pub(crate) fn page_shift(&self) -> u32 {
        self.page_shift
    }

    /// BT page size exponent actually used (the one asked for, or the size
    /// `cal_best_bt_pg_sz` grew it to).
    pub(crate) fn ba_pg_shift(&self) -> u32 {
        self.ba_pg_shift
    }

    /// Stores `v` as one little-endian 32-bit word at byte offset `off`
    /// (4-aligned): a single store, so the engine never sees half of it.
    ///
    /// # Errors
    ///
    /// `EINVAL` past the end or unaligned.
    pub(crate) fn write_word(&self, off: usize, v: u32) -> Result {
        if off % 4 != 0 {
            return Err(EINVAL);
        }
        let page = self.pages.get(off >> self.page_shift).ok_or(EINVAL)?;
        let inner = off & ((1usize << self.page_shift) - 1);
        if inner + 4 > page.len() {
            return Err(EINVAL);
        }
        // SAFETY: `inner + 4 <= page.len()` and `inner` is 4-aligned in a
        // page-aligned buffer; the device reads this memory, so store
        // volatile.
        unsafe {
            page.as_mut_ptr()
                .cast::<u8>()
                .add(inner)
                .cast::<u32>()
                .write_volatile(v.to_le())
        };
        Ok(())
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
