// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the generated hardware constants (`hns_roce_hw_v2/consts.rs`): the
//! C headers are parsed here on their own (not by the generator), every Rust
//! constant must have the value of the C name it carries, and every member
//! of a group in the header must be in Rust.

use hns_host_tests::hns_roce_hw_v2::consts::{
    abn_bit, cap_flag, cmq_op, cq_moder, cq_notify, cqe_size, cqe_status, db_cmd, dev_reg,
    eq_db_cmd, event, free_mr, frmr, hw_page, inv_sge, mbox, mpt_shift, mpt_st, msg, pci_rev,
    recv_op, reg, sge, srq_lim, wqe_inl, wqe_op,
};

/// One numeric constant of a C header.
#[derive(Debug)]
struct CConst {
    name: String,
    value: u64,
    /// The tag of the enum it is a member of (`Some("")` for an anonymous
    /// enum), `None` for a `#define`.
    tag: Option<String>,
}

fn header(name: &str) -> String {
    let ksrc = std::env::var("HNS_KSRC")
        .expect("HNS_KSRC must point at the Linux source (make host-test sets it)");
    let path = format!("{ksrc}/drivers/infiniband/hw/hns/{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text without C comments.
fn uncomment(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b..].find("*/").expect("unterminated comment");
                rest = &rest[b + end + 2..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |n| &rest[l + n..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// A literal (`0x..`, decimal) or `BIT(n)`; `None` for anything else.
fn literal(expr: &str) -> Option<u64> {
    let e = expr.trim();
    if let Some(n) = e.strip_prefix("BIT(").and_then(|r| r.strip_suffix(')')) {
        return n.trim().parse::<u32>().ok().map(|n| 1u64 << n);
    }
    if let Some(h) = e.strip_prefix("0x").or_else(|| e.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    e.parse().ok()
}

/// Every numeric `#define` and every enum member whose value is known, of
/// the header `name`.
fn parse(name: &str) -> Vec<CConst> {
    parse_text(&header(name))
}

/// Every numeric `#define` and every enum member whose value is known.
fn parse_text(text: &str) -> Vec<CConst> {
    let text = uncomment(text);
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("#define") else {
            continue;
        };
        let mut it = rest.split_whitespace();
        if let (Some(n), Some(v), None) = (it.next(), it.next(), it.next()) {
            if let Some(value) = literal(v).filter(|_| !v.starts_with("BIT")) {
                out.push(CConst {
                    name: n.to_string(),
                    value,
                    tag: None,
                });
            }
        }
    }
    let mut rest = text.as_str();
    while let Some(pos) = rest.find("enum") {
        let after = &rest[pos + 4..];
        let word_ends = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let word_starts =
            pos == 0 || !rest[..pos].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let (Some(open), true, true) = (after.find(['{', ';', '(']), word_ends, word_starts) else {
            rest = after;
            continue;
        };
        if !after[open..].starts_with('{') {
            rest = after;
            continue;
        }
        let tag = after[..open].trim().to_string();
        let close = open + after[open..].find('}').expect("unterminated enum");
        let mut next = Some(0u64);
        for item in after[open + 1..close].split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (n, v) = match item.split_once('=') {
                Some((n, e)) => {
                    let e = e.trim();
                    let known = out.iter().find(|c: &&CConst| c.name == e).map(|c| c.value);
                    (n.trim(), literal(e).or(known))
                }
                None => (item, next),
            };
            next = v.map(|v| v + 1);
            if let Some(value) = v {
                out.push(CConst {
                    name: n.to_string(),
                    value,
                    tag: Some(tag.clone()),
                });
            }
        }
        rest = &after[close..];
    }
    out
}

/// Checks one generated module against the constants of `hdr` that `sel`
/// picks: same names, same values, none missing on either side.
fn compare(hdr: &str, sel: impl Fn(&CConst) -> bool, rust: &[(&str, u64)]) {
    let c: Vec<CConst> = parse(hdr).into_iter().filter(|c| sel(c)).collect();
    assert!(!c.is_empty(), "{hdr}: nothing selected");
    for (name, value) in rust {
        let m = c.iter().find(|c| c.name == *name);
        let m = m.unwrap_or_else(|| panic!("{name}: not in the selected part of {hdr}"));
        assert_eq!(
            m.value, *value,
            "{name}: Rust has {value:#x}, {hdr} {:#x}",
            m.value
        );
    }
    for m in &c {
        assert!(
            rust.iter().any(|(n, _)| *n == m.name),
            "{}: in {hdr} ({:#x}) but not generated",
            m.name,
            m.value
        );
    }
    assert_eq!(c.len(), rust.len(), "{hdr}: duplicates");
}

fn widen<T: Copy + Into<u64>>(all: &[(&'static str, T)]) -> Vec<(&'static str, u64)> {
    all.iter().map(|&(n, v)| (n, v.into())).collect()
}

fn enum_member(c: &CConst, prefix: &str) -> bool {
    c.tag.is_some() && c.name.starts_with(prefix)
}

fn define(c: &CConst, prefix: &str) -> bool {
    c.tag.is_none() && c.name.starts_with(prefix)
}

#[test]
fn pci_revisions_match_c_header() {
    compare(
        "hns_roce_device.h",
        |c| define(c, "PCI_REVISION_ID_"),
        &widen(pci_rev::ALL),
    );
}

#[test]
fn cap_flags_match_c_header() {
    compare(
        "hns_roce_device.h",
        |c| enum_member(c, "HNS_ROCE_CAP_FLAG_"),
        &widen(cap_flag::ALL),
    );
}

#[test]
fn event_types_match_c_header() {
    compare(
        "hns_roce_device.h",
        |c| c.tag.as_deref() == Some("hns_roce_event"),
        &widen(event::ALL),
    );
}

#[test]
fn mailbox_commands_match_c_header() {
    compare(
        "hns_roce_cmd.h",
        |c| enum_member(c, "HNS_ROCE_CMD_"),
        &widen(mbox::ALL),
    );
}

#[test]
fn cmq_opcodes_match_c_header() {
    compare(
        "hns_roce_hw_v2.h",
        |c| c.tag.as_deref() == Some("hns_roce_opcode_type"),
        &widen(cmq_op::ALL),
    );
}

#[test]
fn doorbell_commands_match_c_header() {
    let q = ["SQ", "RQ", "SRQ", "CQ"];
    compare(
        "hns_roce_hw_v2.h",
        |c| {
            c.tag.is_some()
                && c.name
                    .strip_prefix("HNS_ROCE_V2_")
                    .is_some_and(|n| q.iter().any(|q| n.starts_with(&format!("{q}_DB"))))
        },
        &widen(db_cmd::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| define(c, "HNS_ROCE_EQ_DB_CMD_"),
        &widen(eq_db_cmd::ALL),
    );
}

#[test]
fn mpt_shifts_and_cqe_sizes_match_c_header() {
    compare(
        "hns_roce_hw_v2.h",
        |c| define(c, "MPT_PBL_") && c.name.ends_with("_ADDR_S"),
        &widen(mpt_shift::ALL),
    );
    compare(
        "hns_roce_device.h",
        |c| {
            define(c, "HNS_ROCE_V")
                && c.name.ends_with("_CQE_SIZE")
                && c.name.len() == "HNS_ROCE_V2_CQE_SIZE".len()
        },
        &widen(cqe_size::ALL),
    );
}

#[test]
fn mpt_states_and_frmr_limits_match_c_header() {
    compare(
        "hns_roce_hw_v2.h",
        |c| enum_member(c, "V2_MPT_ST_"),
        &widen(mpt_st::ALL),
    );
    compare(
        "hns_roce_device.h",
        |c| define(c, "HNS_ROCE_FRMR_"),
        &widen(frmr::ALL),
    );
    compare(
        "hns_roce_device.h",
        |c| {
            define(c, "HNS_HW_")
                && c.name.ends_with("PAGE_SHIFT")
                && !c.name.contains("PAGE_SHIFT_")
        },
        &widen(hw_page::ALL),
    );
}

#[test]
fn register_offsets_match_c_header() {
    let all: Vec<(&str, u64)> = reg::ALL.iter().map(|&(n, v)| (n, v as u64)).collect();
    compare("hns_roce_common.h", |c| define(c, "ROCEE_"), &all);
    let dev: Vec<(&str, u64)> = dev_reg::ALL.iter().map(|&(n, v)| (n, v as u64)).collect();
    compare("hns_roce_device.h", |c| define(c, "SRQ_DB_REG"), &dev);
}

#[test]
fn data_path_codes_match_c_header() {
    compare(
        "hns_roce_hw_v2.h",
        |c| enum_member(c, "HNS_ROCE_V2_WQE_OP_"),
        &widen(wqe_op::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| enum_member(c, "HNS_ROCE_V2_OPCODE_"),
        &widen(recv_op::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| enum_member(c, "HNS_ROCE_CQE_V2_") || enum_member(c, "HNS_ROCE_V2_CQE_STATUS"),
        &widen(cqe_status::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| define(c, "V2_CQ_DB_REQ_"),
        &widen(cq_notify::ALL),
    );
    let sge_names = [
        "HNS_ROCE_SGE_IN_WQE",
        "HNS_ROCE_SGE_SIZE",
        "HNS_ROCE_SGE_SHIFT",
        "ATOMIC_WR_LEN",
        "HNS_ROCE_DWQE_SIZE",
    ];
    compare(
        "hns_roce_device.h",
        |c| c.tag.is_none() && sge_names.contains(&c.name.as_str()),
        &widen(sge::ALL),
    );
    compare(
        "hns_roce_device.h",
        |c| c.name == "HNS_ROCE_MIN_SRQ_WQE_NUM" || c.name == "HNS_ROCE_IDX_QUE_ENTRY_SZ",
        &widen(srq_lim::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| define(c, "HNS_ROCE_V2_MAX_RC_INL_INN_SZ"),
        &widen(wqe_inl::ALL),
    );
    compare(
        "hns_roce_device.h",
        |c| define(c, "HNS_ROCE_MAX_MSG_LEN"),
        &widen(msg::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| define(c, "HNS_ROCE_INVALID_"),
        &widen(inv_sge::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| {
            c.name == "HNS_ROCE_V2_VF_INT_ST_AEQ_OVERFLOW_S"
                || c.name == "HNS_ROCE_V2_VF_ABN_INT_EN_S"
        },
        &widen(abn_bit::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| c.name == "HNS_ROCE_CLOCK_ADJUST" || c.name == "HNS_ROCE_MAX_CQ_PERIOD_HIP08",
        &widen(cq_moder::ALL),
    );
    compare(
        "hns_roce_hw_v2.h",
        |c| c.name.starts_with("HNS_ROCE_FREE_MR_USED_") || c.name == "HNS_ROCE_V2_FREE_MR_TIMEOUT",
        &widen(free_mr::ALL),
    );
}

/// The values the driver's behaviour hangs on, spelled out once more: a
/// regenerated file that moved one of them fails here even if the header
/// moved too.
#[test]
fn known_values() {
    assert_eq!(cap_flag::XRC, 1 << 6);
    assert_eq!(cap_flag::ATOMIC, 1 << 10);
    assert_ne!(cap_flag::XRC, cap_flag::ATOMIC);
    assert_eq!(mbox::CREATE_CQC, 0x16);
    assert_eq!(mbox::DESTROY_CQC, 0x17);
    assert_eq!(event::MB, 0x13);
    assert_eq!(reg::DB_SQ_L_0, 0x230);
    assert_eq!(db_cmd::CQ_NOTIFY, 4);
    assert_eq!(cmq_op::POST_MB, 0x8504);
    assert_eq!(pci_rev::HIP08, 0x21);
}

/// The parser itself: a made-up header with every form it must read.
#[test]
fn parser_reads_enums_and_defines() {
    let c = parse_text(
        "#define A 0x10 /* c */\n#define B BIT(3)\n#define C (1 << 2)\n\
         enum x { X0, X1 = BIT(4), // c\n X2,\n X3 = X0 };\n\
         enum { Y = PAGE_SIZE, Z, };\nint enumerate(void);\n",
    );
    let got: Vec<(&str, u64, Option<&str>)> = c
        .iter()
        .map(|c| (c.name.as_str(), c.value, c.tag.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("A", 0x10, None),
            ("X0", 0, Some("x")),
            ("X1", 16, Some("x")),
            ("X2", 17, Some("x")),
            ("X3", 0, Some("x")),
        ]
    );
}
