#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare `ibv_devinfo -v` of an hns device with the caps table hns-sim
reported (`hns-sim --dump-caps` output). The expected values are derived
here from the caps, independently of the driver under test. Prints one TEST
line per attribute (group devinfo/, or the third argument); exit status 1
on any mismatch.

    sim-devinfo.py CAPS_FILE [DEV [GROUP]]"""
import re
import subprocess
import sys

caps_file, dev = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "hns_0"
group = sys.argv[3] if len(sys.argv) > 3 else "devinfo"
caps = {}
for line in open(caps_file):
    k, v = line.split("=")
    caps[k.strip()] = int(v.strip(), 0)

out = subprocess.run(["ibv_devinfo", "-v", "-d", dev], capture_output=True, text=True, check=True).stdout
info = {}
for line in out.splitlines():
    m = re.match(r"\s*([A-Za-z_ ]+?):\s+(.*)$", line)
    if m and m.group(1) not in info:
        info[m.group(1).strip()] = m.group(2).strip()

flag = caps["cap_flags"]
# A VF (PCI device 0xa22f) reports its own share of the BTs; a PF with VFs
# (func_num > 1) divides its totals by func_num (load_func_res_caps).
device = caps.get("pci_device", 0xA222)
funcs = 1 if device == 0xA22F else max(1, caps.get("func_num", 1))
expect = {
    "vendor_id": "0x19e5",
    "vendor_part_id": str(device),
    "hw_ver": hex(caps["hw_version"]),
    "max_qp": str(1 << caps["num_qps_log"]),
    "max_qp_wr": str(1 << caps["sq_depth_log"]),
    "max_sge": str(min(caps["max_sq_sg"], caps["max_rq_sg"])),
    "max_cq": str(1 << caps["num_cqs_log"]),
    "max_cqe": str(1 << caps["cq_depth_log"]),
    "max_mr": str(1 << caps["num_mrws_log"]),
    "max_pd": str(1 << caps["num_pds_log"]),
    "max_qp_rd_atom": str(caps["max_ord"]),
    "max_qp_init_rd_atom": str(caps["max_ord"]),
    "max_srq": str(1 << caps["num_srqs_log"]) if flag & (1 << 5) else "0",
    "max_srq_wr": str(1 << caps["srq_depth_log"]) if flag & (1 << 5) else "0",
    "max_srq_sge": str(caps["max_srq_sges"]) if flag & (1 << 5) else "0",
    "max_pkeys": "1",
    "atomic_cap": "ATOMIC_HCA (1)" if flag & (1 << 10) else "ATOMIC_NONE (0)",
    "num_comp_vectors": str(caps["num_ceqs"]),
    "state": "PORT_ACTIVE (4)",
    "link_layer": "Ethernet",
    "max_mtu": {1: "256 (1)", 2: "512 (2)", 3: "1024 (3)", 4: "2048 (4)", 5: "4096 (5)"}[caps["max_mtu"]],
    # HIP08 (revision 0x21) has no GMV table: the firmware's max_gid, shared
    # among the functions (apply_func_caps).
    "gid_tbl_len": str(caps["max_gid"] // funcs) if caps.get("pci_revision") == 0x21
    else str(min(256, caps["gmv_bt_num"] // funcs * 128)),
    "fw_ver": "%d.%d.%03d" % (caps["fw_ver"] >> 32 & 0xffff, caps["fw_ver"] >> 16 & 0xffff, caps["fw_ver"] & 0xffff),
}
fails = 0
for k, v in expect.items():
    got = info.get(k)
    if got == v:
        print(f"TEST {group}/{k} PASS")
    else:
        fails += 1
        print(f"TEST {group}/{k} FAIL expected '{v}', got '{got}'")
xrc = "XRC" in out.split("device_cap_flags:", 1)[1].split("max_sge", 1)[0]
if xrc == bool(flag & (1 << 6)):
    print(f"TEST {group}/xrc-cap PASS")
else:
    fails += 1
    print(f"TEST {group}/xrc-cap FAIL XRC listed: {xrc}")
sys.exit(1 if fails else 0)
