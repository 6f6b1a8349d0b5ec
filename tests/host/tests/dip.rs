// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the DIP congestion context table.

use hns_host_tests::vectors::dip as v;

#[test]
fn sharing() {
    assert_eq!(v::check_dip_sharing(), Ok(()));
}

#[test]
fn full() {
    assert_eq!(v::check_dip_full(), Ok(()));
}
