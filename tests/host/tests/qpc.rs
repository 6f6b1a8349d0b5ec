// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the QP context images and queue sizing against the C
//! driver's.

use hns_host_tests::vectors::qpc as v;

#[test]
fn gsi_modifies() {
    assert_eq!(v::check_gsi_modifies(), Ok(()));
}

#[test]
fn masks() {
    assert_eq!(v::check_masks(), Ok(()));
}

#[test]
fn opt_fields() {
    assert_eq!(v::check_opt_fields(), Ok(()));
}

#[test]
fn queue_sizes() {
    assert_eq!(v::check_queue_sizes(), Ok(()));
}

#[test]
fn rq_wqe() {
    assert_eq!(v::check_rq_wqe(), Ok(()));
}

#[test]
fn qp_type_support() {
    assert_eq!(v::check_qp_type_support(), Ok(()));
}

#[test]
fn state_table() {
    assert_eq!(v::check_state_table(), Ok(()));
}

#[test]
fn rc_user_modifies() {
    assert_eq!(v::check_rc_user_modifies(), Ok(()));
}

#[test]
fn free_mr_modifies() {
    assert_eq!(v::check_free_mr_modifies(), Ok(()));
}

#[test]
fn ud_user_modifies() {
    assert_eq!(v::check_ud_user_modifies(), Ok(()));
}

#[test]
fn xrc_init_modifies() {
    assert_eq!(v::check_xrc_init_modifies(), Ok(()));
}
