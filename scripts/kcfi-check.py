#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Static kCFI check of the Rust functions the C side calls through pointers.

With CONFIG_CFI_CLANG an indirect call traps unless the type hash of the
pointer's C prototype equals the one of the function it reaches. Clang
hashes the C prototype's Itanium mangling (integers normalised to their
width and signedness by CONFIG_CFI_ICALL_NORMALIZE_INTEGERS, typedefs seen
through, const kept on pointees, an enum by its name); rustc hashes an
`extern "C" fn` from its Rust signature the same way, with `#[repr(C)]`
types by name. A C enum reaches Rust through bindgen as an integer alias,
so no Rust function can have the hash of a prototype with an enum: such a
pointer needs a C trampoline. Other differences (integer width or
signedness, pointer depth, const, the pointee's name) are found here too,
though most would already be Rust type errors against bindgen's field.

Finds, in the Rust sources, every function pointer handed to C: a field of
a bindgen struct literal (`raw::T { f: Some(g::<D>) }`, or `bindings::T`)
or an argument of a shim or kernel call (`raw::f(.., Some(g), ..)`,
`bindings::f`); looks up the C prototype of the field (shim.h, the
kernel's ib_verbs.h, hnae3.h, notifier.h: written out or a typedef) or of
the parameter (shim.h, ib_verbs.h, a rust/helpers/ wrapper: written out
or a typedef), and compares it parameter by parameter with
the Rust function's signature. Also checks that shim.c never takes the
address of a function implemented in Rust (it may only call them).

Usage: kcfi-check.py KSRC [TOP]   (exit 1 on any finding)
"""
import os
import re
import sys

KSRC = sys.argv[1]
TOP = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..")

C_HEADERS = [
    os.path.join(TOP, "bindings/shim.h"),
    os.path.join(TOP, "bindings/hnae3_shim.h"),
    os.path.join(KSRC, "include/rdma/ib_verbs.h"),
    os.path.join(KSRC, "drivers/net/ethernet/hisilicon/hns3/hnae3.h"),
    # The netdevice notifier and the bond group's delayed work (rdma/hnae3/bond.rs).
    os.path.join(KSRC, "include/linux/notifier.h"),
    os.path.join(KSRC, "include/linux/workqueue_types.h"),
    os.path.join(KSRC, "rust/helpers/workqueue.c"),
]

# C integer types and typedefs (LP64, -funsigned-char) by normalised
# width and signedness; bool is its own type.
C_INT = {
    "char": "u8", "signed char": "i8", "unsigned char": "u8", "u8": "u8", "__u8": "u8",
    "s8": "i8", "short": "i16", "unsigned short": "u16", "u16": "u16", "__u16": "u16",
    "s16": "i16", "int": "i32", "signed int": "i32", "unsigned": "u32",
    "unsigned int": "u32", "u32": "u32", "__u32": "u32", "s32": "i32", "__s32": "i32",
    "gfp_t": "u32", "long": "i64", "long long": "i64", "s64": "i64",
    "unsigned long": "u64", "unsigned long long": "u64", "u64": "u64", "__u64": "u64",
    "size_t": "u64", "dma_addr_t": "u64", "phys_addr_t": "u64", "resource_size_t": "u64",
    "bool": "bool", "_Bool": "bool", "void": "void",
}
RUST_INT = {
    "c_char": "u8", "c_schar": "i8", "c_uchar": "u8", "u8": "u8", "i8": "i8",
    "c_short": "i16", "c_ushort": "u16", "u16": "u16", "i16": "i16",
    "c_int": "i32", "i32": "i32", "c_uint": "u32", "u32": "u32",
    "c_long": "i64", "c_longlong": "i64", "i64": "i64", "isize": "i64",
    "c_ulong": "u64", "c_ulonglong": "u64", "u64": "u64", "usize": "u64",
    "bool": "bool", "c_void": "void", "()": "void",
}


def strip_comments(s):
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    return re.sub(r"//[^\n]*", " ", s)


def split_top(s, sep=","):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [x.strip() for x in out]


def block(text, start):
    """The text between the brace at or after `start` and its match."""
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
    return text[i + 1:]


# --- C side -------------------------------------------------------------------
C_TEXT = "\n".join(strip_comments(open(p).read()) for p in C_HEADERS)
C_ENUMS = set(re.findall(r"\benum\s+(\w+)\s*\{", C_TEXT))
C_TYPEDEF_ENUM = {m.group(2): m.group(1) for m in
                  re.finditer(r"typedef\s+enum\s+(\w+)\s+(\w+)\s*;", C_TEXT)}
C_TYPEDEF_ENUM.update({"irqreturn_t": "irqreturn"})


INT_WORDS = {"signed", "unsigned", "short", "long", "int", "char"}
QUALIFIERS = {"const", "volatile", "__user", "__iomem", "__rcu"}


def c_type(decl, is_param=True):
    """A C declaration (type and optional name) in canonical form:
    (base, [pointer levels, outermost first, each 'mut' or 'const'])."""
    d = decl.strip()
    if "(*" in d:
        return ("fnptr", [])
    toks = re.findall(r"\w+|\*", d)
    words = [t for t in toks if t != "*" and t not in QUALIFIERS]
    if words and words[0] in ("struct", "enum", "union"):
        ntype = 2
    elif words and all(w in INT_WORDS for w in words[:-1]) and words[0] in INT_WORDS:
        ntype = len(words) - (0 if words[-1] in INT_WORDS else 1)
    else:
        ntype = 1
    has_name = is_param and len(words) > ntype
    if has_name:
        # The name is the last token.
        toks = toks[:-1]
    # Pointer levels, innermost first as written: a const before the first
    # `*` qualifies the pointee, a const after a `*` that pointer.
    levels = []
    pointee_const = False
    for t in toks:
        if t == "*":
            levels.append("mut")
        elif t == "const":
            if levels:
                levels[-1] = "const-self"
            else:
                pointee_const = True
    # Rust writes the constness of what a pointer points to: level i's
    # mutability is the constness of level i-1's target.
    rs_levels = []
    for i in range(len(levels)):
        inner_const = pointee_const if i == 0 else levels[i - 1] == "const-self"
        rs_levels.append("const" if inner_const else "mut")
    rs_levels.reverse()
    base_words = [t for t in toks if t != "*" and t not in QUALIFIERS]
    base = " ".join(base_words)
    if base_words and base_words[0] in ("struct", "union") and len(base_words) > 1:
        base = "struct:" + base_words[1]
    elif base_words and base_words[0] == "enum" and len(base_words) > 1:
        base = "enum:" + base_words[1]
    elif base in C_TYPEDEF_ENUM:
        base = "enum:" + C_TYPEDEF_ENUM[base]
    elif base in C_INT:
        base = C_INT[base]
    else:
        base = "c?:" + base
    return (base, rs_levels)


def c_proto(ret, params):
    ps = [] if params.strip() in ("", "void") else split_top(params)
    return c_type(ret, is_param=False), [c_type(p) for p in ps]


def c_field(struct, field):
    """The prototype of function pointer `field` of `struct`."""
    m = re.search(r"\bstruct\s+%s\s*\{" % re.escape(struct), C_TEXT)
    if not m:
        return None
    body = block(C_TEXT, m.start())
    f = re.search(r"([\w\s\*]+?)\(\s*\*\s*%s\s*\)\s*\(([^;]*)\)\s*;" % re.escape(field), body)
    if f:
        return c_proto(f.group(1), f.group(2))
    # A field whose type is a typedef of a function pointer.
    f = re.search(r"\b(\w+)\s+%s\s*;" % re.escape(field), body)
    return c_typedef(f.group(1)) if f else None


def c_typedef(tname):
    """The prototype of function pointer typedef `tname`."""
    t = re.search(r"typedef\s+([\w\s\*]+?)\(\s*\*\s*%s\s*\)\s*\(([^;]*)\)\s*;" % re.escape(tname),
                  C_TEXT)
    return c_proto(t.group(1), t.group(2)) if t else None


def c_param_typedef(func, idx):
    """The prototype behind parameter `idx` of `func` (declared in shim.h or
    ib_verbs.h): a function pointer written out or a typedef of one."""
    m = re.search(r"\b%s\s*\(([^;]*)\)\s*;" % re.escape(func), C_TEXT)
    if not m:
        # A kernel crate helper of an inline function (rust/helpers/).
        m = re.search(r"\brust_helper_%s\s*\(([^;{]*)\)\s*\{" % re.escape(func), C_TEXT)
    if not m:
        return None
    params = split_top(m.group(1))
    if idx >= len(params):
        return None
    inline = re.fullmatch(r"([\w\s\*]+?)\(\s*\*\s*\w*\s*\)\s*\((.*)\)", params[idx], re.S)
    if inline:
        return c_proto(inline.group(1), inline.group(2))
    tname = re.findall(r"\w+", params[idx])[0]
    t = re.search(r"typedef\s+([\w\s\*]+?)\(\s*\*\s*%s\s*\)\s*\(([^;]*)\)\s*;" % re.escape(tname),
                  C_TEXT)
    if not t:
        return None
    return c_proto(t.group(1), t.group(2))


# --- Rust side ----------------------------------------------------------------
def rust_files():
    skip = {"target", "build", "sim", "tests", ".git"}
    for root, dirs, files in os.walk(TOP):
        dirs[:] = [d for d in dirs if d not in skip]
        for f in files:
            if f.endswith(".rs"):
                yield os.path.join(root, f)


RS = {p: strip_comments(open(p).read()) for p in rust_files()}
RS_ALL = "\n".join(RS.values())
ALIASES = {m.group(1): m.group(2) for m in re.finditer(
    r"\btype\s+(\w+)(?:<[^>]*>)?\s*=\s*(?:raw::|kernel::bindings::|bindings::)?([\w:]+)\s*;",
    RS_ALL)}

FNS = {}
for m in re.finditer(r'extern\s+"C"\s+fn\s+(\w+)\s*(<[^>{(]*>)?\s*\(', RS_ALL):
    start = m.end() - 1
    depth = 0
    for j in range(start, len(RS_ALL)):
        if RS_ALL[j] == "(":
            depth += 1
        elif RS_ALL[j] == ")":
            depth -= 1
            if depth == 0:
                break
    params = RS_ALL[start + 1:j]
    rest = RS_ALL[j + 1:RS_ALL.index("{", j)]
    ret = rest.split("->", 1)[1].strip() if "->" in rest else "()"
    ret = re.sub(r"\bwhere\b.*", "", ret, flags=re.S).strip()
    FNS.setdefault(m.group(1), []).append((params, ret))


def rust_type(t):
    t = t.strip()
    levels = []
    while True:
        m = re.match(r"\*\s*(mut|const)\s+(.*)", t, re.S)
        if not m:
            break
        levels.append(m.group(1))
        t = m.group(2).strip()
    if t.startswith("Option<") or "fn(" in t:
        return ("fnptr", levels)
    t = re.sub(r"^(core::ffi::|kernel::ffi::|ffi::|crate::\w+::|raw::|kernel::bindings::|bindings::)",
               "", t)
    t = re.sub(r"<.*>$", "", t)
    seen = set()
    while t in ALIASES and t not in seen:
        seen.add(t)
        t = re.sub(r"^.*::", "", ALIASES[t])
    if t in RUST_INT:
        return (RUST_INT[t], levels)
    if t in C_ENUMS:
        return ("int-alias-of-enum:" + t, levels)
    return ("struct:" + t, levels)


def rust_proto(params, ret):
    ps = []
    for p in split_top(params):
        if ":" in p:
            ps.append(rust_type(p.split(":", 1)[1]))
    return rust_type(ret), ps


# --- installs -------------------------------------------------------------------
installs = []  # (where, C proto or None, rust fn name)
for path, text in RS.items():
    rel = os.path.relpath(path, TOP)
    for m in re.finditer(r"\b(?:raw|bindings)::(\w+)\s*\{", text):
        body = block(text, m.start())
        # `field: Some(f)`, or `field: if HAS { Some(f) } else { None }`
        # (an op the driver may not implement).
        for f in re.finditer(
                r"(\w+)\s*:\s*(?:if\s[^{]*\{\s*)?Some\(\s*([\w:]+?)(?:::<[^>]*>)?\s*\)", body):
            fn = f.group(2).split("::")[-1]
            if fn in FNS:
                installs.append((f"{rel}: struct {m.group(1)}.{f.group(1)}",
                                 c_field(m.group(1), f.group(1)), fn))
    for m in re.finditer(r"\b(?:raw|bindings)::(\w+)\s*\(", text):
        # The call's argument list.
        i, depth = m.end() - 1, 0
        for j in range(i, len(text)):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
        args = split_top(text[i + 1:j])
        for k, a in enumerate(args):
            s = re.fullmatch(r"Some\(\s*([\w:]+?)(?:::<[^>]*>)?\s*\)", a)
            if s and s.group(1).split("::")[-1] in FNS:
                installs.append((f"{rel}: {m.group(1)}() argument {k}",
                                 c_param_typedef(m.group(1), k), s.group(1).split("::")[-1]))

exported = set(re.findall(r"#\[no_mangle\]\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?extern\s+\"C\"\s+fn\s+(\w+)",
                          RS_ALL))

# --- compare ----------------------------------------------------------------------
def show(t):
    base, lv = t
    return "".join("*%s " % x for x in lv) + base


problems = 0
ok = 0
for where, cproto, fn in installs:
    name = f"{where} = {fn}"
    if cproto is None:
        print(f"FINDING {name}: no C prototype found for this pointer")
        problems += 1
        continue
    (cret, cps) = cproto
    defs = FNS[fn]
    if len(defs) != 1:
        print(f"FINDING {name}: {len(defs)} Rust functions of this name, cannot tell which")
        problems += 1
        continue
    rret, rps = rust_proto(*defs[0])
    found = []
    if len(cps) != len(rps):
        found.append(f"{len(cps)} C parameters, {len(rps)} Rust")
    pairs = [("return", cret, rret)] + [(f"parameter {i}", c, r)
                                         for i, (c, r) in enumerate(zip(cps, rps))]
    for what, c, r in pairs:
        if c[0].startswith("enum:"):
            found.append(f"{what} is C {show(c)} (kCFI encodes an enum by its name; "
                         f"Rust has {show(r)}): needs a C trampoline")
        elif c[0] == "fnptr" or r[0] == "fnptr":
            found.append(f"{what} is a function pointer (C {show(c)}, Rust {show(r)}): "
                         "check its encoding by hand")
        elif c[0].startswith("c?:"):
            found.append(f"{what}: C type {c[0][3:]} unknown to this check (add it to C_INT)")
        elif c[1] != r[1]:
            found.append(f"{what}: pointer levels differ, C {show(c)}, Rust {show(r)}")
        elif c[0] != r[0]:
            found.append(f"{what}: C {show(c)}, Rust {show(r)}")
    if found:
        problems += 1
        for x in found:
            print(f"FINDING {name}: {x}")
    else:
        ok += 1
        print(f"ok      {name}: ({', '.join(show(c) for c in cps)}) -> {show(cret)}")

# The shim's C files may call a Rust-implemented function, never store its
# address.
for shim_f in ("bindings/shim.c", "bindings/hnae3_shim.c"):
    shim_c = strip_comments(open(os.path.join(TOP, shim_f)).read())
    for fn in sorted(exported):
        for m in re.finditer(r"\b%s\b" % re.escape(fn), shim_c):
            if not re.match(r"\s*\(", shim_c[m.end():]):
                print(f"FINDING {shim_f} takes the address of Rust's {fn}")
                problems += 1
                break
        else:
            print(f"ok      {shim_f} calls Rust's {fn} directly only")

# Every extern "C" function of the driver is either installed (checked
# above) or exported for direct calls: one this check cannot place may be
# stored somewhere it does not look.
placed = {fn for _, _, fn in installs} | exported
for fn in sorted(set(FNS) - placed):
    print(f"FINDING Rust extern \"C\" fn {fn}: neither found installed nor exported; "
          "teach this check where it goes")
    problems += 1

if not installs:
    print("FINDING no installed Rust function found: the patterns no longer match the code")
    problems += 1
print(f"{ok} Rust functions installed in C function pointers match their prototypes, "
      f"{problems} findings")
sys.exit(1 if problems else 0)
