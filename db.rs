// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Record doorbells of kernel queues (`hns_roce_alloc_db`): 4-byte records
//! in shared DMA pages the engine reads producer/consumer indexes from.
//!
//! Same placement as the C driver: a page holds `PAGE_SIZE / 4` records,
//! handed out in pairs (order 1) or singly (order 0, splitting a pair and
//! keeping its buddy for the next single request).

use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    new_mutex,
    prelude::*,
    sync::Mutex, //
};

/// Bytes per record.
const DB_UNIT_SIZE: usize = 4;

/// One page of records with its free maps.
struct DbPage {
    mem: Coherent<[u32]>,
    /// Free single records (buddies of split pairs).
    order0: KVec<bool>,
    /// Free pairs.
    order1: KVec<bool>,
}

impl DbPage {
    fn new(dev: &Device<Bound>) -> Result<Self> {
        // CAST: PAGE_SIZE is 4 KiB..64 KiB.
        let n = kernel::page::PAGE_SIZE / DB_UNIT_SIZE;
        let mut order0 = KVec::new();
        order0.resize(n, false, GFP_KERNEL)?;
        let mut order1 = KVec::new();
        order1.resize(n / 2, true, GFP_KERNEL)?;
        Ok(Self {
            mem: Coherent::<u32>::zeroed_slice(dev, n, GFP_KERNEL)?,
            order0,
            order1,
        })
    }

    /// A record index of `order`, if the page has one.
    fn take(&mut self, order: u32) -> Option<usize> {
        if order == 0 {
            if let Some(i) = self.order0.iter().position(|f| *f) {
                *self.order0.get_mut(i)? = false;
                return Some(i);
            }
        }
        let p = self.order1.iter().position(|f| *f)?;
        *self.order1.get_mut(p)? = false;
        let i = p << 1;
        if order == 0 {
            *self.order0.get_mut(i ^ 1)? = true;
        }
        Some(i)
    }

    /// Returns record `i` of `order`, merging buddies back into pairs.
    fn give(&mut self, i: usize, order: u32) {
        let mut i = i;
        if order == 0 {
            if self.order0.get(i ^ 1).copied() == Some(true) {
                if let Some(b) = self.order0.get_mut(i ^ 1) {
                    *b = false;
                }
                i &= !1;
            } else {
                if let Some(f) = self.order0.get_mut(i) {
                    *f = true;
                }
                return;
            }
        }
        if let Some(f) = self.order1.get_mut(i >> 1) {
            *f = true;
        }
    }
}

/// A record doorbell: where it is for the CPU and for the engine.
///
/// # Invariants
///
/// `cpu` points to the record inside a page of the [`DbPages`] that made
/// it. Pages are never freed before the `DbPages` (their DMA memory does not
/// move when the page list grows), and every `Db` is handed back with
/// [`DbPages::free`] before its `DbPages` goes, so `cpu` stays valid for the
/// `Db`'s life.
pub(crate) struct Db {
    page: usize,
    index: usize,
    order: u32,
    cpu: core::ptr::NonNull<u32>,
    /// Bus address of the record.
    pub(crate) dma: u64,
}

// SAFETY: the record is plain DMA memory written with volatile stores
// (`set`); nothing in it is tied to a thread.
unsafe impl Send for Db {}
// SAFETY: as above; concurrent `set` calls are single aligned stores.
unsafe impl Sync for Db {}

impl Db {
    /// Stores `v` in the record, where the engine reads it.
    pub(crate) fn set(&self, v: u32) {
        // SAFETY: `cpu` is valid (type invariant) and 4-byte aligned.
        unsafe { self.cpu.as_ptr().write_volatile(v.to_le()) }
    }
}

/// The record pages of a function.
#[pin_data]
pub(crate) struct DbPages {
    #[pin]
    pages: Mutex<KVec<DbPage>>,
}

impl DbPages {
    /// No pages yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            pages <- new_mutex!(KVec::new()),
        })
    }

    /// A record of `order` (0: one record, 1: two adjacent ones), zeroed.
    pub(crate) fn alloc(&self, dev: &Device<Bound>, order: u32) -> Result<Db> {
        let mut pages = self.pages.lock();
        let found = pages
            .iter_mut()
            .enumerate()
            .find_map(|(p, pg)| pg.take(order).map(|i| (p, i)));
        let (page, index) = match found {
            Some(x) => x,
            None => {
                let mut pg = DbPage::new(dev)?;
                let i = pg.take(order).ok_or(ENOMEM)?;
                pages.push(pg, GFP_KERNEL)?;
                (pages.len() - 1, i)
            }
        };
        let pg = pages.get(page).ok_or(EINVAL)?;
        // SAFETY: `index` is below the page's record count (`take`).
        let rec = unsafe { pg.mem.as_mut_ptr().cast::<u32>().add(index) };
        // SAFETY: `rec` is inside the page (above).
        unsafe { rec.write_volatile(0) };
        let cpu = core::ptr::NonNull::new(rec).ok_or(EINVAL)?;
        // CAST: an index within one page.
        let dma = pg.mem.dma_address() + (index * DB_UNIT_SIZE) as u64;
        // INVARIANT: `cpu` is the record in page `page`, which stays.
        Ok(Db {
            page,
            index,
            order,
            cpu,
            dma,
        })
    }

    /// Returns a record. Pages stay until the function goes.
    pub(crate) fn free(&self, db: Db) {
        if let Some(pg) = self.pages.lock().get_mut(db.page) {
            pg.give(db.index, db.order);
        }
    }
}
