// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the id and bank allocators.

use hns_host_tests::vectors::bitmap as v;
use hns_sim::caps::Caps as SimCaps;

/// The vectors' "hns-sim default" caps are hns-sim's defaults.
#[test]
fn sim_defaults_match() {
    let c = SimCaps::default();
    assert_eq!(1u32 << c.num_qps_log, v::SIM_NUM_QPS);
    assert_eq!(c.rsv_qps, v::SIM_RESERVED_QPS);
    assert_eq!(1u32 << c.num_cqs_log, v::SIM_NUM_CQS);
    assert_eq!(c.rsv_cqs, v::SIM_RESERVED_CQS);
    assert_eq!(c.cap_flags, v::SIM_FLAGS);
    assert_eq!(
        (c.num_pds_log, c.rsv_pds, c.num_uars_log, c.rsv_uars),
        (16, 0, 8, 0)
    );
    assert_eq!(
        (c.num_mrws_log, c.rsv_mrws, c.num_srqs_log, c.rsv_srqs),
        (12, 1, 8, 0)
    );
    assert_eq!((c.num_xrcds_log, c.rsv_xrcds), (8, 0));
}

#[test]
fn ida_ranges() {
    assert_eq!(v::check_ida_ranges(), Ok(()));
}

#[test]
fn ida_full_and_errors() {
    assert_eq!(v::check_ida_full_and_errors(), Ok(()));
}

#[test]
fn ida_word_boundaries() {
    assert_eq!(v::check_ida_word_boundaries(), Ok(()));
}

#[test]
fn qp_sim_defaults() {
    assert_eq!(v::check_qp_sim_defaults(), Ok(()));
}

#[test]
fn qp_wrap_and_reserved() {
    assert_eq!(v::check_qp_wrap_and_reserved(), Ok(()));
}

#[test]
fn qp_limit_bank() {
    assert_eq!(v::check_qp_limit_bank(), Ok(()));
}

#[test]
fn cq_hip09() {
    assert_eq!(v::check_cq_hip09(), Ok(()));
}

#[test]
fn cq_hip08() {
    assert_eq!(v::check_cq_hip08(), Ok(()));
}
