// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Number spaces of the simple objects: protection domains, XRC domains,
//! user access regions (doorbell pages) and MR keys, allocated like the C
//! driver's `ida`s (lowest free number in `[reserved, count - 1]`); and the
//! PD and XRCD verbs (`hns_roce_pd.c`), which are nothing but such numbers.

use crate::bitmap::{BitmapError, IdRange, Ida};
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::cap_flag;
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

/// The protection and XRC domains of one device: their numbers and the
/// verbs that hand them out.
#[pin_data]
pub(crate) struct Domains {
    #[pin]
    pds: IdSpace,
    #[pin]
    xrcds: IdSpace,
    /// Whether the engine has XRC (`HNS_ROCE_CAP_FLAG_XRC`).
    xrc: bool,
}

impl Domains {
    /// The PD and XRCD number spaces of `caps`.
    pub(crate) fn new(caps: &Caps) -> Result<impl PinInit<Self, Error>> {
        let pds = IdSpace::new("pd", caps.reserved_pds, caps.num_pds)?;
        let xrcds = IdSpace::new("xrcdn", caps.reserved_xrcds, caps.num_xrcds)?;
        let xrc = caps.flags & cap_flag::XRC != 0;
        Ok(try_pin_init!(Self {
            pds <- pds,
            xrcds <- xrcds,
            xrc,
        }? Error))
    }

    /// A PD number (`hns_roce_alloc_pd`).
    ///
    /// # Errors
    ///
    /// `ENOMEM` when all are taken.
    pub(crate) fn alloc_pd(&self) -> Result<u32> {
        self.pds.alloc()
    }

    /// Frees PD number `pdn` (`hns_roce_dealloc_pd`).
    pub(crate) fn dealloc_pd(&self, pdn: u32) {
        self.pds.free(pdn);
    }

    /// An XRCD number (`hns_roce_alloc_xrcd`).
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` without XRC, `ENOMEM` when all are taken.
    pub(crate) fn alloc_xrcd(&self) -> Result<u32> {
        if !self.xrc {
            return Err(EOPNOTSUPP);
        }
        self.xrcds.alloc()
    }

    /// Frees XRCD number `xrcdn` (`hns_roce_dealloc_xrcd`).
    pub(crate) fn dealloc_xrcd(&self, xrcdn: u32) {
        self.xrcds.free(xrcdn);
    }
}
