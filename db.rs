// SPDX-License-Identifier: GPL-2.0

//! Record doorbells of kernel queues (`hns_roce_alloc_db`): 4-byte records
//! in shared DMA pages the engine reads producer/consumer indexes from.
//!
//! Same placement as the C driver: a page holds `PAGE_SIZE / 4` records,
//! handed out in pairs (order 1) or singly (order 0, splitting a pair and
//! keeping its buddy for the next single request). A [`Db`] gives its
//! record back when it drops, so every owner (and every error path of the
//! owner's creation) returns what it took.
//!
//! Records of user queues live in the process's memory
//! (`hns_roce_db_map_user`): each user context has a [`UserDbPages`], which
//! pins a page of records once, however many queues use records in it, and
//! unpins it when the last [`UserDb`] in it drops.

use crate::{
    device::Ucontext,
    rdma::{Umem, UmemDev},
};
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::io_write,
    new_mutex,
    prelude::*,
    sync::{Arc, ArcBorrow, Mutex}, //
};

/// Bytes per record.
const DB_UNIT_SIZE: usize = 4;

/// One page of records with its free maps.
struct DbPage {
    /// Shared with the [`Db`]s of its records, which store through it.
    mem: Arc<Coherent<[u32]>>,
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
            mem: Arc::new(
                Coherent::<u32>::zeroed_slice(dev, n, GFP_KERNEL)?,
                GFP_KERNEL,
            )?,
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

/// The pages and the count of records handed out, under one lock.
struct Pages {
    list: KVec<DbPage>,
    /// Records (either order) handed out and not given back yet.
    in_use: usize,
}

/// What the records of a function share: their pages.
#[pin_data]
struct Pool {
    #[pin]
    pages: Mutex<Pages>,
}

/// A record doorbell: where it is for the CPU and for the engine. Dropping
/// it gives the record back to its pages.
///
/// # Invariants
///
/// `index < mem.len()`: the record is word `index` of `mem`, the DMA
/// memory of page `page` of `pool`; `dma` is its bus address. Pages are
/// never removed from a pool, and the `Db` holds its page's memory and its
/// pool alive.
pub(crate) struct Db {
    pool: Arc<Pool>,
    page: usize,
    index: usize,
    order: u32,
    mem: Arc<Coherent<[u32]>>,
    /// Bus address of the record.
    pub(crate) dma: u64,
}

impl Db {
    /// Stores `v` in the record, where the engine reads it: one
    /// little-endian 32-bit store. Inlined: `post_recv` and the CQ poll
    /// store a record on every call, and the call cost more than the store.
    #[inline(always)]
    pub(crate) fn set(&self, v: u32) {
        /// The checked store of word `i` of `mem`.
        #[inline(always)]
        fn store(mem: &Coherent<[u32]>, i: usize, v: u32) -> Result {
            io_write!(mem, [try: i], v.to_le());
            Ok(())
        }
        // Cannot fail: `index < mem.len()` (type invariant).
        let _ = store(&self.mem, self.index, v);
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let mut pages = self.pool.pages.lock();
        if let Some(pg) = pages.list.get_mut(self.page) {
            pg.give(self.index, self.order);
        }
        pages.in_use -= 1;
    }
}

/// The record pages of a function (`hns_roce_alloc_db` and
/// `hns_roce_free_db`): records are taken with [`DbPages::alloc`] and given
/// back when their [`Db`] drops. Pages stay until the last record and this
/// handle are gone.
pub(crate) struct DbPages {
    pool: Arc<Pool>,
}

impl DbPages {
    /// No pages yet.
    pub(crate) fn new() -> Result<Self> {
        let pool = Arc::pin_init(
            pin_init!(Pool {
                pages <- new_mutex!(Pages {
                    list: KVec::new(),
                    in_use: 0,
                }),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self { pool })
    }

    /// A record of `order` (0: one record, 1: two adjacent ones), zeroed.
    pub(crate) fn alloc(&self, dev: &Device<Bound>, order: u32) -> Result<Db> {
        let mut pages = self.pool.pages.lock();
        let found = pages
            .list
            .iter_mut()
            .enumerate()
            .find_map(|(p, pg)| pg.take(order).map(|i| (p, i)));
        let (page, index) = match found {
            Some(x) => x,
            None => {
                let mut pg = DbPage::new(dev)?;
                let i = pg.take(order).ok_or(ENOMEM)?;
                pages.list.push(pg, GFP_KERNEL)?;
                (pages.list.len() - 1, i)
            }
        };
        let pg = pages.list.get(page).ok_or(EINVAL)?;
        // `index` is below the page's record count (`take`); checked again.
        io_write!(&*pg.mem, [try: index], 0u32);
        let mem = pg.mem.clone();
        // CAST: an index within one page.
        let dma = pg.mem.dma_address() + (index * DB_UNIT_SIZE) as u64;
        pages.in_use += 1;
        // INVARIANT: `index < mem.len()` (the store above), `mem` is page
        // `page` of `pool`.
        Ok(Db {
            pool: self.pool.clone(),
            page,
            index,
            order,
            mem,
            dma,
        })
    }

    /// Records handed out and not given back yet.
    pub(crate) fn in_use(&self) -> usize {
        self.pool.pages.lock().in_use
    }

    /// A handle that reads the record count (for debugfs).
    pub(crate) fn records(&self) -> DbRecords {
        DbRecords(self.pool.clone())
    }
}

/// Reads how many records of a function are handed out; keeps the pages
/// (not the function's other resources) alive.
pub(crate) struct DbRecords(Arc<Pool>);

impl DbRecords {
    /// Records handed out and not given back yet.
    pub(crate) fn in_use(&self) -> usize {
        self.0.pages.lock().in_use
    }
}

impl Drop for DbPages {
    /// The function goes: every object holding a record must be gone, so
    /// a record still out is a leak. Say so (the guest plans check for this
    /// line); the pages themselves stay until that record drops.
    #[inline(never)]
    fn drop(&mut self) {
        let n = self.in_use();
        if n != 0 {
            pr_err!("{} record doorbell(s) not given back at removal\n", n);
        }
    }
}

/// One pinned page of user records and how many [`UserDb`]s use it.
struct UserPage {
    /// The page's user address.
    virt: u64,
    /// The pinned page.
    umem: Umem,
    /// Records mapped from it and not dropped yet.
    users: usize,
}

/// The record pages of one user context (C: the ucontext's `page_list`
/// under `page_mutex`), part of the context's state ([`crate::device::Ucontext`]),
/// which each [`UserDb`] holds a reference to.
#[pin_data]
pub(crate) struct UserDbPages {
    #[pin]
    pages: Mutex<KVec<UserPage>>,
}

impl UserDbPages {
    /// No page pinned yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(UserDbPages {
            pages <- new_mutex!(KVec::new()),
        })
    }

    /// The record at user address `virt` (`hns_roce_db_map_user`): pins
    /// its page (read-only for the device: it reads records) unless a
    /// record of the same page is mapped already, and returns the record's
    /// bus address in a [`UserDb`], which keeps the page pinned until it
    /// drops.
    ///
    /// # Errors
    ///
    /// The errno of pinning the page (`EFAULT` for an unmapped address,
    /// `ENOMEM`), or `ENOMEM`.
    pub(crate) fn map(
        uctx: ArcBorrow<'_, Ucontext>,
        pin: UmemDev<'_>,
        virt: u64,
    ) -> Result<UserDb> {
        // CAST: PAGE_SIZE is 4 KiB..64 KiB.
        let page_size = kernel::page::PAGE_SIZE as u64;
        let page_virt = virt & !(page_size - 1);
        let mut pages = uctx.dbs.pages.lock();
        let i = match pages.iter().position(|p| p.virt == page_virt) {
            Some(i) => i,
            None => {
                pages.reserve(1, GFP_KERNEL)?;
                let umem = pin.pin(page_virt, page_size, 0)?;
                // Within the capacity reserved above: no growth path.
                pages.push_within_capacity(UserPage {
                    virt: page_virt,
                    umem,
                    users: 0,
                })?;
                pages.len() - 1
            }
        };
        let p = pages.get_mut(i).ok_or(EINVAL)?;
        p.users += 1;
        let dma = p.umem.first_page_dma() + (virt - page_virt);
        drop(pages);
        Ok(UserDb {
            uctx: uctx.into(),
            page_virt,
            // CAST: below PAGE_SIZE.
            offset: (virt - page_virt) as usize,
            dma,
        })
    }
}

/// A user record doorbell mapped by [`UserDbPages::map`]; dropping it
/// unpins its page if it was the page's last record
/// (`hns_roce_db_unmap_user`).
pub(crate) struct UserDb {
    uctx: Arc<Ucontext>,
    page_virt: u64,
    /// Byte offset of the record in its page.
    offset: usize,
    /// Bus address of the record, for the context.
    pub(crate) dma: u64,
}

impl UserDb {
    /// The record's value as the process wrote it last (C reads it through
    /// the kernel mapping of the pinned page, e.g. the SQ and RQ heads a
    /// user QP is flushed to); 0 if it cannot be read.
    pub(crate) fn read(&self) -> u32 {
        let pages = self.uctx.dbs.pages.lock();
        pages
            .iter()
            .find(|p| p.virt == self.page_virt)
            .and_then(|p| p.umem.read_first_page_u32(self.offset))
            .unwrap_or(0)
    }
}

impl Drop for UserDb {
    fn drop(&mut self) {
        let mut pages = self.uctx.dbs.pages.lock();
        let Some(i) = pages.iter().position(|p| p.virt == self.page_virt) else {
            return;
        };
        let last = match pages.get_mut(i) {
            Some(p) => {
                p.users = p.users.saturating_sub(1);
                p.users == 0
            }
            None => false,
        };
        if last {
            // The umem is released (the page unpinned) here, under the
            // lock, as in C.
            let _ = pages.remove(i);
        }
    }
}
