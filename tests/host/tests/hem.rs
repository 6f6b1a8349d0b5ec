// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the HEM arithmetic.

use hns_host_tests::vectors::hem as v;

#[test]
fn small_tables() {
    assert_eq!(v::check_small_tables(), Ok(()));
}

#[test]
fn growth() {
    assert_eq!(v::check_growth(), Ok(()));
}

#[test]
fn hops() {
    assert_eq!(v::check_hops(), Ok(()));
}
