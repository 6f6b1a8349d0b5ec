#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Generate hns_roce_hw_v2/consts.rs: the HIP08/HIP09 hardware constants.

Capability flags, mailbox and CMQ opcodes, event types, doorbell commands,
register offsets and PCI revisions are hardware facts published in the C
driver's headers (hns_roce_device.h, hns_roce_hw_v2.h, hns_roce_cmd.h,
hns_roce_common.h) as enum members and #defines. This script turns each
group into one Rust module; tests/host re-reads the headers on its own and
checks every value and that no member of a group is missing, so a drift fails
the host tests.

Usage: gen-consts.py KERNEL_SRC > hns_roce_hw_v2/consts.rs
"""
import re
import sys

DEVH = "hns_roce_device.h"
V2H = "hns_roce_hw_v2.h"
CMDH = "hns_roce_cmd.h"
COMH = "hns_roce_common.h"

# (Rust module, Rust type, header, kind, C name pattern, name prefixes to
# strip, doc). kind: "enum" takes enum members, "define" #defines.
GROUPS = [
    ("pci_rev", "u8", DEVH, "define", r"PCI_REVISION_ID_\w+", ["PCI_REVISION_ID_"],
     "PCI revision IDs of the RoCE engines (`PCI_REVISION_ID_*`)."),
    ("cap_flag", "u32", DEVH, "enum", r"HNS_ROCE_CAP_FLAG_\w+", ["HNS_ROCE_CAP_FLAG_"],
     "Capability flags of `caps.flags` (`HNS_ROCE_CAP_FLAG_*`)."),
    ("event", "u32", DEVH, "enum", r"HNS_ROCE_EVENT_TYPE_\w+", ["HNS_ROCE_EVENT_TYPE_"],
     "Event types of AEQEs (`enum hns_roce_event`)."),
    ("mbox", "u8", CMDH, "enum", r"HNS_ROCE_CMD_\w+", ["HNS_ROCE_CMD_"],
     "Mailbox commands (`HNS_ROCE_CMD_*` of `hns_roce_cmd.h`)."),
    ("cmq_op", "u16", V2H, "enum:hns_roce_opcode_type", r"\w+",
     ["HNS_ROCE_OPC_", "HNS_ROCE_", "HNS_"],
     "Command queue opcodes (`enum hns_roce_opcode_type`)."),
    ("db_cmd", "u64", V2H, "enum", r"HNS_ROCE_V2_(SQ|RQ|SRQ|CQ)_DB\w*", ["HNS_ROCE_V2_"],
     "Commands of the queue doorbells (`HNS_ROCE_V2_*_DB*`)."),
    ("eq_db_cmd", "u64", V2H, "define", r"HNS_ROCE_EQ_DB_CMD_\w+", ["HNS_ROCE_EQ_DB_CMD_"],
     "Commands of the EQ doorbell (`HNS_ROCE_EQ_DB_CMD_*`)."),
    ("reg", "usize", COMH, "define", r"ROCEE_\w+", ["ROCEE_"],
     "Register offsets in the function's register window (`ROCEE_*`)."),
    ("mpt_st", "u32", V2H, "enum", r"V2_MPT_ST_\w+", ["V2_MPT_ST_"],
     "States of an MPT entry (`V2_MPT_ST_*`): valid, or free until a fast registration."),
    ("frmr", "u32", DEVH, "define", r"HNS_ROCE_FRMR_\w+", ["HNS_ROCE_FRMR_"],
     "Fast-register MRs: most pages (`HNS_ROCE_FRMR_MAX_PA`), alignment of the SG offset."),
    ("hw_page", "u32", DEVH, "define", r"HNS_HW_(MAX_)?PAGE_SHIFT", ["HNS_HW_"],
     "Page sizes the engine addresses: the smallest and the largest (`HNS_HW_*PAGE_SHIFT`)."),
    ("mpt_shift", "u32", V2H, "define", r"MPT_PBL_\w+_ADDR_S", ["MPT_"],
     "Shifts of the addresses in a PBL MPT entry (`MPT_PBL_*_ADDR_S`)."),
    ("cqe_size", "u32", DEVH, "define", r"HNS_ROCE_V\d_CQE_SIZE", ["HNS_ROCE_"],
     "CQE sizes a user CQ may ask for (`HNS_ROCE_V*_CQE_SIZE`)."),
    ("wqe_op", "u32", V2H, "enum", r"HNS_ROCE_V2_WQE_OP_\w+", ["HNS_ROCE_V2_WQE_OP_"],
     "Send WQE opcodes, also the opcode of a send CQE (`HNS_ROCE_V2_WQE_OP_*`)."),
    ("recv_op", "u32", V2H, "enum", r"HNS_ROCE_V2_OPCODE_\w+", ["HNS_ROCE_V2_OPCODE_"],
     "Opcodes of a receive CQE (`HNS_ROCE_V2_OPCODE_*`)."),
    ("cqe_status", "u32", V2H, "enum", r"HNS_ROCE_(CQE_V2|V2_CQE_STATUS)_\w+",
     ["HNS_ROCE_CQE_V2_", "HNS_ROCE_V2_CQE_"],
     "CQE status values (`HNS_ROCE_CQE_V2_*`)."),
    ("cq_notify", "u32", V2H, "define", r"V2_CQ_DB_REQ_\w+", ["V2_CQ_DB_"],
     "Arm kinds of the CQ notify doorbell (`V2_CQ_DB_REQ_NOT*`)."),
    ("sge", "u32", DEVH, "define", r"HNS_ROCE_SGE_(IN_WQE|SIZE|SHIFT)|ATOMIC_WR_LEN|HNS_ROCE_DWQE_SIZE",
     ["HNS_ROCE_"],
     "Send WQE sizes: data segments in the WQE, their size, the atomic length, the per-QP SQ doorbell stride (`HNS_ROCE_DWQE_SIZE`)."),
    ("msg", "u32", DEVH, "define", r"HNS_ROCE_MAX_MSG_LEN", ["HNS_ROCE_"],
     "The largest message the engine carries (`HNS_ROCE_MAX_MSG_LEN`)."),
    ("inv_sge", "u32", V2H, "define", r"HNS_ROCE_INVALID_(LKEY|SGE_LENGTH)", ["HNS_ROCE_INVALID_"],
     "The reserved SGE that ends an RQ or SRQ WQE early (`HNS_ROCE_INVALID_*`)."),
    ("wqe_inl", "u32", V2H, "define", r"HNS_ROCE_V2_MAX_RC_INL_INN_SZ", ["HNS_ROCE_V2_"],
     "Inline data kept inside an RC WQE (`HNS_ROCE_V2_MAX_RC_INL_INN_SZ`)."),
    ("cq_moder", "u32", V2H, "define", r"HNS_ROCE_(CLOCK_ADJUST|MAX_CQ_PERIOD_HIP08)",
     ["HNS_ROCE_"],
     "CQ moderation on HIP08: the period's clock factor and its largest value in microseconds."),
    ("srq_lim", "u32", DEVH, "define", r"HNS_ROCE_(MIN_SRQ_WQE_NUM|IDX_QUE_ENTRY_SZ)",
     ["HNS_ROCE_"],
     "SRQ sizes: the fewest WQEs of an SRQ and the bytes of an index queue entry."),
    ("dev_reg", "usize", DEVH, "define", r"SRQ_DB_REG", [],
     "The SRQ doorbell register of a kernel SRQ without record doorbell (`SRQ_DB_REG`)."),
    ("abn_bit", "u32", V2H, "define", r"HNS_ROCE_V2_VF_(INT_ST_AEQ_OVERFLOW|ABN_INT_EN)_S",
     ["HNS_ROCE_V2_VF_"],
     "Bits of the abnormal interrupt status and enable registers (`HNS_ROCE_V2_VF_*_S`)."),
    ("free_mr", "u32", V2H, "define", r"HNS_ROCE_(V2_)?FREE_MR_\w+", ["HNS_ROCE_V2_FREE_MR_", "HNS_ROCE_FREE_MR_USED_"],
     "HIP08's free-MR loopback QPs: how many, their queue sizes, PSN, retry count and ACK timeout, and how long a round waits for their completions (ms)."),
]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def value(expr, known):
    """(rust literal, int) of a C constant expression we accept."""
    expr = expr.strip()
    m = re.fullmatch(r"BIT\((\d+)\)", expr)
    if m:
        return f"1 << {m.group(1)}", 1 << int(m.group(1))
    m = re.fullmatch(r"0[xX]([0-9a-fA-F]+)", expr)
    if m:
        return f"0x{m.group(1).lower()}", int(m.group(1), 16)
    if re.fullmatch(r"\d+", expr):
        return expr, int(expr)
    # Anything else (sizes from PAGE_SIZE, expressions): not a constant of
    # ours; members after it are unknown too.
    return known.get(expr)


def enums(text):
    """Every enum member: (enum tag or '', name, rust literal, int)."""
    out = []
    known = {}
    for tag, body in re.findall(r"\benum\s*(\w*)\s*\{(.*?)\}", strip_comments(text), re.S):
        nxt = 0
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                name, expr = item.split("=", 1)
                name = name.strip()
                v = value(expr, known)
            else:
                name = item
                v = None if nxt is None else (str(nxt), nxt)
            if v is None:
                nxt = None
                continue
            known[name] = v
            out.append((tag, name, v[0], v[1]))
            nxt = v[1] + 1
    return out


def defines(text):
    """Every numeric #define: (name, rust literal, int)."""
    out = []
    for name, expr in re.findall(r"^#define\s+(\w+)\s+(0[xX][0-9a-fA-F]+|\d+)\s*$",
                                 strip_comments(text), re.M):
        out.append((name, *value(expr, {})))
    return out


def rust_name(mod, cname, prefixes):
    for p in prefixes:
        if cname.startswith(p):
            cname = cname[len(p):]
            break
    # Registers lose their _REG, queue doorbell commands their _DB.
    if mod == "reg" and cname.endswith("_REG"):
        cname = cname[: -len("_REG")]
    if mod == "db_cmd":
        cname = cname.replace("_DB_NOTIFY", "_NOTIFY")
        if cname.endswith("_DB"):
            cname = cname[: -len("_DB")]
    # C names such as HNS_ROCE_CMD_2ERR_QP: "to ERR".
    if cname[0].isdigit():
        cname = "TO_" + cname[1:]
    return cname


def main():
    ksrc = sys.argv[1]
    hdrs = {h: open(f"{ksrc}/drivers/infiniband/hw/hns/{h}").read()
            for h in (DEVH, V2H, CMDH, COMH)}
    out = [
        "// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB",
        "",
        "//! Hardware constants of the HIP08/HIP09 RoCE engines, defined once.",
        "//!",
        "//! Generated by `scripts/gen-consts.py` from the C driver's",
        "//! `hns_roce_device.h`, `hns_roce_hw_v2.h`, `hns_roce_cmd.h` and",
        "//! `hns_roce_common.h`; `tests/host` checks every value (and that no",
        "//! member of a group is missing) against those headers. Do not edit by",
        "//! hand. Each module's `ALL` lists its constants by their C names.",
        "",
    ]
    for mod, ty, h, kind, pat, prefixes, doc in GROUPS:
        if kind.startswith("enum"):
            tag = kind.split(":", 1)[1] if ":" in kind else None
            items = [(n, lit, v) for t, n, lit, v in enums(hdrs[h])
                     if (tag is None or t == tag) and re.fullmatch(pat, n)]
        else:
            items = [d for d in defines(hdrs[h]) if re.fullmatch(pat, d[0])]
        if not items:
            sys.exit(f"no constants for {mod}")
        names = [rust_name(mod, n, prefixes) for n, _, _ in items]
        if len(set(names)) != len(names):
            sys.exit(f"{mod}: Rust names collide")
        out += [f"/// {doc}", f"pub mod {mod} {{"]
        for (cname, lit, _), name in zip(items, names):
            out.append(f"    /// `{cname}`.")
            out.append(f"    pub const {name}: {ty} = {lit};")
        out += ["", "    /// Every constant of the module, by its C name.",
                f"    pub const ALL: &[(&str, {ty})] = &["]
        for (cname, _, _), name in zip(items, names):
            line = f"        (\"{cname}\", {name}),"
            # rustfmt's layout of a tuple whose items take more than 60
            # columns (`fn_call_width`).
            if len(f"\"{cname}\", {name}") > 60:
                out += ["        (", f"            \"{cname}\",", f"            {name},", "        ),"]
            else:
                out.append(line)
        out += ["    ];", "}", ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
