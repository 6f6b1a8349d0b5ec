// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Memory translate regions (MTR) of kernel buffers: a buffer made of
//! hardware pages plus the base-address table (BT) the engine walks to find
//! them.
//!
//! A kernel buffer of one to three regions laid out back to back (a QP's
//! SQ, extended SGE and RQ; one region for EQs and CQs), each with its own
//! hop number, as `hns_roce_mtr_create` builds it on HIP09: one DMA
//! allocation per buffer page, a root BT whose entries go region after
//! region, holding the page addresses of a hop-1 region directly and the
//! addresses of the L1 BT pages of a hop-2 or hop-3 region (which list its
//! pages, or for hop 3 its L2 BT pages, which list its pages); a hop-0
//! region next to others has its pages in a BT of its own. The
//! arithmetic (region pages, BT page size, which entry holds which page) is
//! `hem.rs`'s [`MtrLayout`]; this file allocates and fills what it says.
//!
//! [`UserMtr`] is the same for memory a process pinned (`hns_roce_mtr_create`
//! with udata): a [`Umem`] instead of kernel pages, the BTs over its DMA
//! blocks, direct addressing (hop 0) for a one-page MR, and the adaptive
//! page size and hop number of a user MR's page list (PBL), hop 3 for MRs
//! beyond 16 GiB of 4 KiB pages with 16 KiB BT pages.

use crate::hem::{
    best_hop_num, BtSlot, MtrError, MtrLayout, RegionAttr, UmemShape, UserMtrLayout, MAX_BT_REGION,
};
use crate::rdma::{cond_resched, trace, Umem, UmemDev, ACCESS_LOCAL_WRITE};
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::{io_project, io_read, io_write, Io, SysMem},
    prelude::*, //
};

use crate::hns_roce_hw_v2::consts::hw_page::PAGE_SHIFT as HW_PAGE_SHIFT;
use crate::hns_roce_hw_v2::wqe::WqeSlot;

/// One region of a kernel buffer: its size in bytes and the hop number from
/// the caps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    /// Bytes.
    pub(crate) size: usize,
    /// Hop number from the caps (`caps.wqe_sq_hop_num` and the like).
    pub(crate) hop: u32,
}

/// The `hns_buf_attr` event of a buffer of `regions` (the hop numbers as
/// the caps give them) in pages of `1 << page_shift` bytes, as
/// `hns_roce_mtr_create` emits it on entry; `mtt_only` for a page list
/// without a buffer of its own.
#[inline(never)]
pub(crate) fn trace_buf_attr(regions: &[Region], page_shift: u32, mtt_only: bool) {
    let mut r = [(0u32, 0i32); MAX_BT_REGION];
    for (t, g) in r.iter_mut().zip(regions) {
        // CAST: the event's fields are C's `unsigned int` and `int`.
        *t = (g.size as u32, g.hop as i32);
    }
    trace::buf_attr(r.get(..regions.len()).unwrap_or(&r), page_shift, mtt_only);
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

/// Stores `ba` little-endian in entry `i` of the BT page `bt` (one
/// bounds-checked 64-bit store through the kernel's coherent I/O view; the
/// device has not been told about this BT yet).
fn set_ba(bt: &Coherent<[u64]>, i: u32, ba: u64) -> Result {
    set_bas(bt, i, &[ba])
}

/// Stores `bas` (bus addresses) in entries `i..` of BT page `bt`.
///
/// # Errors
///
/// `EINVAL` if they do not all fit; then nothing is stored.
#[inline(never)]
fn set_bas(bt: &Coherent<[u64]>, i: u32, bas: &[u64]) -> Result {
    let i = usize::try_from(i)?;
    match i.checked_add(bas.len()) {
        Some(end) if end <= bt.len() => {}
        _ => return Err(EINVAL),
    }
    for (k, ba) in (i..).zip(bas) {
        io_write!(bt, [try: k], ba.to_le());
    }
    Ok(())
}

/// A kernel buffer and its BT levels.
///
/// # Invariants
///
/// `pages` holds the buffer pages of all regions in order, each of
/// `1 << page_shift` bytes. Their addresses are in the BTs where the
/// layout's [`crate::hem::HemList::locate`] says: `root` entry `i` for
/// [`BtSlot::Root`], entry `slot` of `mid[page]` for [`BtSlot::L1`]; the
/// entry [`crate::hem::HemList::parent`]`(j)` names holds `mid[j]`'s
/// address. `mid[j]` has [`crate::hem::HemList::bt_entries`]`(j)` entries,
/// the root as many as it uses.
pub(crate) struct KernelMtr {
    pages: KVec<Coherent<[u8]>>,
    /// The BT pages below the root, region after region.
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
    /// As [`KernelMtr::with_regions`]: `EINVAL` for hop 0 (direct, not
    /// supported) or above 3, `ERANGE` if the root does not fit one BT
    /// page, `ENOMEM`. Hop `HOP_NUM_0` counts as 0 (the event records it
    /// as given).
    pub(crate) fn new(
        dev: &Device<Bound>,
        size: usize,
        page_shift: u32,
        ba_pg_shift: u32,
        hop: u32,
    ) -> Result<Self> {
        let cap = 1u64.checked_shl(ba_pg_shift).ok_or(EINVAL)?;
        trace_buf_attr(&[Region { size, hop }], page_shift, false);
        // Hop 0 as the caps spell it is no BT level at all.
        let hop = if hop == crate::hem::HOP_NUM_0 { 0 } else { hop };
        Self::build(
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
    /// region with pages and a hop above 3, every region of hop 0 or 0xff
    /// (C's direct mode, one contiguous allocation: not supported), or no
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
        trace_buf_attr(regions, page_shift, false);
        Self::build(dev, regions, page_shift, ba_pg_shift, page_size_cap)
    }

    /// [`KernelMtr::with_regions`] without its trace event.
    fn build(
        dev: &Device<Bound>,
        regions: &[Region],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
    ) -> Result<Self> {
        let all = attrs_of(regions)?;
        let attrs = all.get(..regions.len()).ok_or(EINVAL)?;
        let layout =
            MtrLayout::new(attrs, page_shift, ba_pg_shift, page_size_cap).map_err(errno)?;
        let hem = &layout.hem;
        let page = 1usize.checked_shl(page_shift).ok_or(EINVAL)?;

        let root = Coherent::<u64>::zeroed_slice(dev, usize::try_from(hem.root_len)?, GFP_KERNEL)?;
        let mid = alloc_bts(dev, hem)?;
        link_bts(hem, &root, &mid)?;
        let mut pages = KVec::with_capacity(usize::try_from(hem.page_count)?, GFP_KERNEL)?;
        for i in 0..hem.page_count {
            let p = Coherent::<u8>::zeroed_slice(dev, page, GFP_KERNEL)?;
            let (bt, slot) = bt_slot(&root, &mid, hem.locate(i).ok_or(EINVAL)?)?;
            set_ba(bt, slot, p.dma_address())?;
            // Within the capacity reserved for the loop: no growth path.
            pages.push_within_capacity(p)?;
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
            // Byte by byte, as before: the device may read this memory.
            let dst = io_project!(page, [try: inner..inner + n]);
            for (k, b) in now.iter().enumerate() {
                io_write!(dst, [try: k], *b);
            }
            at += n;
            rest = later;
        }
        Ok(())
    }

    /// The buffer page holding byte `off` and the offset inside it; `None`
    /// past the end. The shifts wrap instead of checking for overflow (on
    /// the hot paths): `with_regions` made sure `1 << page_shift` fits a
    /// `usize`, and the page lookup is bounds-checked whatever the shift.
    #[inline(always)]
    fn page_of(&self, off: usize) -> Option<(&Coherent<[u8]>, usize)> {
        let page = self.pages.get(off.wrapping_shr(self.page_shift))?;
        let mask = 1usize.wrapping_shl(self.page_shift).wrapping_sub(1);
        Some((page, off & mask))
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
        let (page, inner) = self.page_of(off).ok_or(EINVAL)?;
        if inner + 4 > page.len() {
            return Err(EINVAL);
        }
        // One 32-bit store: the four bytes as a `u32` view (`try_cast`
        // checks size and alignment).
        let word = io_project!(page, [try: inner..inner + 4]).try_cast::<u32>()?;
        word.write_val(v.to_le());
        Ok(())
    }

    /// Copies `words` as little-endian words to byte offset `off`
    /// (4-aligned, all in one page: a WQE, an SGE or a CQE never crosses
    /// one) with one page lookup, one projection and one copy. The copy
    /// makes no promise about the order or size of its stores: only for
    /// words the device reads after a later barrier and doorbell or owner
    /// bit (use [`Self::write_word`] for the word that hands an entry
    /// over), as the C driver writes a WQE's fields with plain stores.
    ///
    /// # Errors
    ///
    /// `EINVAL` past the end, unaligned, or across a page boundary.
    pub(crate) fn write_words<const N: usize>(&self, off: usize, words: &[u32; N]) -> Result {
        self.words_view::<N>(off)?.copy_write(words.map(u32::to_le));
        Ok(())
    }

    /// Reads `N` little-endian words at byte offset `off` (4-aligned, all
    /// in one page) with one copy; `None` past the end, unaligned or
    /// across a page boundary. For entries the device has handed over (its
    /// owner word read first, then a read barrier) or does not write.
    pub(crate) fn read_words<const N: usize>(&self, off: usize) -> Option<[u32; N]> {
        let view = self.words_view::<N>(off).ok()?;
        Some(view.copy_read().map(u32::from_le))
    }

    /// The `N`-word entry at byte offset `off` (4-aligned, all in one
    /// page), seen in place for an encoder that edits it word by word: one
    /// page lookup and one projection for the whole entry.
    ///
    /// # Errors
    ///
    /// `EINVAL` past the end, unaligned, or across a page boundary.
    pub(crate) fn entry<const N: usize>(&self, off: usize) -> Result<MtrEntry<'_, N>> {
        Ok(MtrEntry(self.words_view(off)?))
    }

    /// The CPU view of the `N` words at byte offset `off` (4-aligned, all
    /// in one page): one page lookup, one projection (the words' bus
    /// addresses are not needed).
    fn words_view<const N: usize>(&self, off: usize) -> Result<SysMem<'_, [u32; N]>> {
        let (page, inner) = self.page_of(off).ok_or(EINVAL)?;
        let end = inner.checked_add(4 * N).ok_or(EINVAL)?;
        let view = io_project!(page, [try: inner..end]).try_cast::<[u32; N]>()?;
        Ok(view.as_sys_mem())
    }

    /// Reads the little-endian word `word` of the `len`-byte entry at byte
    /// offset `off`; `None` past the end.
    pub(crate) fn read_word(&self, off: usize, word: usize) -> Option<u32> {
        let at = off.checked_add(word.checked_mul(4)?)?;
        let (page, inner) = self.page_of(at)?;
        // One 32-bit load of a word the device writes (see `write_word`).
        let read = || -> Result<u32> {
            let end = inner.checked_add(4).ok_or(EINVAL)?;
            let word = io_project!(page, [try: inner..end]).try_cast::<u32>()?;
            Ok(word.read_val())
        };
        read().ok().map(u32::from_le)
    }

    /// Emits the `hns_*_wqe` event of the `bytes`-long entry (whole
    /// 16-byte segments, in one page) at byte `off`: WQE `idx` of queue
    /// `qpn` for WR `wr_id`. Reads at most the event's words; out of line,
    /// for when the event is on.
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_wqe(
        &self,
        queue: trace::Queue,
        qpn: u32,
        idx: u32,
        off: usize,
        bytes: u32,
        wr_id: u64,
    ) {
        let mut w = [0u32; trace::WQE_WORDS];
        // CAST: a WQE's size fits `usize`.
        let n = (bytes as usize / 4).min(w.len());
        for (k, seg) in w.chunks_exact_mut(4).take(n / 4).enumerate() {
            match self.read_words::<4>(off.wrapping_add(16 * k)) {
                Some(v) => seg.copy_from_slice(&v),
                None => break,
            }
        }
        trace::wqe(
            queue,
            qpn,
            idx,
            w.as_slice().get(..n).unwrap_or(&[]),
            bytes,
            wr_id,
        );
    }
}

/// The page list of a fast-register MR (`alloc_mr_pbl` for `MR_TYPE_FRMR`,
/// an MTR with `mtt_only`): a BT of one hop for up to `max` pages of the
/// CPU page size and no buffer of its own. Which pages it lists is only
/// known at each `ib_map_mr_sg`, which stores their addresses with
/// [`FrmrPbl::set`].
///
/// # Invariants
///
/// `root` has an entry for each of the `max` pages, entry `i` at the slot
/// the layout's [`crate::hem::HemList::locate`] gives (the root, hop 1).
pub(crate) struct FrmrPbl {
    root: Coherent<[u64]>,
    slots: KVec<u32>,
    ba_pg_shift: u32,
}

impl FrmrPbl {
    /// A BT for `max` pages of `1 << page_shift` bytes in BT pages of
    /// `1 << ba_pg_shift` bytes (C does not let them grow here).
    ///
    /// # Errors
    ///
    /// `EINVAL` for no pages, `ERANGE` if the BT does not fit one BT page,
    /// `ENOMEM`.
    pub(crate) fn new(
        dev: &Device<Bound>,
        max: u32,
        page_shift: u32,
        ba_pg_shift: u32,
    ) -> Result<Self> {
        let size = u64::from(max).checked_shl(page_shift).ok_or(EINVAL)?;
        let cap = 1u64.checked_shl(ba_pg_shift).ok_or(EINVAL)?;
        let attrs = [RegionAttr { size, hop: 1 }];
        let layout = MtrLayout::new(&attrs, page_shift, ba_pg_shift, cap).map_err(errno)?;
        let hem = &layout.hem;
        if hem.l1_len != 0 {
            return Err(EINVAL);
        }
        let mut slots = KVec::with_capacity(usize::try_from(hem.page_count)?, GFP_KERNEL)?;
        for i in 0..hem.page_count {
            match hem.locate(i).ok_or(EINVAL)? {
                BtSlot::Root(j) => slots.push_within_capacity(j)?,
                BtSlot::L1 { .. } => return Err(EINVAL),
            }
        }
        let root = Coherent::<u64>::zeroed_slice(dev, usize::try_from(hem.root_len)?, GFP_KERNEL)?;
        // INVARIANT: one root slot per page, from the layout.
        Ok(Self {
            root,
            slots,
            ba_pg_shift: hem.ba_pg_shift,
        })
    }

    /// How many pages the list can hold (C's `buf_pg_count`).
    pub(crate) fn capacity(&self) -> u32 {
        // CAST: at most `HNS_ROCE_FRMR_MAX_PA` entries.
        self.slots.len() as u32
    }

    /// Lists `ba` as page `i` (`hns_roce_mtr_map` of one page). Takes no
    /// lock and allocates nothing: `ib_map_mr_sg` may run in atomic
    /// context.
    ///
    /// # Errors
    ///
    /// `ENOBUFS` past the capacity.
    pub(crate) fn set(&self, i: u32, ba: u64) -> Result {
        let slot = usize::try_from(i)
            .ok()
            .and_then(|i| self.slots.get(i))
            .ok_or(ENOBUFS)?;
        set_ba(&self.root, *slot, ba)
    }

    /// Bus address of the BT (`hns_roce_get_mtr_ba`).
    pub(crate) fn root_ba(&self) -> u64 {
        self.root.dma_address()
    }

    /// BT page size exponent.
    pub(crate) fn ba_pg_shift(&self) -> u32 {
        self.ba_pg_shift
    }
}

/// Allocates the BT pages below the root of `hem`, page `j` with
/// [`crate::hem::HemList::bt_entries`]`(j)` entries, zeroed (C's
/// `hem_list_alloc_mid_bt` and, for a hop-0 region, `alloc_fake_root_bt`).
fn alloc_bts(dev: &Device<Bound>, hem: &crate::hem::HemList) -> Result<KVec<Coherent<[u64]>>> {
    let mut mid = KVec::with_capacity(usize::try_from(hem.l1_len)?, GFP_KERNEL)?;
    for j in 0..hem.l1_len {
        if j % RESCHED_BTS == RESCHED_BTS - 1 {
            cond_resched();
        }
        let n = usize::try_from(hem.bt_entries(j).ok_or(EINVAL)?)?;
        // Within the capacity reserved for the loop: no growth path.
        mid.push_within_capacity(Coherent::<u64>::zeroed_slice(dev, n, GFP_KERNEL)?)?;
    }
    Ok(mid)
}

/// Stores the address of every BT page of `mid` in its parent's entry
/// (`setup_middle_bt` for the pages the root points at, the link to the L1
/// page for a hop-3 L2 page); a hop-0 region's BT has none.
fn link_bts(
    hem: &crate::hem::HemList,
    root: &Coherent<[u64]>,
    mid: &KVec<Coherent<[u64]>>,
) -> Result {
    for (j, m) in (0u32..).zip(mid.iter()) {
        if let Some(at) = hem.parent(j) {
            let (bt, slot) = bt_slot(root, mid, at)?;
            set_ba(bt, slot, m.dma_address())?;
        }
    }
    Ok(())
}

/// The BT page and entry `at` names: the root, or page `page` of `mid`.
fn bt_slot<'a>(
    root: &'a Coherent<[u64]>,
    mid: &'a KVec<Coherent<[u64]>>,
    at: BtSlot,
) -> Result<(&'a Coherent<[u64]>, u32)> {
    match at {
        BtSlot::Root(j) => Ok((root, j)),
        BtSlot::L1 { page, slot } => Ok((mid.get(usize::try_from(page)?).ok_or(EINVAL)?, slot)),
    }
}

/// Reads entry `i` of the BT page `bt` (little-endian); `None` past its end.
fn get_ba(bt: &Coherent<[u64]>, i: u32) -> Option<u64> {
    let i = usize::try_from(i).ok()?;
    let read = || -> Result<u64> { Ok(io_read!(bt, [try: i])) };
    read().ok().map(u64::from_le)
}

/// Pages mapped between two `cond_resched` calls, and L1 BT pages allocated
/// between two (C yields every 12800 BT pages; a 1 GiB MR of 4 KiB pages has
/// 262144 pages and 128 L1 pages of 16 KiB).
const RESCHED_PAGES: u32 = 8192;
const RESCHED_BTS: u32 = 64;

/// Page addresses taken from the umem in one call when a user MTR is
/// mapped (on the stack: 512 bytes).
const MAP_BATCH: usize = 64;

/// The memory of a user MR.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PblRange {
    /// User address of the first byte.
    pub(crate) start: u64,
    /// Bytes.
    pub(crate) length: u64,
    /// The I/O virtual address the MR is used at.
    pub(crate) iova: u64,
    /// `IB_ACCESS_*` to pin with.
    pub(crate) access: u32,
}

/// Where a user queue buffer is ([`UserMtr::new`]) and whether the engine
/// writes into it.
#[derive(Clone, Copy)]
pub(crate) struct UserBuf<'a> {
    /// The device the calling process pins its memory for.
    pub(crate) pin: UmemDev<'a>,
    /// The buffer's user address.
    pub(crate) addr: u64,
    /// The engine writes the buffer (a CQ's CQEs): it is pinned writable
    /// (`IB_ACCESS_LOCAL_WRITE`), so memory the process may only read (a
    /// read-only mapping of a file, say) is refused instead of written by
    /// DMA, and the pages are dirtied when unpinned. Buffers the engine
    /// only reads (WQEs, SRQ indices) are pinned read-only, as in C.
    pub(crate) device_writes: bool,
}

/// A user buffer (pinned process memory) and its BT levels: C's
/// `struct hns_roce_mtr` with a umem.
///
/// Use [`UserMtr::new`] for queue buffers (CQ, QP SQ/ext-SGE/RQ, SRQ), the
/// page size and hop numbers coming from the caps, and [`UserMtr::new_pbl`]
/// for a user MR's page list. The context images take [`UserMtr::root_ba`]
/// (`hns_roce_get_mtr_ba`), [`UserMtr::find`] (`hns_roce_mtr_find`: the
/// first page addresses), [`UserMtr::page_shift`], [`UserMtr::ba_pg_shift`]
/// and [`UserMtr::hop`]. Everything (umem, BT pages) is released when it
/// drops.
///
/// # Invariants
///
/// `layout` describes `umem` (its shape at creation). Unless
/// `layout.direct`, `root` holds `layout.hem.root_len` entries and `mid`
/// the L1 pages in order, linked from the root as
/// [`crate::hem::HemList::l1_root`] says, and the first
/// `layout.page_count()` DMA blocks of `umem` (of `1 << layout.page_shift`
/// bytes) are in the entries [`crate::hem::HemList::locate`] names; when
/// direct, `root_ba` is the first block's address.
pub(crate) struct UserMtr {
    layout: UserMtrLayout,
    root: Option<Coherent<[u64]>>,
    mid: KVec<Coherent<[u64]>>,
    root_ba: u64,
    // Last: the BTs go before the memory they point at is unpinned.
    umem: Umem,
}

impl UserMtr {
    /// Pins `regions` laid out back to back from user address `addr` and
    /// builds their BTs (`hns_roce_mtr_create` with udata, not a PBL):
    /// pages of `1 << page_shift` bytes (at least 4 KiB), BT pages of
    /// `1 << ba_pg_shift` bytes growing within `page_size_cap`, hop numbers
    /// from the caps in `regions` (1 to 3; 0 for a one-page buffer).
    ///
    /// # Errors
    ///
    /// `ENOMEM` if the memory cannot be pinned (whatever the core said, as
    /// C's `mtr_alloc_bufs`); `EINVAL` for bad attributes or a hop above 3;
    /// `ERANGE` if no BT page size holds the root; `ENOBUFS` if the umem
    /// has fewer pages than the regions; `ENOMEM`. Each failure is logged
    /// as C logs it.
    pub(crate) fn new(
        dev: &Device<Bound>,
        buf: UserBuf<'_>,
        regions: &[Region],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
    ) -> Result<Self> {
        trace_buf_attr(regions, page_shift, false);
        let all = attrs_of(regions)?;
        let attrs = all.get(..regions.len()).ok_or(EINVAL)?;
        let total = attrs
            .iter()
            .try_fold(0u64, |s, a| s.checked_add(a.size))
            .ok_or(EINVAL)?;
        let access = if buf.device_writes {
            ACCESS_LOCAL_WRITE
        } else {
            0
        };
        let umem = pin_umem(dev, buf.pin, buf.addr, total, access)?;
        Self::build(
            dev,
            umem,
            attrs,
            page_shift,
            ba_pg_shift,
            page_size_cap,
            false,
        )
    }

    /// Pins a user MR's memory (`mr`) and builds its page list
    /// (`alloc_mr_pbl` for `MR_TYPE_MR`): the best page size of
    /// `page_size_cap` for the MR's I/O address (`get_best_page_shift`),
    /// the smallest hop number whose BT pages of `1 << ba_pg_shift` bytes
    /// address all pages (`get_best_hop_num`), then the BTs. The page count is
    /// [`UserMtr::page_count`] (C's `mr->npages`), the hop
    /// [`UserMtr::hop`]`(0)` (C's `mr->pbl_hop_num`).
    ///
    /// # Errors
    ///
    /// As [`UserMtr::new`]; `EINVAL` also if no page size fits or the MR
    /// needs more than three hops.
    pub(crate) fn new_pbl(
        dev: &Device<Bound>,
        pin: UmemDev<'_>,
        mr: &PblRange,
        ba_pg_shift: u32,
        page_size_cap: u64,
    ) -> Result<Self> {
        let mut umem = pin_umem(dev, pin, mr.start, mr.length, mr.access)?;
        let pgsz = umem.find_best_pgsz(page_size_cap, mr.iova);
        if pgsz == 0 {
            return Err(EINVAL);
        }
        // order_base_2 of a power of two.
        let page_shift = pgsz.trailing_zeros();
        let Some(hop) = best_hop_num(
            crate::hem::num_dma_blocks(umem.iova(), umem.length(), pgsz),
            ba_pg_shift,
        ) else {
            hdev_err!(dev, "failed to calculate a valid hopnum.\n");
            return Err(EINVAL);
        };
        let attrs = [RegionAttr {
            size: mr.length,
            hop,
        }];
        Self::build(
            dev,
            umem,
            &attrs,
            page_shift,
            ba_pg_shift,
            page_size_cap,
            true,
        )
    }

    fn build(
        dev: &Device<Bound>,
        umem: Umem,
        attrs: &[RegionAttr],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
        pbl: bool,
    ) -> Result<Self> {
        // CAST: PAGE_SHIFT is 12..16.
        let kernel_page_shift = kernel::page::PAGE_SHIFT as u32;
        let shape = UmemShape {
            address: umem.address(),
            iova: umem.iova(),
            length: umem.length(),
            kernel_page_shift,
        };
        let layout = UserMtrLayout::new(attrs, page_shift, ba_pg_shift, page_size_cap, pbl, &shape)
            .map_err(|e| {
                if e == MtrError::NoBufs {
                    hdev_err!(dev, "failed to get mtr page.\n");
                } else {
                    hdev_err!(dev, "failed to alloc mtr mtt", ret = errno(e).to_errno());
                }
                errno(e)
            })?;
        let pgsz = 1u64.checked_shl(page_shift).ok_or(EINVAL)?;
        if layout.direct {
            let root_ba = umem.dma_blocks(pgsz).next().ok_or(ENOBUFS)?;
            // INVARIANT: direct, `root_ba` is the first block.
            return Ok(Self {
                layout,
                root: None,
                mid: KVec::new(),
                root_ba,
                umem,
            });
        }
        let hem = &layout.hem;
        let mid = alloc_bts(dev, hem)?;
        let root = Coherent::<u64>::zeroed_slice(dev, usize::try_from(hem.root_len)?, GFP_KERNEL)?;
        link_bts(hem, &root, &mid)?;
        // Run by run (the entries of one BT page that follow each other),
        // the addresses taken from the umem a batch at a time.
        let count = layout.page_count();
        let mut blocks = umem.dma_blocks(pgsz);
        let mut batch = [0u64; MAP_BATCH];
        let mut i = 0u32;
        let mut since_resched = 0u32;
        while i < count {
            let (at, run) = hem.locate_run(i).ok_or(EINVAL)?;
            let (bt, first) = bt_slot(&root, &mid, at)?;
            let mut done = 0u32;
            while done < run {
                // CAST: MAP_BATCH fits u32.
                let want = (run - done).min(MAP_BATCH as u32);
                let got = blocks.fill(batch.get_mut(..usize::try_from(want)?).ok_or(EINVAL)?);
                // CAST: `got` is at most `want`.
                let got = got as u32;
                if got < want {
                    hdev_err!(
                        dev,
                        "failed to get mtr page {} != {}.\n",
                        i + done + got,
                        count
                    );
                    return Err(ENOBUFS);
                }
                set_bas(
                    bt,
                    first + done,
                    batch.get(..usize::try_from(got)?).ok_or(EINVAL)?,
                )?;
                done += got;
            }
            i += run;
            since_resched += run;
            if since_resched >= RESCHED_PAGES {
                since_resched = 0;
                cond_resched();
            }
        }
        let root_ba = root.dma_address();
        // INVARIANT: every L1 page linked, every page listed where the
        // layout says.
        Ok(Self {
            layout,
            root: Some(root),
            mid,
            root_ba,
            umem,
        })
    }

    /// Bus address the context takes as the buffer's base
    /// (`hns_roce_get_mtr_ba`): the root BT, or the first page when direct.
    pub(crate) fn root_ba(&self) -> u64 {
        self.root_ba
    }

    /// Fills `out` with the bus addresses of the pages from the one holding
    /// byte `offset` on (`hns_roce_mtr_find`); entries past the last page
    /// are left as they are. When direct (hop 0) only the first page is
    /// known, and `out` may hold as many entries as there are regions.
    ///
    /// # Errors
    ///
    /// `EINVAL` for an empty `out` (or, direct, more entries than
    /// regions); `ENOENT` if no page is found.
    pub(crate) fn find(&self, offset: u64, out: &mut [u64]) -> Result {
        if out.is_empty() {
            return Err(EINVAL);
        }
        let l = &self.layout;
        if l.direct {
            let start = offset >> HW_PAGE_SHIFT;
            let regions = l.regions.as_slice();
            if out.len() > regions.len() {
                return Err(EINVAL);
            }
            let mut n = 0;
            for r in regions.iter().filter(|r| u64::from(r.offset) >= start) {
                let Some(slot) = out.get_mut(n) else { break };
                *slot = self.root_ba + (u64::from(r.offset) << HW_PAGE_SHIFT);
                n += 1;
            }
            return if n == 0 { Err(ENOENT) } else { Ok(()) };
        }
        let first = u32::try_from(offset >> l.page_shift).map_err(|_| ENOENT)?;
        let mut n = 0;
        for (slot, page) in out.iter_mut().zip(first..l.page_count()) {
            let Some(ba) = self.entry(page) else { break };
            *slot = ba;
            n += 1;
        }
        if n == 0 {
            Err(ENOENT)
        } else {
            Ok(())
        }
    }

    /// The BT entry of buffer page `page`.
    fn entry(&self, page: u32) -> Option<u64> {
        let root = self.root.as_ref()?;
        let (bt, slot) = bt_slot(root, &self.mid, self.layout.hem.locate(page)?).ok()?;
        get_ba(bt, slot)
    }

    /// Buffer page size exponent (`hem_cfg.buf_pg_shift`).
    pub(crate) fn page_shift(&self) -> u32 {
        self.layout.page_shift
    }

    /// BT page size exponent (`hem_cfg.ba_pg_shift`; the buffer page size
    /// when direct).
    pub(crate) fn ba_pg_shift(&self) -> u32 {
        self.layout.ba_pg_shift
    }

    /// Hop number of region `i` as the hardware field wants it (0 for a
    /// direct or empty region), 0 past the last region.
    pub(crate) fn hop(&self, i: usize) -> u32 {
        self.layout
            .regions
            .as_slice()
            .get(i)
            .map_or(0, |r| r.hopnum)
    }

    /// Pages the umem has at the buffer page size (`hem_cfg.buf_pg_count`,
    /// a user MR's `npages`).
    pub(crate) fn page_count(&self) -> u32 {
        self.layout.buf_pg_count
    }

    /// The pinned memory.
    pub(crate) fn umem(&self) -> &Umem {
        &self.umem
    }
}

/// The [`RegionAttr`]s of `regions` (at most [`MAX_BT_REGION`], else
/// `EINVAL`), in the first `regions.len()` entries.
fn attrs_of(regions: &[Region]) -> Result<[RegionAttr; MAX_BT_REGION]> {
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
    Ok(attrs)
}

/// Pins the user buffer (`mtr_alloc_bufs` with udata): any failure is
/// `ENOMEM`, as in C.
#[inline(never)]
fn pin_umem(
    dev: &Device<Bound>,
    pin: UmemDev<'_>,
    addr: u64,
    size: u64,
    access: u32,
) -> Result<Umem> {
    pin.pin(addr, size, access).map_err(|e| {
        hdev_err!(dev, "failed to get umem", ret = e.to_errno());
        hdev_err!(dev, "failed to alloc mtr bufs", ret = ENOMEM.to_errno());
        ENOMEM
    })
}

/// An entry of a kernel buffer (a send WQE slot) in place: each word a
/// single 32-bit load or store of the DMA memory, so that an encoder
/// touches only the words the C driver touches
/// ([`crate::hns_roce_hw_v2::wqe::WqeSlot`]). Stores are plain: the engine
/// reads them after a later barrier and doorbell, or after the owner word,
/// which the caller stores last.
pub(crate) struct MtrEntry<'a, const N: usize>(SysMem<'a, [u32; N]>);

impl<const N: usize> MtrEntry<'_, N> {
    /// All `N` words, copied out in one go (no single-copy atomicity): for
    /// an entry the device handed over, after its owner word and a read
    /// barrier.
    #[inline(always)]
    pub(crate) fn read_all(&self) -> [u32; N] {
        self.0.copy_read().map(u32::from_le)
    }
}

impl<const N: usize> WqeSlot for MtrEntry<'_, N> {
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        let read = || -> Result<u32> { Ok(io_read!(self.0, [try: i])) };
        read().map_or(0, u32::from_le)
    }

    #[inline(always)]
    fn set(&mut self, i: usize, v: u32) {
        let write = || -> Result {
            io_write!(self.0, [try: i], v.to_le());
            Ok(())
        };
        // Past the entry there is nothing to store (as for an array).
        let _ = write();
    }
}

/// A queue buffer (`hns_roce_mtr`) of either origin: kernel memory the
/// driver allocated, or the calling process's pinned pages. Kernel code
/// reads and writes only the first kind; the engine sees both alike.
pub(crate) enum Mtr {
    /// Allocated by the driver (kernel CQs and QPs).
    Kernel(KernelMtr),
    /// Pinned user memory (libhns's CQs and QPs).
    User(UserMtr),
}

impl Mtr {
    /// Bus address of the page holding byte `offset`.
    pub(crate) fn find(&self, offset: usize) -> Option<u64> {
        match self {
            Self::Kernel(m) => m.find(offset),
            Self::User(m) => {
                let mut a = [0u64; 1];
                m.find(u64::try_from(offset).ok()?, &mut a).ok()?;
                Some(a[0])
            }
        }
    }

    /// Bus address of the root BT (or of the only page).
    pub(crate) fn root_ba(&self) -> u64 {
        match self {
            Self::Kernel(m) => m.root_ba(),
            Self::User(m) => m.root_ba(),
        }
    }

    /// BT page size exponent (bytes).
    pub(crate) fn ba_pg_shift(&self) -> u32 {
        match self {
            Self::Kernel(m) => m.ba_pg_shift(),
            Self::User(m) => m.ba_pg_shift(),
        }
    }

    /// Buffer page size exponent (bytes).
    pub(crate) fn page_shift(&self) -> u32 {
        match self {
            Self::Kernel(m) => m.page_shift(),
            Self::User(m) => m.page_shift(),
        }
    }

    /// Word `word` of the entry at byte `off`; `None` for user memory
    /// (the kernel never reads what libhns owns).
    pub(crate) fn read_word(&self, off: usize, word: usize) -> Option<u32> {
        match self {
            Self::Kernel(m) => m.read_word(off, word),
            Self::User(_) => None,
        }
    }

    /// Writes the word at byte `off` of kernel memory (`EINVAL` for user
    /// memory).
    pub(crate) fn write_word(&self, off: usize, v: u32) -> Result {
        match self {
            Self::Kernel(m) => m.write_word(off, v),
            Self::User(_) => Err(EINVAL),
        }
    }

    /// [`KernelMtr::write_words`] on kernel memory (`EINVAL` for user
    /// memory).
    pub(crate) fn write_words<const N: usize>(&self, off: usize, words: &[u32; N]) -> Result {
        match self {
            Self::Kernel(m) => m.write_words(off, words),
            Self::User(_) => Err(EINVAL),
        }
    }

    /// [`KernelMtr::write`] on kernel memory (`EINVAL` for user memory).
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        match self {
            Self::Kernel(m) => m.write(offset, data),
            Self::User(_) => Err(EINVAL),
        }
    }

    /// [`KernelMtr::entry`] of kernel memory (`EINVAL` for user memory).
    pub(crate) fn entry<const N: usize>(&self, off: usize) -> Result<MtrEntry<'_, N>> {
        match self {
            Self::Kernel(m) => m.entry(off),
            Self::User(_) => Err(EINVAL),
        }
    }

    /// [`KernelMtr::trace_wqe`] on kernel memory (nothing for user memory,
    /// whose WQEs libhns writes).
    pub(crate) fn trace_wqe(
        &self,
        queue: trace::Queue,
        qpn: u32,
        idx: u32,
        off: usize,
        bytes: u32,
        wr_id: u64,
    ) {
        if let Self::Kernel(m) = self {
            m.trace_wqe(queue, qpn, idx, off, bytes, wr_id);
        }
    }

    /// [`KernelMtr::read_words`] on kernel memory (`None` for user memory).
    pub(crate) fn read_words<const N: usize>(&self, off: usize) -> Option<[u32; N]> {
        match self {
            Self::Kernel(m) => m.read_words(off),
            Self::User(_) => None,
        }
    }
}
