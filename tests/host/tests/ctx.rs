// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the context images and doorbell words against the C
//! driver's.

use hns_host_tests::vectors::ctx as v;

#[test]
fn eq_contexts() {
    assert_eq!(v::check_eq_contexts(), Ok(()));
}

#[test]
fn cq_context() {
    assert_eq!(v::check_cq_context(), Ok(()));
}

#[test]
fn dma_mr_mpt() {
    assert_eq!(v::check_dma_mr_mpt(), Ok(()));
}

#[test]
fn user_mr_mpt() {
    assert_eq!(v::check_user_mr_mpt(), Ok(()));
}

#[test]
fn rereg_mpt_writes_the_new_hop() {
    assert_eq!(v::check_rereg_mpt_writes_the_new_hop(), Ok(()));
}

#[test]
fn doorbells() {
    assert_eq!(v::check_doorbells(), Ok(()));
}

#[test]
fn cq_moderation() {
    assert_eq!(v::check_cq_moderation(), Ok(()));
}

#[test]
fn srq_context() {
    assert_eq!(v::check_srq_context(), Ok(()));
}

#[test]
fn srq_limit() {
    assert_eq!(v::check_srq_limit(), Ok(()));
}

#[test]
fn frmr_mpt() {
    assert_eq!(v::check_frmr_mpt(), Ok(()));
}
