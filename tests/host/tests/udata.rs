// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the udata length rules and the user ABI's lengths.

use hns_host_tests::vectors::udata as v;

#[test]
fn abi_lengths() {
    assert_eq!(v::check_abi_lengths(), Ok(()));
}

#[test]
fn in_rules() {
    assert_eq!(v::check_in_rules(), Ok(()));
}

#[test]
fn out_rules() {
    assert_eq!(v::check_out_rules(), Ok(()));
}
