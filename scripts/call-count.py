#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Count the instructions one kverbs call executes in either RoCE driver.

make call-count (docs/benchmarks.md). No profiler runs in this
guest (no ftrace in the test kernel, no TCG plugins in this QEMU), but
QEMU's gdb stub single-steps the guest, with interrupts and timers masked
while it steps. So this script, run inside gdb (`gdb -batch -x`), attaches
to the guest of tests/guest/callcount-plan.sh and, for each driver:

- stops at ksys_sync, where the plan has printed the driver's module
  symbols and the addresses of its post_send, post_recv and poll_cq ops;
- breaks on those ops while hns_kbench.ko runs, and single-steps whole
  calls from the op's first instruction to its return to the caller:
  post_send and post_recv of one WR and of a chain of 16, poll_cq that
  returns 0 (an empty CQ: the benchmark's poll_cq_empty) and poll_cq that
  returns 16 CQEs;
- writes every traced call's instruction addresses to traces.json.

Then (also `call-count.py --report DIR SYSTEM.MAP` outside gdb) report.md
and summary.md: per kind of call, the instructions of each traced call for
C and Rust (per WR or CQE for the calls of 16), and the instructions
per function (self, i.e. where the program counter was), with how many of
them touch memory, are locked, or change the interrupt flag: the
instructions that cost most under TCG.

Settings (environment): CC_PORT (gdb stub port), CC_OUTPUT (the guest's
output file), CC_SYSMAP (the kernel's System.map), CC_OUT (result
directory), CC_SKIP (posts of each kind skipped first, default 3), CC_CALLS
(calls traced per kind, default 3).
"""

import bisect
import collections
import json
import os
import re
import subprocess
import sys
import time

OPS = ("post_send", "post_recv", "poll_cq")
# What is traced: the benchmark's single calls, and its calls of WRS WRs
# or CQEs (reported per WR or CQE as well).
WRS = 16
KINDS = ("post_send_1", "post_send_16", "post_recv_1", "post_recv_16", "poll_cq_empty", "poll_cq_16")


def divisor(kind):
    """What a call of `kind` is divided by in the reports: WRS for the
    calls of WRS WRs or CQEs, else 1."""
    return WRS if kind.endswith(f"_{WRS}") else 1

# Polls traced and thrown away (neither empty nor WRS CQEs) before giving
# up on poll_cq_16.
MAX_DISCARDS = 20
MODULES = {"c": "hns_roce_hw_v2", "rs": "hns_roce_rs"}
STEP_LIMIT = 200000


def load_sysmap(path):
    """The kernel's text symbols from System.map: [(addr, name)]."""
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW":
                syms.append((int(p[0], 16), p[2]))
    return syms


class Symbols:
    """Address -> function name, from sorted (addr, name) pairs."""

    def __init__(self, pairs):
        pairs = sorted(pairs)
        self.addrs = [a for a, _ in pairs]
        self.names = [n for _, n in pairs]

    def lookup(self, addr):
        """(start address, name) of the function holding `addr`, or
        (None, "?") below the first."""
        i = bisect.bisect_right(self.addrs, addr) - 1
        return (self.addrs[i], self.names[i]) if i >= 0 else (None, "?")

    def name(self, addr):
        return self.lookup(addr)[1]


def demangle(names):
    """Rust v0 symbols through binutils' c++filt (one process for all),
    the crate hash left out."""
    names = list(names)
    if not names:
        return {}
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    out = r.stdout.split("\n") if r.returncode == 0 else names
    return {n: re.sub(r"\[[0-9a-f]+\]", "", d) for n, d in zip(names, out)}


# --- inside gdb ---------------------------------------------------------


def gdb_main():
    import gdb  # noqa: only present inside gdb

    port = os.environ["CC_PORT"]
    output = os.environ["CC_OUTPUT"]
    outdir = os.environ["CC_OUT"]
    skip = int(os.environ.get("CC_SKIP", "3"))
    ncalls = int(os.environ.get("CC_CALLS", "3"))
    sysmap = load_sysmap(os.environ["CC_SYSMAP"])
    ksys_sync = next(a for a, n in sysmap if n == "ksys_sync")

    def reg(r):
        return int(gdb.parse_and_eval(f"(unsigned long)${r}")) & (2**64 - 1)

    def u64(addr):
        mem = gdb.selected_inferior().read_memory(addr, 8)
        return int.from_bytes(bytes(mem), "little")

    def log(msg):
        print(f"call-count: {msg}", flush=True)

    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("set suppress-cli-notifications on")
    gdb.execute("set architecture i386:x86-64")
    deadline = time.time() + 900
    while True:
        try:
            gdb.execute(f"target remote 127.0.0.1:{port}", to_string=True)
            break
        except gdb.error:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    log("attached")
    gdb.execute(f"break *{ksys_sync:#x}", to_string=True)

    result = {"drivers": {}}
    seen_markers = 0
    driver = None
    ops = {}
    op_bps = []
    counts = {}
    empty_cq = False
    discards = 0

    def trace_call():
        sp0 = reg("rsp")
        ret = u64(sp0)
        pcs = []
        while True:
            pc = reg("pc")
            if pc == ret and reg("rsp") == sp0 + 8:
                break
            pcs.append(pc)
            if len(pcs) > STEP_LIMIT:
                raise RuntimeError("no return after %d steps" % STEP_LIMIT)
            gdb.execute("stepi", to_string=True)
        return pcs, reg("rax")

    def chain_len(wr):
        """The length of a WR chain, counted up to WRS + 1."""
        n = 0
        while wr and n <= WRS:
            n += 1
            wr = u64(wr)  # `next` is the first member of both WR types
        return n

    def run_to_return():
        sp0 = reg("rsp")
        ret = u64(sp0)
        while True:
            b = gdb.Breakpoint(f"*{ret:#x}", internal=True, temporary=True)
            gdb.execute("continue", to_string=True)
            if b.is_valid():
                b.delete()
            if reg("pc") == ret and reg("rsp") == sp0 + 8:
                return reg("rax")

    def disassemble(pcs):
        text = {}
        for pc in sorted(set(pcs)):
            s = gdb.execute(f"x/i {pc:#x}", to_string=True)
            text[pc] = s.split(":", 1)[1].strip() if ":" in s else s.strip()
        return text

    while True:
        try:
            gdb.execute("continue", to_string=True)
        except gdb.error as e:
            log(f"target gone: {e}")
            break
        pc = reg("pc")
        if pc == ksys_sync:
            with open(output, errors="replace") as f:
                lines = f.read().splitlines()
            markers = [ln.split()[1] for ln in lines if ln.startswith("CC-SYNC ")]
            if len(markers) <= seen_markers:
                continue
            seen_markers = len(markers)
            mark = markers[-1]
            for b in op_bps:
                b.delete()
            op_bps = []
            if mark == "end":
                log("end marker: detaching")
                break
            driver = mark
            opsline = [ln for ln in lines if ln.startswith(f"CC-OPS {driver} ")][-1].split()
            ops = {int(a, 16): op for a, op in zip(opsline[2:], OPS) if int(a, 16)}
            if len(ops) != len(OPS):
                log(f"{driver}: op addresses missing: {opsline}")
            tag = "[%s]" % MODULES[driver]
            syms = [(int(ln.split()[1], 16), ln.split()[3]) for ln in lines
                    if ln.startswith("CC-SYM ") and ln.split()[-1] == tag]
            result["drivers"][driver] = {"syms": syms, "calls": {k: [] for k in KINDS}}
            counts = {k: 0 for k in KINDS}
            discards = 0
            for a in ops:
                op_bps.append(gdb.Breakpoint(f"*{a:#x}", internal=True))
            log(f"{driver}: breakpoints on {', '.join(ops.values())}")
            continue
        op = ops.get(pc)
        if op is None:
            continue
        got = result["drivers"][driver]["calls"]

        def need(kind):
            return kind in got and len(got[kind]) < ncalls

        if op != "poll_cq":
            kind = f"{op}_{chain_len(reg('rsi'))}"
            if not need(kind):
                continue  # a chain of another length, or enough of these
            counts[kind] += 1
            if counts[kind] <= skip:
                continue
            pcs, rax = trace_call()
        else:
            # The benchmark polls 16 CQEs after its post_recv phases: trace
            # every poll from then on, keep those that returned 16.
            late = not need("post_recv_16") and need("poll_cq_16") and discards < MAX_DISCARDS
            if not (empty_cq and need("poll_cq_empty")) and not late:
                if need("poll_cq_empty"):
                    # Let it run and trace the next poll if this one
                    # found the CQ empty (the benchmark polls an empty CQ
                    # many times in a row).
                    empty_cq = run_to_return() == 0
                continue
            pcs, rax = trace_call()
            empty_cq = rax == 0
            kind = {0: "poll_cq_empty", WRS: "poll_cq_16"}.get(rax)
            if kind is None or not need(kind):
                discards += 1
                continue
        got[kind].append({"ret": rax, "pcs": pcs, "insn": {f"{k:#x}": v for k, v in disassemble(pcs).items()}})
        log(f"{driver} {kind}: call traced, {len(pcs)} instructions, returned {rax:#x}")
        if all(len(c) >= ncalls for c in got.values()):
            for b in op_bps:
                b.delete()
            op_bps = []
            log(f"{driver}: all calls traced")
    try:
        gdb.execute("detach", to_string=True)
    except gdb.error:
        pass
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "traces.json"), "w") as f:
        json.dump(result, f)
    report(outdir, result, sysmap)


# --- the report ---------------------------------------------------------

PREFIXES = ("lock", "rep", "repz", "repe", "repnz", "repne", "notrack", "bnd", "data16")
MEM_MNEM = re.compile(r"^(push|pop|call|ret|movs|stos|lods|cmps|scas|enter|leave)")


def kind(text):
    """The costly kinds of an instruction (AT&T syntax, as gdb prints it)."""
    words = text.split()
    k = set()
    while words and words[0] in PREFIXES:
        if words[0] == "lock":
            k.add("lock")
        words = words[1:]
    if not words:
        return k
    mnem, operands = words[0], " ".join(words[1:])
    if "(" in operands or re.search(r"%[c-gs]s:", operands) or MEM_MNEM.match(mnem):
        k.add("mem")
    if mnem in ("cli", "sti") or mnem.startswith(("pushf", "popf")):
        k.add("irq")
    if mnem.startswith("call"):
        k.add("call")
    return k


# The kernel's lock debugging (lockdep, the debug spinlock, irq-flag
# tracing) that this test kernel (PROVE_LOCKING) runs inside every lock
# and unlock, and a production kernel does not.
LOCK_DEBUG = re.compile(
    r"^((__)?lock_acquire|(__)?lock_release|lock_is_held_type|mark_lock|mark_held_locks"
    r"|match_held_lock|find_held_lock|lockdep_\w+|trace_hardirqs_\w+|rcu_is_watching"
    r"|debug_lockdep_rcu_enabled|do_raw_spin_(un)?lock|hlock_class|validate_chain"
    r"|check_\w+|__bfs\w*|lock_chain_\w+|debug_spin_\w+|rcu_lockdep_\w+|rcu_read_lock_held\w*)$")


# The spinlock itself (what a production kernel runs to take and drop the
# queue's lock), the kernel crate's lock helpers (`SpinLockIrq`) and
# the shim's.
LOCK = re.compile(r"^(_raw_spin_\w+|rust_helper_spin_\w+|rust_helper_raw_spin_\w+|rdma_shim_spin_\w+)$")
# The Rust driver's C/Rust boundary: the rdma layer's entry points in
# `rdma::ib::verbs` (the data-path ops the RDMA core calls directly) and any
# shim function in front of one. An entry point counts what the compiler
# inlined into it: all of post_recv and poll_cq, whose driver column is
# then (nearly) empty.
BOUNDARY = re.compile(r"^rdma_shim_\w+$|rdma2ib5verbs")
# Where a call's instructions go, in report order.
BUCKETS = ("driver", "boundary", "spinlock", "other kernel", "lock debugging")


def bucket(name, module):
    """The part of the call a function belongs to (BUCKETS); `module` holds
    the names of the driver module's functions."""
    if LOCK_DEBUG.match(name):
        return "lock debugging"
    if LOCK.match(name):
        return "spinlock"
    if BOUNDARY.search(name):
        return "boundary"
    if name in module:
        return "driver"
    return "other kernel"


def summarise(drv, calls, sysmap):
    """Per traced call: totals (with one count per BUCKETS entry); per
    function: median self instructions."""
    syms = Symbols(sysmap + [tuple(s) for s in drv["syms"]])
    module = {s[1] for s in drv["syms"]}
    per_call = []
    per_fn = []
    for c in calls:
        insn = {int(k, 16): v for k, v in c["insn"].items()}
        tot = collections.Counter()
        fn = collections.Counter()
        for pc in c["pcs"]:
            name = syms.name(pc)
            tot["insn"] += 1
            tot[bucket(name, module)] += 1
            if not LOCK_DEBUG.match(name):
                tot["nodebug"] += 1
            for k in kind(insn.get(pc, "")):
                tot[k] += 1
            fn[name] += 1
        per_call.append(tot)
        per_fn.append(fn)
    # Every function gets one figure per call, 0 where a call did not run it.
    names = set().union(*per_fn) if per_fn else set()
    funcs = {name: [fn[name] for fn in per_fn] for name in names}
    return per_call, funcs


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0


def report(outdir, result, sysmap):
    lines = ["# Instructions per kverbs call (make call-count)", "",
             "Single-stepped in the guest by QEMU's gdb stub (scripts/call-count.py): every",
             "instruction from the driver op's first to its return, interrupts masked.",
             "`mem`: instructions with a memory operand (push, pop, call and ret included);",
             "`lock`: locked read-modify-writes; `irq`: cli/sti/pushf/popf; `call`: calls.",
             "`no lockdep`: the instructions outside the kernel's lock debugging (lockdep,",
             "the debug spinlock, irq-flag tracing: what a production kernel would run).", ""]
    names = set()
    summ = {}
    for d, drv in result["drivers"].items():
        for kind in KINDS:
            summ[(d, kind)] = summarise(drv, drv["calls"].get(kind, []), sysmap)
            names |= set(summ[(d, kind)][1])
    dm = demangle(names)
    summary = ["| call | C insn | Rust insn | Rust/C | C no lockdep | Rust no lockdep | Rust/C |",
               "|---|---|---|---|---|---|---|"]
    parts = ["| call | " + " | ".join(BUCKETS) + " |", "|---|" + "---|" * len(BUCKETS)]
    for kind in KINDS:
        if not all(summ.get((d, kind), ([],))[0] for d in MODULES):
            summary.append(f"| {kind} | not traced in both drivers | | | | | |")
            continue
        per = divisor(kind)
        c, r = ([median([x[k] for x in summ[(d, kind)][0]]) for k in ("insn", "nodebug")] for d in MODULES)
        unit = f" (per {'CQE' if kind.startswith('poll') else 'WR'})" if per > 1 else ""
        summary.append(f"| {kind}{unit} | {c[0] / per:.0f} | {r[0] / per:.0f} | {r[0] / c[0]:.2f} "
                       f"| {c[1] / per:.0f} | {r[1] / per:.0f} | {r[1] / c[1]:.2f} |")
        cells = []
        for b in BUCKETS:
            cb, rb = (median([x[b] for x in summ[(d, kind)][0]]) / per for d in MODULES)
            cells.append(f"{cb:.0f} / {rb:.0f}")
        parts.append(f"| {kind} | " + " | ".join(cells) + " |")
    summary.append("")
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write("\n".join(summary) + "\n")
    lines += [f"Medians over the traced calls; the calls of {WRS} WRs or CQEs divided by {WRS}:", ""] + summary
    lines += [f"Where they go (medians, C / Rust, per WR or CQE for the calls of {WRS}): `driver`, the",
              "module's own functions but the boundary; `boundary`, the Rust driver's C/Rust",
              "crossing (a shim function where the op has one, and the rdma layer's entry point in",
              "`rdma::ib::verbs`, with what is inlined into it: all of post_recv and poll_cq);",
              "`spinlock`, the lock and the lock helpers (the kernel crate's, the shim's); `other",
              "kernel`, the rest outside lock debugging; `lock debugging` as above.", ""]
    lines += parts + [""]
    for kind in KINDS:
        what = {"post_send_1": "post_send of one WR", "post_recv_1": "post_recv of one WR",
                "post_send_16": f"post_send of a chain of {WRS} WRs",
                "post_recv_16": f"post_recv of a chain of {WRS} WRs",
                "poll_cq_empty": "poll_cq of an empty CQ (returned 0)",
                "poll_cq_16": f"poll_cq that returned {WRS} CQEs"}[kind]
        lines += [f"## {what}", "", "| driver | calls | insn | no lockdep | mem | lock | irq | call |",
                  "|---|---|---|---|---|---|---|---|"]
        for d in result["drivers"]:
            per_call, _ = summ[(d, kind)]
            if not per_call:
                lines.append(f"| {d} | 0 | | | | | | |")
                continue
            cols = ["/".join(str(c[k]) for c in per_call) for k in ("insn", "nodebug", "mem", "lock", "irq", "call")]
            lines.append(f"| {d} | {len(per_call)} | " + " | ".join(cols) + " |")
        lines += ["", "Instructions per function (self; median over the traced calls):", "",
                  "| function | " + " | ".join(result["drivers"]) + " |",
                  "|---|" + "---|" * len(result["drivers"])]
        rows = collections.defaultdict(dict)
        for d in result["drivers"]:
            for name, v in summ[(d, kind)][1].items():
                rows[dm.get(name, name)][d] = median(v)
        for name, v in sorted(rows.items(), key=lambda kv: (-max(kv[1].values()), kv[0])):
            if max(v.values()) == 0:
                continue
            lines.append(f"| `{name}` | " + " | ".join(str(v.get(d, "")) for d in result["drivers"]) + " |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--report":
        with open(os.path.join(sys.argv[2], "traces.json")) as f:
            res = json.load(f)
        report(sys.argv[2], res, load_sysmap(sys.argv[3]))
    else:
        gdb_main()
