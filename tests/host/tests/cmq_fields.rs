// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host test of the generated CMQ payload fields
//! (`hns_roce_hw_v2/cmq_fields.rs`) against the C header they come from.
//!
//! Every `#define NAME MACRO_FIELD_LOC(h, l)` of `hns_roce_hw_v2.h` must be in
//! the module of its macro with the same bits, and every other field of a
//! module must be a member of the module's C struct at the member's offset.

use hns_host_tests::cmdq::desc::CmqData;
use hns_host_tests::field::Field;
use hns_host_tests::hns_roce_hw_v2::cmq_fields::*;

/// The C header, as text.
fn header() -> String {
    let ksrc = std::env::var("HNS_KSRC")
        .expect("HNS_KSRC must point at the Linux source (make host-test sets it)");
    let path = format!("{ksrc}/drivers/infiniband/hw/hns/hns_roce_hw_v2.h");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `(name, h, l)` of every single-word `MACRO_FIELD_LOC(h, l)` definition.
fn macro_fields(text: &str, mac: &str) -> Vec<(String, u32, u32)> {
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
        if !val.starts_with(&marker) || name.ends_with("_FIELD_LOC(h,") {
            continue;
        }
        let args: String = rest[rest.find(&marker).unwrap() + marker.len()..]
            .chars()
            .take_while(|c| *c != ')')
            .collect();
        let mut nums = args.split(',').map(|s| s.trim().parse::<u32>().unwrap());
        let (h, l) = (nums.next().unwrap(), nums.next().unwrap());
        if h / 32 == l / 32 {
            out.push((name.to_string(), h, l));
        }
    }
    out
}

/// `(NAME, h, l)` of the scalar members of `struct cstruct`, by offset.
fn members(text: &str, cstruct: &str) -> Vec<(String, u32, u32)> {
    let open = format!("struct {cstruct} {{\n");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("no struct {cstruct}"))
        + open.len();
    let body = &text[start..start + text[start..].find("};").unwrap()];
    let mut out = Vec::new();
    let mut bit = 0;
    for line in body.lines() {
        let line = line.trim().trim_end_matches(';');
        let (ty, name) = line.split_once(char::is_whitespace).unwrap();
        let width = match ty {
            "u8" => 8,
            "__le16" => 16,
            "__le32" => 32,
            _ => panic!("{cstruct}: member type {ty}"),
        };
        let name = name.trim();
        let (name, count) = match name.split_once('[') {
            Some((n, c)) => (n, c.trim_end_matches(']').parse::<u32>().unwrap()),
            None => (name, 1),
        };
        out.push((name.to_uppercase(), bit + width - 1, bit));
        bit += width * count;
    }
    assert_eq!(bit, 192, "struct {cstruct} is not a 24-byte CMQ payload");
    out
}

fn check(mac: Option<&str>, cstruct: &str, rust: &[(&str, Field<CmqData>)]) {
    let text = header();
    let c = mac.map(|m| macro_fields(&text, m)).unwrap_or_default();
    assert!(
        mac.is_none() || !c.is_empty(),
        "no {mac:?} fields in the header"
    );
    let r: Vec<(String, u32, u32)> = rust
        .iter()
        .map(|(n, f)| (n.to_string(), f.high(), f.low()))
        .collect();
    for f in &c {
        assert!(
            r.contains(f),
            "{cstruct}: C field {f:?} missing or different"
        );
    }
    let m = if cstruct == "hns_roce_cmq_req" {
        Vec::new()
    } else {
        members(&text, cstruct)
    };
    for f in &r {
        assert!(
            c.contains(f) || m.contains(f),
            "{cstruct}: Rust field {f:?} is neither a FIELD_LOC nor a member of the C struct"
        );
    }
}

#[test]
fn cmq_payload_fields_match_c_header() {
    check(Some("CMQ_REQ"), "hns_roce_cmq_req", cmq_req::ALL);
    check(Some("FUNC_CLEAR"), "hns_roce_func_clear", func_clear::ALL);
    check(Some("VF_SWITCH"), "hns_roce_vf_switch", vf_switch::ALL);
    check(Some("SGID_TB"), "hns_roce_cfg_sgid_tb", sgid_tb::ALL);
    check(Some("SMAC_TB"), "hns_roce_cfg_smac_tb", smac_tb::ALL);
    check(Some("GMV_TB_A"), "hns_roce_cfg_gmv_tb_a", gmv_tb_a::ALL);
    check(Some("GMV_TB_B"), "hns_roce_cfg_gmv_tb_b", gmv_tb_b::ALL);
    check(
        Some("PF_CAPS_C"),
        "hns_roce_query_pf_caps_c",
        pf_caps_c::ALL,
    );
    check(
        Some("PF_CAPS_D"),
        "hns_roce_query_pf_caps_d",
        pf_caps_d::ALL,
    );
    check(
        Some("PF_CAPS_E"),
        "hns_roce_query_pf_caps_e",
        pf_caps_e::ALL,
    );
    check(None, "hns_roce_query_version", query_version::ALL);
    check(None, "hns_roce_query_fw_info", query_fw_info::ALL);
    check(None, "hns_roce_query_pf_caps_a", pf_caps_a::ALL);
    check(None, "hns_roce_query_pf_caps_b", pf_caps_b::ALL);
    check(None, "hns_roce_query_pf_caps_f", pf_caps_f::ALL);
    check(None, "hns_roce_bond_info", bond_info::ALL);
}

#[test]
fn the_fields_the_driver_reads_first_are_where_c_puts_them() {
    // Spot checks by hand from hns_roce_hw_v2.h, independent of both parsers.
    assert_eq!(
        (
            pf_caps_c::PF_CAPS_C_NUM_PDS.high(),
            pf_caps_c::PF_CAPS_C_NUM_PDS.low()
        ),
        (19, 0)
    );
    assert_eq!(
        (pf_caps_a::MAX_SQ_SG.high(), pf_caps_a::MAX_SQ_SG.low()),
        (31, 16)
    );
    assert_eq!(
        (pf_caps_b::PBL_HOP_NUM.high(), pf_caps_b::PBL_HOP_NUM.low()),
        (191, 184)
    );
    assert_eq!(
        (
            cmq_req::CFG_LLM_A_HEAD_PTR.high(),
            cmq_req::CFG_LLM_A_HEAD_PTR.low()
        ),
        (171, 160)
    );
}
