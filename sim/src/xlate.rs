// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Address translation of the data path: buffers described by a root base
//! address table (a QP's WQE buffer, a CQ's CQE buffer, an MR's page list)
//! and memory keys (lkey/rkey → MPT → PBL → DMA address).
//!
//! Buffer layout as the driver builds it (C `hns_roce_mtr_create`,
//! `mtr_init_buf_cfg`, `hns_roce_hem_list_request`; our driver's `hem.rs`
//! "MtrLayout" section): the buffer is split into up to three regions (a QP:
//! SQ WQEs, extended SGEs, RQ WQEs, each aligned to 4 KiB), each cut into
//! pages of `buf_pg_shift`. The root BT lists, region after region: for a
//! hop-1 region its page addresses, for a hop-2 region one L1 BT page per
//! `unit` pages (`unit` = BT page / 8), for a hop-3 region one L1 page per
//! `unit²` pages whose entries point at L2 pages. An MTR whose regions are
//! all hop 0 is one contiguous buffer at the root address.

use crate::field::Ctx;
use crate::hw_v2_fields::{mpt, Mpt};
use crate::mem::{BadDma, Dma};
use std::fmt;

/// Why an address could not be translated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XlateError {
    /// The offset is past the last region.
    OutOfBuffer {
        /// Byte offset in the buffer.
        offset: u64,
    },
    /// A hop-0 region next to BT-mapped regions whose context gives no
    /// current block address, or a hop above 3.
    Unsupported,
    /// A BT entry holds 0.
    EmptyEntry,
    /// A BT read left guest RAM.
    Dma(BadDma),
    /// An MR page the MPT does not describe: its index is past
    /// `PBL_SIZE`, or `PBL_HOP_NUM` is too small for `PBL_SIZE` pages (the
    /// walk would read a data page as a page list, or run past the one
    /// page a hop-0 MPT names).
    BadPage {
        /// Page index in the MR.
        page: u64,
        /// `PBL_SIZE`.
        pages: u64,
        /// `PBL_HOP_NUM`.
        hop: u32,
    },
}

impl fmt::Display for XlateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XlateError::OutOfBuffer { offset } => write!(f, "offset {offset:#x} past the buffer"),
            XlateError::Unsupported => write!(f, "unsupported buffer layout"),
            XlateError::EmptyEntry => write!(f, "BT entry is 0"),
            XlateError::Dma(e) => write!(f, "{e}"),
            XlateError::BadPage { page, pages, hop } => write!(
                f,
                "page {page} of an MPT with PBL_SIZE {pages} and PBL_HOP_NUM {hop}"
            ),
        }
    }
}

impl From<BadDma> for XlateError {
    fn from(e: BadDma) -> Self {
        XlateError::Dma(e)
    }
}

/// One region: bytes and hop number (0..=3, 0 = direct).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// Size in bytes (already aligned as the driver aligns it).
    pub size: u64,
    /// Hop number as written in the context (0 = no BT).
    pub hop: u32,
    /// Where a hop-0 region starts in an MTR whose other regions have BTs
    /// (the context's current block address of the region: the driver
    /// keeps such a region's page list in a BT the engine is not told
    /// about, so the region is read contiguously from its first page); 0
    /// when the context has none.
    pub base: u64,
}

/// A buffer described by a root BT.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mtr {
    /// Root BT address (or the buffer itself when every region is hop 0).
    pub root: u64,
    /// BT page size: `1 << ba_shift` bytes.
    pub ba_shift: u32,
    /// Buffer page size: `1 << buf_shift` bytes.
    pub buf_shift: u32,
    /// The regions in buffer order.
    pub regions: Vec<Region>,
}

impl Mtr {
    /// Entries per BT page.
    fn unit(&self) -> u64 {
        (1u64 << self.ba_shift) / 8
    }

    /// Pages of a region of `size` bytes.
    fn pages(&self, size: u64) -> u64 {
        size.div_ceil(1u64 << self.buf_shift)
    }

    /// Root entries a region of hop `hop` and `pages` pages takes.
    fn root_entries(&self, hop: u32, pages: u64) -> u64 {
        match hop {
            0 => 0,
            h => {
                let per = (1..h).fold(1u64, |p, _| p.saturating_mul(self.unit()));
                pages.div_ceil(per.max(1))
            }
        }
    }

    /// DMA address of byte `offset` of the buffer.
    pub fn addr(&self, mem: &impl Dma, offset: u64) -> Result<u64, XlateError> {
        if self.regions.iter().all(|r| r.hop == 0) {
            let total: u64 = self.regions.iter().map(|r| r.size).sum();
            if offset >= total {
                return Err(XlateError::OutOfBuffer { offset });
            }
            return Ok(self.root + offset);
        }
        let (mut start, mut root_idx) = (0u64, 0u64);
        for r in &self.regions {
            let pages = self.pages(r.size);
            if offset < start + r.size {
                let rel = offset - start;
                let page = rel >> self.buf_shift;
                let inner = rel & ((1u64 << self.buf_shift) - 1);
                let unit = self.unit();
                let base = match r.hop {
                    1 => self.entry(mem, self.root, root_idx + page)?,
                    2 => {
                        let l1 = self.entry(mem, self.root, root_idx + page / unit)?;
                        self.entry(mem, l1, page % unit)?
                    }
                    3 => {
                        let l1 = self.entry(mem, self.root, root_idx + page / (unit * unit))?;
                        let l2 = self.entry(mem, l1, (page / unit) % unit)?;
                        self.entry(mem, l2, page % unit)?
                    }
                    // No BT the engine knows: contiguous from the region's
                    // current block.
                    0 if r.base != 0 => return Ok(r.base + rel),
                    _ => return Err(XlateError::Unsupported),
                };
                return Ok(base + inner);
            }
            start += r.size;
            root_idx += self.root_entries(r.hop, pages);
        }
        Err(XlateError::OutOfBuffer { offset })
    }

    fn entry(&self, mem: &impl Dma, bt: u64, idx: u64) -> Result<u64, XlateError> {
        let v = mem.read_u64(bt + 8 * idx)?;
        if v == 0 {
            return Err(XlateError::EmptyEntry);
        }
        Ok(v)
    }

    /// Copies `buf.len()` bytes from buffer offset `offset`, page by page.
    pub fn read(&self, mem: &impl Dma, offset: u64, buf: &mut [u8]) -> Result<(), XlateError> {
        let mut done = 0usize;
        while done < buf.len() {
            let off = offset + done as u64;
            let room = (1u64 << self.buf_shift) - (off & ((1u64 << self.buf_shift) - 1));
            let n = (buf.len() - done).min(room as usize);
            let a = self.addr(mem, off)?;
            mem.read(a, &mut buf[done..done + n])?;
            done += n;
        }
        Ok(())
    }
}

/// MPT states (`V2_MPT_ST_*`).
pub const MPT_ST_VALID: u32 = 1;
/// Free: a fast-register MR before FAST_REG_PMR or after an invalidate.
pub const MPT_ST_FREE: u32 = 2;

fn mpt_ctx(b: &[u8; 64]) -> Ctx<Mpt, 16> {
    Ctx::from_bytes(b)
}

fn mpt_store(c: &Ctx<Mpt, 16>, b: &mut [u8; 64]) {
    for (i, x) in c.as_le_words().iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&x.to_ne_bytes());
    }
}

/// FAST_REG_PMR on an MPT image: state valid, the WQE's key, access,
/// length, IOVA, PBL base address, PBL size and buffer page size; the
/// rest (PD, `FRE`, `R_INV_EN`, hop number, BT page size) stays as
/// `hns_roce_v2_frmr_write_mtpt` wrote it.
pub fn mpt_fast_reg(b: &mut [u8; 64], f: &crate::wqe::FrmrWqe) {
    let mut c = mpt_ctx(b);
    c.write(mpt::ST, MPT_ST_VALID);
    c.write(mpt::LKEY, f.key);
    c.write_bool(mpt::LW_EN, f.lw);
    c.write_bool(mpt::RW_EN, f.rw);
    c.write_bool(mpt::RR_EN, f.rr);
    c.write_bool(mpt::ATOMIC_EN, f.atomic);
    c.write(mpt::LEN_L, f.len as u32);
    c.write(mpt::LEN_H, (f.len >> 32) as u32);
    c.write(mpt::PBL_SIZE, f.pbl_size);
    // `MPT_VA` (287:224) is two whole words.
    let mut w = *c.as_le_words();
    w[7] = f.va as u32;
    w[8] = (f.va >> 32) as u32;
    let mut c = Ctx::from_le_words(w);
    c.write(mpt::PBL_BA_L, (f.pbl_ba >> 3) as u32);
    c.write(mpt::PBL_BA_H, (f.pbl_ba >> 35) as u32);
    c.write(mpt::PBL_BUF_PG_SZ, f.buf_pg_sz);
    mpt_store(&c, b);
}

/// LOCAL_INV / SEND_WITH_INV on an MPT image: state back to free.
pub fn mpt_invalidate(b: &mut [u8; 64]) {
    let mut c = mpt_ctx(b);
    c.write(mpt::ST, MPT_ST_FREE);
    mpt_store(&c, b);
}

/// The access a data segment or remote request needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Local read (gather for SEND/WRITE): always allowed.
    LocalRead,
    /// Local write (receive buffers, READ responses): `LW_EN`.
    LocalWrite,
    /// Remote write: `RW_EN`.
    RemoteWrite,
    /// Remote read: `RR_EN`.
    RemoteRead,
    /// Remote atomic: `ATOMIC_EN`.
    RemoteAtomic,
}

/// Why a memory key check failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// No valid MPT for the key (index not mapped, state not valid, or the
    /// stored key differs).
    BadKey,
    /// The MR's PD is not the QP's.
    PdMismatch,
    /// The MR does not grant the access.
    NoAccess,
    /// The range leaves the MR.
    OutOfRange,
    /// Translation through the page list failed.
    Xlate(XlateError),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::BadKey => write!(f, "no valid MPT for the key"),
            KeyError::PdMismatch => write!(f, "MR PD differs from the QP's"),
            KeyError::NoAccess => write!(f, "MR does not grant the access"),
            KeyError::OutOfRange => write!(f, "range outside the MR"),
            KeyError::Xlate(e) => write!(f, "page list: {e}"),
        }
    }
}

/// A decoded MPT entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MptEntry {
    /// `ST`.
    pub state: u32,
    /// `PD`.
    pub pd: u32,
    /// `PA`: the key addresses DMA addresses directly (kernel DMA MR).
    pub pa: bool,
    /// `LW_EN`.
    pub lw: bool,
    /// `RW_EN`.
    pub rw: bool,
    /// `RR_EN`.
    pub rr: bool,
    /// `ATOMIC_EN`.
    pub atomic: bool,
    /// `FRE`: a fast-register MR (`hns_roce_v2_frmr_write_mtpt`).
    pub fre: bool,
    /// `R_INV_EN`: SEND_WITH_INV may invalidate it.
    pub r_inv: bool,
    /// The key (`LKEY`).
    pub key: u32,
    /// Start virtual address.
    pub va: u64,
    /// Length in bytes.
    pub len: u64,
    /// `PBL_HOP_NUM`.
    pub pbl_hop: u32,
    /// PBL root (`PBL_BA << 3`), the page itself for hop 0.
    pub pbl_ba: u64,
    /// PBL BT page shift (`12 + PBL_BA_PG_SZ`).
    pub pbl_ba_shift: u32,
    /// Buffer page shift (`12 + PBL_BUF_PG_SZ`).
    pub buf_shift: u32,
    /// First page (`PA0 << 6`).
    pub pa0: u64,
    /// Second page (`PA1 << 6`).
    pub pa1: u64,
    /// `INNER_PA_VLD`: `PA0`/`PA1` hold the first two pages.
    pub inner_pa: bool,
    /// `PBL_SIZE`: pages in the page list.
    pub npages: u64,
}

impl MptEntry {
    /// Decodes the 64-byte entry.
    pub fn from_bytes(b: &[u8; 64]) -> Self {
        let c: Ctx<Mpt, 16> = Ctx::from_bytes(b);
        let word = |i: usize| u64::from(c.word(i));
        MptEntry {
            state: c.read(mpt::ST),
            pd: c.read(mpt::PD),
            pa: c.read_bool(mpt::PA),
            lw: c.read_bool(mpt::LW_EN),
            rw: c.read_bool(mpt::RW_EN),
            rr: c.read_bool(mpt::RR_EN),
            atomic: c.read_bool(mpt::ATOMIC_EN),
            fre: c.read_bool(mpt::FRE),
            r_inv: c.read_bool(mpt::R_INV_EN),
            key: c.read(mpt::LKEY),
            va: word(7) | word(8) << 32,
            len: u64::from(c.read(mpt::LEN_L)) | u64::from(c.read(mpt::LEN_H)) << 32,
            pbl_hop: c.read(mpt::PBL_HOP_NUM),
            pbl_ba: (u64::from(c.read(mpt::PBL_BA_L)) | u64::from(c.read(mpt::PBL_BA_H)) << 32)
                << 3,
            pbl_ba_shift: 12 + c.read(mpt::PBL_BA_PG_SZ),
            buf_shift: 12 + c.read(mpt::PBL_BUF_PG_SZ),
            pa0: (u64::from(c.read(mpt::PA0_L)) | u64::from(c.read(mpt::PA0_H)) << 32) << 6,
            pa1: (u64::from(c.read(mpt::PA1_L)) | u64::from(c.read(mpt::PA1_H)) << 32) << 6,
            inner_pa: c.read_bool(mpt::INNER_PA_VLD),
            npages: u64::from(c.read(mpt::PBL_SIZE)),
        }
    }

    /// Index of the MPT a key names (`key_to_hw_index` without the low
    /// byte, which fast-register ULPs bump with `ib_update_fast_reg_key`).
    pub fn index(key: u32) -> u32 {
        key >> 8
    }

    /// Checks a use of the MR: key, PD, access and range.
    pub fn check(
        &self,
        key: u32,
        pd: u32,
        va: u64,
        len: u64,
        access: Access,
    ) -> Result<(), KeyError> {
        if self.state != MPT_ST_VALID || self.key != key {
            return Err(KeyError::BadKey);
        }
        if self.pd != pd {
            return Err(KeyError::PdMismatch);
        }
        let ok = match access {
            Access::LocalRead => true,
            Access::LocalWrite => self.lw,
            Access::RemoteWrite => self.rw,
            Access::RemoteRead => self.rr,
            Access::RemoteAtomic => self.atomic,
        };
        if !ok {
            return Err(KeyError::NoAccess);
        }
        if self.pa {
            // A DMA MR covers everything (length 0, no check).
            return Ok(());
        }
        let end = va.checked_add(len).ok_or(KeyError::OutOfRange)?;
        if va < self.va || end > self.va.saturating_add(self.len) {
            return Err(KeyError::OutOfRange);
        }
        Ok(())
    }

    /// The DMA pieces covering `len` bytes at virtual address `va` (already
    /// checked), split at page boundaries.
    pub fn pieces(&self, mem: &impl Dma, va: u64, len: u64) -> Result<Vec<(u64, u64)>, KeyError> {
        if self.pa {
            return Ok(if len == 0 { vec![] } else { vec![(va, len)] });
        }
        let pg = 1u64 << self.buf_shift;
        let base = self.va & !(pg - 1);
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut off = va - base;
        let mut left = len;
        while left > 0 {
            let n = left.min(pg - (off & (pg - 1)));
            let a = self.page(mem, off >> self.buf_shift)? + (off & (pg - 1));
            match out.last_mut() {
                Some((pa, pl)) if *pa + *pl == a => *pl += n,
                _ => out.push((a, n)),
            }
            off += n;
            left -= n;
        }
        Ok(out)
    }

    /// DMA address of page `page` of the MR (pages of `buf_shift`, page 0
    /// holding `VA`).
    ///
    /// With `INNER_PA_VLD` the first two pages come from `PA0`/`PA1` in the
    /// MPT itself, whatever the page list says: the C driver writes them
    /// for every PBL MR (`set_mtpt_pbl`), and its re-registration keeps
    /// the old `PBL_HOP_NUM` when the new page list was built with another
    /// one (docs/c-driver-findings.md), so a 2-page MR re-registered from a
    /// 1-page one reads hop 0 with two pages that are not contiguous. From
    /// the third page on the page list is walked with `PBL_HOP_NUM`; a page
    /// past `PBL_SIZE`, or a hop number that cannot describe `PBL_SIZE`
    /// pages (hop 0 with more than one page, hop 1 with more than one BT
    /// page of entries, ...), is refused instead of guessed
    /// ([`XlateError::BadPage`]): hardware would DMA to whatever that walk
    /// finds.
    pub fn page(&self, mem: &impl Dma, page: u64) -> Result<u64, KeyError> {
        let bad = KeyError::Xlate(XlateError::BadPage {
            page,
            pages: self.npages,
            hop: self.pbl_hop,
        });
        if page >= self.npages.max(1) {
            return Err(bad);
        }
        if self.inner_pa && page < 2 {
            let a = if page == 0 { self.pa0 } else { self.pa1 };
            return if a == 0 { Err(bad) } else { Ok(a) };
        }
        let unit = (1u64 << self.pbl_ba_shift) / 8;
        let reach = match self.pbl_hop {
            0 => 1,
            h => (0..h).fold(1u64, |p, _| p.saturating_mul(unit)),
        };
        if self.npages > reach {
            return Err(bad);
        }
        let pg = 1u64 << self.buf_shift;
        let pbl = Mtr {
            root: if self.pbl_hop == 0 {
                self.pa0
            } else {
                self.pbl_ba
            },
            ba_shift: self.pbl_ba_shift,
            buf_shift: self.buf_shift,
            regions: vec![Region {
                size: self.npages.max(1) * pg,
                hop: self.pbl_hop,
                base: 0,
            }],
        };
        pbl.addr(mem, page * pg).map_err(KeyError::Xlate)
    }

    /// Every page of the MR (`PBL_SIZE` of them, at most `limit`): the
    /// memory the MR maps, for the engine's live-DMA bookkeeping. Pages
    /// that cannot be translated are left out.
    ///
    /// The same pages [`MptEntry::page`] gives one by one, but each BT page
    /// is read once: a user MR of hop 3 has millions of pages, and this runs
    /// inside the mailbox command that made the MPT.
    pub fn all_pages(&self, mem: &impl Dma, limit: u64) -> Vec<u64> {
        let n = self.npages.min(limit);
        let first = if self.inner_pa { n.min(2) } else { 0 };
        let mut out: Vec<u64> = (0..first).filter_map(|p| self.page(mem, p).ok()).collect();
        if first >= n || self.page(mem, first).is_err() && self.pbl_hop == 0 {
            return out;
        }
        let unit = (1u64 << self.pbl_ba_shift) / 8;
        let hop = self.pbl_hop;
        let reach = match hop {
            0 => 1,
            h => (0..h).fold(1u64, |p, _| p.saturating_mul(unit)),
        };
        if self.npages > reach || hop > 3 {
            return out;
        }
        if hop == 0 {
            out.extend((first..n).map(|p| self.pa0 + (p << self.buf_shift)));
            return out;
        }
        // Per level, the BT page read last: its address and entries.
        let mut cache: [(u64, Vec<u64>); 3] = Default::default();
        let mut entry = |lvl: usize, bt: u64, i: u64| -> Option<u64> {
            let (at, ents) = &mut cache[lvl];
            if *at != bt || ents.is_empty() {
                let mut b = vec![0u8; (unit * 8) as usize];
                *ents = match mem.read(bt, &mut b) {
                    Ok(()) => b
                        .chunks_exact(8)
                        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                        .collect(),
                    // Past the end of guest RAM (a short root): one entry.
                    Err(_) => return mem.read_u64(bt + 8 * i).ok().filter(|&v| v != 0),
                };
                *at = bt;
            }
            ents.get(i as usize).copied().filter(|&v| v != 0)
        };
        'pages: for p in first..n {
            let mut bt = self.pbl_ba;
            for lvl in 0..hop {
                let span = (lvl + 1..hop).fold(1u64, |s, _| s * unit);
                let i = if lvl == 0 {
                    p / span
                } else {
                    (p / span) % unit
                };
                match entry(lvl as usize, bt, i) {
                    Some(v) => bt = v,
                    None => continue 'pages,
                }
            }
            out.push(bt);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::VecMem;

    fn put(mem: &VecMem, at: u64, v: u64) {
        mem.write(at, &v.to_le_bytes()).unwrap();
    }

    #[test]
    fn qp_buffer_three_regions() {
        // A user QP as libhns lays it out: SQ 128 WQEs x 64 B = 8 KiB (hop 2),
        // ext SGE 256 x 16 B = 4 KiB (hop 1), RQ 128 x 16 B = 2 KiB -> 4 KiB
        // (hop 2); 4 KiB pages and BT pages. Root entries: [L1 of SQ, SGE
        // page, L1 of RQ] (hem_list: hop-1 pages in the root, one entry per
        // L1 page of a hop-2 region, region after region).
        let mem = VecMem::new(1 << 20);
        let (root, l1_sq, l1_rq) = (0x1000u64, 0x2000u64, 0x3000u64);
        put(&mem, root, l1_sq);
        put(&mem, root + 8, 0x9000);
        put(&mem, root + 16, l1_rq);
        put(&mem, l1_sq, 0x5000);
        put(&mem, l1_sq + 8, 0x7000);
        put(&mem, l1_rq, 0xb000);
        let m = Mtr {
            root,
            ba_shift: 12,
            buf_shift: 12,
            regions: vec![
                Region {
                    size: 8192,
                    hop: 2,
                    base: 0,
                },
                Region {
                    size: 4096,
                    hop: 1,
                    base: 0,
                },
                Region {
                    size: 4096,
                    hop: 2,
                    base: 0,
                },
            ],
        };
        // SQ WQE 0 and 65 (second page, slot 1).
        assert_eq!(m.addr(&mem, 0).unwrap(), 0x5000);
        assert_eq!(m.addr(&mem, 65 * 64).unwrap(), 0x7000 + 64);
        // Ext SGE 3 at 8192 + 48.
        assert_eq!(m.addr(&mem, 8192 + 48).unwrap(), 0x9000 + 48);
        // RQ WQE 2 at 12288 + 32.
        assert_eq!(m.addr(&mem, 12288 + 32).unwrap(), 0xb000 + 32);
        assert_eq!(
            m.addr(&mem, 16384),
            Err(XlateError::OutOfBuffer { offset: 16384 })
        );
        // A read that crosses the SQ's page boundary.
        mem.write(0x5000 + 4094, &[1, 2]).unwrap();
        mem.write(0x7000, &[3, 4]).unwrap();
        let mut b = [0u8; 4];
        m.read(&mem, 4094, &mut b).unwrap();
        assert_eq!(b, [1, 2, 3, 4]);
    }

    #[test]
    fn all_pages_walks_hop3_as_page_does() {
        // 4 KiB BT pages (512 entries): 512 * 512 + 3 pages of hop 3, the
        // pages' addresses made up from their index.
        let mem = VecMem::new(8 << 20);
        let (root, unit) = (0x1000u64, 512u64);
        let n = unit * unit + 3;
        let mut next_bt = 0x2000u64;
        let mut l1 = [0u64; 2];
        for (j, l) in l1.iter_mut().enumerate() {
            *l = next_bt;
            next_bt += 0x1000;
            put(&mem, root + 8 * j as u64, *l);
        }
        let mut l2_of = std::collections::HashMap::new();
        for p in 0..n {
            let k = p / unit;
            let l2 = *l2_of.entry(k).or_insert_with(|| {
                let a = next_bt;
                next_bt += 0x1000;
                put(&mem, l1[(k / unit) as usize] + 8 * (k % unit), a);
                a
            });
            put(&mem, l2 + 8 * (p % unit), 0x1_0000_0000 + (p << 12));
        }
        let mut b = [0u8; 64];
        let mut c = mpt_ctx(&b);
        c.write(mpt::PBL_HOP_NUM, 3);
        c.write(mpt::PBL_SIZE, n as u32);
        c.write(mpt::PBL_BA_L, (root >> 3) as u32);
        mpt_store(&c, &mut b);
        let m = MptEntry::from_bytes(&b);
        let want: Vec<u64> = (0..n).filter_map(|p| m.page(&mem, p).ok()).collect();
        assert_eq!(want.len() as u64, n);
        assert_eq!(m.all_pages(&mem, u64::MAX), want);
        assert_eq!(m.all_pages(&mem, 5), want[..5].to_vec());
    }

    #[test]
    fn hop0_region_beside_bt_regions() {
        // SQ hop 3 (root[0] -> L1 -> L2 -> page), SGE hop 0 (no root
        // entry: contiguous from its current block), RQ hop 1 (root[1]).
        let mem = VecMem::new(1 << 20);
        let (root, l1, l2) = (0x1000u64, 0x2000u64, 0x3000u64);
        put(&mem, root, l1);
        put(&mem, root + 8, 0xb000);
        put(&mem, l1, l2);
        put(&mem, l2, 0x5000);
        let mut m = Mtr {
            root,
            ba_shift: 12,
            buf_shift: 12,
            regions: vec![
                Region {
                    size: 4096,
                    hop: 3,
                    base: 0,
                },
                Region {
                    size: 4096,
                    hop: 0,
                    base: 0x9000,
                },
                Region {
                    size: 4096,
                    hop: 1,
                    base: 0,
                },
            ],
        };
        assert_eq!(m.addr(&mem, 64).unwrap(), 0x5000 + 64);
        assert_eq!(m.addr(&mem, 4096 + 48).unwrap(), 0x9000 + 48);
        assert_eq!(m.addr(&mem, 8192 + 16).unwrap(), 0xb000 + 16);
        // No current block in the context: not translatable.
        m.regions[1].base = 0;
        assert_eq!(m.addr(&mem, 4096), Err(XlateError::Unsupported));
    }

    #[test]
    fn direct_and_hop3() {
        let mem = VecMem::new(1 << 20);
        let d = Mtr {
            root: 0x4000,
            ba_shift: 12,
            buf_shift: 12,
            regions: vec![Region {
                size: 8192,
                hop: 0,
                base: 0,
            }],
        };
        assert_eq!(d.addr(&mem, 5000).unwrap(), 0x4000 + 5000);
        // Hop 3 with 4 KiB BT pages (512 entries): page 512*512 + 513 =
        // root[1] -> L1[1] -> L2[1].
        let (root, l1, l2) = (0x1000u64, 0x2000u64, 0x3000u64);
        put(&mem, root + 8, l1);
        put(&mem, l1 + 8, l2);
        put(&mem, l2 + 8, 0x8_0000);
        let m = Mtr {
            root,
            ba_shift: 12,
            buf_shift: 12,
            regions: vec![Region {
                size: 1 << 40,
                hop: 3,
                base: 0,
            }],
        };
        let page = 512u64 * 512 + 513;
        assert_eq!(m.addr(&mem, page * 4096 + 7).unwrap(), 0x8_0000 + 7);
        // An entry never filled in.
        assert_eq!(m.addr(&mem, 0), Err(XlateError::EmptyEntry));
    }

    /// An MPT as hns_roce_v2_write_mtpt builds it, by hand: valid, PD 5,
    /// LW+RW, key 0x300, VA 0x7f00_0000_1800, 8 KiB, PBL hop `hop`.
    fn mpt_bytes(hop: u32, pbl_ba: u64, pa0: u64, pa: bool) -> [u8; 64] {
        let mut w = [0u32; 16];
        w[0] = 1 | hop << 2 | 5 << 8; // ST, PBL_HOP_NUM, PD
        w[1] = 1 << 6 | 1 << 7; // RW_EN, LW_EN
        w[2] = u32::from(pa) << 1;
        w[4] = 0x2000; // LEN_L
        w[6] = 0x300; // LKEY
        w[7] = 0x0000_1800; // VA low
        w[8] = 0x7f00; // VA high
        w[9] = 3; // PBL_SIZE
        w[10] = (pbl_ba >> 3) as u32;
        w[11] = (pbl_ba >> 35) as u32;
        w[12] = (pa0 >> 6) as u32;
        w[13] = (pa0 >> 38) as u32;
        let mut b = [0u8; 64];
        for (i, x) in w.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        b
    }

    #[test]
    fn mpt_fast_reg_and_invalidate() {
        // hns_roce_v2_frmr_write_mtpt: ST free (2), PBL_HOP_NUM 1, PD 5,
        // RA_EN (32), R_INV_EN (33), FRE (64), BPD (69), PBL_SIZE 4,
        // PBL_BA 0x8000 >> 3.
        let mut w = [0u32; 16];
        w[0] = 2 | 1 << 2 | 5 << 8;
        w[1] = 0b11;
        w[2] = 1 | 1 << 5;
        w[9] = 4;
        w[10] = 0x8000 >> 3;
        let mut b = [0u8; 64];
        for (i, x) in w.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        let m = MptEntry::from_bytes(&b);
        assert_eq!((m.state, m.fre, m.r_inv), (MPT_ST_FREE, true, true));
        let f = crate::wqe::FrmrWqe {
            key: 0x307,
            pbl_ba: 0x1_0000_9000,
            len: 0x1_0000_0000,
            va: 0x7f00_0000_1000,
            pbl_size: 2,
            buf_pg_sz: 1,
            atomic: false,
            rr: true,
            rw: false,
            lw: true,
        };
        mpt_fast_reg(&mut b, &f);
        // Expected words from the MPT_* bit positions of hw_v2.h.
        let mut x = w;
        x[0] = 1 | 1 << 2 | 5 << 8; // ST valid
        x[1] = 0b11 | 1 << 5 | 1 << 7; // RR_EN (37), LW_EN (39)
        x[4] = 0; // LEN_L
        x[5] = 1; // LEN_H
        x[6] = 0x307; // LKEY
        x[7] = 0x1000; // VA
        x[8] = 0x7f00;
        x[9] = 2; // PBL_SIZE
        x[10] = (0x1_0000_9000u64 >> 3) as u32; // PBL_BA_L
        x[11] = 0; // PBL_BA_H (bits 380:352): 0x1_0000_9000 >> 35 = 0
        x[15] = 1 << 28; // PBL_BUF_PG_SZ (511:508)
        let got: Vec<u32> = (0..16)
            .map(|i| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]))
            .collect();
        assert_eq!(got, x.to_vec());
        let m = MptEntry::from_bytes(&b);
        assert_eq!(
            (m.len, m.va, m.buf_shift, m.pbl_ba),
            (1 << 32, 0x7f00_0000_1000, 13, 0x1_0000_9000)
        );
        assert_eq!(MptEntry::index(0x307), 3);
        mpt_invalidate(&mut b);
        x[0] = 2 | 1 << 2 | 5 << 8;
        assert_eq!(u32::from_le_bytes([b[0], b[1], b[2], b[3]]), x[0]);
        assert_eq!(
            MptEntry::from_bytes(&b).check(0x307, 5, 0x7f00_0000_1000, 8, Access::LocalRead),
            Err(KeyError::BadKey)
        );
    }

    #[test]
    fn mpt_decode_and_checks() {
        let m = MptEntry::from_bytes(&mpt_bytes(1, 0x1000, 0x5000, false));
        assert_eq!(
            (m.state, m.pd, m.key, m.va, m.len),
            (1, 5, 0x300, 0x7f00_0000_1800, 0x2000)
        );
        assert!(m.lw && m.rw && !m.rr && !m.atomic && !m.pa);
        assert_eq!((m.pbl_hop, m.pbl_ba, m.pa0), (1, 0x1000, 0x5000));
        let va = 0x7f00_0000_1800u64;
        assert_eq!(m.check(0x300, 5, va, 0x2000, Access::LocalWrite), Ok(()));
        assert_eq!(
            m.check(0x301, 5, va, 1, Access::LocalRead),
            Err(KeyError::BadKey)
        );
        assert_eq!(
            m.check(0x300, 4, va, 1, Access::LocalRead),
            Err(KeyError::PdMismatch)
        );
        assert_eq!(
            m.check(0x300, 5, va, 1, Access::RemoteRead),
            Err(KeyError::NoAccess)
        );
        assert_eq!(
            m.check(0x300, 5, va - 1, 2, Access::LocalRead),
            Err(KeyError::OutOfRange)
        );
        assert_eq!(
            m.check(0x300, 5, va, 0x2001, Access::LocalRead),
            Err(KeyError::OutOfRange)
        );
    }

    #[test]
    fn mpt_pieces_through_one_and_two_hop_pbls() {
        let mem = VecMem::new(1 << 20);
        // The MR starts 0x800 into its first 4 KiB page; pages: 0x10000,
        // 0x20000, 0x21000 (the last two contiguous).
        let pbl = 0x1000u64;
        put(&mem, pbl, 0x10000);
        put(&mem, pbl + 8, 0x20000);
        put(&mem, pbl + 16, 0x21000);
        let m = MptEntry::from_bytes(&mpt_bytes(1, pbl, 0x10000, false));
        let va = 0x7f00_0000_1800u64;
        // 0x1000 bytes from 0x...1f00: 0x100 in page 0, 0xf00 in page 1.
        assert_eq!(
            m.pieces(&mem, va + 0x700, 0x1000).unwrap(),
            vec![(0x10f00, 0x100), (0x20000, 0xf00)]
        );
        // Pages 1 and 2 merge into one piece.
        assert_eq!(
            m.pieces(&mem, va + 0x800, 0x1800).unwrap(),
            vec![(0x20000, 0x1800)]
        );
        // The same pages behind a 2-hop PBL: root[0] -> L1.
        let (root, l1) = (0x3000u64, 0x4000u64);
        put(&mem, root, l1);
        put(&mem, l1, 0x10000);
        put(&mem, l1 + 8, 0x20000);
        put(&mem, l1 + 16, 0x21000);
        let m2 = MptEntry::from_bytes(&mpt_bytes(2, root, 0x10000, false));
        assert_eq!(
            m2.pieces(&mem, va + 0x700, 0x1000).unwrap(),
            vec![(0x10f00, 0x100), (0x20000, 0xf00)]
        );
        // Hop 0: one page at PA0.
        let mut b0 = mpt_bytes(0, 0x10000, 0x10000, false);
        b0[36..40].copy_from_slice(&1u32.to_le_bytes()); // PBL_SIZE 1
        let m0 = MptEntry::from_bytes(&b0);
        assert_eq!(m0.pieces(&mem, va, 0x10).unwrap(), vec![(0x10800, 0x10)]);
        // A DMA MR (PA) is identity translation without length check.
        let d = MptEntry::from_bytes(&mpt_bytes(0, 0, 0, true));
        assert_eq!(
            d.check(0x300, 5, 0x12_3456, 1 << 20, Access::LocalWrite),
            Ok(())
        );
        assert_eq!(
            d.pieces(&mem, 0x12_3456, 100).unwrap(),
            vec![(0x12_3456, 100)]
        );
    }

    /// The MPT the C driver wrote for `ibv_rereg_mr(CHANGE_TRANSLATION)` of
    /// pyverbs' `test_mr_rereg_addr` (hns-sim trace, CREATE_MPT tag 3): a
    /// 1 KiB MR moved from a page-aligned buffer (one page, PBL hop 0) to
    /// one crossing a page boundary (two pages, a hop-1 page list), but
    /// `PBL_HOP_NUM` is still 0 (`hns_roce_v2_rereg_write_mtpt` does not
    /// rewrite it). `INNER_PA_VLD` with `PA0`/`PA1` name both pages, which
    /// are not contiguous.
    const REREG_MPT: [u32; 16] = [
        0x0000_0401,
        0x0000_0080,
        0x0000_0080,
        0,
        0x0000_0400,
        0,
        0x0000_0300,
        0x3456_2cc0,
        0,
        0x0000_0002,
        0x0112_9200,
        0,
        0x01ff_25c0,
        0,
        0x01ff_2200,
        0,
    ];

    fn mpt_from_words(w: &[u32; 16]) -> MptEntry {
        let mut b = [0u8; 64];
        for (i, x) in w.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        MptEntry::from_bytes(&b)
    }

    #[test]
    fn reregistered_mr_takes_its_first_two_pages_from_the_mpt() {
        let mem = VecMem::new(1 << 16);
        let m = mpt_from_words(&REREG_MPT);
        assert!(m.inner_pa);
        assert_eq!((m.pbl_hop, m.npages), (0, 2));
        let va = 0x3456_2cc0u64;
        assert_eq!(m.check(0x300, 4, va, 0x400, Access::LocalWrite), Ok(()));
        // 0x340 bytes to the rest of PA0's page, 0xc0 to PA1's: not to the
        // page after PA0 (what reading hop 0 as "contiguous" gave: guest
        // memory of somebody else).
        assert_eq!(
            m.pieces(&mem, va, 0x400).unwrap(),
            vec![(0x7fc9_7cc0, 0x340), (0x7fc8_8000, 0xc0)]
        );
        assert_eq!(m.all_pages(&mem, 16), vec![0x7fc9_7000, 0x7fc8_8000]);
    }

    #[test]
    fn pages_the_mpt_cannot_describe_are_refused() {
        let mem = VecMem::new(1 << 16);
        // The same MPT grown to three pages with hop 0 still: pages 0 and 1
        // come from PA0/PA1, page 2 has no page list that hop 0 could name.
        let mut w = REREG_MPT;
        w[4] = 0x2400;
        w[9] = 3;
        let m = mpt_from_words(&w);
        assert_eq!(m.page(&mem, 1), Ok(0x7fc8_8000));
        assert_eq!(
            m.page(&mem, 2),
            Err(KeyError::Xlate(XlateError::BadPage {
                page: 2,
                pages: 3,
                hop: 0
            }))
        );
        // Past PBL_SIZE.
        assert!(matches!(
            m.page(&mem, 3),
            Err(KeyError::Xlate(XlateError::BadPage { .. }))
        ));
    }
}
