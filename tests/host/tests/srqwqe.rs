// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the SRQ encoders (`hns_roce_hw_v2::srqwqe`).

use hns_host_tests::vectors::srqwqe as v;

#[test]
fn c_srq_wqes() {
    assert_eq!(v::check_c_srq_wqes(), Ok(()));
}

#[test]
fn srq_wqe_fill() {
    assert_eq!(v::check_srq_wqe_fill(), Ok(()));
}

#[test]
fn c_srq_doorbells() {
    assert_eq!(v::check_c_srq_doorbells(), Ok(()));
}

#[test]
fn idx_and_doorbell() {
    assert_eq!(v::check_idx_and_doorbell(), Ok(()));
}
