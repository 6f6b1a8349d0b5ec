// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Index allocators (`core` only): the IDA ranges and the QP/CQ bank
//! allocators of the C driver.
//!
//! * [`Ida`] is one `struct hns_roce_ida`: an IDA with a fixed `[min, max]`
//!   range, allocated with `ida_alloc_range(ida, min, max)` (lowest free id)
//!   and released with `ida_free`. The C driver has one each for UARs
//!   (`[reserved_uars, num_uars - 1]`), PDs (`[reserved_pds, num_pds - 1]`),
//!   XRCDs (`[reserved_xrcds, num_xrcds - 1]`), MTPTs
//!   (`[reserved_mrws, num_mtpts - 1]`) and SRQs
//!   (`[reserved_srqs, num_srqs - 1]`); see [`IdRange::from_count`].
//! * [`QpBanks`] is the QPN allocator of `hns_roce_qp.c` (eight banks, a
//!   `next` cursor per bank, least-loaded bank first, CQ affinity).
//! * [`CqBanks`] is the CQN allocator of `hns_roce_cq.c` (four banks, bank 0
//!   or the user context's bank on HIP09, least-loaded bank on HIP08).
//!
//! Nothing here allocates or locks: the bitmaps live in word storage the
//! caller provides (any `S: BorrowMut<[u64]>`, e.g. a `KVec<u64>`, an array
//! or a `&mut [u64]`) sized with [`IdRange::words`], [`qp_bank_words`] or
//! [`cq_bank_words`], and the caller serialises access (the C driver holds
//! `bank_mutex`; the IDA locks itself).
//!
//! Bit `i` of the storage (word `i / 64`, bit `i % 64`) stands for the id
//! `base + i`, where `base` is the lowest id the allocator can hand out, so
//! reserved ids take no storage.
//!
//! Why not the kernel crate's allocator: the kernel crate has no binding of
//! `struct ida`, and its `id_pool::IdPool` would hand out the same order
//! (`find_unused_id(min)` is the lowest clear bit from `min` on, as
//! `ida_alloc_range`) only behind a bound check of our own (its capacity is
//! rounded up to at least 64 ids, so ids above `max` come back), and it
//! cannot tell a double free (`release_id` clears silently; C's `ida_free`
//! warns, and `pd.rs` logs it from [`BitmapError::NotAllocated`]). Above
//! all it lives in the kernel crate (a `BitmapVec` allocated with
//! `kmalloc`), so the allocation order the equivalence traces compare (QPN,
//! CQN, PD, MTPT and SRQ numbers) could no longer be host-tested against
//! vectors from C's traces (`tests/vectors/bitmap.rs`), and the bank
//! allocators, which share these word helpers, would keep a second
//! implementation anyway.

use crate::hns_roce_hw_v2::consts::{cap_flag, sge::SGE_IN_WQE};
use crate::hw_rev::HwRev;
use core::borrow::BorrowMut;

/// Largest id an IDA hands out (`INT_MAX`): `ida_alloc_range` clamps `max`
/// to it and fails for a `min` above it.
pub const IDA_MAX: u32 = 0x7fff_ffff;

/// Number of QP banks (`HNS_ROCE_QP_BANK_NUM`); the low 3 QPN bits are the
/// bank.
pub const QP_BANK_NUM: usize = 8;
/// Shift of the per-bank id in a QPN (`*qpn = (id << 3) | bankid`).
pub const QP_BANKID_SHIFT: u32 = 3;
/// Bank bits of a QPN (`GENMASK(2, 0)` in `get_qp_bankid`).
pub const QP_BANKID_MASK: u32 = 0x7;
/// Number of CQ banks (`HNS_ROCE_CQ_BANK_NUM`).
pub const CQ_BANK_NUM: usize = 4;
/// Shift of the per-bank id in a CQN (`CQ_BANKID_SHIFT`).
pub const CQ_BANKID_SHIFT: u32 = 2;
/// Bank bits of a CQN (`CQ_BANKID_MASK`, `GENMASK(1, 0)`).
pub const CQ_BANKID_MASK: u32 = 0x3;
/// CQ banks user contexts may be given (`VALID_CQ_BANK_MASK_DEFAULT`).
pub const VALID_CQ_BANK_MASK_DEFAULT: u8 = 0xf;
/// CQ banks user contexts may be given with [`cap_flag::LIMIT_BANK`]
/// (`VALID_CQ_BANK_MASK_LIMIT`: banks 0 and 3).
pub const VALID_CQ_BANK_MASK_LIMIT: u8 = 0x9;
/// QP banks a QP that uses extended SGEs may take with
/// [`cap_flag::LIMIT_BANK`] (`VALID_EXT_SGE_QP_BANK_MASK_LIMIT`: banks 1
/// and 6).
pub const VALID_EXT_SGE_QP_BANK_MASK_LIMIT: u8 = 0x42;
/// The QPN every GSI QP gets (`alloc_qpn`: `num = 1`); it is never taken
/// from or returned to a bank.
pub const GSI_QPN: u32 = 1;

/// Allocator errors.
///
/// Mapping to the C driver's return codes:
/// * [`Full`](Self::Full): `ida_alloc_range` returns `-ENOSPC`. The UAR, PD,
///   XRCD, MTPT and SRQ callers (`hns_roce_uar_alloc`, `hns_roce_alloc_pd`,
///   `hns_roce_xrcd_alloc`, `alloc_mr_key`, `alloc_srqn`) turn every IDA
///   error into `-ENOMEM`; `alloc_qpn` and `alloc_cqn` pass `-ENOSPC` up
///   unchanged (to `hns_roce_create_qp`/`hns_roce_create_cq`).
/// * [`Invalid`](Self::Invalid): a caller bug the C code cannot express
///   (storage too small, a range outside the storage, a bank id out of
///   range): `-EINVAL`.
/// * [`NotAllocated`](Self::NotAllocated): freeing an id that is not
///   allocated. `ida_free` only `WARN`s (it returns nothing); the kernel side
///   should warn and go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitmapError {
    /// No free id in the range (`-ENOSPC`, `-ENOMEM` for the IDA users).
    Full,
    /// Bad arguments or storage (`-EINVAL`).
    Invalid,
    /// The id to free is not allocated (`ida_free`'s `WARN`).
    NotAllocated,
}

/// Result type of this module.
pub type Result<T> = core::result::Result<T, BitmapError>;

/// `u32` to `usize`: lossless on every target the kernel supports.
fn to_usize(x: u32) -> usize {
    x as usize
}

/// Storage words for the ids `[min, max]`, `max` clamped to [`IDA_MAX`]
/// (0 for an empty range).
#[inline(never)]
fn span_words(min: u32, max: u32) -> usize {
    match span(min, max) {
        Some((lo, hi)) => to_usize((hi - lo) / 64) + 1,
        None => 0,
    }
}

/// The ids `[min, max]` an IDA can actually hand out: `max` clamped to
/// [`IDA_MAX`]; `None` if that is empty.
#[inline(never)]
fn span(min: u32, max: u32) -> Option<(u32, u32)> {
    let hi = if max > IDA_MAX { IDA_MAX } else { max };
    if min > hi {
        None
    } else {
        Some((min, hi))
    }
}

/// The ids `[base, top]` an allocator over `[min, max]` stores: [`span`],
/// or the empty `[1, 0]` (no id is inside it).
fn stored(min: u32, max: u32) -> (u32, u32) {
    span(min, max).unwrap_or((1, 0))
}

/// Sets and returns the lowest clear bit offset in `[lo, hi]` of `words`.
fn take_lowest(words: &mut [u64], lo: u32, hi: u32) -> Option<u32> {
    let (lo_w, hi_w) = (lo / 64, hi / 64);
    let mut w = lo_w;
    while w <= hi_w {
        let word = words.get_mut(to_usize(w))?;
        let mut busy = *word;
        if w == lo_w {
            // Bits below `lo` count as taken.
            busy |= (1u64 << (lo % 64)) - 1;
        }
        if w == hi_w {
            // Bits above `hi` count as taken.
            busy |= !(u64::MAX >> (63 - hi % 64));
        }
        if busy != u64::MAX {
            let bit = (!busy).trailing_zeros();
            *word |= 1u64 << bit;
            return Some(w * 64 + bit);
        }
        w += 1;
    }
    None
}

/// `ida_alloc_range(ida, min, max)` on an IDA whose storage covers the ids
/// `[base, top]` (`top <= IDA_MAX`).
fn ida_alloc_in(words: &mut [u64], base: u32, top: u32, min: u32, max: u32) -> Result<u32> {
    if min > IDA_MAX {
        return Err(BitmapError::Full);
    }
    let max = if max > IDA_MAX { IDA_MAX } else { max };
    if min > max {
        return Err(BitmapError::Full);
    }
    if min < base || max > top {
        return Err(BitmapError::Invalid);
    }
    take_lowest(words, min - base, max - base)
        .map(|off| off + base)
        .ok_or(BitmapError::Full)
}

/// `ida_free(ida, id)` on an IDA whose storage covers the ids `[base, top]`.
#[inline(never)]
fn ida_free_in(words: &mut [u64], base: u32, top: u32, id: u32) -> Result<()> {
    if id > IDA_MAX {
        // `if ((int)id < 0) return;`: silently ignored.
        return Ok(());
    }
    if id < base || id > top {
        return Err(BitmapError::NotAllocated);
    }
    let off = id - base;
    let word = words
        .get_mut(to_usize(off / 64))
        .ok_or(BitmapError::NotAllocated)?;
    let bit = 1u64 << (off % 64);
    if *word & bit == 0 {
        return Err(BitmapError::NotAllocated);
    }
    *word &= !bit;
    Ok(())
}

/// Whether `id` is allocated in an IDA whose storage covers `[base, top]`.
fn ida_test_in(words: &[u64], base: u32, top: u32, id: u32) -> bool {
    if id < base || id > top {
        return false;
    }
    let off = id - base;
    words
        .get(to_usize(off / 64))
        .is_some_and(|w| w & (1u64 << (off % 64)) != 0)
}

/// Frees `id` in bank `idx` of a banked allocator and drops its load.
#[inline(never)]
fn bank_free(
    banks: &mut [Bank],
    words: &mut [u64],
    stride: usize,
    idx: usize,
    id: u32,
) -> Result<()> {
    let bank = banks.get_mut(idx).ok_or(BitmapError::Invalid)?;
    let words = region(words, stride, idx)?;
    let (base, top) = stored(bank.min, bank.max);
    ida_free_in(words, base, top, id)?;
    bank.inuse = bank.inuse.wrapping_sub(1);
    Ok(())
}

/// Whether `id` of bank `idx` of a banked allocator is allocated.
fn bank_test(banks: &[Bank], words: &[u64], stride: usize, idx: usize, id: u32) -> bool {
    let (Some(bank), Some(words)) = (banks.get(idx), region_ref(words, stride, idx)) else {
        return false;
    };
    match span(bank.min, bank.max) {
        Some((base, top)) => ida_test_in(words, base, top, id),
        None => false,
    }
}

/// Words `[idx * stride, (idx + 1) * stride)` of `words`.
#[inline(never)]
fn region(words: &mut [u64], stride: usize, idx: usize) -> Result<&mut [u64]> {
    let start = idx.checked_mul(stride).ok_or(BitmapError::Invalid)?;
    let end = start.checked_add(stride).ok_or(BitmapError::Invalid)?;
    words.get_mut(start..end).ok_or(BitmapError::Invalid)
}

/// Shared-reference version of [`region`].
fn region_ref(words: &[u64], stride: usize, idx: usize) -> Option<&[u64]> {
    let start = idx.checked_mul(stride)?;
    words.get(start..start.checked_add(stride)?)
}

/// Clears the first `need` words of `words` (`ida_init`), or `Invalid` if
/// there are fewer.
fn init_words(words: &mut [u64], need: usize) -> Result<()> {
    words.get_mut(..need).ok_or(BitmapError::Invalid)?.fill(0);
    Ok(())
}

/// The `[min, max]` range of one `struct hns_roce_ida`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdRange {
    /// Lowest id to allocate.
    pub min: u32,
    /// Highest id to allocate (ids above [`IDA_MAX`] are never handed out).
    pub max: u32,
}

impl IdRange {
    /// The range `[min, max]`.
    pub const fn new(min: u32, max: u32) -> Self {
        Self { min, max }
    }

    /// The range the C init functions set up: `min = caps.reserved_X`,
    /// `max = caps.num_X - 1` in `u32` arithmetic (so `num == 0` wraps to
    /// `u32::MAX`, as in C).
    pub const fn from_count(reserved: u32, num: u32) -> Self {
        Self {
            min: reserved,
            max: num.wrapping_sub(1),
        }
    }

    /// Words of storage an [`Ida`] over this range needs (0 if the range is
    /// empty).
    pub fn words(&self) -> usize {
        span_words(self.min, self.max)
    }
}

/// One `struct hns_roce_ida`: an IDA over a fixed [`IdRange`].
pub struct Ida<S> {
    /// Bitmap of the ids `[range.min, min(range.max, IDA_MAX)]`.
    words: S,
    /// The range.
    range: IdRange,
}

impl<S: BorrowMut<[u64]>> Ida<S> {
    /// An empty IDA over `range` (`ida_init` plus setting `min`/`max`).
    /// `words` must hold at least `range.words()` words (else `Invalid`);
    /// those words are cleared.
    pub fn new(range: IdRange, mut words: S) -> Result<Self> {
        init_words(words.borrow_mut(), range.words())?;
        Ok(Self { words, range })
    }

    /// The range.
    pub fn range(&self) -> IdRange {
        self.range
    }

    /// `ida_alloc_range(&ida, min, max)` with the IDA's own range: the lowest
    /// free id, or `Full`.
    pub fn alloc(&mut self) -> Result<u32> {
        self.alloc_range(self.range.min, self.range.max)
    }

    /// `ida_alloc_range(&ida, min, max)`: the lowest free id in `[min, max]`.
    ///
    /// As in C: `Full` if `min > IDA_MAX`, `max` is clamped to `IDA_MAX`,
    /// then `Full` if `min > max` or every id in the range is taken. A
    /// non-empty range that reaches outside the IDA's own range is `Invalid`
    /// (the storage does not cover it; the C IDA is unbounded).
    pub fn alloc_range(&mut self, min: u32, max: u32) -> Result<u32> {
        // An empty range stores nothing: every non-empty request is
        // `Invalid` (an empty one is `Full`, as in C).
        let (base, top) = stored(self.range.min, self.range.max);
        ida_alloc_in(self.words.borrow_mut(), base, top, min, max)
    }

    /// `ida_free(&ida, id)`. Ids above [`IDA_MAX`] are ignored (`Ok`), as in
    /// C; an id that is not allocated is `NotAllocated`.
    pub fn free(&mut self, id: u32) -> Result<()> {
        // An empty range stores nothing: every id is "not allocated".
        let (base, top) = stored(self.range.min, self.range.max);
        ida_free_in(self.words.borrow_mut(), base, top, id)
    }

    /// Whether `id` is allocated.
    pub fn is_allocated(&self, id: u32) -> bool {
        match span(self.range.min, self.range.max) {
            Some((base, top)) => ida_test_in(self.words.borrow(), base, top, id),
            None => false,
        }
    }

    /// Whether no id is allocated (`ida_is_empty`).
    pub fn is_empty(&self) -> bool {
        let need = self.range.words();
        self.words
            .borrow()
            .get(..need)
            .is_none_or(|w| w.iter().all(|&x| x == 0))
    }

    /// Frees every id (`ida_destroy`).
    pub fn clear(&mut self) {
        let need = self.range.words();
        if let Some(w) = self.words.borrow_mut().get_mut(..need) {
            w.fill(0);
        }
    }
}

/// State of one bank (`struct hns_roce_bank` without the IDA).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bank {
    /// Ids in use, reserved ones included (`inuse`).
    pub inuse: u32,
    /// Lowest id to allocate: the number of reserved numbers in this bank
    /// (`min`).
    pub min: u32,
    /// Highest id to allocate: `num / BANK_NUM - 1` (`max`).
    pub max: u32,
    /// Where the next QP search starts (`next`; CQ banks leave it 0).
    pub next: u32,
}

/// The reserved numbers `0 .. reserved` that fall into bank `b` of
/// `bank_num` (the `min++`/`inuse++` loops of the init functions).
#[inline(never)]
fn reserved_in_bank(reserved: u32, b: u32, bank_num: u32) -> u32 {
    if reserved > b {
        (reserved - b - 1) / bank_num + 1
    } else {
        0
    }
}

/// Banks set up as `hns_roce_init_qp_table`/`hns_roce_init_cq_table` do,
/// and the storage stride (words per bank) they need.
#[inline(never)]
fn init_banks<const N: usize>(num: u32, reserved: u32) -> Result<([Bank; N], usize)> {
    let n = u32::try_from(N).map_err(|_| BitmapError::Invalid)?;
    let per_bank = num / n;
    if per_bank == 0 {
        // C would compute `max = 0 - 1` and hand out ids up to INT_MAX.
        return Err(BitmapError::Invalid);
    }
    let mut banks = [Bank::default(); N];
    let mut stride = 0;
    for (b, bank) in (0u32..).zip(banks.iter_mut()) {
        let min = reserved_in_bank(reserved, b, n);
        *bank = Bank {
            inuse: min,
            min,
            max: per_bank - 1,
            next: 0,
        };
        stride = stride.max(span_words(min, per_bank - 1));
    }
    Ok((banks, stride))
}

/// Words of storage [`QpBanks::new`] needs for these caps (0 if
/// `num_qps < 8`, which `new` rejects).
pub fn qp_bank_words(num_qps: u32, reserved_qps: u32) -> usize {
    match init_banks::<QP_BANK_NUM>(num_qps, reserved_qps) {
        Ok((_, stride)) => stride.saturating_mul(QP_BANK_NUM),
        Err(_) => 0,
    }
}

/// Words of storage [`CqBanks::new`] needs for these caps (0 if
/// `num_cqs < 4`, which `new` rejects).
pub fn cq_bank_words(num_cqs: u32, reserved_cqs: u32) -> usize {
    match init_banks::<CQ_BANK_NUM>(num_cqs, reserved_cqs) {
        Ok((_, stride)) => stride.saturating_mul(CQ_BANK_NUM),
        Err(_) => 0,
    }
}

/// The QP bank with affinity to the CQ bank a QP's send CQ is in
/// (`get_affinity_cq_bank`): QP banks `2c` and `2c + 1` go with CQ bank `c`.
pub const fn affinity_cq_bank(qp_bank: u8) -> u8 {
    (qp_bank >> 1) & 0x3
}

/// The bank of a QPN (`get_qp_bankid`).
pub const fn qp_bankid(qpn: u32) -> u8 {
    (qpn & QP_BANKID_MASK) as u8
}

/// The bank of a CQN (`get_cq_bankid`).
pub const fn cq_bankid(cqn: u32) -> u8 {
    (cqn & CQ_BANKID_MASK) as u8
}

/// Whether `caps.flags` has [`cap_flag::LIMIT_BANK`].
pub const fn limit_bank(flags: u32) -> bool {
    flags & cap_flag::LIMIT_BANK != 0
}

/// `use_ext_sge`: the QP needs extended SGEs when it has more than
/// [`SGE_IN_WQE`] send SGEs or is a UD or GSI QP.
pub const fn use_ext_sge(max_send_sge: u32, ud_or_gsi: bool) -> bool {
    max_send_sge > SGE_IN_WQE || ud_or_gsi
}

/// The banks `select_qp_bankid` may choose from: with a send CQ only the
/// two with affinity to its bank; with `limit_bank` and extended SGEs only
/// those in [`VALID_EXT_SGE_QP_BANK_MASK_LIMIT`]. May be 0 (e.g. a send CQ
/// in CQ bank 1 or 2 with both restrictions).
pub fn valid_qp_bank_mask(send_cqn: Option<u32>, limit_bank: bool, ext_sge: bool) -> u8 {
    let mut mask = 0u8;
    for i in 0..8u8 {
        if let Some(cqn) = send_cqn {
            if u32::from(affinity_cq_bank(i)) != cqn & CQ_BANKID_MASK {
                continue;
            }
        }
        if limit_bank && ext_sge && VALID_EXT_SGE_QP_BANK_MASK_LIMIT & (1 << i) == 0 {
            continue;
        }
        mask |= 1 << i;
    }
    mask
}

/// What `alloc_qpn` looks at in `ib_qp_init_attr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpnRequest {
    /// The QP is `IB_QPT_GSI`: it gets [`GSI_QPN`] and no bank is touched.
    pub gsi: bool,
    /// The CQN of `init_attr->send_cq`, if there is one.
    pub send_cqn: Option<u32>,
    /// `use_ext_sge(init_attr)` (see [`use_ext_sge`]).
    pub ext_sge: bool,
}

/// The QPN allocator (`hr_dev->qp_table.bank[]`, `hns_roce_qp.c`).
///
/// QPN `(id << 3) | b` is id `id` of bank `b`; bank `b` hands out ids in
/// `[min_b, num_qps / 8 - 1]` where `min_b` counts the reserved QPNs
/// (`< reserved_qps`) whose low 3 bits are `b`. Each bank searches from its
/// `next` cursor up to `max` first and only then from `min`, so a freed QPN
/// is not reused before the bank's cursor wraps.
pub struct QpBanks<S> {
    /// Bitmaps: bank `b` owns words `[b * stride, (b + 1) * stride)`, bit
    /// `i` being id `min_b + i`.
    words: S,
    /// Words per bank.
    stride: usize,
    /// Bank state.
    banks: [Bank; QP_BANK_NUM],
    /// `caps.reserved_qps`.
    reserved_qps: u32,
    /// `caps.flags & HNS_ROCE_CAP_FLAG_LIMIT_BANK`.
    limit_bank: bool,
}

impl<S: BorrowMut<[u64]>> QpBanks<S> {
    /// `hns_roce_init_qp_table`: each bank gets `min = inuse = ` its share
    /// of the `reserved_qps` lowest QPNs, `max = num_qps / 8 - 1` and
    /// `next = min`. `flags` is `caps.flags` (for [`cap_flag::LIMIT_BANK`]).
    ///
    /// `Invalid` if `words` is shorter than [`qp_bank_words`] or if
    /// `num_qps < 8` (where the C driver's `max` would wrap).
    pub fn new(mut words: S, num_qps: u32, reserved_qps: u32, flags: u32) -> Result<Self> {
        let (mut banks, stride) = init_banks::<QP_BANK_NUM>(num_qps, reserved_qps)?;
        for bank in banks.iter_mut() {
            bank.next = bank.min;
        }
        init_words(
            words.borrow_mut(),
            stride
                .checked_mul(QP_BANK_NUM)
                .ok_or(BitmapError::Invalid)?,
        )?;
        Ok(Self {
            words,
            stride,
            banks,
            reserved_qps,
            limit_bank: limit_bank(flags),
        })
    }

    /// A copy of bank `bankid`'s state.
    pub fn bank(&self, bankid: u8) -> Option<Bank> {
        self.banks.get(usize::from(bankid)).copied()
    }

    /// `select_qp_bankid`: the least-loaded bank (lowest `inuse`, the lowest
    /// bank on ties) among [`valid_qp_bank_mask`]; bank 0 if the mask is
    /// empty.
    pub fn select_bank(&self, send_cqn: Option<u32>, ext_sge: bool) -> u8 {
        let mask = valid_qp_bank_mask(send_cqn, self.limit_bank, ext_sge);
        let mut least_load = u32::MAX;
        let mut bankid = 0u8;
        for (i, bank) in (0u8..).zip(self.banks.iter()) {
            if mask & (1 << i) == 0 {
                continue;
            }
            if bank.inuse < least_load {
                least_load = bank.inuse;
                bankid = i;
            }
        }
        bankid
    }

    /// `alloc_qpn_with_bankid` plus the `inuse++` of `alloc_qpn`: the lowest
    /// free id in `[next, max]`, else in `[min, max]`; `next` becomes
    /// `id + 1` (or `min` past `max`). Returns the QPN `(id << 3) | bankid`.
    ///
    /// `Full` when the bank is full, `Invalid` for `bankid >= 8`.
    pub fn alloc_in_bank(&mut self, bankid: u8) -> Result<u32> {
        let idx = usize::from(bankid);
        let bank = self.banks.get_mut(idx).ok_or(BitmapError::Invalid)?;
        let words = region(self.words.borrow_mut(), self.stride, idx)?;
        let (base, top) = stored(bank.min, bank.max);
        let id = match ida_alloc_in(words, base, top, bank.next, bank.max) {
            Ok(id) => id,
            Err(_) => ida_alloc_in(words, base, top, bank.min, bank.max)?,
        };
        bank.next = match id.checked_add(1) {
            Some(n) if n <= bank.max => n,
            _ => bank.min,
        };
        bank.inuse = bank.inuse.wrapping_add(1);
        Ok((id << QP_BANKID_SHIFT) | u32::from(bankid))
    }

    /// `alloc_qpn`: [`GSI_QPN`] for a GSI QP, else a QPN from
    /// [`Self::select_bank`]'s bank (see [`Self::alloc_in_bank`]).
    pub fn alloc(&mut self, req: QpnRequest) -> Result<u32> {
        if req.gsi {
            return Ok(GSI_QPN);
        }
        let bankid = self.select_bank(req.send_cqn, req.ext_sge);
        self.alloc_in_bank(bankid)
    }

    /// `free_qpn`: nothing for a GSI QP or a reserved QPN
    /// (`qpn < reserved_qps`), else `ida_free` of `qpn / 8` in bank
    /// `qpn & 7` and `inuse--`.
    ///
    /// A QPN that is not allocated is `NotAllocated` and changes nothing
    /// (C `WARN`s in `ida_free` and still decrements `inuse`).
    pub fn free(&mut self, qpn: u32, gsi: bool) -> Result<()> {
        if gsi || qpn < self.reserved_qps {
            return Ok(());
        }
        let idx = usize::from(qp_bankid(qpn));
        bank_free(
            &mut self.banks,
            self.words.borrow_mut(),
            self.stride,
            idx,
            qpn >> QP_BANKID_SHIFT,
        )
    }

    /// Whether `qpn` is allocated from a bank (reserved QPNs and the GSI QPN
    /// never are).
    pub fn is_allocated(&self, qpn: u32) -> bool {
        let idx = usize::from(qp_bankid(qpn));
        bank_test(
            &self.banks,
            self.words.borrow(),
            self.stride,
            idx,
            qpn >> QP_BANKID_SHIFT,
        )
    }
}

/// The CQN allocator (`hr_dev->cq_table`, `hns_roce_cq.c`).
///
/// CQN `(id << 2) | b` is id `id` of bank `b`; bank `b` hands out the
/// lowest free id in `[min_b, num_cqs / 4 - 1]` where `min_b` counts the
/// reserved CQNs (`< reserved_cqs`) whose low 2 bits are `b`. On HIP09 a
/// kernel CQ always comes from bank 0 and a user CQ from its context's bank
/// (spread over the valid banks by `ctx_num`); on HIP08 every CQ comes from
/// the least-loaded bank.
pub struct CqBanks<S> {
    /// Bitmaps: bank `b` owns words `[b * stride, (b + 1) * stride)`, bit
    /// `i` being id `min_b + i`.
    words: S,
    /// Words per bank.
    stride: usize,
    /// Bank state.
    banks: [Bank; CQ_BANK_NUM],
    /// User contexts per bank (`ctx_num`).
    ctx_num: [u32; CQ_BANK_NUM],
    /// Banks user contexts may get (`valid_cq_bank_mask`).
    valid_mask: u8,
    /// Revision of the engine.
    rev: HwRev,
}

impl<S: BorrowMut<[u64]>> CqBanks<S> {
    /// `hns_roce_init_cq_table`: each bank gets `min = inuse = ` its share
    /// of the `reserved_cqs` lowest CQNs and `max = num_cqs / 4 - 1`; the
    /// valid user-context banks are [`VALID_CQ_BANK_MASK_LIMIT`] if `flags`
    /// has [`cap_flag::LIMIT_BANK`], else [`VALID_CQ_BANK_MASK_DEFAULT`].
    /// `rev` is the engine's revision.
    ///
    /// `Invalid` if `words` is shorter than [`cq_bank_words`] or if
    /// `num_cqs < 4` (where the C driver's `max` would wrap).
    pub fn new(
        mut words: S,
        num_cqs: u32,
        reserved_cqs: u32,
        flags: u32,
        rev: HwRev,
    ) -> Result<Self> {
        let (banks, stride) = init_banks::<CQ_BANK_NUM>(num_cqs, reserved_cqs)?;
        init_words(
            words.borrow_mut(),
            stride
                .checked_mul(CQ_BANK_NUM)
                .ok_or(BitmapError::Invalid)?,
        )?;
        Ok(Self {
            words,
            stride,
            banks,
            ctx_num: [0; CQ_BANK_NUM],
            valid_mask: if limit_bank(flags) {
                VALID_CQ_BANK_MASK_LIMIT
            } else {
                VALID_CQ_BANK_MASK_DEFAULT
            },
            rev,
        })
    }

    /// A copy of bank `bankid`'s state.
    pub fn bank(&self, bankid: u8) -> Option<Bank> {
        self.banks.get(usize::from(bankid)).copied()
    }

    /// User contexts assigned to bank `bankid` (`ctx_num[bankid]`).
    pub fn ctx_num(&self, bankid: u8) -> Option<u32> {
        self.ctx_num.get(usize::from(bankid)).copied()
    }

    /// The banks user contexts may get (`valid_cq_bank_mask`).
    pub fn valid_bank_mask(&self) -> u8 {
        self.valid_mask
    }

    /// `hns_roce_get_cq_bankid_for_uctx`: on HIP09, the valid bank with the
    /// fewest user contexts (lowest bank on ties), whose count goes up. On
    /// HIP08 nothing is counted and the context keeps bank 0 (its zeroed
    /// `cq_bank_id`).
    pub fn get_bank_for_uctx(&mut self) -> u8 {
        if !self.rev.is_hip09() {
            return 0;
        }
        let mut least_load = u32::MAX;
        let mut bankid = 0u8;
        for (i, &n) in (0u8..).zip(self.ctx_num.iter()) {
            if self.valid_mask & (1 << i) == 0 {
                continue;
            }
            if n < least_load {
                least_load = n;
                bankid = i;
            }
        }
        if let Some(n) = self.ctx_num.get_mut(usize::from(bankid)) {
            *n = n.wrapping_add(1);
        }
        bankid
    }

    /// `hns_roce_put_cq_bankid_for_uctx`: on HIP09, one user context fewer
    /// in `bankid`; nothing on HIP08.
    ///
    /// `Invalid` for `bankid >= 4` or a count already 0 (C would index out
    /// of bounds or wrap the count).
    pub fn put_bank_for_uctx(&mut self, bankid: u8) -> Result<()> {
        if !self.rev.is_hip09() {
            return Ok(());
        }
        let n = self
            .ctx_num
            .get_mut(usize::from(bankid))
            .ok_or(BitmapError::Invalid)?;
        *n = n.checked_sub(1).ok_or(BitmapError::Invalid)?;
        Ok(())
    }

    /// `get_least_load_bankid_for_cq`: the bank with the lowest `inuse`,
    /// the lowest bank on ties.
    pub fn least_load_bank(&self) -> u8 {
        let mut bankid = 0u8;
        let mut least_load = self.banks.first().map_or(u32::MAX, |b| b.inuse);
        for (i, bank) in (0u8..).zip(self.banks.iter()).skip(1) {
            if bank.inuse < least_load {
                least_load = bank.inuse;
                bankid = i;
            }
        }
        bankid
    }

    /// `select_cq_bankid`: on HIP09 the user context's bank (`user_bank`,
    /// from [`Self::get_bank_for_uctx`]) or bank 0 for a kernel CQ
    /// (`None`); on HIP08 [`Self::least_load_bank`].
    pub fn select_bank(&self, user_bank: Option<u8>) -> u8 {
        if self.rev.is_hip09() {
            user_bank.unwrap_or(0)
        } else {
            self.least_load_bank()
        }
    }

    /// `alloc_cqn`: the lowest free id in `[min, max]` of
    /// [`Self::select_bank`]'s bank, `inuse++`, and the CQN
    /// `(id << 2) | bankid`.
    ///
    /// `Full` when that bank is full (other banks are not tried), `Invalid`
    /// for a user bank `>= 4`.
    pub fn alloc(&mut self, user_bank: Option<u8>) -> Result<u32> {
        let bankid = self.select_bank(user_bank);
        let idx = usize::from(bankid);
        let bank = self.banks.get_mut(idx).ok_or(BitmapError::Invalid)?;
        let words = region(self.words.borrow_mut(), self.stride, idx)?;
        let (base, top) = stored(bank.min, bank.max);
        let id = ida_alloc_in(words, base, top, bank.min, bank.max)?;
        bank.inuse = bank.inuse.wrapping_add(1);
        Ok((id << CQ_BANKID_SHIFT) | u32::from(bankid))
    }

    /// `free_cqn`: `ida_free` of `cqn >> 2` in bank `cqn & 3` and `inuse--`.
    ///
    /// A CQN that is not allocated (reserved CQNs included: C does not
    /// filter them) is `NotAllocated` and changes nothing (C `WARN`s in
    /// `ida_free` and still decrements `inuse`).
    pub fn free(&mut self, cqn: u32) -> Result<()> {
        let idx = usize::from(cq_bankid(cqn));
        bank_free(
            &mut self.banks,
            self.words.borrow_mut(),
            self.stride,
            idx,
            cqn >> CQ_BANKID_SHIFT,
        )
    }

    /// Whether `cqn` is allocated.
    pub fn is_allocated(&self, cqn: u32) -> bool {
        let idx = usize::from(cq_bankid(cqn));
        bank_test(
            &self.banks,
            self.words.borrow(),
            self.stride,
            idx,
            cqn >> CQ_BANKID_SHIFT,
        )
    }
}
