// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the command queue descriptor codec.

use hns_host_tests::vectors::cmq as v;

#[test]
fn wire_format() {
    assert_eq!(v::check_wire_format(), Ok(()));
}

#[test]
fn retval_errno() {
    assert_eq!(v::check_retval_errno(), Ok(()));
}

#[test]
fn chain() {
    assert_eq!(v::check_chain(), Ok(()));
}

#[test]
fn sgid_tb() {
    assert_eq!(v::check_sgid_tb(), Ok(()));
}

#[test]
fn smac_tb() {
    assert_eq!(v::check_smac_tb(), Ok(()));
}

#[test]
fn gmv_tb() {
    assert_eq!(v::check_gmv_tb(), Ok(()));
}
