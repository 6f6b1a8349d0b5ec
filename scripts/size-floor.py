#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The Rust module's .text in several builds against the C module's, and
how far each is from the 1.3x target (`make size-floor`,
docs/benchmarks.md).

Each BUILD is LABEL=DIR, DIR a module build's output directory (MO=):
its hns_roce_rs.ko, crate object, shim objects (the rdma shim and the
hnae3 one together) and trace-event object
(bindings/trace.o) are measured as `make bench` measures the module (every .text* section, `size -A`). Prints a
Markdown table, one row a build, in the order given.

  size-floor.py C_KO LABEL=DIR [LABEL=DIR ...]
"""

import importlib.util
import os
import sys

TARGET = 1.3


def size_attr():
    """scripts/size-attr.py as a module (its name has a dash), for its
    `size -A` reader."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "size_attr", os.path.join(here, "size-attr.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    text = size_attr().text_total
    c_ko = argv[1]
    c = text(c_ko)
    limit = int(c * TARGET)
    print(f"C module `{os.path.basename(c_ko)}`: .text {c} bytes; "
          f"{TARGET}x C = {limit} bytes.\n")
    print(f"| build | .text of the .ko | crate | shim | trace events | x C | "
          f"above {TARGET}x C |")
    print("|---|---|---|---|---|---|---|")
    for arg in argv[2:]:
        label, d = arg.rsplit("=", 1)
        ko = text(os.path.join(d, "hns_roce_rs.ko"))
        crate = text(os.path.join(d, "hns_roce_main.o"))
        shim = sum(text(os.path.join(d, "bindings", o))
                   for o in ("shim.o", "hnae3_shim.o"))
        trace = text(os.path.join(d, "bindings", "trace.o"))
        print(f"| {label} | {ko} | {crate} | {shim} | {trace} | {ko / c:.2f} | "
              f"{ko - limit} |")


if __name__ == "__main__":
    main(sys.argv)
