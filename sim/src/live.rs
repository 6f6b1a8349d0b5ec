// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! What the function's live objects map: the pages of every valid MR (from
//! its MPT when it became valid) and of every CQ's CQE buffer (from its
//! CQC). The engine checks each of its writes into guest memory against
//! the object it writes for, so a model bug that would DMA to memory that
//! is not, or no longer, the object's (a stale translation, a page the MPT
//! does not describe, a destroyed CQ) is refused, logged and counted
//! (`bad DMA` in the `data:` line of hns-sim.log; `make check` fails on a
//! count other than 0) instead of silently corrupting the guest.
//!
//! EQEs are not checked here: the firmware writes them only into EQs it
//! holds (created by CREATE_*EQC, dropped at DESTROY_*EQC); context writes
//! (FAST_REG_MR's MPT, the SRQ limit) go to HEM entries by index.

use std::collections::{HashMap, HashSet};

/// An object that owns guest memory the engine writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Owner {
    /// The MR of MPT index `n` (`key >> 8`).
    Mr(u32),
    /// CQ `n`.
    Cq(u32),
}

/// The memory one object maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Everything (a kernel DMA MR: `PA` set, identity translation).
    Any,
    /// Pages of `1 << shift` bytes, by their DMA address.
    Pages {
        /// Page size shift.
        shift: u32,
        /// Page addresses (aligned to the page size).
        pages: HashSet<u64>,
    },
}

/// The live objects' memory and the count of refused writes.
#[derive(Debug, Default)]
pub struct LiveDma {
    owners: HashMap<Owner, Extent>,
    /// Writes refused: the target is not mapped by the live object.
    pub bad: u64,
}

impl LiveDma {
    /// `o` maps `e` from now on (replacing what it mapped before).
    pub fn set(&mut self, o: Owner, e: Extent) {
        self.owners.insert(o, e);
    }

    /// `o` maps `pages` of `1 << shift` bytes.
    pub fn set_pages(&mut self, o: Owner, shift: u32, pages: impl IntoIterator<Item = u64>) {
        let mask = !((1u64 << shift) - 1);
        let pages = pages.into_iter().map(|p| p & mask).collect();
        self.set(o, Extent::Pages { shift, pages });
    }

    /// `o` is gone.
    pub fn forget(&mut self, o: Owner) {
        self.owners.remove(&o);
    }

    /// A function reset: nothing is live.
    pub fn clear(&mut self) {
        self.owners.clear();
    }

    /// Whether `o` is live and maps all of `[addr, addr + len)`; the
    /// reason when not.
    pub fn check(&self, o: Owner, addr: u64, len: u64) -> Result<(), String> {
        let Some(e) = self.owners.get(&o) else {
            return Err(format!("{o:?} is not live"));
        };
        let Extent::Pages { shift, pages } = e else {
            return Ok(());
        };
        if len == 0 {
            return Ok(());
        }
        let end = addr
            .checked_add(len - 1)
            .ok_or_else(|| format!("{addr:#x}+{len:#x} wraps"))?;
        let mut p = addr >> shift;
        while p <= end >> shift {
            if !pages.contains(&(p << shift)) {
                return Err(format!(
                    "{:#x} (write of {len} bytes at {addr:#x}) is not a page of {o:?}",
                    p << shift
                ));
            }
            p += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_must_stay_in_the_live_objects_pages() {
        let mut l = LiveDma::default();
        l.set_pages(Owner::Mr(3), 12, [0x7fc9_7000, 0x7fc8_8000]);
        assert_eq!(l.check(Owner::Mr(3), 0x7fc9_7cc0, 0x340), Ok(()));
        assert_eq!(l.check(Owner::Mr(3), 0x7fc8_8000, 0xc0), Ok(()));
        // The page after PA0 is somebody else's.
        assert!(l.check(Owner::Mr(3), 0x7fc9_7cc0, 0x400).is_err());
        assert!(l.check(Owner::Mr(3), 0x7fc9_8000, 8).is_err());
        // Another object, or one that is gone.
        assert!(l.check(Owner::Mr(4), 0x7fc9_7cc0, 8).is_err());
        assert!(l.check(Owner::Cq(3), 0x7fc9_7cc0, 8).is_err());
        l.forget(Owner::Mr(3));
        assert!(l.check(Owner::Mr(3), 0x7fc9_7cc0, 8).is_err());
        // A DMA MR maps everything.
        l.set(Owner::Mr(1), Extent::Any);
        assert_eq!(l.check(Owner::Mr(1), 0x1234, 1 << 20), Ok(()));
        l.clear();
        assert!(l.check(Owner::Mr(1), 0x1234, 1).is_err());
    }
}
