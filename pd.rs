// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Number spaces of the simple objects: protection domains, XRC domains
//! and user access regions (doorbell pages), allocated like the C driver's
//! `ida`s (lowest free number in `[reserved, count - 1]`).

use crate::bitmap::{BitmapError, IdRange, Ida};
use kernel::{new_mutex, prelude::*, sync::Mutex};

/// One number space.
#[pin_data]
pub(crate) struct IdSpace {
    what: &'static str,
    #[pin]
    ida: Mutex<Ida<KVec<u64>>>,
}

impl IdSpace {
    /// Numbers `[reserved, count - 1]`, named `what` in errors.
    pub(crate) fn new(
        what: &'static str,
        reserved: u32,
        count: u32,
    ) -> Result<impl PinInit<Self, Error>> {
        let range = IdRange::from_count(reserved, count);
        let mut words = KVec::new();
        words.resize(range.words(), 0u64, GFP_KERNEL)?;
        let ida = Ida::new(range, words).map_err(|_| EINVAL)?;
        Ok(try_pin_init!(Self {
            what,
            ida <- new_mutex!(ida),
        }? Error))
    }

    /// The lowest free number.
    ///
    /// # Errors
    ///
    /// `ENOMEM` when all are taken, as the C driver reports it.
    pub(crate) fn alloc(&self) -> Result<u32> {
        self.ida.lock().alloc().map_err(|e| {
            pr_err!("failed to alloc {}, ret = {:?}.\n", self.what, e);
            ENOMEM
        })
    }

    /// Frees `id`; freeing a free number is logged and ignored.
    pub(crate) fn free(&self, id: u32) {
        if let Err(BitmapError::NotAllocated) = self.ida.lock().free(id) {
            pr_warn!("{} {} freed twice\n", self.what, id);
        }
    }
}
