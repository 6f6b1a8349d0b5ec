// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the HEM arithmetic and the context-table manager's plans.

use hns_host_tests::hem::{HemType, TableCfg};
use hns_host_tests::hns_roce_hw_v2::caps::{
    apply_func_caps, apply_pf_res, apply_timer_res, parse_pf_caps, Caps,
};
use hns_host_tests::hw_rev::HwRev;
use hns_host_tests::vectors::hem as v;
use hns_sim::caps::Caps as SimCaps;

mod common;
use common::query;

#[test]
fn small_tables() {
    assert_eq!(v::check_small_tables(), Ok(()));
}

#[test]
fn growth() {
    assert_eq!(v::check_growth(), Ok(()));
}

#[test]
fn hops() {
    assert_eq!(v::check_hops(), Ok(()));
}

#[test]
fn worked_pg_sz() {
    assert_eq!(v::check_worked_pg_sz(), Ok(()));
}

#[test]
fn worked_geometry() {
    assert_eq!(v::check_worked_geometry(), Ok(()));
}

#[test]
fn worked_indexes() {
    assert_eq!(v::check_worked_indexes(), Ok(()));
}

#[test]
fn worked_plans() {
    assert_eq!(v::check_worked_plans(), Ok(()));
}

#[test]
fn worked_flat() {
    assert_eq!(v::check_worked_flat(), Ok(()));
}

#[test]
fn sim_default_tables() {
    assert_eq!(v::check_sim_default_tables(&v::sim_default_caps()), Ok(()));
}

#[test]
fn sim_default_indexes() {
    assert_eq!(v::check_sim_default_indexes(&v::sim_default_caps()), Ok(()));
}

#[test]
fn sim_default_trace() {
    assert_eq!(v::check_sim_default_trace(&v::sim_default_caps()), Ok(()));
}

#[test]
fn levels_and_steps() {
    assert_eq!(v::check_levels_and_steps(), Ok(()));
}

#[test]
fn hop2_plans() {
    assert_eq!(v::check_hop2_plans(), Ok(()));
}

#[test]
fn invalid_and_edges() {
    assert_eq!(v::check_invalid_and_edges(), Ok(()));
}

/// The caps the driver derives from hns-sim's defaults (HIP09 PF, 4 KiB
/// pages), through the real decoder.
fn decoded_sim_caps() -> Caps {
    let c = SimCaps::default();
    let mut p = parse_pf_caps(&query(&c, 0x8408, 6), 4096).expect("decodes");
    apply_pf_res(&mut p, &query(&c, 0x8400, 2), c.func_num).expect("decodes");
    apply_timer_res(&mut p, &query(&c, 0x8406, 1)[0]);
    apply_func_caps(&mut p, HwRev::HIP09, c.func_num, 8, 4096);
    p
}

const ALL_TYPES: [HemType; 14] = [
    HemType::Qpc,
    HemType::Mtpt,
    HemType::Cqc,
    HemType::Srqc,
    HemType::Sccc,
    HemType::QpcTimer,
    HemType::CqcTimer,
    HemType::Gmv,
    HemType::Mtt,
    HemType::Cqe,
    HemType::SrqWqe,
    HemType::Idx,
    HemType::Irrl,
    HemType::Trrl,
];

#[test]
fn hand_written_sim_caps_match_the_decoder() {
    let decoded = decoded_sim_caps();
    let hand = v::sim_default_caps();
    for ty in ALL_TYPES {
        assert_eq!(
            TableCfg::from_caps(&decoded, ty, 12),
            TableCfg::from_caps(&hand, ty, 12),
            "{ty:?}"
        );
    }
}

#[test]
fn decoded_sim_caps_tables() {
    let caps = decoded_sim_caps();
    assert_eq!(v::check_sim_default_tables(&caps), Ok(()));
    assert_eq!(v::check_sim_default_indexes(&caps), Ok(()));
    assert_eq!(v::check_sim_default_trace(&caps), Ok(()));
}

#[test]
fn mtr_gsi_qp() {
    assert_eq!(v::check_mtr_gsi_qp(), Ok(()));
}

#[test]
fn mtr_hop3_hop0() {
    assert_eq!(v::check_mtr_hop3_hop0(), Ok(()));
}

#[test]
fn mtr_hop3_mr() {
    assert_eq!(v::check_mtr_hop3_mr(), Ok(()));
}

#[test]
fn mtr_multi_l1() {
    assert_eq!(v::check_mtr_multi_l1(), Ok(()));
}

#[test]
fn mtr_root_limits() {
    assert_eq!(v::check_mtr_root_limits(), Ok(()));
}

#[test]
fn mtr_regions_and_hops() {
    assert_eq!(v::check_mtr_regions_and_hops(), Ok(()));
}

#[test]
fn user_mtr() {
    assert_eq!(v::check_user_mtr(), Ok(()));
}
