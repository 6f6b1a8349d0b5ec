#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check docs/c-to-rust.md against the Rust sources and the C driver.

usage: c2r-check.py KSRC [DOC]

Fails (exit 1, one line per fault) when the map
  - names a Rust or shim file that does not exist (`qp/post.rs`,
    `bindings/shim.c`, ...);
  - names a Rust item that the file does not define: `file.rs::item` is a
    fn, struct, enum, union, const, static, type, trait, mod or
    macro_rules! of that file (or a variant of one of its enums);
    `file.rs::Type::method` is a fn of an `impl ... Type` or
    `trait Type` block of that file; `file.rs::module::item` an item
    of an inline `mod module` of that file; `file.c::name` a
    function, variable or struct of that C file;
  - uses a short name (`Type::method`, `module::item`) that resolves
    nowhere: `Type` must be a type of the driver with that method, or
    `module` a Rust file stem holding `item` (names under `kernel::` are
    the kernel crate's and are not checked);
  - cites a C function `name` (LINE) that the C file of the section does
    not define at exactly that line (the line holding the function's
    name in its definition), or names in a table's C column something
    that is no identifier of the C driver;
  - says "not yet" of a C function (a row whose Rust column is empty,
    or a function named after "not yet" in a cell) while another row
    names Rust code for that same function.

  - never names a function (or op table) defined in a C file of the
    driver.
"""

import fnmatch
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CDIR_REL = "drivers/infiniband/hw/hns"

RUST_ITEM = re.compile(
    r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?"
    r"(?:const\s+|async\s+|unsafe\s+|extern\s+\"[^\"]*\"\s+)*"
    r"(fn|struct|enum|union|const|static|type|trait|mod|macro_rules!)\s+"
    r"(?:mut\s+)?([A-Za-z_][A-Za-z0-9_]*)"
)
IMPL = re.compile(r"^\s*(?:unsafe\s+)?impl\b(.*)$")
TRAIT = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s+([A-Za-z_]\w*)")
MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*\{")
ENUM = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?enum\s+([A-Za-z_]\w*)")
VARIANT = re.compile(r"^\s*([A-Z][A-Za-z0-9_]*)\s*(?:[,({=]|$)")


def strip_code(text):
    """Blank out comments, strings and char literals, keeping line breaks."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            m = re.match(r"'(?:\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


class RustFile:
    """The items of one Rust file: top-level names, impl/trait methods,
    inline modules' items, enum variants."""

    def __init__(self, path):
        self.items = set()
        self.methods = {}  # type or trait name -> set of fn names
        self.mods = {}  # inline mod name -> set of item names
        self.variants = {}  # enum name -> set of variants
        with open(path, encoding="utf-8") as f:
            lines = strip_code(f.read()).split("\n")
        # Stack of (kind, name, depth at which the block opened).
        stack = []
        depth = 0
        pending = None
        for line in lines:
            m = RUST_ITEM.match(line)
            if m:
                # Top-level items only; a method is named with its type.
                if depth == 0:
                    self.items.add(m.group(2))
                for kind, name, d in stack:
                    if kind in ("impl", "trait") and m.group(1) == "fn" and depth == d + 1:
                        self.methods.setdefault(name, set()).add(m.group(2))
                    if kind == "mod" and depth == d + 1:
                        self.mods.setdefault(name, set()).add(m.group(2))
            for kind, name, d in stack:
                if kind == "enum" and depth == d + 1:
                    v = VARIANT.match(line)
                    if v:
                        self.variants.setdefault(name, set()).add(v.group(1))
            opened = pending
            pending = None
            mi = IMPL.match(line)
            if mi:
                head = re.sub(r"\bwhere\b.*", "", mi.group(1).split("{")[0])
                head = strip_generics(head)
                if " for " in f" {head} ":
                    head = head.split(" for ")[-1]
                names = re.findall(r"[A-Za-z_]\w*", head)
                names = [x for x in names if x not in ("dyn", "mut", "const")]
                if names:
                    opened = ("impl", names[-1])
            elif TRAIT.match(line):
                opened = ("trait", TRAIT.match(line).group(1))
            elif MOD.match(line):
                opened = ("mod", MOD.match(line).group(1))
            elif ENUM.match(line):
                opened = ("enum", ENUM.match(line).group(1))
            for ch in line:
                if ch == "{":
                    if opened:
                        stack.append((opened[0], opened[1], depth))
                        opened = None
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    while stack and stack[-1][2] >= depth:
                        stack.pop()
                elif ch == ";" and opened:
                    opened = None
            # A header whose brace comes on a later line.
            pending = opened


def strip_generics(s):
    out, d = [], 0
    for ch in s:
        if ch == "<":
            d += 1
        elif ch == ">":
            d = max(0, d - 1)
        elif d == 0:
            out.append(ch)
    return "".join(out)


def rust_files():
    skip = {"build", ".git", "sim", "tests", "target"}
    res = {}
    for root, dirs, files in os.walk(TOP):
        rel = os.path.relpath(root, TOP)
        if rel.split(os.sep)[0] in skip:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if d not in skip]
        for f in files:
            if f.endswith(".rs"):
                p = os.path.normpath(os.path.join(rel, f))
                res[p] = os.path.join(root, f)
    return res


def c_defs(path):
    """Definitions of a C file: name -> lines. A function is an identifier
    followed by '(' on a line that starts at column 0, whose parameter list
    is followed by '{' (not ';'); the line is the one holding the name.
    Global variables and struct tags count too (`struct x name = {`,
    `struct name {`)."""
    defs = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    offs = [0]
    for line in lines:
        offs.append(offs[-1] + len(line) + 1)
    for i, line in enumerate(lines, 1):
        if not line or line[0] in "#}/*{":
            continue
        if line[0] in " \t":
            # A return type on the line before: "struct x\n\t*name(...)".
            m = re.match(r"\s+\*+([A-Za-z_]\w*)\s*\(", line)
            if not m or not lines[i - 2][:1].isalpha() or lines[i - 2].rstrip().endswith((";", "{", ",", ")")):
                continue
        m = re.match(r"(?:static\s+)?(?:const\s+)?struct\s+\w+\s+([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=", line)
        if m:
            defs.setdefault(m.group(1), []).append(i)
            continue
        m = re.match(r"struct\s+([A-Za-z_]\w*)\s*\{", line)
        if m:
            defs.setdefault(m.group(1), []).append(i)
            continue
        m = None
        for m2 in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", line):
            if m2.group(1) not in ("if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__"):
                m = m2
                break
        if not m:
            continue
        pos = offs[i - 1] + m.end() - 1
        d = 0
        j = pos
        while j < len(text):
            ch = text[j]
            if ch == "(":
                d += 1
            elif ch == ")":
                d -= 1
                if d == 0:
                    break
            j += 1
        k = j + 1
        while True:
            while k < len(text) and text[k] in " \t\n":
                k += 1
            # Sparse annotations between the parameters and the body.
            a = re.match(r"__(?:acquires|releases|must_hold)\s*\(", text[k:k + 40])
            if not a:
                break
            d, k = 0, k + a.end() - 1
            while k < len(text):
                d += {"(": 1, ")": -1}.get(text[k], 0)
                k += 1
                if d == 0:
                    break
        if k < len(text) and text[k] == "{":
            defs.setdefault(m.group(1), []).append(i)
    return defs


def c_idents(cdir):
    words = set()
    for f in os.listdir(cdir):
        with open(os.path.join(cdir, f), encoding="utf-8", errors="replace") as fh:
            words.update(re.findall(r"[A-Za-z_]\w*", fh.read()))
    return words


def split_row(line):
    cells = line.strip().strip("|").split(" | ")
    return [c.strip() for c in cells]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 2
    ksrc = args[0]
    doc = args[1] if len(args) > 1 else os.path.join(TOP, "docs/c-to-rust.md")
    cdir = os.path.join(ksrc, CDIR_REL)
    if not os.path.isdir(cdir):
        print(f"c2r-check: no C driver at {cdir}")
        return 2
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")

    rfiles = rust_files()
    parsed = {}

    def rust(rel):
        if rel not in parsed:
            parsed[rel] = RustFile(rfiles[rel])
        return parsed[rel]

    cfiles = {f: c_defs(os.path.join(cdir, f)) for f in os.listdir(cdir) if f.endswith((".c", ".h"))}
    idents = c_idents(cdir)
    shim_defs = {}
    for f in ("bindings/shim.c", "bindings/shim.h", "bindings/hnae3_shim.c", "bindings/hnae3_shim.h"):
        shim_defs[f] = c_defs(os.path.join(TOP, f))
    # Types (struct/enum/trait/union/type) of the driver -> files.
    types = {}
    for rel in rfiles:
        rf = rust(rel)
        for t in set(rf.methods) | rf.items:
            types.setdefault(t, set()).add(rel)
    stems = {}
    for rel in rfiles:
        stems.setdefault(os.path.splitext(os.path.basename(rel))[0], []).append(rel)

    faults = []

    docname = os.path.relpath(doc, TOP) if os.path.abspath(doc).startswith(TOP + os.sep) else doc

    def fault(ln, msg):
        faults.append(f"{docname}:{ln}: {msg}")

    def resolve_in(rel, parts):
        """parts after the file: [item] or [Type, method] or [mod, item];
        a last part with `*` matches any name of that place."""
        rf = rust(rel)
        if "*" in parts[-1]:
            pat = parts[-1]
            if len(parts) == 1:
                return bool(fnmatch.filter(rf.items, pat))
            if len(parts) == 2:
                return bool(fnmatch.filter(rf.methods.get(parts[0], ()), pat) or
                            fnmatch.filter(rf.mods.get(parts[0], ()), pat))
            return False
        if len(parts) == 1:
            return parts[0] in rf.items or parts[0] in rf.methods
        if len(parts) == 2:
            a, b = parts
            if b in rf.methods.get(a, ()):
                return True
            if b in rf.mods.get(a, ()):
                return True
            if b in rf.variants.get(a, ()):
                return True
            # a submodule file: file.rs::sub::item with file/sub.rs
            sub = os.path.join(os.path.splitext(rel)[0], a + ".rs")
            if sub in rfiles:
                return resolve_in(sub, [b])
            return False
        if len(parts) == 3:
            a, b, c = parts
            sub = os.path.join(os.path.splitext(rel)[0], a + ".rs")
            if sub in rfiles:
                return resolve_in(sub, [b, c])
            return c in rust(rel).methods.get(b, ()) and b in rust(rel).mods.get(a, ())
        return False

    def expand(names):
        """`a::{b,c}` and `a::b/c/d` stand for several names."""
        m = re.match(r"^(.*)::\{([^}]*)\}$", names)
        if m:
            return [m.group(1) + "::" + x.strip() for x in m.group(2).split(",")]
        m = re.match(r"^(.*)::(\w+(?:/\w+)+)$", names)
        if m:
            return [m.group(1) + "::" + x for x in m.group(2).split("/")]
        return [names]

    file_re = re.compile(r"^[A-Za-z0-9_./-]+\.(rs|c|h|py|sh)$")
    section_c = None
    rows = []  # (line number, C names, rust cell, notes cell)
    for ln, line in enumerate(lines, 1):
        m = re.match(r"^## (hns_roce_\w+\.c)", line)
        if m:
            section_c = m.group(1)
        elif line.startswith("## "):
            section_c = None
        for span in re.findall(r"`([^`]+)`", line):
            span = span.strip()
            if span in ("file::item", "file::Type::method"):
                continue
            if file_re.match(span):
                if span.startswith(("hns_roce_", "Kconfig")) and span.endswith((".c", ".h")):
                    if os.path.basename(span) not in os.listdir(cdir):
                        fault(ln, f"`{span}`: no such C file in {CDIR_REL}")
                elif not os.path.exists(os.path.join(TOP, span)):
                    fault(ln, f"`{span}`: no such file")
                continue
            # `file.rs::Type::{a, b}` names several items.
            span = re.sub(r"\{([^}]*)\}", lambda m: "{" + m.group(1).replace(" ", "") + "}", span)
            if "::" not in span or " " in span or "(" in span:
                continue
            for name in expand(span):
                fm = re.match(r"^([A-Za-z0-9_./-]+\.(rs|c|h))::(.+)$", name)
                if fm:
                    fpath, ext, rest = fm.group(1), fm.group(2), fm.group(3)
                    if ext in ("c", "h"):
                        d = shim_defs.get(fpath)
                        if d is None:
                            fault(ln, f"`{name}`: only bindings/shim.[ch] and bindings/hnae3_shim.[ch] are resolved")
                        elif rest not in d:
                            fault(ln, f"`{name}`: {fpath} defines no `{rest}`")
                        continue
                    if fpath not in rfiles:
                        fault(ln, f"`{name}`: no Rust file {fpath}")
                        continue
                    if not resolve_in(fpath, rest.split("::")):
                        fault(ln, f"`{name}`: {fpath} defines no `{rest}`")
                    continue
                parts = name.split("::")
                if parts[0] in ("kernel", "core"):
                    continue
                ok = False
                if parts[0] in stems:
                    ok = any(resolve_in(r, parts[1:]) for r in stems[parts[0]])
                if not ok and len(parts) == 2 and parts[0] in types:
                    ok = any(parts[1] in rust(r).methods.get(parts[0], ()) or parts[1] in rust(r).variants.get(parts[0], ())
                             for r in rfiles)
                if not ok:
                    fault(ln, f"`{name}`: resolves to no item of the Rust sources")
        if section_c and line.startswith("| `") and not line.startswith("|---"):
            cells = split_row(line)
            if len(cells) >= 3:
                rows.append((ln, section_c, cells))

    # The "###" areas of hns_roce_hw_v2.c keep the file of their "##".
    ported = {}  # C name -> line of a row naming Rust code for it
    notyet = []  # (line, C name)
    for ln, cfile, cells in rows:
        ccell, rcell, notes = cells[0], cells[1], " | ".join(cells[2:])
        names = re.findall(r"`([A-Za-z_][\w*]*)`(?:\s*\((\d+)\))?", ccell)
        for name, cline in names:
            if "*" in name:
                pat = re.compile("^" + name.replace("*", r"\w*") + "$")
                if not any(pat.match(w) for w in idents):
                    fault(ln, f"C `{name}`: matches no identifier of the C driver")
                continue
            if name not in idents:
                fault(ln, f"C `{name}`: no such identifier in the C driver")
                continue
            if cline:
                where = cfiles.get(cfile, {}).get(name)
                if not where:
                    other = [f"{f}:{l[0]}" for f, d in cfiles.items() if name in d for l in [d[name]]]
                    fault(ln, f"C `{name}` ({cline}): not defined in {cfile}" + (f" (it is in {', '.join(other)})" if other else ""))
                elif int(cline) not in where:
                    fault(ln, f"C `{name}` ({cline}): {cfile} defines it at line {', '.join(map(str, where))}")
            empty = rcell.strip() in ("—", "-", "")
            if empty:
                notyet.append((ln, name))
            else:
                ported.setdefault(name, ln)
        for m in re.finditer(r"[Nn]ot yet[^.;]*", notes):
            for name in re.findall(r"`([a-z_][a-z0-9_]*)`", m.group(0)):
                if name in idents and "_" in name:
                    notyet.append((ln, name))
    for ln, name in notyet:
        if name in ported and ported[name] != ln:
            fault(ln, f"says not yet of C `{name}`, which line {ported[name]} maps to Rust code")

    # Every function of the C files is named somewhere in the map.
    named = set(re.findall(r"[A-Za-z_]\w*", text))
    for cfile in sorted(cfiles):
        if not cfile.endswith(".c"):
            continue
        for l, n in sorted((l[0], n) for n, l in cfiles[cfile].items() if n not in named):
            faults.append(f"{cfile}:{l}: C `{n}` is named nowhere in the map")

    for f in faults:
        print(f)
    print(f"c2r-check: {len(faults)} fault(s) in {os.path.relpath(doc, TOP) if doc.startswith(TOP) else doc}")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
