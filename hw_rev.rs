// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The revision of a RoCE engine (`core` only).
//!
//! The C driver compares `pci_dev->revision` with `PCI_REVISION_ID_HIP08`
//! wherever HIP08 and later engines differ; here that decision has a type,
//! so a function takes a [`HwRev`] instead of a `hip08` or `hip09` flag
//! whose sense the caller has to get right.

use crate::hns_roce_hw_v2::consts::pci_rev;

/// Revision of a RoCE engine: the PCI revision ID of its function.
///
/// Ordered like the revision IDs (HIP08 < HIP09).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HwRev(u8);

impl HwRev {
    /// HIP08 (`PCI_REVISION_ID_HIP08`).
    pub const HIP08: HwRev = HwRev(pci_rev::HIP08);
    /// HIP09 (`PCI_REVISION_ID_HIP09`).
    pub const HIP09: HwRev = HwRev(pci_rev::HIP09);

    /// The revision of a function whose PCI revision ID is `revision`.
    pub const fn from_pci(revision: u8) -> Self {
        HwRev(revision)
    }

    /// The PCI revision ID.
    pub const fn pci_revision(self) -> u8 {
        self.0
    }

    /// A HIP08 engine.
    pub const fn is_hip08(self) -> bool {
        self.0 == pci_rev::HIP08
    }

    /// An engine with what HIP09 brought (extended QPC, GMV table, 64-byte
    /// EQEs and CQEs, hardware counters, ...): every revision this driver
    /// takes but HIP08, as the C driver decides it.
    pub const fn is_hip09(self) -> bool {
        !self.is_hip08()
    }
}
