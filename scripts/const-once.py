#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check that every constant of the driver is defined once.

usage: const-once.py [TOP] [--quiet] [--self-test]

Scans the Rust sources `make modules` compiles: the crate root of Kbuild
(hns_roce_main.rs) and every file its `mod` declarations reach, following
`#[path]`. Modules under tests/ (the KUnit suites and the C driver's test
vectors, compiled in test builds only) are left out: they restate hardware
values on purpose, to check the driver's definitions against the C driver's
words. The files generated from the C headers (GENERATED below) are read
but never blamed for repeating themselves: each of their field maps names
the same fields (`qpc::SL`, `cqc::...`) in its own module. A hand-written
definition that repeats one of theirs is reported.

A definition is a `const NAME` or `static NAME` item (any visibility) at
module level, in an inline module, in an impl or trait, or in a function
body. Its name is the item's name qualified by the inline modules around it
in its file (`serv::RC`) or by the type of an inherent impl (`Algo::ALL`);
the file module is not part of it, since the rest of the driver imports
module-level items by their bare name. Fails when:

- two definitions have the same name (the strict rule), or
- two definitions whose names end in the same identifier have the same
  value text (an associated or inline-module constant restating another
  one: `A::PAGE_SHIFT` and `B::PAGE_SHIFT`, both `12`), or
- the docs of two definitions cite the same C macro as their source, e.g.
  (`HNS_HW_PAGE_SHIFT`): the same hardware constant under two names. A
  value computed from the other definition's name (a typed wrapper such as
  `HwRev(pci_rev::HIP08)`) uses it and is not counted; a bare alias
  (`= hw_page::PAGE_SHIFT`) is.

Not definitions: constants of a trait impl (they give the value of the
trait's own name), trait items without a value, `const _` (compile-time
assertions), statics in function bodies and macro bodies (per-call-site
state, such as a rate limiter), and items behind different `#[cfg]`s
(alternatives of one definition).

ALLOW names definitions the check skips for now, each with its reason; an
entry goes once its file has one definition left.

Prints every site of each duplicate, then a count (not with --quiet when
there is no duplicate). --self-test plants one duplicate of each
kind in a copy of the tree (a second `HW_PAGE_SIZE`, a literal
`HW_PAGE_SHIFT` citing `HNS_HW_PAGE_SHIFT`, an associated `PAGE_SHIFT` of
12) and fails unless all three are reported.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = "hns_roce_main.rs"

# Generated from the C headers by scripts/gen-fields.py and
# scripts/gen-consts.py.
GENERATED = {
    "hw_v2_fields.rs",
    "hns_roce_hw_v2/cmq_fields.rs",
    "hns_roce_hw_v2/consts.rs",
}

# Test-only modules: they mirror hardware values on purpose.
SKIP_DIRS = ("tests/",)

# (file, name): definitions skipped for now, with the reason.
ALLOW: dict = {}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
RAW = re.compile(r'b?r(#*)"')
CHAR = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'")


def blank(text, keep_strings=False):
    """`text` with comments, strings and char literals replaced by spaces
    (newlines kept, so offsets and line numbers stay); with `keep_strings`,
    the comments only."""
    out = list(text)
    i, n = 0, len(text)

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif c in "br" and RAW.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = RAW.match(text, i)
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            if not keep_strings:
                wipe(i + 1, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if not keep_strings:
                wipe(i + 1, j)
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            m = CHAR.match(text, i)
            if m:
                if not keep_strings:
                    wipe(i + 1, m.end() - 1)
                i = m.end()
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def mod_files(top):
    """Every source file the crate compiles, from the root's `mod`s."""
    seen, todo = [], [ROOT]
    while todo:
        rel = todo.pop()
        if rel in seen or rel.startswith(SKIP_DIRS):
            continue
        path = os.path.join(top, rel)
        if not os.path.exists(path):
            continue
        seen.append(rel)
        with open(path, encoding="utf-8") as f:
            text = blank(f.read())
        base = os.path.dirname(rel)
        stem = os.path.splitext(os.path.basename(rel))[0]
        # Non-mod.rs files keep their submodules in a folder of their name.
        sub = base if stem in ("mod", "lib", "main") or rel == ROOT else os.path.join(base, stem)
        for m in re.finditer(r"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", text):
            attrs, name = m.group(1), m.group(2)
            p = re.search(r'#\[path\s*=\s*"([^"]*)"\]', attrs)
            if p:
                # blank() wiped the string: read the path from the source.
                with open(path, encoding="utf-8") as f:
                    src = f.read()
                p = re.search(r'#\[path\s*=\s*"([^"]*)"\]', src[m.start():m.end()])
                todo.append(os.path.normpath(os.path.join(base, p.group(1))))
            else:
                for cand in (f"{name}.rs", f"{name}/mod.rs"):
                    if os.path.exists(os.path.join(top, sub, cand)):
                        todo.append(os.path.normpath(os.path.join(sub, cand)))
                        break
    return sorted(seen)


def scope_of(head):
    """What a `{` opens, from the text before it in the same statement."""
    h = " ".join(head.split())
    if re.search(r"\bmacro_rules!", h):
        return ("macro", None)
    if re.search(r"\bfn\b", h):
        return ("fn", None)
    m = re.search(r"\bmod\s+(" + IDENT + r")$", h)
    if m:
        return ("mod", m.group(1))
    m = re.search(r"\btrait\s+(" + IDENT + ")", h)
    if m:
        return ("trait", m.group(1))
    if re.search(r"\bimpl\b", h):
        # Drop the impl's generics, then look for `Trait for Type`.
        g = re.sub(r"^.*?\bimpl\s*", "", h)
        depth, rest = 0, []
        for ch in g:
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
            elif depth == 0:
                rest.append(ch)
        g = "".join(rest)
        if re.search(r"\bfor\b", g):
            return ("impl-trait", None)
        m = re.match(r"\s*(?:[\w:]*::)?(" + IDENT + ")", g)
        return ("impl", m.group(1) if m else "?")
    return ("block", None)


DEF = re.compile(
    r"(?:pub(?:\([^)]*\))?\s+)?(const|static)\s+(?:mut\s+)?(" + IDENT + r")\s*:")


def defs_of(rel, src):
    """(qualified name, last name, value, cfg, C names cited, line) of each
    definition in one file."""
    text = blank(src)
    lines = src.split("\n")
    out = []
    stack = []  # (kind, name) of each open brace
    stmt = 0  # offset where the current statement's text starts
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            stack.append(scope_of(text[stmt:i]))
            i += 1
            stmt = i
            continue
        if c == "}":
            if stack:
                stack.pop()
            i += 1
            stmt = i
            continue
        if c == ";":
            i += 1
            stmt = i
            continue
        m = DEF.match(text, i) if c in "pcs" else None
        prev = text[:i].rstrip()[-1:] if m else ""
        if m and (not prev or prev in ";{}]") and (i == 0 or not re.match(r"\w", text[i - 1])):
            kind, name = m.group(1), m.group(2)
            # The value: up to the `;` outside brackets.
            j, depth = m.end(), 0
            while j < n and not (text[j] == ";" and depth == 0):
                if text[j] in "([{":
                    depth += 1
                elif text[j] in ")]}":
                    depth -= 1
                j += 1
            body = text[m.end():j]
            value = "".join(body.split("=", 1)[1].split()) if "=" in body else None
            line = text.count("\n", 0, i) + 1
            kinds = [k for k, _ in stack]
            skip = (
                name == "_"
                or "macro" in kinds
                or (kinds and kinds[-1] == "impl-trait")
                or (kinds and kinds[-1] == "trait" and value is None)
                or ("fn" in kinds and kind == "static")
            )
            if not skip:
                qual = []
                for k, nm in stack:
                    if k in ("mod", "impl", "trait"):
                        qual.append(nm)
                    elif k == "fn":
                        qual = []  # a local constant: its bare name
                # Attributes and docs on the lines above.
                cfg, docs, k = [], [], line - 2
                while k >= 0:
                    s = lines[k].strip()
                    if s.startswith("///"):
                        docs.append(s[3:])
                    elif s.startswith("#["):
                        if s.startswith("#[cfg"):
                            cfg.append(s)
                    else:
                        break
                    k -= 1
                doc = " ".join(reversed(docs))
                doc = re.sub(r"\[`[^`]*`\]", "", doc)  # Rust links
                cited = set(re.findall(r"`([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])`", doc))
                out.append(("::".join(qual + [name]), name, value, " ".join(sorted(cfg)), frozenset(cited), line))
            i = j
            continue
        i += 1
    return out


def check(top, quiet=False):
    files = mod_files(top)
    sites = []
    for rel in files:
        with open(os.path.join(top, rel), encoding="utf-8") as f:
            for d in defs_of(rel, f.read()):
                if (rel, d[0]) in ALLOW:
                    continue
                sites.append((rel,) + d)

    def report(title, key, derived=False):
        groups = {}
        for s in sites:
            for k in key(s):
                groups.setdefault(k, []).append(s)
        bad = 0
        for k, g in sorted(groups.items()):
            g = sorted(set(g), key=lambda s: (s[0], s[6]))
            if derived:
                # A value built from another site's name (a typed wrapper,
                # `HwRev(pci_rev::HIP08)`) uses that definition; a bare
                # alias of it (`= hw_page::PAGE_SHIFT`) restates it.
                g = [s for s in g if not any(
                    o is not s and s[3] != o[1] and re.search(r"(^|\W)" + re.escape(o[1]) + r"\b", s[3] or "")
                    for o in g)]
            if len(g) < 2 or all(s[0] in GENERATED for s in g):
                continue
            # Items behind different #[cfg]s are alternatives.
            if len({s[4] for s in g}) == len(g) and all(s[4] for s in g):
                continue
            bad += 1
            print(f"{title} {k}:")
            for s in g:
                print(f"    {s[0]}:{s[6]}: {s[1]} = {s[3]}")
        return bad

    bad = report("defined more than once:", lambda s: [s[1]])
    bad += report("same name and value:", lambda s: [(s[2], s[3])] if s[3] is not None else [])
    bad += report("same C constant:", lambda s: sorted(s[5]), derived=True)
    n = len(sites)
    if bad or not quiet:
        print(f"{len(files)} files, {n} definitions, {bad} duplicate{'s' if bad != 1 else ''}")
    return bad == 0


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        for d, dirs, names in os.walk(TOP):
            rel_d = os.path.relpath(d, TOP)
            dirs[:] = [x for x in dirs if not x.startswith(".")
                       and os.path.normpath(os.path.join(rel_d, x)) not in ("sim", "tests", "build", "target")]
            for name in names:
                if name.endswith(".rs"):
                    rel = os.path.normpath(os.path.join(rel_d, name))
                    os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
                    shutil.copy(os.path.join(TOP, rel), os.path.join(tmp, rel))
        with open(os.path.join(tmp, "mr.rs"), "a", encoding="utf-8") as f:
            f.write("\n/// Smallest hardware page (`HNS_HW_PAGE_SHIFT`).\nconst HW_PAGE_SHIFT: u32 = 12;\n"
                    "impl Planted {\n    const PAGE_SHIFT: u32 = 12;\n}\n"
                    "/// Hardware page size.\nconst HW_PAGE_SIZE: u32 = 4096;\n")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), tmp],
                           capture_output=True, text=True)
        print(r.stdout, end="")
        ok = (r.returncode != 0 and "defined more than once: HW_PAGE_SIZE:" in r.stdout
              and "same C constant: HNS_HW_PAGE_SHIFT" in r.stdout
              and "same name and value: ('PAGE_SHIFT', '12')" in r.stdout)
        print("self-test:", "planted duplicates reported" if ok else "planted duplicates NOT reported")
        return ok


def main():
    args = sys.argv[1:]
    if "--self-test" in args:
        return 0 if self_test() else 1
    quiet = "--quiet" in args
    args = [a for a in args if a != "--quiet"]
    return 0 if check(args[0] if args else TOP, quiet) else 1


if __name__ == "__main__":
    sys.exit(main())
