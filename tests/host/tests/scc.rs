// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the congestion control parameter tables and block.

use hns_host_tests::vectors::scc as v;

#[test]
fn tables() {
    assert_eq!(v::check_tables(), Ok(()));
}

#[test]
fn algos() {
    assert_eq!(v::check_algos(), Ok(()));
}

#[test]
fn params() {
    assert_eq!(v::check_params(), Ok(()));
}

#[test]
fn kstrtou32() {
    assert_eq!(v::check_kstrtou32(), Ok(()));
}
