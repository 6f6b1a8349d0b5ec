// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the send WQE encoder (`hns_roce_hw_v2::wqe`).

use hns_host_tests::vectors::wqe as v;

#[test]
fn doorbell_and_owner() {
    assert_eq!(v::check_doorbell_and_owner(), Ok(()));
}

#[test]
fn c_ud_wqes() {
    assert_eq!(v::check_c_ud_wqes(), Ok(()));
}

#[test]
fn rc_wqes() {
    assert_eq!(v::check_rc_wqes(), Ok(()));
}

#[test]
fn rc_atomic_inline() {
    assert_eq!(v::check_rc_atomic_inline(), Ok(()));
}

#[test]
fn rc_frmr() {
    assert_eq!(v::check_rc_frmr(), Ok(()));
}
