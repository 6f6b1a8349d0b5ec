// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the CQE decoder (`hns_roce_hw_v2::cqe`).

use hns_host_tests::vectors::cqe as v;

#[test]
fn status_table() {
    assert_eq!(v::check_status_table(), Ok(()));
}

#[test]
fn opcode_maps() {
    assert_eq!(v::check_opcode_maps(), Ok(()));
}

#[test]
fn owner_and_tail() {
    assert_eq!(v::check_owner_and_tail(), Ok(()));
}

#[test]
fn c_cqes() {
    assert_eq!(v::check_c_cqes(), Ok(()));
}
