// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The object tables the event handlers look CQs, QPs and SRQs up in (C's
//! `cq_table.array`, `qp_table_xa` and `srq_table.xa`), and the reference
//! an event handler holds while it runs a consumer's handler.
//!
//! The consumer's `comp_handler` or `event_handler` runs without any of
//! the driver's locks: a ULP may poll, arm or modify its objects from
//! there. What keeps the object alive meanwhile is a counted reference
//! taken under the table lock ([`ObjTable::with`]); removing an entry
//! ([`ObjTable::remove`]) waits until no handler holds one (C's
//! `refcount` and `free` completion), so the `ib_*` object the core frees
//! after `destroy` is not used afterwards, and the last reference of the
//! object never goes in the handler's context (a CQ's is DMA memory).
//!
//! An entry is inserted hidden and becomes reachable by
//! [`ObjTable::publish`], once the object is complete: its `ib_*` object
//! knows the driver's object (the shim's container pointer), so that a
//! consumer reached by an early event (a late CEQE or AEQE for a number
//! just reused) finds a whole object.

use crate::rdma::SpinLockIrq;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{Arc, Completion},
};

/// Who uses a table entry: the table itself and the handlers running on
/// its object.
#[pin_data]
struct Users {
    /// 1 while the entry is in the table, plus one per handler holding a
    /// reference from [`ObjTable::with`].
    count: AtomicU32,
    /// Whether lookups find the entry ([`ObjTable::publish`]).
    live: AtomicBool,
    /// Completed when `count` reaches 0 after the entry left the table.
    #[pin]
    idle: Completion,
}

impl Users {
    /// Drops one use; the last one wakes the remover.
    fn put(&self) {
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle.complete_all();
        }
    }
}

/// A table entry: the object and its users.
pub(crate) struct Slot<T> {
    obj: Arc<T>,
    users: Arc<Users>,
}

/// The map inside an [`ObjTable`]'s lock, for the lock's initialiser.
pub(crate) type SlotMap<T> = RBTree<u32, Slot<T>>;

/// Objects of one kind by number (masked to the table's size).
#[pin_data]
pub(crate) struct ObjTable<T> {
    mask: u32,
    #[pin]
    map: SpinLockIrq<SlotMap<T>>,
}

/// The entries of a table while its lock is held ([`ObjTable::locked`]).
pub(crate) struct Locked<'a, T>(&'a SlotMap<T>);

impl<'a, T> Locked<'a, T> {
    /// Every object in the table, published or not, in number order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a T> + 'a {
        self.0.values().map(|s| &*s.obj)
    }
}

impl<T: Send + Sync> ObjTable<T> {
    /// An empty table for `num` (a power of two, or 0) objects. `map` is
    /// the lock's initialiser (`new_spinlock_irq!` with an empty
    /// tree), so that each table has a lock class of its own.
    pub(crate) fn new(num: u32, map: impl PinInit<SpinLockIrq<SlotMap<T>>>) -> impl PinInit<Self> {
        pin_init!(ObjTable {
            mask: num.wrapping_sub(1),
            map <- map,
        })
    }

    /// Adds `obj` as number `n`, not yet found by lookups.
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    pub(crate) fn insert(&self, n: u32, obj: Arc<T>) -> Result {
        let users = Arc::pin_init(
            pin_init!(Users {
                count: AtomicU32::new(1),
                live: AtomicBool::new(false),
                idle <- Completion::new(),
            }),
            GFP_KERNEL,
        )?;
        let node = RBTreeNode::new(n & self.mask, Slot { obj, users }, GFP_KERNEL)?;
        let old = self.map.lock().insert(node);
        drop(old);
        Ok(())
    }

    /// Makes entry `n` reachable: its object is complete.
    #[inline(never)]
    pub(crate) fn publish(&self, n: u32) {
        if let Some(s) = self.map.lock().get(&(n & self.mask)) {
            s.users.live.store(true, Ordering::Release);
        }
    }

    /// Takes entry `n` out and waits until no handler holds its object.
    /// Sleeps: never from a handler of this table.
    pub(crate) fn remove(&self, n: u32) {
        let old = self.map.lock().remove(&(n & self.mask));
        if let Some(s) = old {
            s.users.live.store(false, Ordering::Relaxed);
            if s.users.count.fetch_sub(1, Ordering::AcqRel) != 1 {
                s.users.idle.wait_for_completion();
            }
        }
    }

    /// The entry of `n` if it is published, under the lock.
    fn live<'a>(map: &'a SlotMap<T>, key: u32) -> Option<&'a Slot<T>> {
        map.get(&key)
            .filter(|s| s.users.live.load(Ordering::Acquire))
    }

    /// Runs `f` on object `n` without the table lock, holding a counted
    /// reference that [`ObjTable::remove`] waits for; `None` if `n` is
    /// not (or not yet) in the table.
    pub(crate) fn with<R>(&self, n: u32, f: impl FnOnce(&T) -> R) -> Option<R> {
        let (obj, users) = {
            let map = self.map.lock();
            let s = Self::live(&map, n & self.mask)?;
            s.users.count.fetch_add(1, Ordering::Relaxed);
            (s.obj.clone(), s.users.clone())
        };
        let r = f(&obj);
        // The object's reference goes before the count: the remover, woken
        // by the last count, keeps the last reference to the object.
        drop(obj);
        users.put();
        Some(r)
    }

    /// Runs `f` on every published object in number order, each as
    /// [`ObjTable::with`] does (the lock is not held while `f` runs).
    pub(crate) fn for_each(&self, mut f: impl FnMut(&T)) {
        let mut next = 0u32;
        loop {
            let (key, taken) = {
                let map = self.map.lock();
                let Some(c) = map.cursor_lower_bound(&next) else {
                    return;
                };
                let (k, s) = c.current();
                let taken = s.users.live.load(Ordering::Acquire).then(|| {
                    s.users.count.fetch_add(1, Ordering::Relaxed);
                    (s.obj.clone(), s.users.clone())
                });
                (*k, taken)
            };
            if let Some((obj, users)) = taken {
                f(&obj);
                drop(obj);
                users.put();
            }
            match key.checked_add(1) {
                Some(k) => next = k,
                None => return,
            }
        }
    }

    /// A reference to published object `n`, not counted: only for
    /// objects whose last reference may go in any context.
    pub(crate) fn get(&self, n: u32) -> Option<Arc<T>> {
        Self::live(&self.map.lock(), n & self.mask).map(|s| s.obj.clone())
    }

    /// Runs `f` on the entries with the table lock held.
    pub(crate) fn locked<R>(&self, f: impl FnOnce(Locked<'_, T>) -> R) -> R {
        let map = self.map.lock();
        f(Locked(&map))
    }
}
