// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the doorbell offset checks.

use hns_host_tests::vectors::dbwin as v;

#[test]
fn reg_doorbells() {
    assert_eq!(v::check_reg_doorbells(), Ok(()));
}

#[test]
fn sq_pages() {
    assert_eq!(v::check_sq_pages(), Ok(()));
}
