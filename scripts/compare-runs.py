#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare two runs of tests/guest/reg-plan.sh: the C driver's and the Rust
driver's output.log (build/guest/<name>/output.log).

Usage: compare-runs.py [--only SECTION] C_OUTPUT RS_OUTPUT

Sections (between "HNS-REG-BEGIN <name>" and "HNS-REG-END <name>"):

  devinfo               `ibv_devinfo -v -d hns_0`: the text must be identical.
  devinfo-pf            (only with --only) the same for the PF of vf-plan.sh,
                        whose `devinfo` is the VF's.
  pyverbs-test_device   per-test outcomes of pyverbs test_device and test_pd
  pyverbs-test_pd       ("<test id> <ok|skip|fail|error|...>"): the same
  pyverbs-test_addr     (AH create/query/destroy)
                        tests with the same outcomes; skip reasons are shown
                        but not compared.
  pyverbs-<module>-<run>  (only with --only) the same for a module's run of
                        tests/guest/pyverbs-plan.sh (pyverbs-c, pyverbs-rs);
                        with --match TEXT (before the two logs) only the
                        tests whose id holds TEXT are compared.

For each section one line "<section>: equal (N lines)" (for pyverbs with
the count of each outcome, e.g. "14 ok, 9 skip") or, on a difference, a
unified diff (C driver first), then the failure details of the Rust run's
unittest log for the pyverbs sections. A pyverbs test that fails or errors
on the C driver is a defect of the harness or the model, not something to
be equal to: such a section is reported ("the C run fails ...") and
counts as no reference. Exit status: 0 when all compared sections are
equal, 1 on a difference, 2 when the C run lacks a section or fails in it
(no reference: the comparison cannot pass).
"""
import difflib
import signal
import sys

SECTIONS = ["devinfo", "pyverbs-test_device", "pyverbs-test_pd", "pyverbs-test_addr"]
# Sections compared only when asked for by name.
EXTRA = ["devinfo-pf"]


def sections(path):
    """{name: [lines]} of the HNS-REG sections of one output.log."""
    out, cur = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("HNS-REG-BEGIN "):
                cur = line.split(" ", 1)[1]
                out[cur] = []
            elif line.startswith("HNS-REG-END "):
                cur = None
            elif cur is not None:
                out[cur].append(line)
    return out


def outcome_key(line):
    """"<id> <outcome>" of a pyverbs result line (drops a skip reason)."""
    return " ".join(line.split()[:2])


def unittest_details(log):
    """The failure/error reports of a unittest log (after the first =====)."""
    start = next((i for i, l in enumerate(log) if l.startswith("=====")), None)
    return log[start:start + 60] if start is not None else log[-15:]


def counts(keys):
    """"14 ok, 9 skip" for the outcome lines KEYS ("<id> <outcome>")."""
    n = {}
    for k in keys:
        o = k.split(" ")[1] if " " in k else "?"
        n[o] = n.get(o, 0) + 1
    return ", ".join(f"{v} {o}" for o, v in sorted(n.items(), key=lambda x: -x[1]))


def c_failures(c):
    """The C run's pyverbs lines whose outcome is neither ok nor skip."""
    return [l for l in c if len(l.split()) < 2 or l.split()[1] not in ("ok", "skip")]


def compare(name, c, rs, rs_all):
    """Print the result for one section; True when equal."""
    if name.startswith("pyverbs-"):
        want, got = [outcome_key(l) for l in c], [outcome_key(l) for l in rs]
    else:
        want, got = c, rs
    if want == got:
        what = counts(got) if name.startswith("pyverbs-") else f"{len(got)} lines"
        print(f"{name}: equal ({what})")
        if name.startswith("pyverbs-") and c != rs:
            print("  note: skip reasons differ:")
            for l in difflib.unified_diff(c, rs, "C driver", "Rust driver", n=0, lineterm=""):
                print("  " + l)
        return True
    if name.startswith("pyverbs-"):
        print(f"{name}: DIFFERENT (C driver: {counts(want)}; Rust driver: {counts(got)})")
    else:
        print(f"{name}: DIFFERENT (C driver: {len(want)} lines, Rust driver: {len(got)} lines)")
    for l in difflib.unified_diff(want, got, f"C driver {name}", f"Rust driver {name}",
                                  n=3, lineterm=""):
        print(l)
    if name.startswith("pyverbs-"):
        log = rs_all.get(name + "-log")
        if log:
            print(f"--- Rust driver {name} unittest log (failures):")
            for l in unittest_details(log):
                print("    " + l)
    return False


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` is fine
    args = sys.argv[1:]
    only = match = None
    # --match TEXT: only the pyverbs tests whose id holds TEXT, in both runs
    # (a run made with unittest's -k TEXT beside a whole module's run).
    if len(args) >= 4 and args[-4] == "--match":
        match, args = args[-3], args[:-4] + args[-2:]
    if len(args) == 4 and args[0] == "--only":
        only, args = args[1], args[2:]
        # pyverbs-<module>-<run>: a module's run of tests/guest/pyverbs-plan.sh.
        if only not in SECTIONS + EXTRA and not only.startswith("pyverbs-test_"):
            sys.exit(f"compare-runs.py: unknown section {only} (one of {', '.join(SECTIONS + EXTRA)}, "
                     "or pyverbs-<module>-<run>)")
    if len(args) != 2:
        sys.exit(__doc__)
    try:
        c_all, rs_all = sections(args[0]), sections(args[1])
    except OSError as e:
        print(f"compare-runs.py: {e} (did the guest run start?)")
        sys.exit(2)
    rc = 0
    if match:
        for runs in (c_all, rs_all):
            for k in list(runs):
                if k.startswith("pyverbs-") and not k.endswith("-log"):
                    runs[k] = [l for l in runs[k] if match in l.split(" ", 1)[0]]
    for name in [only] if only else SECTIONS:
        c = c_all.get(name)
        if not c or any(l.startswith("[hns_0 not registered") for l in c) or \
                (name.startswith("devinfo") and c[-1] != "[ibv_devinfo exit 0]"):
            print(f"{name}: the C run has no {name} results ({args[0]}): no reference")
            for l in (c or [])[-5:]:
                print("    " + l)
            rc = 2
            continue
        bad = c_failures(c) if name.startswith("pyverbs-") else []
        if bad:
            print(f"{name}: the C run fails {len(bad)} test(s): a harness or model defect, "
                  "no reference")
            for l in bad[:10]:
                print("    " + l)
            rc = 2
            continue
        rs = rs_all.get(name)
        if rs is None:
            print(f"{name}: the Rust run has no {name} section ({args[1]}): did the run finish?")
            rs = []
        if not compare(name, c, rs, rs_all) and rc == 0:
            rc = 1
    sys.exit(rc)


if __name__ == "__main__":
    main()
