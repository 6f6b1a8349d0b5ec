#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Generate hw_v2_fields.rs: the HIP08/HIP09 context field locations.

The locations are hardware facts published in the C driver's header
drivers/infiniband/hw/hns/hns_roce_hw_v2.h as `#define NAME XXX_FIELD_LOC(h, l)`.
This script turns them into Rust constants; tests/host re-reads the header and
checks the generated file against it, so a drift fails the host tests.

Usage: gen-fields.py KERNEL_SRC > hw_v2_fields.rs
       gen-fields.py KERNEL_SRC cmq > hns_roce_hw_v2/cmq_fields.rs

The second form writes the payload fields of the CMQ commands (the 24 data
bytes of a descriptor: `CMQ_REQ_FIELD_LOC`, `FUNC_CLEAR_FIELD_LOC`, ...),
all of them `Field<CmqData>`.
"""
import re
import sys

V2H = "hns_roce_hw_v2.h"
DEVH = "hns_roce_device.h"
# (C macro prefix, Rust layout type, C struct, dwords, doc, header)
LAYOUTS = [
    ("QPC", "Qpc", "hns_roce_v2_qp_context", 64, "QP context (QPC)", V2H),
    ("QPCEX", "QpcEx", "hns_roce_v2_qp_context_ex", 64, "extended QP context (QPCEX, HIP09)", V2H),
    ("CQC", "Cqc", "hns_roce_v2_cq_context", 16, "CQ context (CQC)", V2H),
    ("SRQC", "Srqc", "hns_roce_srq_context", 16, "SRQ context (SRQC)", V2H),
    ("MPT", "Mpt", "hns_roce_v2_mpt_entry", 16, "memory protection table entry (MPT)", V2H),
    ("EQC", "Eqc", "hns_roce_eq_context", 16, "event queue context (EQC)", V2H),
    ("AEQE", "Aeqe", "hns_roce_aeqe", 16, "asynchronous event queue entry (64-byte AEQE)", DEVH),
    ("CEQE", "Ceqe", "hns_roce_ceqe", 16, "completion event queue entry (64-byte CEQE)", DEVH),
    ("CQE", "Cqe", "hns_roce_v2_cqe", 16, "completion queue entry (CQE, 32 or 64 bytes)", V2H),
    ("UD_SEND_WQE", "UdSendWqe", "hns_roce_v2_ud_send_wqe", 16, "UD send WQE", V2H),
    ("RC_SEND_WQE", "RcSendWqe", "hns_roce_v2_rc_send_wqe", 16, "RC send WQE (its first 32 bytes; data segments follow)", V2H),
    ("FRMR", "FrmrSeg", "hns_roce_wqe_frmr_seg", 2, "fast-register segment after an RC send WQE's first 32 bytes (IB_WR_REG_MR)", V2H),
]
# Location macros not named PREFIX_FIELD_LOC.
LOC_MACRO = {"FRMR": "FRMR_WQE"}

# CMQ payloads: (C location macro, Rust module, C struct, doc). Every one is
# the 24-byte data area of a descriptor, so all share the `CmqData` layout.
# A payload named by its struct alone (no FIELD_LOC macro) has None as macro.
CMQ_LAYOUTS = [
    ("CMQ_REQ", "cmq_req", "hns_roce_cmq_req", "generic command payload"),
    (None, "query_version", "hns_roce_query_version", "QUERY_HW_VER payload"),
    (None, "query_fw_info", "hns_roce_query_fw_info", "QUERY_FW_VER payload"),
    (None, "pf_caps_a", "hns_roce_query_pf_caps_a", "QUERY_PF_CAPS_NUM, first descriptor"),
    (None, "pf_caps_b", "hns_roce_query_pf_caps_b", "QUERY_PF_CAPS_NUM, second descriptor"),
    (None, "pf_caps_f", "hns_roce_query_pf_caps_f", "QUERY_PF_CAPS_NUM, sixth descriptor"),
    ("FUNC_CLEAR", "func_clear", "hns_roce_func_clear", "FUNC_CLEAR payload"),
    ("VF_SWITCH", "vf_switch", "hns_roce_vf_switch", "SWITCH_PARAMETER_CFG payload"),
    ("SGID_TB", "sgid_tb", "hns_roce_cfg_sgid_tb", "CFG_SGID_TB payload (HIP08)"),
    ("SMAC_TB", "smac_tb", "hns_roce_cfg_smac_tb", "CFG_SMAC_TB payload (HIP08)"),
    ("GMV_TB_A", "gmv_tb_a", "hns_roce_cfg_gmv_tb_a", "CFG_GMV_TBL payload, first descriptor"),
    ("GMV_TB_B", "gmv_tb_b", "hns_roce_cfg_gmv_tb_b", "CFG_GMV_TBL payload, second descriptor"),
    ("PF_CAPS_C", "pf_caps_c", "hns_roce_query_pf_caps_c", "QUERY_PF_CAPS_NUM, third descriptor"),
    ("PF_CAPS_D", "pf_caps_d", "hns_roce_query_pf_caps_d", "QUERY_PF_CAPS_NUM, fourth descriptor"),
    ("PF_CAPS_E", "pf_caps_e", "hns_roce_query_pf_caps_e", "QUERY_PF_CAPS_NUM, fifth descriptor"),
    (None, "bond_info", "hns_roce_bond_info", "SET_BOND_INFO, CHANGE_ACTIVE_PORT and CLEAR_BOND_INFO payload"),
]


def cmq_fields(text, macro):
    """Every `#define NAME MACRO_FIELD_LOC(h, l)` of the header, in order."""
    found = re.findall(
        rf"^#define ([A-Z0-9_]+)\s+{macro}_FIELD_LOC\((\d+),\s*(\d+)\)\s*$", text, re.M
    )
    if not found:
        sys.exit(f"no {macro} fields found")
    return found


MEMBER_BITS = {"u8": 8, "__le16": 16, "__le32": 32}


def struct_members(text, cstruct):
    """(name, h, l) of each scalar member of `struct cstruct`, by offset.

    The CMQ payload structs are arrays of naturally aligned u8/__le16/__le32
    members, so a member's bits follow from the sizes before it; arrays and
    reserved members are skipped.
    """
    m = re.search(rf"^struct {cstruct} {{\n(.*?)^}};", text, re.M | re.S)
    if not m:
        sys.exit(f"struct {cstruct} not found")
    out, bit = [], 0
    for line in m.group(1).splitlines():
        d = re.match(r"\s*(u8|__le16|__le32)\s+(\w+)(\[(\d+)\])?;", line)
        if not d:
            sys.exit(f"struct {cstruct}: cannot read member line {line!r}")
        width = MEMBER_BITS[d.group(1)]
        if bit % width:
            sys.exit(f"struct {cstruct}: {d.group(2)} is not naturally aligned")
        count = int(d.group(4)) if d.group(4) else 1
        if count == 1 and not d.group(2).startswith(("rsv", "resv")):
            out.append((d.group(2), bit + width - 1, bit))
        bit += width * count
    if bit != 192:
        sys.exit(f"struct {cstruct} is {bit} bits, not the 192 of a CMQ payload")
    return out


def main_cmq(ksrc):
    text = open(f"{ksrc}/drivers/infiniband/hw/hns/{V2H}").read()
    out = [
        "// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB",
        "",
        "//! Field locations in the payloads of the HIP08/HIP09 CMQ commands.",
        "//!",
        "//! Generated by `scripts/gen-fields.py KSRC cmq` from the",
        "//! `*_FIELD_LOC(h, l)` definitions of the C driver's `hns_roce_hw_v2.h`;",
        "//! `tests/host` checks this file against that header. Do not edit by",
        "//! hand. Names are the C names; the bits count from the first byte of",
        "//! the descriptor's data area.",
        "",
        "use crate::cmdq::desc::CmqData;",
        "use crate::field::Field;",
        "",
    ]
    for macro, mod, cstruct, doc in CMQ_LAYOUTS:
        fields = cmq_fields(text, macro) if macro else []
        wide = [f for f in fields if int(f[1]) // 32 != int(f[2]) // 32]
        fields = [f for f in fields if f not in wide]
        # Struct members not already split into FIELD_LOC fields, named by
        # the member in capitals.
        if cstruct != "hns_roce_cmq_req":
            taken = [(int(h), int(l)) for _, h, l in fields + wide]
            for name, h, l in struct_members(text, cstruct):
                if not any(l <= th and tl <= h for th, tl in taken):
                    fields.append((name.upper(), str(h), str(l)))
        out += [f"/// Fields of the {doc}, `struct {cstruct}`.", f"pub mod {mod} {{", "    use super::*;", ""]
        for name, h, l in wide:
            out.append(f"    // {name} ({h}..={l}) spans several words and is copied whole.")
        if wide:
            out.append("")
        for name, h, l in fields:
            out.append(f"    /// Bits {h}..={l}.")
            out.append(f"    pub const {name}: Field<CmqData> = Field::new({h}, {l});")
        out += ["", "    /// Every field, by its C name, for table-driven checks.",
                "    pub const ALL: &[(&str, Field<CmqData>)] = &["]
        for name, h, l in fields:
            out.append(f"        (\"{name}\", {name}),")
        out += ["    ];", "}", ""]
    sys.stdout.write("\n".join(out))


def main():
    ksrc = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "cmq":
        return main_cmq(ksrc)
    hdrs = {h: open(f"{ksrc}/drivers/infiniband/hw/hns/{h}").read() for h in (V2H, DEVH)}
    out = [
        "// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB",
        "",
        "//! Field locations of the HIP08/HIP09 hardware contexts.",
        "//!",
        "//! Generated by `scripts/gen-fields.py` from the bit positions in the C",
        "//! driver's `hns_roce_hw_v2.h` and `hns_roce_device.h`; `tests/host` checks",
        "//! this file against those headers. Do not edit by hand.",
        "",
        "use crate::field::{Field, Layout};",
        "",
    ]
    for prefix, ty, cstruct, dwords, doc, _ in LAYOUTS:
        out += [
            f"/// Layout marker of the {doc}, `struct {cstruct}`.",
            f"pub struct {ty};",
            "",
            f"impl Layout for {ty} {{",
            f"    const DWORDS: usize = {dwords};",
            "}",
            "",
        ]
    for prefix, ty, cstruct, dwords, doc, h in LAYOUTS:
        fields = re.findall(
            rf"^#define ({prefix}_[A-Z0-9_]+)\s+{LOC_MACRO.get(prefix, prefix)}_FIELD_LOC\((\d+),\s*(\d+)\)\s*$",
            hdrs[h],
            re.M,
        )
        if not fields:
            sys.exit(f"no {prefix} fields found")
        # Locations spanning several words (a GID, a 64-bit VA) are not
        # accessed through hr_reg_*; the driver copies them as whole words.
        wide = [f for f in fields if int(f[1]) // 32 != int(f[2]) // 32]
        fields = [f for f in fields if f not in wide]
        mod = {"UdSendWqe": "ud_send_wqe", "RcSendWqe": "rc_send_wqe", "FrmrSeg": "frmr_seg"}.get(ty, ty.lower())
        out += [f"/// Fields of the {doc}.", f"pub mod {mod} {{", f"    use super::*;", ""]
        for name, h, l in wide:
            out.append(f"    // {name} ({h}..={l}) spans several words and is copied whole.")
            h, l = int(h), int(l)
            if l % 8 == 0 and (h + 1) % 8 == 0:
                short = name[len(prefix) + 1:]
                out.append(f"    /// Bytes of {name} in the context.")
                out.append(f"    pub const {short}_BYTES: core::ops::Range<usize> = {l // 8}..{(h + 1) // 8};")
        if wide:
            out.append("")
        for name, h, l in fields:
            short = name[len(prefix) + 1:]
            out.append(f"    /// Bits {h}..={l}.")
            out.append(f"    pub const {short}: Field<{ty}> = Field::new({h}, {l});")
        out += ["", f"    /// Every field, by its C name, for table-driven checks.",
                f"    pub const ALL: &[(&str, Field<{ty}>)] = &["]
        for name, h, l in fields:
            out.append(f"        (\"{name}\", {name[len(prefix) + 1:]}),")
        out += ["    ];", "}", ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
