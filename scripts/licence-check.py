#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check each source file's SPDX line against docs/licences.md.

usage: licence-check.py KSRC [--self-test]

docs/licences.md has one table row per source file (or glob) of the
project: `| path | C files it ports | SPDX |`. The licence a row must carry
follows from the C files, read from the 7.3 source: a C file's own SPDX
line, or `GPL-2.0 OR Linux-OpenIB` for the files that carry the dual GPL /
OpenIB.org BSD notice instead. One C licence: that licence. Several
different ones: `GPL-2.0`, the one licence they all allow. None (the
project's own code): `GPL-2.0 OR BSD-2-Clause`.

Prints, for every file, its SPDX beside the C files it ports; fails when a
file is missing from the mapping, a row's SPDX is not the one its C files
give, or a file's SPDX line differs from its row's. --self-test runs the
check on a planted fault (a file of a GPL-2.0+ row given the project
licence, and a file left out of the mapping) and fails unless both are
reported.
"""

import fnmatch
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN = "GPL-2.0 OR BSD-2-Clause"
OPENIB = "GPL-2.0 OR Linux-OpenIB"
EXTS = (".rs", ".c", ".h", ".sh", ".py")


def c_licence(cdir, name):
    with open(os.path.join(cdir, name), encoding="utf-8", errors="replace") as f:
        head = f.read(4000)
    m = re.search(r"SPDX-License-Identifier:\s*\(?([^*)\n]+?)\)?\s*(?:\*/)?\s*$", head, re.M)
    if m:
        return m.group(1).strip()
    if "OpenIB.org BSD license" in head:
        return OPENIB
    return None


def combine(lics):
    lics = set(lics)
    if not lics:
        return OWN
    if len(lics) == 1:
        return lics.pop()
    return "GPL-2.0"


def spdx_of(path):
    with open(os.path.join(TOP, path), encoding="utf-8", errors="replace") as f:
        for line in f.read(2000).split("\n")[:3]:
            m = re.search(r"SPDX-License-Identifier:\s*(.+?)\s*(?:\*/)?$", line)
            if m:
                return m.group(1)
    return None


def mapping():
    rows = []
    with open(os.path.join(TOP, "docs/licences.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\| `([^`]+)` \| (.*?) \| `([^`]+)` \|", line)
            if m:
                cfiles = re.findall(r"`([\w.]+)`", m.group(2))
                rows.append((m.group(1), cfiles, m.group(3)))
    return rows


def check(ksrc, files, spdx, rows, out):
    cdir = os.path.join(ksrc, "drivers/infiniband/hw/hns")
    faults = 0
    for pat, cfiles, lic in rows:
        want = combine(c_licence(cdir, c) or f"? {c}" for c in cfiles)
        if want != lic:
            out(f"FAULT mapping `{pat}`: carries {lic}, its C files give {want}")
            faults += 1
    for path in files:
        row = next((r for r in rows if r[0] == path), None) or next(
            (r for r in rows if fnmatch.fnmatch(path, r[0])), None)
        if row is None:
            out(f"FAULT {path}: not in docs/licences.md")
            faults += 1
            continue
        have = spdx.get(path)
        ports = ", ".join(row[1]) or "(own code)"
        ok = have == row[2]
        out(f"{'ok   ' if ok else 'FAULT'} {path}: {have}  [{ports} -> {row[2]}]")
        faults += not ok
    return faults


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 2
    ksrc = args[0]
    # Tracked files and new ones not yet added (ignored ones, like build/,
    # are not the project's).
    listed = subprocess.run(["git", "-C", TOP, "ls-files", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.split()
    # A symbolic link (tests/loopback's links to the rdma layer) is the
    # file it points to, checked under that file's own name.
    files = sorted({f for f in listed if f.endswith(EXTS) and os.path.exists(os.path.join(TOP, f))
                    and not os.path.islink(os.path.join(TOP, f))})
    spdx = {f: spdx_of(f) for f in files}
    rows = mapping()
    if "--self-test" in sys.argv:
        lines = []
        planted = dict(spdx, **{"rdma/hnae3/bond.rs": OWN})
        n = check(ksrc, files + ["planted/unmapped.rs"], dict(planted, **{"planted/unmapped.rs": OWN}),
                  rows, lines.append)
        hit = [l for l in lines if l.startswith("FAULT")]
        print("\n".join(hit))
        found = any("rdma/hnae3/bond.rs" in l for l in hit) and any("planted/unmapped.rs" in l for l in hit)
        print(f"licence-check self-test: {n} fault(s) on the planted tree; "
              f"{'both planted faults found' if found else 'a planted fault was missed'}")
        return 0 if found and n == 2 else 1
    n = check(ksrc, files, spdx, rows, print)
    print(f"licence-check: {len(files)} files, {n} fault(s)")
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main())
