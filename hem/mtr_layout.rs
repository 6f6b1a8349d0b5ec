// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! MTR layout arithmetic (`core` only): where the pages of a buffer of up
//! to three regions sit in its base-address tables. The regions in pages
//! and their hop numbers, the BT page size, the root and L1 BT entries of
//! each region and which entry holds which page, for kernel buffers
//! ([`MtrLayout`]) and for user memory a process pinned
//! ([`UserMtrLayout`], with [`num_dma_blocks`] and [`best_hop_num`]).
//! Nothing here allocates: `hem/mtr.rs` allocates and fills the pages.
//! Re-exported by `hem.rs`, so the items keep their `crate::hem::` paths.

use super::{hw_hopnum, BA_BYTE_LEN, HOP_NUM_0, HW_PAGE_SIZE};
use crate::hns_roce_hw_v2::consts::hw_page::PAGE_SHIFT as HW_PAGE_SHIFT;

// ---------------------------------------------------------------------------
// Multi-region MTRs: the BT layout of a kernel buffer made of up to three
// regions (a QP's SQ, extended SGE and RQ), as `hns_roce_mtr_create` builds
// it through `mtr_init_buf_cfg`, `cal_best_bt_pg_sz` (hns_roce_mr.c) and
// `hns_roce_hem_list_request` (hns_roce_hem.c), and where
// `hns_roce_hem_list_find_mtt` finds a page's entry.
//
// A region of hop 1 keeps its page addresses in the root BT itself (C's
// "fake root bt" shares the root page); a region of hop 2 has one root entry
// per L1 BT page, each L1 page listing `unit` buffer pages; a region of hop
// 3 has one root entry per L1 page, each listing `unit` L2 pages, each
// listing `unit` buffer pages; a region of hop 0 next to regions of other
// hops gets a BT of its own that no entry points at. The root entries go
// region after region. The BT pages below the root are numbered here
// across the whole MTR, region after region (a hop-3 region's L1 pages,
// then its L2 pages).

/// Most regions of one MTR (`HNS_ROCE_MAX_BT_REGION`).
pub const MAX_BT_REGION: usize = 3;

/// Why an MTR layout cannot be built, named by the C driver's errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtrError {
    /// `-EINVAL`: bad attributes (region count, page shift, a hop number
    /// the C driver rejects, a direct kernel buffer).
    Inval,
    /// `-ENOBUFS`: the root BT needs more than one BT page of entries
    /// (`alloc_root_hem`), or the kernel buffer has fewer pages than the
    /// regions (`mtr_map_bufs`).
    NoBufs,
    /// `-ERANGE`: no BT page size of `page_size_cap` fits the root
    /// (`mtr_alloc_mtt` after `cal_best_bt_pg_sz` returned 0).
    Range,
    /// `-ENOMEM`: the root BT would have no entry (`alloc_root_hem`).
    NoMem,
}

/// One region as the caller asks for it (`hns_roce_buf_attr.region[]`):
/// bytes and the hop number from the caps (1, 2, 3, 0 or 0xff).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionAttr {
    /// Size in bytes.
    pub size: u64,
    /// Hop number as in the caps.
    pub hop: u32,
}

/// One region in buffer pages (`struct hns_roce_buf_region`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufRegion {
    /// First buffer page of the region.
    pub offset: u32,
    /// Buffer pages of the region.
    pub count: u32,
    /// Hop number after `to_hr_hem_hopnum` (0 for an empty region or hop
    /// 0xff).
    pub hopnum: u32,
}

/// The regions of one MTR, at most [`MAX_BT_REGION`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufRegions {
    items: [BufRegion; MAX_BT_REGION],
    len: usize,
}

impl BufRegions {
    /// The regions in order.
    pub fn as_slice(&self) -> &[BufRegion] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    /// Buffer pages of all regions (`cal_mtr_pg_cnt`).
    #[inline(never)]
    pub fn page_count(&self) -> u64 {
        self.as_slice().iter().map(|r| u64::from(r.count)).sum()
    }
}

/// The regions of a kernel buffer in pages of `1 << page_shift` bytes
/// (`mtr_init_buf_cfg` without umem): region `i` starts at the page after
/// region `i - 1`, has `DIV_ROUND_UP(hr_hw_page_align(size), page)` pages
/// and hop number `to_hr_hem_hopnum(hop, count)` ([`hw_hopnum`]).
///
/// # Errors
///
/// [`MtrError::Inval`] for no region or more than [`MAX_BT_REGION`], a page
/// shift below 12 (`is_buf_attr_valid`) or above 31, or a page count that
/// does not fit in 32 bits.
pub fn init_buf_cfg(attrs: &[RegionAttr], page_shift: u32) -> Result<BufRegions, MtrError> {
    if attrs.is_empty()
        || attrs.len() > MAX_BT_REGION
        || !(HW_PAGE_SHIFT..=31).contains(&page_shift)
    {
        return Err(MtrError::Inval);
    }
    let page = 1u64 << page_shift;
    let hw_page = u64::from(HW_PAGE_SIZE);
    let mut out = BufRegions {
        len: attrs.len(),
        ..BufRegions::default()
    };
    let mut page_cnt = 0u32;
    for (r, a) in out.items.iter_mut().zip(attrs) {
        let aligned = a
            .size
            .checked_next_multiple_of(hw_page)
            .ok_or(MtrError::Inval)?;
        // DIV_ROUND_UP(aligned, page); `page` is a power of two.
        let up = (aligned >> page_shift) + u64::from(aligned & (page - 1) != 0);
        let count = u32::try_from(up).map_err(|_| MtrError::Inval)?;
        *r = BufRegion {
            offset: page_cnt,
            count,
            hopnum: hw_hopnum(a.hop, count),
        };
        page_cnt = page_cnt.checked_add(count).ok_or(MtrError::Inval)?;
    }
    Ok(out)
}

/// Base addresses a BT of level `bt_level` covers for a region of hop
/// `hopnum` (`hem_list_calc_ba_range`): `unit ^ (hopnum - bt_level)`, 0 if
/// `hopnum <= bt_level`. Saturates where C's `u64` would wrap.
pub fn calc_ba_range(hopnum: u32, bt_level: u32, unit: u64) -> u64 {
    if hopnum <= bt_level {
        return 0;
    }
    (bt_level..hopnum).fold(1u64, |step, _| step.saturating_mul(unit))
}

/// Root BT entries that cover `regions` with `unit` base addresses per BT
/// page (`hns_roce_hem_list_calc_root_ba`): nothing for hop 0, `count` for
/// hop 1 (the pages themselves), `DIV_ROUND_UP(count, unit ^ (hop - 1))`
/// otherwise.
pub fn calc_root_ba(regions: &[BufRegion], unit: u64) -> u64 {
    regions
        .iter()
        .map(|r| match r.hopnum {
            0 => 0,
            1 => u64::from(r.count),
            hop => {
                let step = calc_ba_range(hop, 1, unit);
                if step > 0 {
                    u64::from(r.count).div_ceil(step)
                } else {
                    0
                }
            }
        })
        .sum()
}

/// The BT page shift `mtr_alloc_mtt` uses (`cal_best_bt_pg_sz`): the first
/// set bit of `page_size_cap` from `pg_shift` on whose BT page
/// (`(1 << bit) / 8` entries) holds the root of `regions`, where a region
/// of hop `h` needs `DIV_ROUND_UP(count, entries ^ (h - 1))` root entries.
/// `None` (C: 0, then `-ERANGE`) if no bit fits.
///
/// Bits 32 and up are never tried: C computes the entries per BT page in an
/// `unsigned int`, which is 0 from bit 35 on (a division by zero for hop 2),
/// and the HIP08/HIP09 caps set bits 12..=27 only.
pub fn best_bt_pg_sz(regions: &[BufRegion], pg_shift: u32, page_size_cap: u64) -> Option<u32> {
    (pg_shift..32)
        .filter(|&bit| page_size_cap & (1u64 << bit) != 0)
        .find(|&bit| {
            let ba_per_bt = (1u64 << bit) / BA_BYTE_LEN;
            let ba_num: u64 = regions
                .iter()
                .filter(|r| r.hopnum != 0)
                .map(|r| {
                    // cal_pages_per_l1ba: ba_per_bt ^ (hopnum - 1).
                    let per_l1 = (1..r.hopnum).fold(1u64, |p, _| p.saturating_mul(ba_per_bt));
                    u64::from(r.count).div_ceil(per_l1.max(1))
                })
                .sum();
            ba_num <= ba_per_bt
        })
}

/// Where one region's addresses sit in the BTs of a [`HemList`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionBt {
    /// The region.
    pub region: BufRegion,
    /// Its first root entry (`setup_root_hem`'s `total` when it gets
    /// there).
    pub root: u32,
    /// Its root entries: `count` for hop 1, the L1 pages for hop 2 and 3,
    /// none for hop 0 or an empty region.
    pub root_len: u32,
    /// Its first BT page below the root in the MTR's numbering.
    pub l1: u32,
    /// Its BT pages below the root: for hop 2 its L1 pages
    /// (`DIV_ROUND_UP(count, unit)`); for hop 3 its `root_len` L1 pages,
    /// then its L2 pages (`DIV_ROUND_UP(count, unit)`); for hop 0 the one
    /// BT of `count` entries C gives it outside the root
    /// (`alloc_fake_root_bt`); else 0.
    pub l1_len: u32,
}

/// The BT entry that holds a buffer page's (or a BT page's) address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtSlot {
    /// Entry `i` of the root BT (a hop-1 region).
    Root(u32),
    /// Entry `slot` of BT page `page` below the root (the L1 page of a
    /// hop-2 region, an L1 or L2 page of a hop-3 region, the own BT of a
    /// hop-0 region).
    L1 {
        /// The BT page in the MTR's numbering.
        page: u32,
        /// The entry in it.
        slot: u32,
    },
}

/// The BT pages of an MTR (`struct hns_roce_hem_list` as
/// `hns_roce_hem_list_request` builds it): one root BT of `root_len`
/// entries (C allocates exactly that many) and `l1_len` BT pages below it,
/// each of `unit` entries except a hop-0 region's, which has one entry per
/// page of the region ([`HemList::bt_entries`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HemList {
    /// BT page shift.
    pub ba_pg_shift: u32,
    /// Base addresses per BT page: `(1 << ba_pg_shift) / 8`.
    pub unit: u32,
    /// Entries of the root BT (`hns_roce_hem_list_calc_root_ba`).
    pub root_len: u32,
    /// BT pages below the root, all regions.
    pub l1_len: u32,
    /// Buffer pages of all regions.
    pub page_count: u32,
    items: [RegionBt; MAX_BT_REGION],
    len: usize,
}

impl HemList {
    /// The BT layout of `regions` with BT pages of `1 << ba_pg_shift`
    /// bytes (`hns_roce_hem_list_request`: `hem_list_alloc_mid_bt` per
    /// `unit` pages of each hop-2 or hop-3 region, then `alloc_root_hem`
    /// and `setup_root_hem` with `alloc_fake_root_bt` / `setup_middle_bt`).
    /// A hop-3 region has an L1 page per `unit * unit` pages, linked from
    /// the root, and an L2 page per `unit` pages, linked from entry
    /// `k % unit` of L1 page `k / unit`. A hop-0 region (in an MTR with a
    /// region of another hop) takes no root entry: its pages go to a BT of
    /// their own that nothing links (the engine finds such a region from
    /// the context's current block address).
    ///
    /// # Errors
    ///
    /// [`MtrError::Inval`] for more than [`MAX_BT_REGION`] regions, a BT
    /// page shift outside 3..=31, or a region with pages and a hop above
    /// 3 (`hem_list_alloc_mid_bt`); [`MtrError::NoMem`] if the root has no
    /// entry and [`MtrError::NoBufs`] if it needs more than `unit`
    /// (`alloc_root_hem`).
    pub fn request(regions: &[BufRegion], ba_pg_shift: u32) -> Result<HemList, MtrError> {
        if regions.len() > MAX_BT_REGION || !(3..=31).contains(&ba_pg_shift) {
            return Err(MtrError::Inval);
        }
        let unit = (1u32 << ba_pg_shift) / 8;
        if regions
            .iter()
            .any(|r| r.count > 0 && r.hopnum > MAX_HOP_NUM)
        {
            return Err(MtrError::Inval);
        }
        let root_len = calc_root_ba(regions, u64::from(unit));
        if root_len < 1 {
            return Err(MtrError::NoMem);
        }
        if root_len > u64::from(unit) {
            return Err(MtrError::NoBufs);
        }
        let mut out = HemList {
            ba_pg_shift,
            unit,
            len: regions.len(),
            ..HemList::default()
        };
        let up = |n: u32, d: u64| -> Result<u32, MtrError> {
            u32::try_from(u64::from(n).div_ceil(d)).map_err(|_| MtrError::Inval)
        };
        let (mut root, mut l1) = (0u32, 0u32);
        for (bt, r) in out.items.iter_mut().zip(regions) {
            let (root_n, l1_n) = match (r.count, r.hopnum) {
                (0, _) => (0, 0),
                (_, 0) => (0, 1),
                (n, 1) => (n, 0),
                (n, 2) => {
                    let l1_n = up(n, u64::from(unit))?;
                    (l1_n, l1_n)
                }
                (n, _) => {
                    let top = up(n, u64::from(unit) * u64::from(unit))?;
                    let l2 = up(n, u64::from(unit))?;
                    (top, top.checked_add(l2).ok_or(MtrError::Inval)?)
                }
            };
            *bt = RegionBt {
                region: *r,
                root,
                root_len: root_n,
                l1,
                l1_len: l1_n,
            };
            root = root.checked_add(root_n).ok_or(MtrError::Inval)?;
            l1 = l1.checked_add(l1_n).ok_or(MtrError::Inval)?;
            let end = r.offset.checked_add(r.count).ok_or(MtrError::Inval)?;
            out.page_count = out.page_count.max(end);
        }
        out.root_len = root;
        out.l1_len = l1;
        Ok(out)
    }

    /// The regions with their BT positions, in order.
    pub fn regions(&self) -> &[RegionBt] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    /// The entry that holds buffer page `page` (`hns_roce_hem_list_find_mtt`:
    /// the bottom BT covering it, at `page - start`); `None` if no region
    /// has the page.
    pub fn locate(&self, page: u32) -> Option<BtSlot> {
        self.locate_run(page).map(|(slot, _)| slot)
    }

    /// [`HemList::locate`] of `page`, and how many pages from it on (at
    /// least 1) have their entries next to each other in the same BT page:
    /// up to the end of the region, and for a hop-2 or hop-3 region up to
    /// the end of the bottom BT page (C's `hns_roce_hem_list_find_mtt`
    /// count). Lets a caller map a page list run by run, as C's
    /// `mtr_map_region` does.
    #[inline(never)]
    pub fn locate_run(&self, page: u32) -> Option<(BtSlot, u32)> {
        let bt = self
            .regions()
            .iter()
            .find(|b| page >= b.region.offset && page - b.region.offset < b.region.count)?;
        let d = page - bt.region.offset;
        let left = bt.region.count - d;
        match bt.region.hopnum {
            0 => Some((
                BtSlot::L1 {
                    page: bt.l1,
                    slot: d,
                },
                left,
            )),
            1 => Some((BtSlot::Root(bt.root.checked_add(d)?), left)),
            hop => {
                // Hop 3: the L2 pages come after the region's L1 pages.
                let first = if hop == 2 {
                    bt.l1
                } else {
                    bt.l1.checked_add(bt.root_len)?
                };
                let slot = d.checked_rem(self.unit)?;
                Some((
                    BtSlot::L1 {
                        page: first.checked_add(d.checked_div(self.unit)?)?,
                        slot,
                    },
                    left.min(self.unit - slot),
                ))
            }
        }
    }

    /// The region BT page `page` (below the root) belongs to.
    #[inline(never)]
    fn region_of_bt(&self, page: u32) -> Option<&RegionBt> {
        self.regions()
            .iter()
            .find(|b| page >= b.l1 && page - b.l1 < b.l1_len)
    }

    /// The entry that holds the address of BT page `page` (below the
    /// root): a root entry for the L1 pages of hop 2 and 3
    /// (`setup_middle_bt`: `(start - r->offset) / step` after the region's
    /// first entry), an entry of its L1 page for a hop-3 L2 page
    /// (`hem_list_alloc_mid_bt`'s link to the parent); `None` for a hop-0
    /// region's BT, which nothing links, or no such page.
    pub fn parent(&self, page: u32) -> Option<BtSlot> {
        let bt = self.region_of_bt(page)?;
        let k = page - bt.l1;
        match bt.region.hopnum {
            2 | 3 if k < bt.root_len => Some(BtSlot::Root(bt.root.checked_add(k)?)),
            3 => {
                let l2 = k - bt.root_len;
                Some(BtSlot::L1 {
                    page: bt.l1.checked_add(l2.checked_div(self.unit)?)?,
                    slot: l2.checked_rem(self.unit)?,
                })
            }
            _ => None,
        }
    }

    /// The root entry that points at BT page `l1` ([`HemList::parent`]
    /// when that is the root).
    pub fn l1_root(&self, l1: u32) -> Option<u32> {
        match self.parent(l1)? {
            BtSlot::Root(i) => Some(i),
            BtSlot::L1 { .. } => None,
        }
    }

    /// Entries of BT page `page` below the root: `unit`, or the region's
    /// page count for a hop-0 region's BT (`alloc_fake_root_bt` allocates
    /// `count` entries); `None` for no such page.
    pub fn bt_entries(&self, page: u32) -> Option<u32> {
        let bt = self.region_of_bt(page)?;
        Some(if bt.region.hopnum == 0 {
            bt.region.count
        } else {
            self.unit
        })
    }
}

/// The layout of a kernel MTR (`hns_roce_mtr_create` without udata).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MtrLayout {
    /// Buffer page shift.
    pub page_shift: u32,
    /// The BT pages.
    pub hem: HemList,
}

impl MtrLayout {
    /// The layout of a kernel buffer of `attrs` in pages of
    /// `1 << page_shift` bytes whose BT pages start at `1 << ba_pg_shift`
    /// bytes and may grow to any size of `page_size_cap`:
    /// [`init_buf_cfg`], [`best_bt_pg_sz`], [`HemList::request`], then
    /// `mtr_map_bufs`'s check that the buffer `hns_roce_buf_alloc` made for
    /// the sum of the region sizes has a page for every region page.
    ///
    /// # Errors
    ///
    /// As [`init_buf_cfg`] and [`HemList::request`]; [`MtrError::Inval`]
    /// also for a buffer without pages or with every region of hop 0 (C's
    /// direct mode: one contiguous allocation, not supported); [`MtrError::Range`] if no BT page
    /// size fits; [`MtrError::NoBufs`] if the buffer is short of pages (the
    /// regions are not multiples of the page size).
    pub fn new(
        attrs: &[RegionAttr],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
    ) -> Result<MtrLayout, MtrError> {
        let regions = init_buf_cfg(attrs, page_shift)?;
        let r = regions.as_slice();
        if regions.page_count() == 0 || r.iter().all(|r| r.hopnum == 0) {
            return Err(MtrError::Inval);
        }
        let ba = best_bt_pg_sz(r, ba_pg_shift, page_size_cap).ok_or(MtrError::Range)?;
        let hem = HemList::request(r, ba)?;
        let total = attrs
            .iter()
            .try_fold(0u64, |s, a| s.checked_add(a.size))
            .ok_or(MtrError::Inval)?;
        let page = 1u64.checked_shl(page_shift).ok_or(MtrError::Inval)?;
        if regions.page_count() > total.div_ceil(page) {
            return Err(MtrError::NoBufs);
        }
        Ok(MtrLayout { page_shift, hem })
    }

    /// The buffer page holding byte `offset` (`hns_roce_mtr_find`'s
    /// `offset >> buf_pg_shift`); `None` past the last page.
    pub fn page_of(&self, offset: u64) -> Option<u32> {
        let page = u32::try_from(offset.checked_shr(self.page_shift)?).ok()?;
        (page < self.hem.page_count).then_some(page)
    }
}

// ---------------------------------------------------------------------------
// User-memory MTRs (`hns_roce_mtr_create` with udata): the buffer is a umem
// the process pinned, so the page count comes from the umem's DMA blocks,
// the first region starts at the umem's offset into its first page, and a
// PBL (a user MR) picks its page size and hop number from the umem
// (`get_best_page_shift`, `get_best_hop_num`). What the kernel must answer
// (the umem's addresses, `ib_umem_find_best_pgsz`) comes in as plain
// numbers.

/// Deepest hop number `get_best_hop_num` tries (`HNS_ROCE_MAX_HOP_NUM`).
pub const MAX_HOP_NUM: u32 = 3;

/// Blocks of `pgsz` bytes that `length` bytes from I/O address `iova` span
/// (`ib_umem_num_dma_blocks`): from `iova` aligned down to the end aligned
/// up. 0 if `pgsz` is not a power of two or the end does not fit 64 bits.
#[inline(never)]
pub fn num_dma_blocks(iova: u64, length: u64, pgsz: u64) -> u64 {
    if !pgsz.is_power_of_two() {
        return 0;
    }
    let mask = pgsz - 1;
    let Some(end) = iova
        .checked_add(length)
        .and_then(|e| e.checked_add(mask))
        .map(|e| e & !mask)
    else {
        return 0;
    };
    (end - (iova & !mask)) / pgsz
}

/// The smallest hop number whose BT levels of `1 << ba_pg_shift` bytes
/// (`ba_pg_shift / 8` addresses each) hold `ba_cnt` page addresses
/// (`get_best_hop_num`): 0 for one page, 1 for up to one BT page of them,
/// and so on up to [`MAX_HOP_NUM`]; `None` (C: `-EINVAL`) past that.
pub fn best_hop_num(ba_cnt: u64, ba_pg_shift: u32) -> Option<u32> {
    let per_bt = 1u64.checked_shl(ba_pg_shift)? / BA_BYTE_LEN;
    let mut unit = 1u64;
    for hop in 0..=MAX_HOP_NUM {
        if ba_cnt <= unit {
            return Some(hop);
        }
        unit = unit.saturating_mul(per_bt);
    }
    None
}

/// What the MTR needs to know of a umem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UmemShape {
    /// The user address of the first byte (`umem->address`).
    pub address: u64,
    /// Its I/O virtual address (`umem->iova`: the MR's address for a PBL
    /// after `ib_umem_find_best_pgsz`, else the user address).
    pub iova: u64,
    /// Bytes pinned (`umem->length`).
    pub length: u64,
    /// The kernel's `PAGE_SHIFT` (the first region starts at the umem's
    /// offset into a kernel page).
    pub kernel_page_shift: u32,
}

impl UmemShape {
    /// DMA blocks of `1 << page_shift` bytes (`ib_umem_num_dma_blocks`).
    pub fn blocks(&self, page_shift: u32) -> u64 {
        1u64.checked_shl(page_shift)
            .map_or(0, |p| num_dma_blocks(self.iova, self.length, p))
    }
}

/// The regions of a user buffer (`mtr_init_buf_cfg` with a umem): region
/// `i` starts after region `i - 1`; a PBL's one region has one page per DMA
/// block of the umem, any other region `DIV_ROUND_UP(hr_hw_page_align(size
/// + pgoff), page)` pages, `pgoff` being the umem's offset into its first
/// kernel page for the first region and 0 for the others; hop numbers as
/// [`hw_hopnum`].
///
/// # Errors
///
/// [`MtrError::Inval`] as [`init_buf_cfg`].
pub fn init_user_buf_cfg(
    attrs: &[RegionAttr],
    page_shift: u32,
    pbl: bool,
    umem: &UmemShape,
) -> Result<BufRegions, MtrError> {
    if attrs.is_empty()
        || attrs.len() > MAX_BT_REGION
        || !(HW_PAGE_SHIFT..=31).contains(&page_shift)
    {
        return Err(MtrError::Inval);
    }
    let page = 1u64 << page_shift;
    let hw_page = u64::from(HW_PAGE_SIZE);
    let kpage_mask = 1u64
        .checked_shl(umem.kernel_page_shift)
        .ok_or(MtrError::Inval)?
        - 1;
    let mut pgoff = umem.address & kpage_mask;
    let mut out = BufRegions {
        len: attrs.len(),
        ..BufRegions::default()
    };
    let mut page_cnt = 0u32;
    for (r, a) in out.items.iter_mut().zip(attrs) {
        let n = if pbl {
            umem.blocks(page_shift)
        } else {
            let aligned = a
                .size
                .checked_add(pgoff)
                .and_then(|s| s.checked_next_multiple_of(hw_page))
                .ok_or(MtrError::Inval)?;
            aligned.div_ceil(page)
        };
        pgoff = 0;
        let count = u32::try_from(n).map_err(|_| MtrError::Inval)?;
        *r = BufRegion {
            offset: page_cnt,
            count,
            hopnum: hw_hopnum(a.hop, count),
        };
        page_cnt = page_cnt.checked_add(count).ok_or(MtrError::Inval)?;
    }
    Ok(out)
}

/// The layout of a user MTR: its regions and either direct addressing (the
/// root address is the first page's, C's `is_direct`) or the BT pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserMtrLayout {
    /// Buffer page shift (`hem_cfg.buf_pg_shift`).
    pub page_shift: u32,
    /// BT page shift (`hem_cfg.ba_pg_shift`: the buffer page shift when
    /// direct).
    pub ba_pg_shift: u32,
    /// The regions (`hem_cfg.region`).
    pub regions: BufRegions,
    /// No BT: every region asked for hop 0 (`!mtr_has_mtt`).
    pub direct: bool,
    /// The BT pages (empty when direct).
    pub hem: HemList,
    /// Pages the umem has at `page_shift` (`hem_cfg.buf_pg_count`).
    pub buf_pg_count: u32,
}

impl UserMtrLayout {
    /// The layout of a user buffer of `attrs` in pages of `1 << page_shift`
    /// bytes over `umem`, with BT pages from `1 << ba_pg_shift` bytes
    /// growing within `page_size_cap` (`mtr_init_buf_cfg`, `mtr_alloc_mtt`,
    /// and `mtr_map_bufs`'s check that the umem has a block for every
    /// region page). For a PBL (`pbl`), `page_shift` and the region's hop
    /// should be what [`best_hop_num`] and the umem's best page size chose.
    ///
    /// # Errors
    ///
    /// As [`init_user_buf_cfg`] and [`HemList::request`];
    /// [`MtrError::Inval`] for direct addressing of
    /// more than one region (C splits the buffer into 4 KiB pages then, no
    /// caller needs it yet) or of more than one page (C checks the pages
    /// are contiguous); [`MtrError::Range`] if no BT page size fits;
    /// [`MtrError::NoBufs`] if the umem has fewer blocks than the regions
    /// have pages.
    pub fn new(
        attrs: &[RegionAttr],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
        pbl: bool,
        umem: &UmemShape,
    ) -> Result<UserMtrLayout, MtrError> {
        let regions = init_user_buf_cfg(attrs, page_shift, pbl, umem)?;
        let buf_pg_count = u32::try_from(umem.blocks(page_shift)).map_err(|_| MtrError::Inval)?;
        let direct = attrs.iter().all(|a| a.hop == 0 || a.hop == HOP_NUM_0);
        let page_count = regions.page_count();
        if page_count > u64::from(buf_pg_count) {
            return Err(MtrError::NoBufs);
        }
        if direct {
            if regions.as_slice().len() > 1 || page_count > 1 {
                return Err(MtrError::Inval);
            }
            return Ok(UserMtrLayout {
                page_shift,
                ba_pg_shift: page_shift,
                regions,
                direct,
                hem: HemList::default(),
                buf_pg_count,
            });
        }
        let r = regions.as_slice();
        let ba = best_bt_pg_sz(r, ba_pg_shift, page_size_cap).ok_or(MtrError::Range)?;
        let hem = HemList::request(r, ba)?;
        Ok(UserMtrLayout {
            page_shift,
            ba_pg_shift: ba,
            regions,
            direct,
            hem,
            buf_pg_count,
        })
    }

    /// Pages of all regions (`cal_mtr_pg_cnt`): how many umem blocks are
    /// mapped.
    pub fn page_count(&self) -> u32 {
        // Each region count fits u32 and their sum was checked against
        // `buf_pg_count`.
        u32::try_from(self.regions.page_count()).unwrap_or(u32::MAX)
    }
}
