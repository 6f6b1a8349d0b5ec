#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where the Rust module's .text goes (docs/benchmarks.md).

Reads the crate's object from a build with debug info (`make size-attr`
builds it with KRUSTFLAGS=-Cdebuginfo=1, whose .text is the release
build's byte for byte), gives every instruction's bytes to its inline
chain (GNU objdump for the instructions, GNU addr2line -i for the chains)
and prints:

  functions   the largest symbols (what `nm -S` shows, callees with one
              caller already inside them);
  files       bytes by the innermost frame that is a source file of the
              project (lines of `core` or the kernel crate inlined into a
              function of ours count for the file that called them);
  library     code of `core`, the kernel crate and pin-init inlined where
              our code calls it, by the library function our line called
              (inner generic arguments shown as `<..>`), with the number of
              call sites;
  origin      bytes by where the innermost frame's source is: the project,
              the kernel crate (with pin-init), `core` called from the
              kernel crate, `core` called from the project, `core`
              functions of their own;
  spread      functions inlined into several symbols: bytes in all, the
              number of symbols, and the bytes outside the largest copy
              (an upper bound on what keeping it out of line could save;
              each call site keeps its call and error path, so the real
              saving is usually far smaller, see docs/benchmarks.md).

With --release DIR (the release build's output directory), the .text
of OBJECT must equal that of DIR's object of the same name, and the
.text of the release module, crate and shim is printed first.

With --func TEXT, only the symbols whose name contains TEXT: their bytes
by source line (the innermost frame of the project; `core` and kernel
crate code inlined there counts for that line) and by the function
inlined directly into the symbol. `make size-attr FUNC=new_cq` prints it.

  size-attr.py [--top N] [--release DIR] [--func TEXT] OBJECT [PROJECT_DIR]
"""

import collections
import functools
import os
import re
import subprocess
import sys


def usage():
    sys.exit(__doc__.strip().splitlines()[-1].strip())


def disassembly(obj):
    """Start address of each instruction of .text, and its text (GNU
    objdump, AT&T syntax)."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", "--section=.text", obj],
        capture_output=True, text=True, check=True).stdout
    return {int(m.group(1), 16): m.group(2)
            for m in re.finditer(r"^\s*([0-9a-f]+):[ \t]*(.*)$", out, re.M)}


def instructions(obj):
    """Start address of each instruction of .text, and its length."""
    addrs = sorted(disassembly(obj))
    end = sections(obj).get(".text")
    if end is None:
        sys.exit(f"size-attr: no .text in {obj}")
    return [(a, (addrs[i + 1] if i + 1 < len(addrs) else end) - a)
            for i, a in enumerate(addrs)]


def sections(obj):
    """Section name to size, as `size -A` prints them."""
    out = subprocess.run(["size", "-A", obj], capture_output=True, text=True,
                         check=True).stdout
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].startswith(".") and f[1].isdigit():
            res[f[0]] = int(f[1])
    return res


def text_total(obj):
    """Every .text* section of `obj`, as `make bench` counts them."""
    return sum(n for name, n in sections(obj).items()
               if name.startswith(".text"))


# The release build's pieces whose .text is printed with --release.
RELEASE_PIECES = ("hns_roce_rs.ko", "hns_roce_main.o", "bindings/shim.o",
                  "bindings/hnae3_shim.o")


def check_release(obj, release):
    """Exits unless `obj` has the .text of its release twin; prints the
    release module's pieces."""
    twin = os.path.join(release, os.path.basename(obj))
    dbg, rel = sections(obj).get(".text"), sections(twin).get(".text")
    if dbg != rel:
        sys.exit(f"size-attr: .text differs with debug info ({rel} in "
                 f"{twin}, {dbg} in {obj})")
    for piece in RELEASE_PIECES:
        print(f"{piece:16} .text {text_total(os.path.join(release, piece))}")


def chains(obj, addrs):
    """Inline chain per address, innermost first: (function, file, line)."""
    out = subprocess.run(
        ["addr2line", "-a", "-i", "-f", "-C", "-e", obj],
        input="\n".join(hex(a) for a in addrs), capture_output=True,
        text=True, check=True).stdout.splitlines()
    res = {}
    cur = None
    i = 0
    while i < len(out):
        line = out[i]
        if re.fullmatch(r"0x[0-9a-f]+", line):
            cur = int(line, 16)
            res[cur] = []
            i += 1
            continue
        fn = line
        loc = out[i + 1] if i + 1 < len(out) else "??:0"
        path, _, ln = loc.rpartition(":")
        ln = ln.split()[0] if ln else "0"
        res[cur].append((fn, path, int(ln) if ln.isdigit() else 0))
        i += 2
    return res


def short_name(name):
    """`name` with generic arguments below the first level shown as `<..>`
    (`<kernel::alloc::kvec::Vec<..>>::push`); all drop glue as one name."""
    if name.startswith("core::ptr::drop_in_place"):
        return "core::ptr::drop_in_place (drop glue, all types)"
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == 2:
                out.append("<..>")
        if depth <= 1:
            out.append(ch)
        if ch == ">":
            depth -= 1
    return "".join(out)


def origin(path, project_path):
    """Which library `path` (a frame's source) belongs to."""
    if project_path(path):
        return "project"
    if "/rust/kernel/" in path or "/pin-init/" in path:
        return "kernel crate"
    if "/library/core/" in path:
        return "core"
    return "other"


def innermost_own(chain, project_path):
    """Index in `chain` of the innermost frame in a project file, or None."""
    return next((i for i, (_, p, _) in enumerate(chain) if project_path(p)),
                None)


def by_line(insns, ch, func, project_path, top):
    """The --func report: the bytes of the symbols matching `func`."""
    lines = collections.Counter()
    direct = collections.Counter()
    syms = collections.Counter()
    for a, n in insns:
        c = ch.get(a) or [("??", "??", 0)]
        if func not in c[-1][0]:
            continue
        syms[c[-1][0]] += n
        i = innermost_own(c, project_path)
        if i is not None:
            lines[f"{project_path(c[i][1])}:{c[i][2]}"] += n
        else:
            lines["(no frame of the project) " + short_name(c[0][0])[:80]] += n
        direct[short_name(c[-2][0])[:120] if len(c) > 1 else "(the symbol's own lines)"] += n
    if not syms:
        sys.exit(f"size-attr: no symbol contains '{func}'")
    show(f"symbols containing '{func}'", syms, None, first=True)
    show(f"by source line (largest {top}; line 0: no line, compiler glue)", lines, top)
    show(f"by the function inlined into the symbol (largest {top})", direct, top)
    return 0


def show(title, counter, top, first=False):
    """Prints a table: bytes and name, largest first (`top` rows, or all)."""
    print(("" if first else "\n") + f"== {title}")
    for k, n in counter.most_common(top):
        print(f"{n:8} {k[:150]}")


def main():
    args = sys.argv[1:]
    top = 25
    release = None
    func = None
    while args[:1] in (["--top"], ["--release"], ["--func"]):
        if len(args) < 2:
            usage()
        if args[0] == "--top":
            if not args[1].isdigit():
                usage()
            top = int(args[1])
        elif args[0] == "--func":
            func = args[1]
        else:
            release = args[1]
        args = args[2:]
    if not 1 <= len(args) <= 2:
        usage()
    obj = args[0]
    proj = os.path.realpath(args[1] if len(args) > 1 else
                            os.path.join(os.path.dirname(__file__), ".."))
    if release:
        check_release(obj, release)
    insns = instructions(obj)
    ch = chains(obj, [a for a, _ in insns])

    # A few hundred distinct paths over ~10^5 frames: resolve each once.
    @functools.lru_cache(maxsize=None)
    def project_path(path):
        """`path` relative to the project, or None outside it."""
        if not path or path == "??":
            return None
        real = os.path.realpath(path)
        return os.path.relpath(real, proj) \
            if real.startswith(proj + os.sep) else None

    if func is not None:
        return by_line(insns, ch, func, project_path, top)

    total = sum(n for _, n in insns)
    funcs = collections.Counter()
    files = collections.Counter()
    lib = collections.Counter()
    lib_sites = collections.defaultdict(set)
    spread = collections.defaultdict(collections.Counter)
    origins = collections.Counter()
    for a, n in insns:
        c = ch.get(a) or [("??", "??", 0)]
        kinds = [origin(p, project_path) for _, p, _ in c]
        if kinds[0] == "core":
            caller = next((k for k in kinds if k != "core"), None)
            origins[f"core, called from the {caller}" if caller
                    else "core, out of line"] += n
        else:
            origins[kinds[0]] += n
        outer = c[-1][0]
        funcs[outer] += n
        i = innermost_own(c, project_path)
        if i is not None:
            files[project_path(c[i][1])] += n
            if i > 0:
                name = short_name(c[i - 1][0])
                lib[name] += n
                lib_sites[name].add((c[i][1], c[i][2]))
        else:
            files["(no frame of the project)"] += n
        seen = set()
        for fn, _, _ in c[:-1]:
            if fn not in seen:
                seen.add(fn)
                spread[fn][outer] += n

    print(f".text of {obj}: {total} bytes in {len(insns)} instructions")
    show(f"functions (largest {top})", funcs, top)
    show(f"files (innermost frame of {proj})", files, None)
    print(f"\n== library code inlined at our call sites (largest {top})")
    for name, n in lib.most_common(top):
        print(f"{n:8} {len(lib_sites[name]):4} sites  {name[:140]}")
    print("\n== origin (the innermost frame's source)")
    for k, n in origins.most_common():
        print(f"{n:8} {100 * n / total:5.1f} %  {k}")
    print(f"\n== inlined into several symbols (largest {top} outside the "
          "largest copy)")
    rows = []
    for fn, per in spread.items():
        if len(per) > 1:
            rows.append((sum(per.values()) - max(per.values()),
                         sum(per.values()), len(per), fn))
    rows.sort(reverse=True)
    for extra, n, k, fn in rows[:top]:
        print(f"{extra:8} {n:8} {k:4} symbols  {fn[:130]}")


if __name__ == "__main__":
    sys.exit(main())
