# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What `rdma res show` prints of a device's CQs, QPs and MRs, with the
driver's details (-dd) and the raw contexts read back from the engine
(-r), for scripts/restrack-diff.py to compare between the drivers.

dump(TAG) prints one line per query, "HNS-RESTRACK TAG KIND MODE JSON"
(KIND cq|qp|mr, or those of KINDS, e.g. srq; MODE dd|r), or "... ERROR
exit N: stderr" if rdma failed. Imported by user-objects.py, qp_states.py
and xrc_objects.py while their objects exist.
"""
import subprocess


def dump(tag, dev="hns_0", kinds=("cq", "qp", "mr")):
    for kind in kinds:
        where = ["link", dev] if kind == "qp" else ["dev", dev]
        for mode, flags in (("dd", ["-dd"]), ("r", ["-r"])):
            p = subprocess.run(["rdma", "-j"] + flags + ["res", "show", kind] + where,
                               capture_output=True, text=True, timeout=60)
            out = " ".join(p.stdout.split()) if p.returncode == 0 else \
                f"ERROR exit {p.returncode}: {' '.join(p.stderr.split())}"
            print(f"HNS-RESTRACK {tag} {kind} {mode} {out}", flush=True)
