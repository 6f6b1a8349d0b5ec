#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare the probe fault sweeps of the C and the Rust driver
(tests/guest/faults-plan.sh, run by scripts/faults.sh).

  compare-faults.py C_OUTPUT C_TRACE RS_OUTPUT RS_TRACE [REPORT]

For every armed fault (and every runtime mailbox case, "MBX" lines of
tests/guest/mbx_faults.py): the probe's or the verb's outcome (registered or failed) and the
driver's kernel log lines must be the same, and the part of the hns-sim
trace from arming the fault to disarming it (the probe, its unwind and the
unload) must be equal once normalised (scripts/trace-diff.py). Prints one
row per fault and a summary; writes the rows to REPORT as a Markdown
table if given. Exits 1 when any fault differs or is missing on one side.
"""
import os
import re
import subprocess
import sys
import tempfile

FAULT = re.compile(r"^FAULT (\S+) (\S+) (\S+) \| ?(.*)$")
MBX = re.compile(r"^MBX (\S+) (ok|errno \S+|event [^|]*?) \| ?(.*)$")
# The control command an event case armed (its queue number may differ
# between the drivers' runs).
ARM = re.compile(r"^ARM (\S+) (\S+)$")
# The mailbox command each runtime case arms (tests/guest/mbx_faults.py).
MBX_CMD = {"mr-create": 0x0D, "mr-dereg": 0x0F, "mr-rereg-query": 0x62,
           "mr-rereg-destroy": 0x0F, "mr-rereg-create": 0x0D,
           "cq-create": 0x16, "cq-destroy": 0x17, "qp-modify": 0x41,
           "qp-query": 0x42, "qp-destroy": 0x41, "srq-create": 0x70,
           "srq-modify": 0x72, "srq-query": 0x73, "srq-destroy": 0x74}
# Cases that arm nothing (they check what a previous fault left): outcome
# and log only.
MBX_UNARMED = {"mr-rereg-after-failure", "live-reset", "live-rmmod"}
CONTROL = re.compile(r"^# control: (.*)$")


def outcomes(path):
    """(opcode, kind) -> (outcome, log) from a plan's output; the runtime
    mailbox cases as ("mbx", case)."""
    res = {}

    def norm(log):
        # The driver's own name differs; the messages must not.
        return log.replace("hns_roce_rs", "DRV").replace("hns_roce_hw_v2", "DRV")

    with open(path, errors="replace") as f:
        for line in f:
            m = FAULT.match(line.rstrip("\n"))
            if m:
                res[(m.group(1), m.group(2))] = (m.group(3), norm(m.group(4)))
            m = MBX.match(line.rstrip("\n"))
            if m:
                res[("mbx", m.group(1))] = (m.group(2), norm(m.group(3)))
            m = ARM.match(line.rstrip("\n"))
            if m:
                ARMED.setdefault(path, {})[m.group(1)] = m.group(2)
    return res


def segments(path):
    """Armed fault spec -> the trace lines from arming it to `clear`, one
    list per time it was armed, in order."""
    segs, cur, lines = {}, None, []
    with open(path, errors="replace") as f:
        for line in f:
            m = CONTROL.match(line.rstrip("\n"))
            if m:
                if cur is not None:
                    segs.setdefault(cur, []).append(lines)
                cur = None if m.group(1) == "clear" else m.group(1)
                lines = []
            elif cur is not None:
                lines.append(line)
    if cur is not None:
        segs.setdefault(cur, []).append(lines)
    return segs


ARMED = {}


def spec(op, kind, out=None):
    if op == "mbx" and kind in ARMED.get(out, {}):
        return ARMED[out][kind]
    if op == "mbx":
        # A case without its command here has no trace segment to compare:
        # a difference, not a silent pass.
        return f"mbx:{MBX_CMD[kind]:#x}:0x11:once" if kind in MBX_CMD else None
    m = re.match(r"mbx-(0x[0-9a-f]+)-tag(\d+)$", op)
    if m:
        # A probe mailbox failed for one object (faults-plan.sh's EQ cases).
        return f"mbx:{m.group(1)}:0x11:once:tag={m.group(2)}"
    return f"0x{op}:6:once" if kind == "err" else f"0x{op}:timeout:once"


def trace_equal(a, b, tmp):
    pa, pb = os.path.join(tmp, "c.txt"), os.path.join(tmp, "rs.txt")
    with open(pa, "w") as f:
        f.writelines(a)
    with open(pb, "w") as f:
        f.writelines(b)
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace-diff.py")
    r = subprocess.run([sys.executable, tool, "--full", pa, pb], capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr).strip().splitlines()


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__.strip().splitlines()[2].strip())
        return 2
    c_out, c_tr, rs_out, rs_tr = sys.argv[1:5]
    report = sys.argv[5] if len(sys.argv) == 6 else None
    co, ro = outcomes(c_out), outcomes(rs_out)
    cs, rs = segments(c_tr), segments(rs_tr)
    keys = list(co) + [k for k in ro if k not in co]
    rows, bad = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for k in keys:
            c, r = co.get(k), ro.get(k)
            if c is None or r is None:
                rows.append((k, c[0] if c else "-", r[0] if r else "-", "missing", "missing", ""))
                bad += 1
                continue
            same_log = c[1] == r[1]
            s = spec(*k, c_out)
            if k[0] == "mbx" and k[1] in MBX_UNARMED:
                ok = c[0] == r[0] and same_log
                bad += 0 if ok else 1
                rows.append((k, c[0], r[0], "equal" if same_log else "differ", "-", ""))
                continue
            if s is None:
                rows.append((k, c[0], r[0], "-", "unknown", "no mailbox command in MBX_CMD"))
                bad += 1
                continue
            # The n-th time a spec was armed on one side is compared with
            # the n-th on the other.
            sc, sr = spec(*k, c_out), spec(*k, rs_out)
            nc = sum(1 for j in keys[: keys.index(k)] if spec(*j, c_out) == sc)
            nr = sum(1 for j in keys[: keys.index(k)] if spec(*j, rs_out) == sr)
            ca, ra = cs.get(sc, []), rs.get(sr, [])
            teq, diff = trace_equal(ca[nc] if nc < len(ca) else [], ra[nr] if nr < len(ra) else [], tmp)
            note = ""
            if not same_log:
                note = f"C: {c[1][:160]} / Rust: {r[1][:160]}"
            elif not teq:
                note = " ".join(d for d in diff if d.startswith(("-", "+")) and not d.startswith(("---", "+++")))[:200]
            ok = c[0] == r[0] and same_log and teq
            bad += not ok
            rows.append((k, c[0], r[0], "equal" if same_log else "differ", "equal" if teq else "differ", note))
    width = max((len(f"{k[0]} {k[1]}") for k, *_ in rows), default=10)
    for k, c, r, lg, tr, note in rows:
        flag = "  " if c == r and lg == "equal" and tr in ("equal", "-") else "!!"
        print(f"{flag} {k[0]} {k[1]:<7} C {c:<10} Rust {r:<10} log {lg:<6} trace {tr:<6} {note}"[: 400])
    print(f"{len(rows) - bad} of {len(rows)} faults alike on both drivers, {bad} differ")
    if report:
        with open(report, "w") as f:
            f.write("| opcode | fault | C | Rust | log | trace | difference |\n|---|---|---|---|---|---|---|\n")
            for k, c, r, lg, tr, note in rows:
                f.write(f"| {k[0]} | {k[1]} | {c} | {r} | {lg} | {tr} | {note.replace('|', '/')} |\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
