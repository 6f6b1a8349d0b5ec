#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare the hns-sim traces of the C driver and the Rust driver.

DMA addresses are normalised: the ones hns-sim marks with `@`, and the
address fields inside the contexts it prints (`ctx QPC/CQC/MPT/SRQC/AEQC/
CEQC` lines), found by name (`*_BA_*`, `*_ADDR_*`, `PA0/PA1`, VAs) in the
generated field maps (`hw_v2_fields.rs`). Two runs of the same driver and
workload normalise to the same trace. Notes (`# ...`) are ignored.

  trace-diff.py --full [--mask-psn] [--mask-flow] [--mask-pgsz] [--collapse-repeats] [--mask-tokens]
                [--unordered] C_TRACE RS_TRACE
  trace-diff.py --full --only KIND C_TRACE RS_TRACE

The traces must be equal; prints a unified diff and exits 1 on a difference.
--mask-psn also masks the QPC's packet sequence numbers (the fields whose
name ends in PSN, PSN_L or PSN_H): rdma-core's pingpongs and perftest pick their start
PSNs at random (lrand48 seeded from pid and time), so two runs of the same
workload differ there and nowhere else.
--mask-flow also masks the QPC's flow label and UDP source port (FL,
UDPSPN): rdma_cm derives the flow label of its QPs from the connection's
ports, which are random.
--mask-pgsz also masks the MPT's buffer page size (PBL_BUF_PG_SZ): for a
user MR both drivers take the largest page size the pinned pages allow
(ib_umem_find_best_pgsz), so an MR of two pages the kernel happened to
give physically contiguous and aligned gets 8 KiB pages in one run and
4 KiB in another (rping's 64-byte buffers across a page boundary, seen
on the arm64 guest).
--collapse-repeats drops a MODIFY_QPC (the POST_MB, the mailbox, its
context and answer, the QUERY_MB_ST polls after it) whose mailbox and
context equal those of the previous mailbox of the same QP: it changes
nothing. HIP08's free-MR QPs get such
repeats, as many as their flush requests happened not to coincide (an
error CQE and an error event of the same round; on the C driver each
request runs on the workqueue when it gets to it), a number that varies
from run to run on either driver; an rdma_cm QP can get two equal moves
to ERR (rdma_disconnect, then the peer's) or one.
--mask-tokens masks mailbox tokens (and the tags of chunk releases, see
--unordered) in an ordered comparison: for a window cut out of a run,
whose tokens count every mailbox posted before it.
--unordered is for workloads of several processes at once (a pingpong's
server and client), whose commands interleave differently from run to run:
mailbox tokens are masked, the traces must hold the same lines the same
number of times, and every object (mailbox tag per context kind: QPC, CQC,
MPT, ...) must see the same mailboxes and contexts in the same order.
The tag of a context-table chunk's release (DESTROY_*_BT0/1/2, in the
mailbox, its answer and the POST_MB word) is masked too: when two
processes destroy objects of one chunk at once, which one's table put
frees it (its index is the tag) depends on how their destroys interleave
(seen on the C driver with ibv_xsrq_pingpong's two SRQs: DESTROY_SRQ 1,
then 0, and the SRQC chunk freed under tag 0 in one run, 1 in another).
--only KIND keeps the mailboxes of one context kind (MPT, QPC, ...) with
their contexts and answers, masks tags and tokens, and compares the two
as multisets: the same commands as many times and the same context images
(for workloads whose objects get their numbers in a racy order, as NVMe
over RDMA's MR pools of queues connecting at once).
"""
import difflib
import os
import re
import sys


FIELDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hw_v2_fields.rs")
ADDR_NAME = re.compile(r"(_BA(_[LMH])?$|_ADDR_[LH]$|^PA[01]_[LH]$|^(RX_)?VA$)")
# Context name in the trace -> [(field module, first word of that layout)].
CTX_LAYOUTS = {"QPC": [("qpc", 0), ("qpcex", 64)], "CQC": [("cqc", 0)], "MPT": [("mpt", 0)],
               "SRQC": [("srqc", 0)], "AEQC": [("eqc", 0)], "CEQC": [("eqc", 0)]}


def address_fields(name_re=ADDR_NAME):
    """{module: [(high bit, low bit)]} of the fields whose name matches
    name_re (by default the address fields), wide ones too."""
    out, mod = {}, None
    for line in open(FIELDS):
        m = re.match(r"pub mod (\w+) \{", line)
        if m:
            mod = m.group(1)
            out[mod] = []
            continue
        m = re.search(r"pub const (\w+): Field<\w+> = Field::new\((\d+), (\d+)\)", line)
        if not m:
            m = re.search(r"// [A-Z]+_(\w+) \((\d+)\.\.=(\d+)\) spans", line)
        if m and mod and name_re.search(m.group(1)):
            out[mod].append((int(m.group(2)), int(m.group(3))))
    return out


ADDR_FIELDS = address_fields()
PSN_FIELDS = address_fields(re.compile(r"PSN(_[LH])?$"))
FLOW_FIELDS = address_fields(re.compile(r"^(FL|UDPSPN)$"))
PGSZ_FIELDS = {"mpt": address_fields(re.compile(r"^PBL_BUF_PG_SZ$")).get("mpt", [])}
# The GSI QP's DMAC: the MAD layer brings QP1 to RTR with an attribute it
# kmallocs without an address vector, and the C driver copies the never
# written `ah_attr.roce.dmac` into the QPC anyway (docs/c-driver-findings.md
# 9): whatever the slab held, not a value to compare.
GSI_FIELDS = address_fields(re.compile(r"^DMAC_[LH]$"))
GSI_TAG = "tag=000001"


def mask_ctx(line):
    parts = line.split()
    if len(parts) < 4 or parts[0] != "ctx" or parts[1] not in CTX_LAYOUTS:
        return line
    words = [int(w, 16) for w in parts[3:]]
    for mod, base in CTX_LAYOUTS[parts[1]]:
        fields = ADDR_FIELDS.get(mod, []) + (PSN_FIELDS.get(mod, []) if MASK_PSN else [])
        fields = fields + (FLOW_FIELDS.get(mod, []) if MASK_FLOW else [])
        fields = fields + (PGSZ_FIELDS.get(mod, []) if MASK_PGSZ else [])
        if parts[1] == "QPC" and parts[2] == GSI_TAG:
            fields = fields + GSI_FIELDS.get(mod, [])
        for h, l in fields:
            for bit in range(l, h + 1):
                w = base + bit // 32
                if w < len(words):
                    words[w] &= ~(1 << (bit % 32))
    return " ".join(parts[:3] + ["%08x" % w for w in words])


def load(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        out.append(mask_ctx(re.sub(r"@[0-9a-f]+", "@ADDR", line)))
    return out


def report(want, rs):
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in want], [l + "\n" for l in rs],
                                               "C driver", "Rust driver", n=2))
    sys.exit(1)


MASK_PSN = False
MASK_FLOW = False
MASK_PGSZ = False


def collapse_repeats(lines):
    """The lines without MODIFY_QPC blocks equal to the previous mailbox
    block of the same QP (see --collapse-repeats). Tokens are compared
    masked."""
    def key(block):
        # The mailbox and its context: how often QUERY_MB_ST polled for
        # it is timing.
        return [re.sub(r"token=[0-9a-f]+", "token=T", l) for l in block
                if l.startswith(("mbx ", "ctx "))]
    out, last, i = [], {}, 0
    while i < len(lines):
        if not lines[i].startswith("cmq > op=8504 "):
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("cmq > op=") or \
                j < len(lines) and lines[j].startswith("cmq > op=8505 "):
            j += 1
        block = lines[i:j]
        tag = next((m.groups() for l in block
                    for m in [re.match(r"mbx > cmd=\w+ (\w+) tag=(\w+)", l)] if m), None)
        k = key(block)
        if tag and tag[0] == "MODIFY_QPC" and last.get(tag[1]) == k:
            i = j
            continue
        if tag:
            last[tag[1]] = k
        out.extend(block)
        i = j
    return out


def mask_tokens(lines):
    """The traces without mailbox tokens (the order of posting numbers them)
    and without the tags of chunk releases (see --unordered)."""
    bt = {m.group(1) for l in lines
          for m in [re.match(r"mbx > cmd=(\w+) DESTROY_\w+_BT\d tag=", l)] if m}
    out = []
    for l in lines:
        l = re.sub(r"token=[0-9a-f]+", "token=T", l)
        l = re.sub(r"^(cmq [<>] op=8504 POST_MB .*data=(\S+ ){5})\S+$", r"\1TOKEN", l)
        m = re.match(r"^(mbx [<>] cmd=(\w+) (?:\w+ )?tag=)\w+(.*)$", l)
        if m and m.group(2) in bt:
            l = m.group(1) + "BT" + m.group(3)
        m = re.match(r"^(cmq [<>] op=8504 POST_MB .*data=(?:\S+ ){4})([0-9a-f]{8})( TOKEN)$", l)
        if m and "%02x" % (int(m.group(2), 16) & 0xff) in bt:
            l = m.group(1) + "BT" + m.group(2)[-2:] + m.group(3)
        out.append(l)
    return out


def per_object(lines):
    """{(kind, tag): [mailbox and context lines of that object, in order]}."""
    objs, cur = {}, None
    for l in lines:
        m = re.match(r"mbx > cmd=\w+ (\w+) tag=(\w+)", l)
        if m:
            name = m.group(1)
            kind = next((k for k in ("QPC", "CQC", "MPT", "SRQC", "SCCC", "EQC", "GMV") if k in name), name)
            cur = (kind, m.group(2))
            objs.setdefault(cur, []).append(name)
            continue
        m = re.match(r"mbx < cmd=\w+ tag=\w+ (status=\d+)", l)
        if m and cur:
            objs[cur].append(m.group(1))
            continue
        if l.startswith("ctx ") and cur:
            objs[cur].append(l)
    return objs


def counter_diff(c, rs):
    """Prints the lines one side has more often than the other; whether
    there were any."""
    from collections import Counter
    cc, cr = Counter(c), Counter(rs)
    bad = False
    for l, n in sorted((cc - cr).items()):
        print(f"C driver only ({n}x): {l}")
        bad = True
    for l, n in sorted((cr - cc).items()):
        print(f"Rust driver only ({n}x): {l}")
        bad = True
    return bad


def unordered(c, rs):
    c, rs = mask_tokens(c), mask_tokens(rs)
    bad = counter_diff(c, rs)
    oc, orr = per_object(c), per_object(rs)
    for k in sorted(set(oc) | set(orr)):
        if oc.get(k) != orr.get(k):
            print(f"object {k[0]} tag={k[1]}: different mailbox sequence")
            sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in oc.get(k, [])],
                                                       [l + "\n" for l in orr.get(k, [])],
                                                       "C driver", "Rust driver", n=1))
            bad = True
    if bad:
        sys.exit(1)
    print(f"traces match as multisets, per object in order ({len(rs)} lines, {len(orr)} objects)")


def only_kind(lines, kind):
    """The mailboxes of context kind `kind` (request, context, answer),
    tags and tokens masked."""
    out, keep = [], set()
    for l in lines:
        m = re.match(r"mbx > cmd=(\w+) (\w+) tag=(\w+)", l)
        if m:
            if kind in m.group(2):
                keep.add((m.group(1), m.group(3)))
                out.append(l)
            continue
        m = re.match(r"mbx < cmd=(\w+) tag=(\w+)", l)
        if m:
            if (m.group(1), m.group(2)) in keep:
                out.append(l)
            continue
        if l.startswith(f"ctx {kind} "):
            out.append(l)
    out = [re.sub(r"tag=[0-9a-f]+", "tag=N", l) for l in out]
    return mask_tokens(out)


def multiset(c, rs, kind):
    if counter_diff(c, rs):
        sys.exit(1)
    ctx = sum(1 for l in rs if l.startswith("ctx "))
    print(f"{kind} mailboxes match as multisets ({len(rs)} lines, {ctx} contexts)")


def main():
    global MASK_PSN, MASK_FLOW, MASK_PGSZ
    args = sys.argv[1:]
    if "--mask-pgsz" in args:
        MASK_PGSZ = True
        args.remove("--mask-pgsz")
    if "--mask-psn" in args:
        MASK_PSN = True
        args.remove("--mask-psn")
    if "--mask-flow" in args:
        MASK_FLOW = True
        args.remove("--mask-flow")
    collapse = "--collapse-repeats" in args
    if collapse:
        args.remove("--collapse-repeats")
    mask_tok = "--mask-tokens" in args
    if mask_tok:
        args.remove("--mask-tokens")
    unord = "--unordered" in args
    if unord:
        args.remove("--unordered")
    kind = None
    if "--only" in args:
        i = args.index("--only")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        kind = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3 or args[0] != "--full":
        sys.exit(__doc__)
    c, rs = load(args[1]), load(args[2])
    if collapse:
        c, rs = collapse_repeats(c), collapse_repeats(rs)
    if mask_tok:
        c, rs = mask_tokens(c), mask_tokens(rs)
    if kind:
        multiset(only_kind(c, kind), only_kind(rs, kind), kind)
        return
    if unord:
        unordered(c, rs)
        return
    if c == rs:
        print(f"traces match ({len(rs)} lines)")
        return
    report(c, rs)


if __name__ == "__main__":
    main()
