#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check that the driver keeps no state in `static` items.

usage: no-static.py [TOP] [--quiet] [--self-test]

The module's state belongs to the module object (`HnsRoce`, in the crate
root hns_roce_main.rs): the hnae3 client callbacks, the bond notifier and
work and the debugfs files reach it through what they are handed, never
through a global. This scans the Rust sources `make modules` compiles (the
files scripts/const-once.py walks: the crate root and every file its `mod`
declarations reach, tests/ left out) and fails on every `static` item
outside the crate root: a plain `static NAME: T`, `static mut`, and the
`static` inside a `global_lock!` or any other macro call or body.

ALLOW lists the statics that are no driver state, each with its reason:
read-only tables whose address the kernel keeps, and the per-call-site
flags of the kernel's own `*_ratelimited` and `WARN_ONCE` idiom (one state
per message, as the C driver's macros define it). An entry names the file
and the item; a static the list does not name fails, as does an entry
that names no static any more (the list stays current).

--self-test plants a `static` in a function body and a `global_lock!` in a
copy of the tree and fails unless both are reported, then checks that a
stale ALLOW entry is reported too.
"""

import os
import re
import runpy
import shutil
import sys
import tempfile
import types

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = "hns_roce_main.rs"

# (file, name): why this static is not driver state.
ALLOW = {
    ("print.rs", "RS"): "per-call-site rate limit of the *_ratelimited message macros, "
    "as C's DEFINE_RATELIMIT_STATE inside printk_ratelimited",
    ("rdma/print.rs", "RS"): "per-call-site rate limit of dev_err_ratelimited, "
    "as C's DEFINE_RATELIMIT_STATE inside printk_ratelimited",
    ("cq.rs", "RS"): "per-call-site rate limit of one message, as C's ratelimited print",
    ("rdma/ib/drain.rs", "WARNED"): "WARN_ONCE's per-call-site flag, as C's __warned",
    ("device.rs", "HW_STATS"): "read-only counter descriptors; the ib core keeps their address",
    ("hns_roce_hw_v2/scc.rs", "DCQCN"): "read-only parameter table of the debugfs files",
    ("hns_roce_hw_v2/scc.rs", "LDCP"): "read-only parameter table of the debugfs files",
    ("hns_roce_hw_v2/scc.rs", "HC3"): "read-only parameter table of the debugfs files",
    ("hns_roce_hw_v2/scc.rs", "DIP"): "read-only parameter table of the debugfs files",
}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# `static` as an item keyword: not the lifetime `'static`.
STATIC = re.compile(r"(?<!['A-Za-z0-9_])static\s+(?:mut\s+)?(" + IDENT + r")\s*:")


def const_once():
    """scripts/const-once.py's names (its file walk and comment blanker)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "const-once.py")
    return types.SimpleNamespace(**runpy.run_path(path))


def statics(top):
    """[(file, line, name)] of every `static` item outside the crate root."""
    co = const_once()
    out = []
    for rel in co.mod_files(top):
        if rel == ROOT or rel.startswith(co.SKIP_DIRS):
            continue
        with open(os.path.join(top, rel), encoding="utf-8") as f:
            text = co.blank(f.read())
        for m in STATIC.finditer(text):
            out.append((rel, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def check(top, quiet=False, allow=None):
    """Prints each static that is not allowed and each stale entry; the
    number of faults."""
    allow = ALLOW if allow is None else allow
    found = statics(top)
    bad = [s for s in found if (s[0], s[2]) not in allow]
    seen = {(s[0], s[2]) for s in found}
    stale = [k for k in allow if k not in seen]
    for rel, line, name in bad:
        print(f"{rel}:{line}: static {name}: module state belongs to the module object ({ROOT})")
    for rel, name in stale:
        print(f"no-static.py: ALLOW names {rel}: {name}, which is no static any more")
    if bad or stale or not quiet:
        print(f"no-static: {len(found)} statics outside {ROOT}, {len(bad)} not allowed, {len(stale)} stale entries")
    return len(bad) + len(stale)


def self_test():
    """Plants two statics and a stale entry; whether all are reported."""
    tmp = tempfile.mkdtemp(prefix="no-static-")
    try:
        co = const_once()
        for rel in co.mod_files(TOP):
            dst = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.join(TOP, rel), dst)
        with open(os.path.join(tmp, "pd.rs"), "a", encoding="utf-8") as f:
            f.write(
                "\nfn planted_fn() -> bool {\n"
                "    static PLANTED_FLAG: core::sync::atomic::AtomicBool =\n"
                "        core::sync::atomic::AtomicBool::new(false);\n"
                "    PLANTED_FLAG.load(core::sync::atomic::Ordering::Relaxed)\n}\n"
                "\nkernel::sync::global_lock! {\n"
                "    // SAFETY: planted.\n"
                "    unsafe(uninit) static PLANTED_LOCK: Mutex<()> = ();\n}\n"
            )
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            n = check(tmp, quiet=True)
        text = buf.getvalue()
        print(text, end="")
        ok = n >= 2 and "static PLANTED_FLAG" in text and "static PLANTED_LOCK" in text
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            n = check(TOP, quiet=True, allow={**ALLOW, ("pd.rs", "GONE"): "planted"})
        text = buf.getvalue()
        print(text, end="")
        ok = ok and n >= 1 and "pd.rs: GONE" in text
        print("self-test:", "planted statics reported" if ok else "planted statics NOT reported")
        return ok
    finally:
        shutil.rmtree(tmp)


def main():
    args = sys.argv[1:]
    if "--self-test" in args:
        return 0 if self_test() else 1
    quiet = "--quiet" in args
    rest = [a for a in args if not a.startswith("--")]
    top = rest[0] if rest else TOP
    return 1 if check(top, quiet) else 0


if __name__ == "__main__":
    sys.exit(main())
