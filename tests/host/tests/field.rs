// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the context field helper and the generated field maps.

use hns_host_tests::field::{Field, Layout};
use hns_host_tests::hns_roce_hw_v2::fields::{
    aeqe, ceqe, cqc, cqe, eqc, frmr_seg, mpt, qpc, qpcex, rc_send_wqe, srqc, ud_send_wqe,
};
use hns_host_tests::vectors::field as v;

#[test]
fn write_read() {
    assert_eq!(v::check_write_read(), Ok(()));
}

#[test]
fn truncation_and_neighbours() {
    assert_eq!(v::check_truncation_and_neighbours(), Ok(()));
}

#[test]
fn full_word_and_masks() {
    assert_eq!(v::check_full_word_and_masks(), Ok(()));
}

#[test]
fn little_endian_storage() {
    assert_eq!(v::check_little_endian_storage(), Ok(()));
}

#[test]
fn real_positions() {
    assert_eq!(v::check_real_positions(), Ok(()));
}

#[test]
fn cqc_image() {
    assert_eq!(v::check_cqc_image(), Ok(()));
}

#[test]
fn head() {
    assert_eq!(v::check_head(), Ok(()));
}

#[test]
fn vector_list_is_complete() {
    assert_eq!(v::ALL.len(), 7, "a vector was added without a host test");
}

/// Every `PREFIX_FIELD_LOC(h, l)` definition in the C header, in order.
fn header_fields(prefix: &str) -> Vec<(String, u32, u32)> {
    let ksrc = std::env::var("HNS_KSRC")
        .expect("HNS_KSRC must point at the Linux source (make host-test sets it)");
    let header = if matches!(prefix, "AEQE" | "CEQE") {
        "hns_roce_device.h"
    } else {
        "hns_roce_hw_v2.h"
    };
    let path = format!("{ksrc}/drivers/infiniband/hw/hns/{header}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // The FRMR segment's locations use their own macro name.
    let mac = if prefix == "FRMR" { "FRMR_WQE" } else { prefix };
    let marker = format!("{mac}_FIELD_LOC(");
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let mut it = rest.split_whitespace();
        let (Some(name), Some(val)) = (it.next(), it.next()) else {
            continue;
        };
        if !name.starts_with(&format!("{prefix}_")) || !val.starts_with(&marker) {
            continue;
        }
        let args: String = rest[rest.find(&marker).unwrap() + marker.len()..]
            .chars()
            .take_while(|c| *c != ')')
            .collect();
        let mut nums = args.split(',').map(|s| s.trim().parse::<u32>().unwrap());
        let (h, l) = (nums.next().unwrap(), nums.next().unwrap());
        // Multi-word locations are copied whole, not through Field.
        if h / 32 == l / 32 {
            out.push((name.to_string(), h, l));
        }
    }
    assert!(!out.is_empty(), "no {prefix} fields in {path}");
    out
}

fn compare<L: Layout>(prefix: &str, rust: &[(&str, Field<L>)]) {
    let c = header_fields(prefix);
    let r: Vec<(String, u32, u32)> = rust
        .iter()
        .map(|(n, f)| (n.to_string(), f.high(), f.low()))
        .collect();
    for f in &c {
        assert!(
            r.contains(f),
            "{prefix}: C field {f:?} missing or different in Rust"
        );
    }
    for f in &r {
        assert!(
            c.contains(f),
            "{prefix}: Rust field {f:?} not in the C header"
        );
    }
    assert_eq!(c.len(), r.len());
}

#[test]
fn frmr_seg_matches_c_header() {
    compare("FRMR", frmr_seg::ALL);
}

#[test]
fn qpc_matches_c_header() {
    compare("QPC", qpc::ALL);
}

#[test]
fn qpcex_matches_c_header() {
    compare("QPCEX", qpcex::ALL);
}

#[test]
fn cqc_matches_c_header() {
    compare("CQC", cqc::ALL);
}

#[test]
fn srqc_matches_c_header() {
    compare("SRQC", srqc::ALL);
}

#[test]
fn mpt_matches_c_header() {
    compare("MPT", mpt::ALL);
}

#[test]
fn eqc_matches_c_header() {
    compare("EQC", eqc::ALL);
}

#[test]
fn aeqe_matches_c_header() {
    compare("AEQE", aeqe::ALL);
}

#[test]
fn ceqe_matches_c_header() {
    compare("CEQE", ceqe::ALL);
}

#[test]
fn cqe_matches_c_header() {
    compare("CQE", cqe::ALL);
}

#[test]
fn ud_send_wqe_matches_c_header() {
    compare("UD_SEND_WQE", ud_send_wqe::ALL);
}

#[test]
fn rc_send_wqe_matches_c_header() {
    compare("RC_SEND_WQE", rc_send_wqe::ALL);
}
