#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Coverage of hns_roce_rs.ko from the dumps of make coverage's boots.

The coverage build (make module-cov) calls __sanitizer_cov_trace_pc at the
start of every basic block; the collector (tests/cov/hns_cov.c) records
each call's return address once and gives it as an offset in the module's
text ("text OFF") or init text ("init OFF"). This script:

- lays the .ko's executable sections out as the kernel's module loader
  does (kernel/module/main.c __layout_sections: the sections in header
  order, each aligned, .init* ones in the init region), and checks the
  layout against the anchors of the dump (the offsets of init_module and
  cleanup_module the collector read from the loaded module);
- reads `objdump -dlr` of the .ko: every function symbol, every
  instruction's source line (line table, inlined code at its own line),
  and every call to __sanitizer_cov_trace_pc (a block);
- merges the dumps (each boot's coverage.txt), marks the blocks whose
  return address was recorded, and counts functions (reached: one block
  or more) and lines (a line counts as reached when an instruction of it
  lies in a reached block: instructions belong to the block whose call
  comes last before them in the function, so a block the instrumentation
  left out, being implied by another, counts with the one before it).

Usage:
  coverage-report.py --ko build/module-cov/hns_roce_rs.ko [--out report.md]
                     [--write-docs docs/coverage.md] [--show REGEX] DUMP_OR_DIR...
  coverage-report.py --selftest
A directory argument stands for every */coverage.txt under it. Exit status
1 when a dump does not match the .ko (an offset that is no block, an
anchor the layout puts elsewhere).
"""

import argparse
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile
import types

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COV_FN = "__sanitizer_cov_trace_pc"


def die(msg):
    print(f"coverage-report: error: {msg}", file=sys.stderr)
    sys.exit(1)


# --- ELF: section headers and the module loader's text layout ---------------

SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4


def elf_sections(path):
    """[(index, name, flags, addralign, size)] of a 64-bit little-endian ELF."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        die(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = []
    for i in range(shnum):
        name, _typ, flags, _addr, off, size, _link, _info, align, _ent = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        raw.append((name, flags, off, size, align))
    stroff = raw[shstrndx][2]
    secs = []
    for i, (name, flags, _off, size, align) in enumerate(raw):
        end = data.index(b"\0", stroff + name)
        secs.append((i, data[stroff + name:end].decode(), flags, align, size))
    return secs


def text_layout(path):
    """{section name: (region, offset in region, size)} for the executable
    sections, region "text" (MOD_TEXT) or "init" (MOD_INIT_TEXT): the first
    pass of __layout_sections (SHF_EXECINSTR|SHF_ALLOC, in header order,
    each at its alignment) with CONFIG_MODULE_UNLOAD (.exit* is core)."""
    size = {"text": 0, "init": 0}
    out = {}
    for _i, name, flags, align, ssize in elf_sections(path):
        if flags & (SHF_ALLOC | SHF_EXECINSTR) != SHF_ALLOC | SHF_EXECINSTR:
            continue
        region = "init" if name.startswith(".init") else "text"
        a = align or 1
        off = (size[region] + a - 1) // a * a
        size[region] = off + ssize
        out[name] = (region, off, ssize)
    return out


# --- objdump -dlr: functions, instructions' lines, blocks -------------------

SEC_RE = re.compile(r"^Disassembly of section (\S+):$")
SYM_RE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
LOC_RE = re.compile(r"^(\S.*?):(\d+)(?: \(discriminator \d+\))?$")
INSN_RE = re.compile(r"^\s+([0-9a-f]+):\t")
RELOC_RE = re.compile(r"^\s+([0-9a-f]+): R_X86_64_(?:PLT32|PC32)\s+(\S+?)(?:[-+]0x[0-9a-f]+)?$")


class Func:
    def __init__(self, sec, name, addr):
        self.sec, self.name, self.addr = sec, name, addr
        self.insns = []   # [(addr, (file, line) or None)]
        self.blocks = []  # return addresses of the trace calls, ascending
        self.file = None  # file of the first located instruction
        self.tailcalls = 0  # trace calls made as jmp (no block of their own)

    def key(self):
        return (self.sec, self.name, self.addr)


def read_objdump(ko):
    """The functions of the .ko's executable sections, in address order."""
    out = subprocess.run(["objdump", "-dlr", "--no-show-raw-insn", ko], capture_output=True,
                         text=True, check=True).stdout
    funcs, cur, sec, loc, last, src_fn = [], None, None, None, "", None
    for line in out.splitlines():
        m = SEC_RE.match(line)
        if m:
            sec, cur, loc = m.group(1), None, None
            continue
        m = SYM_RE.match(line)
        if m:
            cur = Func(sec, m.group(2), int(m.group(1), 16))
            funcs.append(cur)
            loc, src_fn = None, cur.name
            continue
        if cur is None:
            continue
        m = RELOC_RE.match(line)
        if m:
            if m.group(2) == COV_FN:
                # call rel32: the field is the last 4 bytes of the call.
                cur.blocks.append(int(m.group(1), 16) + 4)
                if last.startswith("jmp"):
                    # A tail call records its caller's return address.
                    cur.tailcalls += 1
            continue
        m = INSN_RE.match(line)
        if m:
            last = line.split("\t", 1)[1].strip() if "\t" in line else ""
            cur.insns.append((int(m.group(1), 16), loc, src_fn))
            if cur.file is None and loc:
                cur.file = loc[0]
            continue
        if line.endswith("():"):
            # objdump -l: the (innermost inlined) function of what follows.
            src_fn = line[:-3]
            continue
        m = LOC_RE.match(line)
        if m:
            loc = (m.group(1), int(m.group(2))) if int(m.group(2)) else None
    return funcs


def block_lines(func):
    """{return address: set of (file, line)} of the function's blocks."""
    return block_map(func, 1)


def block_srcfns(func):
    """{return address: set of source functions (linkage names, inlined
    ones included) with an instruction in the block}."""
    return block_map(func, 2)


def block_map(func, what):
    out = {b: set() for b in func.blocks}
    if not func.blocks:
        return out
    calls = sorted(func.blocks)
    j = 0
    for insn in func.insns:
        addr, val = insn[0], insn[what]
        # The block whose call instruction (5 bytes before its return
        # address) is the last at or before addr; the first block before.
        while j + 1 < len(calls) and calls[j + 1] - 5 <= addr:
            j += 1
        if val:
            out[calls[j]].add(val)
    return out


# --- Dumps ------------------------------------------------------------------

def read_dumps(paths):
    """(set of (region, offset), anchors {(region, name): off}, notes)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            for d, _dirs, names in sorted(os.walk(p)):
                if "coverage.txt" in names:
                    files.append(os.path.join(d, "coverage.txt"))
        else:
            files.append(p)
    offs, anchors, notes = set(), {}, []
    for f in files:
        loads = 0
        for line in open(f):
            w = line.split()
            if not w:
                continue
            if w[0] == "#":
                m = re.search(r"loads=(\d+)", line)
                if m:
                    loads = int(m.group(1))
                m = re.search(r"dropped raw=(\d+) offsets=(\d+)", line)
                if m and (int(m.group(1)) or int(m.group(2))):
                    notes.append(f"{f}: the collector dropped {m.group(1)} raw and "
                                 f"{m.group(2)} offset records (table full)")
            elif w[0] == "anchor":
                anchors.setdefault((w[1], w[2]), set()).add(int(w[3], 16))
            elif w[0] in ("text", "init"):
                offs.add((w[0], int(w[1], 16)))
        notes.append(f"{os.path.relpath(f, TOP) if f.startswith(TOP) else f}: {loads} load(s)")
    return files, offs, anchors, notes


# --- Rust v0 demangling (the kernel builds Rust with v0 symbols) -------------

BASIC = {"a": "i8", "b": "bool", "c": "char", "d": "f64", "e": "str", "f": "f32", "h": "u8",
         "i": "isize", "j": "usize", "l": "i32", "m": "u32", "n": "i128", "o": "u128",
         "s": "i16", "t": "u16", "u": "()", "v": "...", "x": "i64", "y": "u64", "z": "!",
         "p": "_"}


class V0:
    def __init__(self, s):
        self.s, self.i = s, 0

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else ""

    def eat(self, c):
        if self.peek() == c:
            self.i += 1
            return True
        return False

    def b62(self):
        if self.eat("_"):
            return 0
        n = 0
        while True:
            c = self.s[self.i]
            self.i += 1
            if c == "_":
                return n + 1
            n = n * 62 + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".index(c)

    def dis(self):
        return self.b62() if self.eat("s") else 0

    def ident(self):
        self.eat("u")
        j = self.i
        while self.s[self.i].isdigit():
            self.i += 1
        n = int(self.s[j:self.i])
        self.eat("_")
        r = self.s[self.i:self.i + n]
        self.i += n
        return r

    def backref(self, fn):
        pos = self.b62()
        save, self.i = self.i, pos
        r = fn()
        self.i = save
        return r

    def path(self):
        c = self.s[self.i]
        self.i += 1
        if c == "C":
            self.dis()
            return self.ident()
        if c == "M":
            self.dis()
            self.path()
            return f"<{self.type()}>"
        if c == "X":
            self.dis()
            self.path()
            t = self.type()
            return f"<{t} as {self.path()}>"
        if c == "Y":
            t = self.type()
            return f"<{t} as {self.path()}>"
        if c == "N":
            ns = self.s[self.i]
            self.i += 1
            p = self.path()
            d = self.dis()
            name = self.ident()
            if ns == "C":
                return f"{p}::{{closure#{d}}}"
            if ns.isupper():
                return f"{p}::{{{ns}:{name}#{d}}}"
            return f"{p}::{name}"
        if c == "I":
            p = self.path()
            args = []
            while not self.eat("E"):
                args.append(self.generic())
            return f"{p}::<{', '.join(a for a in args if a)}>"
        if c == "B":
            return self.backref(self.path)
        raise ValueError(c)

    def generic(self):
        if self.eat("L"):
            self.b62()
            return ""
        if self.eat("K"):
            return self.const()
        return self.type()

    def const(self):
        if self.eat("p"):
            return "_"
        if self.eat("B"):
            return self.backref(self.const)
        t = self.type()
        neg = self.eat("n")
        j = self.i
        while self.s[self.i] != "_":
            self.i += 1
        h = self.s[j:self.i]
        self.i += 1
        v = int(h, 16) if h else 0
        if t == "bool":
            return "true" if v else "false"
        return f"{'-' if neg else ''}{v}"

    def type(self):
        c = self.peek()
        if c in BASIC:
            self.i += 1
            return BASIC[c]
        self.i += 1
        if c == "A":
            t = self.type()
            return f"[{t}; {self.const()}]"
        if c == "S":
            return f"[{self.type()}]"
        if c in "RQ":
            if self.eat("L"):
                self.b62()
            return ("&" if c == "R" else "&mut ") + self.type()
        if c in "PO":
            return ("*const " if c == "P" else "*mut ") + self.type()
        if c == "T":
            ts = []
            while not self.eat("E"):
                ts.append(self.type())
            return f"({', '.join(ts)}{',' if len(ts) == 1 else ''})"
        if c == "F":
            if self.eat("G"):
                self.b62()
            self.eat("U")
            if self.eat("K"):
                if not self.eat("C"):
                    self.ident()
            ts = []
            while not self.eat("E"):
                ts.append(self.type())
            return f"fn({', '.join(ts)}) -> {self.type()}"
        if c == "D":
            if self.eat("G"):
                self.b62()
            ts = []
            while not self.eat("E"):
                ts.append(self.path())
                while self.eat("p"):
                    self.ident()
                    self.type()
            if self.eat("L"):
                self.b62()
            return "dyn " + " + ".join(ts)
        if c == "B":
            return self.backref(self.type)
        self.i -= 1
        return self.path()


def demangle(sym):
    """A Rust v0 symbol as a path (crate hashes left out); others as given."""
    if not sym.startswith("_R"):
        return sym
    p = V0(sym[2:])
    try:
        if p.peek().isdigit():
            while p.peek().isdigit():
                p.i += 1
        return p.path()
    except (ValueError, IndexError):
        return sym


# --- The report ---------------------------------------------------------------

def rel(path, top):
    return path[len(top) + 1:] if path and path.startswith(top + "/") else path


# Module paths of the KUnit suites and their vectors (tests/kunit,
# tests/vectors) inside the crate.
TEST_PATHS = ("hns_roce_main::kunit::", "hns_roce_main::vectors::")


def kind(func, top):
    """driver-rs, driver-c, test (tests/, or a driver generic instantiated
    for the suites), other (generic code of the kernel crate or core
    instantiated in the module), or None (no source)."""
    f = func.file
    if f is None:
        return None
    r = rel(f, top)
    if r == f:
        return "other"
    if r.startswith("tests/"):
        return "test"
    if r.endswith((".c", ".h")):
        return "driver-c"
    # A driver generic instantiated only for the suites (a KUnit closure
    # or vector type as its parameter) is test code.
    if any(t in demangle(func.name) for t in TEST_PATHS):
        return "test"
    return "driver-rs"


def analyse(ko, offs, anchors, top):
    """Everything the report says, as a dict; errors (a list) when the dump
    does not fit the .ko."""
    layout = text_layout(ko)
    errors = []
    funcs = read_objdump(ko)
    by_name = {}
    for fn in funcs:
        by_name.setdefault(fn.name, []).append(fn)
    # The anchors: the layout must put the named symbol where the loaded
    # module had it.
    for (region, name), vals in sorted(anchors.items()):
        cands = [(layout[f.sec][1] + f.addr) for f in by_name.get(name, [])
                 if f.sec in layout and layout[f.sec][0] == region]
        for v in vals:
            if v not in cands:
                errors.append(f"anchor {name}: loaded at {region}+{v:#x}, the layout says "
                              f"{', '.join(hex(c) for c in cands) or 'nowhere'}")
    tail = [f for f in funcs if f.tailcalls]
    if tail:
        errors.append(f"{sum(f.tailcalls for f in tail)} trace call(s) are tail calls (jmp), "
                      f"in {', '.join(f.name for f in tail[:5])}: build without sibling calls")
    # Block return addresses by (region, offset).
    block_at = {}
    for fn in funcs:
        if fn.sec not in layout:
            continue
        region, base, _size = layout[fn.sec]
        for b in fn.blocks:
            block_at[(region, base + b)] = (fn, b)
    reached = collections.defaultdict(set)
    unknown = 0
    for o in offs:
        hit = block_at.get(o)
        if hit is None:
            unknown += 1
            if unknown <= 5:
                errors.append(f"recorded {o[0]}+{o[1]:#x} is no block of {os.path.basename(ko)}")
        else:
            reached[hit[0].key()].add(hit[1])
    if unknown > 5:
        errors.append(f"... {unknown} recorded offsets are no block in all")
    rows = []
    for fn in funcs:
        if not fn.blocks:
            continue
        k = kind(fn, top)
        bl = block_lines(fn)
        hit = reached.get(fn.key(), set())
        lines_all = set().union(*bl.values())
        lines_hit = set().union(*(bl[b] for b in hit)) if hit else set()
        rows.append({"func": fn, "kind": k, "blocks": len(fn.blocks), "hit": len(hit),
                     "lines": lines_all, "lines_hit": lines_hit})
    # Source functions, those inlined everywhere included: reached when
    # an instruction of theirs lies in a reached block.
    srcfns = {}
    for fn in funcs:
        if not fn.blocks:
            continue
        hit = reached.get(fn.key(), set())
        first = {}
        for _a, loc, name in fn.insns:
            if name and loc and name not in first:
                first[name] = loc[0]
        for b, names in block_srcfns(fn).items():
            for n in names:
                e = srcfns.setdefault(n, types.SimpleNamespace(name=n, file=None,
                                                               blocks=0, hit=0))
                e.file = e.file or first.get(n)
                e.blocks += 1
                e.hit += 1 if b in hit else 0
    src_rows = [{"func": e, "kind": kind(e, top), "blocks": e.blocks, "hit": e.hit}
                for e in srcfns.values()]
    return {"rows": rows, "src_rows": src_rows, "errors": errors, "uninstrumented":
            [f for f in funcs if not f.blocks and f.sec in layout and f.insns
                               and not f.name.startswith(".")]}


def pct(a, b):
    return f"{100.0 * a / b:.1f} %" if b else "-"


def summary(rows, kinds, top):
    fs = [r for r in rows if r["kind"] in kinds]
    f_hit = sum(1 for r in fs if r["hit"])
    b_all = sum(r["blocks"] for r in fs)
    b_hit = sum(r["hit"] for r in fs)
    # Lines of the kinds' own files (inlined generic code elsewhere is not
    # a line of theirs).

    def own(loc):
        r = rel(loc[0], top)
        if r == loc[0]:
            return "other" in kinds
        if r.startswith("tests/"):
            return "test" in kinds
        return ("driver-c" if r.endswith((".c", ".h")) else "driver-rs") in kinds
    l_all, l_hit = set(), set()
    for r in rows:
        l_all |= {x for x in r["lines"] if own(x)}
        l_hit |= {x for x in r["lines_hit"] if own(x)}
    return (f_hit, len(fs), len(l_hit), len(l_all), b_hit, b_all)


def render(ko, files, notes, res, top, docs=False, what=""):
    rows = res["rows"]
    out = []
    if docs:
        out += ["# Coverage of hns_roce_rs", "",
                "What `make check` and `make fuzz` reach of the driver, measured by "
                "`make coverage` (docs/harness.md, \"Coverage\"); this file is written by "
                "`scripts/coverage-report.py --write-docs`. Lines are counted at block "
                "entry: a line is reached when a basic block holding its code was entered.", "",
                f"Measured on: {what}; {len(files)} instrumented boot(s) merged.", ""]
    else:
        out += [f"# Coverage of {os.path.basename(ko)}", "",
                f"{len(files)} dump(s) merged; .ko {rel(os.path.abspath(ko), top)}.", ""]
    out += ["| code | functions reached | source functions reached (inlined too) "
            "| lines reached | blocks reached |",
            "|---|---|---|---|---|"]
    for label, kinds in (("Rust (driver)", {"driver-rs"}), ("C shim", {"driver-c"}),
                         ("driver, both", {"driver-rs", "driver-c"}),
                         ("KUnit suites, and driver generics instantiated only for them", {"test"}),
                         ("generic kernel-crate/core code in the module", {"other"})):
        fh, fa, lh, la, bh, ba = summary(rows, kinds, top)
        sr = [r for r in res["src_rows"] if r["kind"] in kinds]
        sh = sum(1 for r in sr if r["hit"])
        out.append(f"| {label} | {fh} / {fa} ({pct(fh, fa)}) | {sh} / {len(sr)} "
                   f"({pct(sh, len(sr))}) | {lh} / {la} ({pct(lh, la)}) "
                   f"| {bh} / {ba} ({pct(bh, ba)}) |")
    out.append("")
    if not docs:
        out += ["Dumps:", ""] + [f"- {n}" for n in notes] + [""]
        if res["uninstrumented"]:
            out += [f"{len(res['uninstrumented'])} function(s) of the .ko carry no "
                    "instrumentation and are not counted: " +
                    ", ".join(demangle(f.name) for f in res["uninstrumented"][:10]), ""]
    # Per file, driver code.
    per = collections.defaultdict(lambda: [0, 0, set(), set()])
    for r in res["src_rows"]:
        if r["kind"] not in ("driver-rs", "driver-c"):
            continue
        p = per[rel(r["func"].file, top)]
        p[0] += 1 if r["hit"] else 0
        p[1] += 1
    for r in rows:
        for loc in r["lines"]:
            f = rel(loc[0], top)
            if f in per:
                per[f][3].add(loc)
                if loc in r["lines_hit"]:
                    per[f][2].add(loc)
    out += ["## By file (driver)", "", "Source functions (inlined ones included) and lines.", "",
            "| file | functions | lines |", "|---|---|---|"]
    for f in sorted(per):
        fh, fa, lh, la = per[f][0], per[f][1], len(per[f][2]), len(per[f][3])
        out.append(f"| `{f}` | {fh} / {fa} ({pct(fh, fa)}) | {lh} / {la} ({pct(lh, la)}) |")
    out += ["", "## Functions nothing reached (driver)", "",
            "Source functions, inlined ones included (a generic once per instantiation); "
            "by the file of their code.", ""]
    miss = collections.defaultdict(list)
    for r in res["src_rows"]:
        if r["kind"] in ("driver-rs", "driver-c") and not r["hit"]:
            miss[rel(r["func"].file, top)].append(demangle(r["func"].name))
    if not miss:
        out.append("None.")
    for f in sorted(miss):
        out += [f"### `{f}`", ""] + [f"- `{n}`" for n in sorted(set(miss[f]))] + [""]
    return "\n".join(out).rstrip() + "\n"


# --- Self-test --------------------------------------------------------------

SELFTEST_C = """\
int sink;

int hit(int x)
{
	if (x > 3)
		sink = x;		/* HIT-LINE */
	return x + 1;
}

int miss(int x)
{
	if (x < 0)
		sink = -x;		/* MISS-LINE */
	return x * 3;
}

int __attribute__((section(".init.text"))) setup(int x)
{
	return hit(x) + 2;		/* INIT-LINE */
}
"""


def selftest():
    """A tiny object built as the shim is (gcc, trace-pc, -g): a dump of
    every block of hit() and setup() must give hit and setup reached, miss
    not, hit's and setup's marked lines reached and miss's not; a dump with
    an offset that is no block, and one whose anchor the layout contradicts,
    must be refused."""
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "t.c"), os.path.join(d, "t.o")
        open(src, "w").write(SELFTEST_C)
        subprocess.run(["gcc", "-O1", "-g", "-fsanitize-coverage=trace-pc",
                        "-fno-optimize-sibling-calls", "-c", src, "-o", obj],
                       check=True)
        lineno = {m: i + 1 for i, line in enumerate(SELFTEST_C.splitlines())
                  for m in ("HIT-LINE", "MISS-LINE", "INIT-LINE") if m in line}
        layout = text_layout(obj)
        # The blocks straight from the relocations (readelf), not objdump.
        rels = subprocess.run(["readelf", "-rsW", obj], capture_output=True, text=True,
                              check=True).stdout
        syms = {}
        for line in rels.splitlines():
            w = line.split()
            if len(w) == 8 and w[3] == "FUNC":
                syms[w[7]] = (int(w[1], 16), int(w[2]))
        sec = None
        blocks = collections.defaultdict(list)
        for line in rels.splitlines():
            m = re.match(r"Relocation section '\.rela(\S+)'", line)
            if m:
                sec = m.group(1)
                continue
            w = line.split()
            if sec in layout and len(w) >= 5 and w[4].startswith(COV_FN):
                blocks[sec].append(int(w[0], 16) + 4)

        def dump(names, extra=(), anchor=None):
            p = os.path.join(d, "cov.txt")
            with open(p, "w") as f:
                f.write("# hns_cov target=t loads=1 offsets=0\n")
                if anchor:
                    f.write(anchor + "\n")
                for secname, bl in blocks.items():
                    region, base, _ = layout[secname]
                    for b in bl:
                        for n in names:
                            a, s = syms[n]
                            if (secname == ".init.text") == (n == "setup") and a <= b - 5 < a + s:
                                f.write(f"{region} {base + b:x}\n")
                for e in extra:
                    f.write(e + "\n")
            return read_dumps([p])

        ok = True

        def check(cond, what):
            nonlocal ok
            print(f"{'ok' if cond else 'FAILED'}: {what}")
            ok = ok and cond
        files, offs, anchors, _ = dump(["hit", "setup"],
                                       anchor=f"anchor init setup {layout['.init.text'][1]:x}")
        check(len(offs) >= 3, f"the dump holds hit's and setup's blocks ({len(offs)})")
        res = analyse(obj, offs, anchors, d)
        check(not res["errors"], f"the dump fits the object {res['errors']}")
        by = {r["func"].name: r for r in res["rows"]}
        check(set(by) == {"hit", "miss", "setup"}, f"three instrumented functions {sorted(by)}")
        check(by["hit"]["hit"] == by["hit"]["blocks"], "hit: every block reached")
        check(by["setup"]["hit"] > 0, "setup (init text) reached")
        check(by["miss"]["hit"] == 0, "miss: nothing reached")
        hl = {ln for _f, ln in by["hit"]["lines_hit"]}
        check(lineno["HIT-LINE"] in hl, f"hit's marked line {lineno['HIT-LINE']} reached")
        check(lineno["INIT-LINE"] in {ln for _f, ln in by["setup"]["lines_hit"]},
              "setup's marked line reached")
        ml = {ln for _f, ln in by["miss"]["lines"]}
        check(lineno["MISS-LINE"] in ml and not by["miss"]["lines_hit"],
              "miss's marked line has code and is not reached")
        src = {r["func"].name: r["hit"] > 0 for r in res["src_rows"]}
        check(src.get("hit") and src.get("setup") and src.get("miss") is False,
              f"source functions: hit and setup reached, miss not {src}")
        fh, fa, lh, la, _bh, _ba = summary(res["rows"], {"driver-c"}, d)
        check((fh, fa) == (2, 3) and 0 < lh < la, f"summary: functions {fh}/{fa}, lines {lh}/{la}")
        # Planted faults the mapping must refuse.
        _f, offs2, anchors2, _n = dump(["hit"], extra=["text 1"])
        check(any("no block" in e for e in analyse(obj, offs2, anchors2, d)["errors"]),
              "an offset that is no block is refused")
        _f, offs3, anchors3, _n = dump(["hit"], anchor="anchor init setup 40")
        check(any("anchor setup" in e for e in analyse(obj, offs3, anchors3, d)["errors"]),
              "an anchor the layout contradicts is refused")
        check(demangle("_RNvNtCs1234_7mycrate3foo3bar") == "mycrate::foo::bar",
              "v0 demangling of a nested path")
        check(demangle("_RNvMNtCs1_4main2qpNtB2_2Qp4post") == "<main::qp::Qp>::post",
              "v0 demangling of an inherent method with a backref")
        print("coverage-report self-test:", "PASS" if ok else "FAIL")
        return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ko", default=os.path.join(TOP, "build/module-cov/hns_roce_rs.ko"))
    ap.add_argument("--out", default=os.path.join(TOP, "build/coverage/report.md"))
    ap.add_argument("--write-docs", metavar="MD", help="also write the docs version to MD")
    ap.add_argument("--top", default=TOP, help="source tree the .ko was built from")
    ap.add_argument("--what", default="the boots given", help="what ran, for --write-docs")
    ap.add_argument("--show", metavar="REGEX",
                    help="also print the blocks reached of each function whose name matches")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("dumps", nargs="*")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if not a.dumps:
        a.dumps = [os.path.join(TOP, "build/guest")]
    files, offs, anchors, notes = read_dumps(a.dumps)
    if not files:
        die(f"no coverage.txt under {' '.join(a.dumps)} (run make coverage)")
    res = analyse(a.ko, offs, anchors, a.top.rstrip("/"))
    if res["errors"]:
        for e in res["errors"]:
            print(f"coverage-report: {e}", file=sys.stderr)
        die("the dumps do not match the .ko (rebuilt since the boots?)")
    text = render(a.ko, files, notes, res, a.top.rstrip("/"))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    open(a.out, "w").write(text)
    print(text.split("\n## ")[0].rstrip())
    print(f"report: {a.out}")
    if a.show:
        for r in res["rows"]:
            name = demangle(r["func"].name)
            if re.search(a.show, name):
                print(f"{r['hit']:4d} / {r['blocks']:<4d} blocks  {name}")
    if a.write_docs:
        open(a.write_docs, "w").write(render(a.ko, files, notes, res, a.top.rstrip("/"), docs=True,
                                             what=a.what))
        print(f"docs: {a.write_docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
