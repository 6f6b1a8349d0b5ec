#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The reference docs and the code comments say what is true now; the
# history of how it got there lives in git. This check fails when README.md,
# a docs/*.md file or a comment in the driver, hns-sim or harness sources
# carries a run log or work history:
#
#   - an ISO date (YYYY-MM-DD) or a spelled-out one (day, month name,
#     year), "since <date>";
#   - a numbered session or issue ("session N", "issue N", "issue #N"),
#     or a named period of work;
#   - a commit hash in prose: 7 to 40 lowercase hex digits with at least one
#     digit and one letter, standing alone (not after 0x, not part of a
#     longer word, path or hex run).
#
# Comments are the text after // or in /* */ blocks (Rust, C), after # (shell,
# Python, Makefile, Kbuild) and Python's triple-quoted strings (docstrings). Only files git tracks are read.
#
#   history-check.py [--root DIR]     exit 1 and one line per finding
#   history-check.py --selftest       plant history in a copy, expect failure
import os
import re
import shutil
import subprocess
import sys
import tempfile

MONTHS = (r"(?:January|February|March|April|May|June|July|August|September|"
          r"October|November|December)")
PATTERNS = [
    ("ISO date", re.compile(r"(?<![\w.-])(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\w-])")),
    ("date", re.compile(r"\b\d{1,2} " + MONTHS + r",? \d{4}\b|\b" + MONTHS + r" \d{1,2},? \d{4}\b")),
    ("since <date>", re.compile(r"\bsince (?:(?:19|20)\d\d\b|" + MONTHS + r"\b)", re.I)),
    ("numbered session", re.compile(r"\bsessions? #?\d+", re.I)),
    ("issue number", re.compile(r"\bissues? #?\d+", re.I)),
    ("work period", re.compile(r"\bwork[- ]periods?\b", re.I)),
]
# A bare hex word: not after 0x or a word/path character, not before one.
HEX = re.compile(r"(?<![\w/.:@#$%+-])[0-9a-f]{7,40}(?![\w/:@-]|\.\w)")

# What cannot be cleaned yet: a whole file ("path") or one section of a
# Markdown file ("path#heading": from that "## heading" line to the next
# "## " line). Each entry says why. An entry that covers no finding any
# more is reported, so that the list only shrinks.
ALLOW = {
}


def allow_key(path, sections, n):
    """The ALLOW entry that covers line N of PATH, or None (SECTIONS: the
    "## " headings of PATH as (line number, text); an entry's heading
    matches a section whose heading starts with it)."""
    if path in ALLOW:
        return path
    head = None
    for start, text in sections:
        if start > n:
            break
        head = text
    if head is None:
        return None
    for key in ALLOW:
        kpath, _, khead = key.partition("#")
        if kpath == path and khead and head.startswith(khead):
            return key
    return None


def md_sections(text):
    """(line number, heading text) of each "## " heading."""
    return [(n, line[3:].strip()) for n, line in enumerate(text.split("\n"), 1)
            if line.startswith("## ")]

DOC_GLOBS = ("README.md",)
CODE_EXT = {".rs": "c", ".c": "c", ".h": "c", ".sh": "sh", ".py": "py"}
CODE_NAMES = {"Makefile": "sh", "Kbuild": "sh", "Kconfig": "sh"}


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
    return [p for p in out.stdout.decode().split("\0") if p]


def kind(path):
    base = os.path.basename(path)
    if path in DOC_GLOBS or (path.startswith("docs/") and path.endswith(".md")):
        return "doc"
    if base in CODE_NAMES:
        return CODE_NAMES[base]
    return CODE_EXT.get(os.path.splitext(base)[1])


def c_comments(text):
    """Yield (lineno, comment text) of // and /* */ comments, outside strings."""
    in_block = False
    for n, line in enumerate(text.split("\n"), 1):
        out = []
        i = 0
        in_str = None
        while i < len(line):
            if in_block:
                j = line.find("*/", i)
                if j < 0:
                    out.append(line[i:])
                    break
                out.append(line[i:j])
                in_block = False
                i = j + 2
                continue
            c = line[i]
            if in_str:
                if c == "\\":
                    i += 2
                    continue
                if c == in_str:
                    in_str = None
            elif c == '"':
                in_str = c
            elif line.startswith("//", i):
                out.append(line[i + 2:])
                break
            elif line.startswith("/*", i):
                in_block = True
                i += 2
                continue
            i += 1
        if out:
            yield n, " ".join(out)


def sh_comments(text):
    """Yield (lineno, text) of # comments: whole-line ones and ' # ...' tails."""
    for n, line in enumerate(text.split("\n"), 1):
        s = line.lstrip()
        if s.startswith("#!"):
            continue
        if s.startswith("#"):
            yield n, s[1:]
            continue
        m = re.search(r"\s#\s(.*)$", line)
        if m and line.count('"') % 2 == 0 and line.count("'") % 2 == 0:
            yield n, m.group(1)


def py_comments(text):
    """Yield (lineno, text) of # comments and of the lines of triple-quoted
    strings (docstrings)."""
    in_doc = False
    for n, line in enumerate(text.split("\n"), 1):
        quotes = line.count('"""') + line.count("'''")
        if in_doc or quotes:
            yield n, line
            if quotes % 2:
                in_doc = not in_doc
            continue
        for m, c in sh_comments(line):
            yield n, c


def doc_lines(text):
    for n, line in enumerate(text.split("\n"), 1):
        yield n, line


# A word of a hex dump (register or WQE words quoted from a trace):
# 8 or more hex digits, at least one of them a digit.
DUMP_WORD = re.compile(r"[0-9a-f]*\d[0-9a-f]*")


def hashes(text):
    """Yield the hex words of TEXT that read as commit hashes: not the words
    of a hex dump (a hex word of 8+ digits next to another one), not a
    64- or 128-bit value as a kernel log prints it (16 or 32 digits, or
    starting with 0000 or ffff: addresses, register contents)."""
    for m in HEX.finditer(text):
        w = m.group(0)
        if not (re.search(r"\d", w) and re.search(r"[a-f]", w)):
            continue
        if len(w) in (16, 32) or w.startswith(("0000", "ffff")):
            continue
        before = text[:m.start()].rstrip(" `").split()
        after = text[m.end():].lstrip(" `").split()
        near = [t.strip("`,.;:()") for t in before[-1:] + after[:1]]
        if len(w) >= 8 and any(len(t) >= 8 and DUMP_WORD.fullmatch(t) for t in near):
            continue
        yield w


def findings(root, files=None, skipped=None):
    """The lines carrying work history, as "path:line: what: text"; the
    ALLOW entries that covered one are added to SKIPPED."""
    found = []
    for path in files if files is not None else tracked(root):
        k = kind(path)
        if k is None:
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        sections = md_sections(text) if k == "doc" else []
        lines = {"doc": doc_lines, "c": c_comments, "sh": sh_comments, "py": py_comments}[k](text)
        for n, line in lines:
            key = allow_key(path, sections, n)
            if key is not None:
                if skipped is not None and line_findings(line):
                    skipped.add(key)
                continue
            for what, hit in line_findings(line):
                found.append(f"{path}:{n}: {what} '{hit}': {line.strip()[:160]}")
    return found


def line_findings(line):
    """(what, matched text) of each piece of work history in LINE."""
    out = []
    for what, pat in PATTERNS:
        m = pat.search(line)
        if m:
            out.append((what, m.group(0)))
    out += [("commit hash", w) for w in hashes(line)]
    return out


def check(root):
    skipped = set()
    found = findings(root, skipped=skipped)
    for f in found:
        print(f)
    stale = [p for p in ALLOW if not os.path.exists(os.path.join(root, p.split("#")[0]))]
    for p in stale:
        print(f"{p}: in the allowlist but gone: drop it from ALLOW")
    for p, why in ALLOW.items():
        if p in skipped:
            print(f"note: {p} not checked ({why})")
        elif p not in stale:
            print(f"note: {p} is clean now: drop it from ALLOW")
    if found or stale:
        print(f"{len(found)} line(s) carry work history: say what is true now, "
              "leave the history to git")
        return 1
    return 0


# (file, line appended, text of the finding it must give)
PLANTED = [
    ("docs/harness.md", "Work period 12 made the boot 30 s faster.\n", "Work period 12"),
    ("README.md", "| 2026-12-03 | make check | 2432 s | 1587 passed |\n", "2026-12-03 | make check"),
    ("hns_roce_main.rs", "// Reordered in session 34 (see 4f3c2a1).\n", "Reordered in session 34"),
]


def selftest(root):
    """Copy the checked files, plant a reference to a period of work, a dated run
    line and a code comment with a session and a hash; the check must fail
    and name each planted line."""
    with tempfile.TemporaryDirectory() as tmp:
        files = [p for p in tracked(root) if kind(p) is not None]
        for p in files:
            dst = os.path.join(tmp, p)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(root, p), dst)
        for p, line, _ in PLANTED:
            with open(os.path.join(tmp, p), "a", encoding="utf-8") as f:
                f.write(line)
        found = findings(tmp, files)
        for f in found:
            print(f)
        missing = [line.strip() for p, line, needle in PLANTED
                   if not any(f.startswith(p + ":") and needle in f for f in found)]
        for line in missing:
            print(f"not flagged: {line}")
        if not found or missing:
            print("FAIL: the check passes a tree with work history planted in it")
            return 1
        print(f"the check fails on the planted copy: {len(found)} finding(s), "
              f"all {len(PLANTED)} planted lines among them")
        return 0


def main():
    args = sys.argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--root" in args:
        root = args[args.index("--root") + 1]
    if "--selftest" in args:
        return selftest(root)
    return check(root)


if __name__ == "__main__":
    sys.exit(main())
