#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare the hns_roce trace events of a C and a Rust boot of one plan.

The plan prints each event's format file as `TRACEFMT EVENT LINE` lines
(without the ID line, which differs from boot to boot) and the events of a
window as `TRACEEV EVENT: TEXT` lines (tests/guest/kpath-plan.sh). Reads
both boots' output.log.

  trace-events-diff.py --formats C_OUTPUT RS_OUTPUT
  trace-events-diff.py --events C_OUTPUT RS_OUTPUT

--formats: the format files must be equal, line for line, and there must
be the ten of the C driver's hns_roce_trace.h.

--events: for each event, the two boots must have the same events in the
same order, once what differs from run to run is masked: DMA addresses
(the in and out parameters of a POST_MB descriptor, which the mailbox
event's AEQE carries back; the base address CFG_GMV_BT configures; the
address of each SGE in a receive WQE), WR ids (kernel pointers for
ib_mad's WRs) and user MRs' I/O addresses. Events of different kinds are
not compared in their order between each other: an AEQE's interrupt
lands before or after the command that caused it returns, from run to
run. The window must hold events.

Exits 1 on a difference, printing a unified diff per event.
"""
import difflib
import re
import sys

EVENTS = ("hns_sq_wqe", "hns_rq_wqe", "hns_srq_wqe", "hns_sq_flush_cqe",
          "hns_rq_flush_cqe", "hns_ae_info", "hns_mr", "hns_buf_attr",
          "hns_cmdq_req", "hns_cmdq_resp")

# Command queue opcodes whose payload words hold DMA addresses, and which:
# (first descriptor of a chain, the others).
POST_MB = 0x8504
CFG_EXT_LLM = 0x8403
CFG_GMV_BT = 0x8510
CMDQ_ADDR_WORDS = {
    POST_MB: ((0, 1, 2, 3), (0, 1, 2, 3)),
    # The link table's address, its head page's; then its tail page's.
    CFG_EXT_LLM: ((0, 1, 3), (0, 1)),
    CFG_GMV_BT: ((0, 1), (0, 1)),
}
# Descriptor flag: more descriptors of the command follow.
CMDQ_FLAG_NEXT = 0x4
# The AEQE of a mailbox completion: words 1 and 2 are its out parameter.
AE_MB = 19
# Per event: whether the last descriptor had NEXT (the next one is not a
# chain's first).
STATE = {}
# The GSI QP, whose UD WQEs carry the flow label and UDP source port
# rdma_cm derives from its random connection ports: word 5's upper half
# and word 9's low 20 bits.
GSI_QPN = 1
UD_FLOW_WORDS = ((5, 0xffff0000), (9, 0xfffff))
# Memory region type of a user MR (its I/O address is the process's).
MR_TYPE_MR = 0


def lines(path, tag):
    """The lines of `path` that start with `tag` and a space, without it."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(tag + " "):
                out.append(line.rstrip("\n")[len(tag) + 1:])
    return out


def words(text):
    """The words of a `{0x..,0x..}` array."""
    return text.strip("{}").split(",") if text.strip("{}") else []


def join(ws):
    return "{" + ",".join(ws) + "}"


def mask_words(text, idx):
    ws = words(text)
    for i in idx:
        if i < len(ws):
            ws[i] = "A"
    return join(ws)


def mask(ev, text):
    """The event's text with what differs from run to run masked."""
    if ev == "hns_cmdq_req" or ev == "hns_cmdq_resp":
        m = re.match(r"(.* opcode:(0x[0-9a-f]+), flag:(0x[0-9a-f]+), .* data:)(\{.*\})$", text)
        if m:
            first, rest = CMDQ_ADDR_WORDS.get(int(m.group(2), 16), ((), ()))
            # A chain's first descriptor: NEXT, and the previous one had
            # no NEXT (tracked by the caller through `state`).
            idx = rest if STATE.get(ev) else first
            STATE[ev] = bool(int(m.group(3), 16) & CMDQ_FLAG_NEXT)
            return m.group(1) + mask_words(m.group(4), idx)
    elif ev == "hns_ae_info":
        m = re.match(r"(event +(\d+) aeqe: )(\{.*\})$", text)
        if m and int(m.group(2)) == AE_MB:
            return m.group(1) + mask_words(m.group(3), (1, 2))
    elif ev in ("hns_sq_wqe", "hns_rq_wqe", "hns_srq_wqe"):
        m = re.match(r"(\S+ (0x[0-9a-f]+) wqe\(0x[0-9a-f]+/)0x[0-9a-f]+(\): )(\{.*\})$", text)
        if m:
            arr = m.group(4)
            if ev == "hns_sq_wqe" and int(m.group(2), 16) == GSI_QPN:
                ws = words(arr)
                for i, bits in UD_FLOW_WORDS:
                    if i < len(ws):
                        ws[i] = hex(int(ws[i], 16) & ~bits & 0xffffffff) + "+F"
                arr = join(ws)
            elif ev != "hns_sq_wqe":
                # Receive WQEs are SGEs of four words: length, key, address.
                n = len(words(arr))
                arr = mask_words(arr, [i for i in range(n) if i % 4 in (2, 3)])
            return m.group(1) + "ID" + m.group(3) + arr
    elif ev == "hns_mr":
        m = re.match(r"iova:0x[0-9a-f]+(,.* type:(-?\d+),.*)$", text)
        if m and int(m.group(2)) == MR_TYPE_MR:
            return "iova:A" + m.group(1)
    return text


def by_event(path):
    per = {}
    STATE.clear()
    for line in lines(path, "TRACEEV"):
        ev, _, text = line.partition(": ")
        per.setdefault(ev, []).append(mask(ev, text))
    return per


def formats(c_path, rs_path):
    c, rs = lines(c_path, "TRACEFMT"), lines(rs_path, "TRACEFMT")
    names = sorted({ln.split(" ", 1)[0] for ln in c})
    if names != sorted(EVENTS):
        print(f"C's format files: {', '.join(names) or 'none'}; want the ten of hns_roce_trace.h")
        return 1
    if c != rs:
        sys.stdout.writelines(difflib.unified_diff(
            [ln + "\n" for ln in c], [ln + "\n" for ln in rs], "C", "Rust", n=2))
        return 1
    print(f"{len(names)} format files equal ({len(c)} lines)")
    return 0


def events(c_path, rs_path):
    c, rs = by_event(c_path), by_event(rs_path)
    if not c:
        print("no event in the C boot's window")
        return 1
    bad = 0
    for ev in EVENTS:
        a, b = c.get(ev, []), rs.get(ev, [])
        if a != b:
            bad += 1
            print(f"{ev}: C {len(a)}, Rust {len(b)} events")
            diff = list(difflib.unified_diff(
                [x + "\n" for x in a], [x + "\n" for x in b], "C", "Rust", n=1))
            sys.stdout.writelines(diff[:30])
    for ev in sorted(set(rs) - set(EVENTS)):
        bad += 1
        print(f"{ev}: an event C does not have ({len(rs[ev])})")
    if bad:
        return 1
    total = sum(len(v) for v in c.values())
    kinds = ", ".join(f"{len(c[e])} {e}" for e in EVENTS if e in c)
    print(f"{total} events equal ({kinds})")
    return 0


def main(argv):
    if len(argv) != 4 or argv[1] not in ("--formats", "--events"):
        sys.exit("usage: trace-events-diff.py --formats|--events C_OUTPUT RS_OUTPUT")
    f = formats if argv[1] == "--formats" else events
    return f(argv[2], argv[3])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
