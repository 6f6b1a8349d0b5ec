// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the revision type.

use hns_host_tests::hw_rev::HwRev;

#[test]
fn revisions() {
    let (a, b) = (HwRev::from_pci(0x21), HwRev::from_pci(0x30));
    assert_eq!(a, HwRev::HIP08);
    assert_eq!(b, HwRev::HIP09);
    assert!(a.is_hip08() && !a.is_hip09());
    assert!(b.is_hip09() && !b.is_hip08());
    assert!(a < b);
    assert_eq!(b.pci_revision(), 0x30);
}
