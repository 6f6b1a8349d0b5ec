#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Known kernel-log reports of code that is not ours, for the guest runs that
# cannot avoid them (run-guest.sh with HNS_GUEST_KNOWN="NAME ..."). Each
# NAME below is a fault documented in docs/c-driver-findings.md. A report
# (from a line matching run-guest.sh's "bad" pattern to the end of its
# backtrace, "</TASK>" or "---[ end trace") whose first line matches the
# fault's `head` and whose text matches every one of its `body` patterns
# is left out of CONSOLE_OUT and counted; every other report stays, so it
# still fails the run. A report without an end (cut off) always stays.
#
#   known-faults.py BAD_ERE CONSOLE CONSOLE_OUT COUNTS NAME...
#
# COUNTS gets one line per NAME: "NAME COUNT DOC"; exit 2 on an unknown
# NAME.
import re
import sys

KNOWN = {
    # The C driver allocates with GFP_KERNEL in map_mr_sg, which ULPs call
    # where they cannot sleep (nvme-rdma's queue_rq, under RCU).
    "hns-map-mr-sg-sleeps": {
        "head": r"BUG: sleeping function called from invalid context|WARNING: suspicious RCU usage",
        "body": [r"\shns_roce_map_mr_sg\+0x"],
        "doc": "docs/c-driver-findings.md 10",
    },
    # nvmet-rdma: a connect handled from the RDMA CM's handler (handler_mutex
    # -> nvmet_config_sem), then a port disabled under nvmet_config_sem
    # (-> rdma_destroy_id -> handler_mutex). Not the RoCE driver's.
    "nvmet-rdma-port-lockdep": {
        "head": r"WARNING: possible circular locking dependency detected",
        "body": [r"\(nvmet_config_sem\)", r"\(&id_priv->handler_mutex\)", r"\snvmet_rdma_remove_port\+0x"],
        "doc": "docs/c-driver-findings.md 11",
    },
    # The C driver at a function reset: its exit takes the QP table's xarray
    # lock (the lock class it shares with the DIP xarray) with interrupts on,
    # while the CQ lock, taken in softirq by poll_cq, nests that class.
    "hns-cq-xa-irq-inversion": {
        "head": r"WARNING: possible irq lock inversion dependency detected",
        "body": [r"\(&hr_cq->lock\)", r"\shns_roce_v2_exit\+0x"],
        "doc": "docs/c-driver-findings.md 2",
    },
    # The C driver's CQ is in its table with refcount 0 during CREATE_CQC:
    # an AEQ CQ event for its number then does refcount_inc on 0, the
    # decrement after it underflows and a later increment finds the count
    # saturated (three WARN_ONCEs, so at most three a boot).
    "hns-cq-event-refcount-zero": {
        "head": r"WARNING:.*refcount_warn_saturate",
        "body": [r"\shns_roce_cq_event\+0x"],
        "doc": "docs/c-driver-findings.md 21",
    },
}

END = re.compile(r"</TASK>|---\[ end trace")


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__ or "usage: known-faults.py BAD_ERE CONSOLE CONSOLE_OUT COUNTS NAME...")
    bad = re.compile(sys.argv[1])
    src, dst, counts, names = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    for n in names:
        if n not in KNOWN:
            print(f"known-faults.py: unknown fault {n!r} (known: {' '.join(KNOWN)})", file=sys.stderr)
            sys.exit(2)
    faults = [(n, re.compile(KNOWN[n]["head"]), [re.compile(b) for b in KNOWN[n]["body"]]) for n in names]
    seen = dict.fromkeys(names, 0)
    out, block = [], None
    with open(src, encoding="utf-8", errors="replace") as f:
        for line in f:
            if block is None:
                if bad.search(line):
                    block = [line]
                else:
                    out.append(line)
                continue
            block.append(line)
            if not END.search(line):
                continue
            text = "".join(block)
            for n, head, body in faults:
                if head.search(block[0]) and all(b.search(text) for b in body):
                    seen[n] += 1
                    break
            else:
                out.extend(block)
            block = None
    if block is not None:
        out.extend(block)
    with open(dst, "w", encoding="utf-8") as f:
        f.writelines(out)
    with open(counts, "w", encoding="utf-8") as f:
        for n in names:
            f.write(f"{n} {seen[n]} {KNOWN[n]['doc']}\n")


if __name__ == "__main__":
    main()
