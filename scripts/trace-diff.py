#!/usr/bin/env python3
"""Compare the hns-sim traces of the C driver and the Rust driver.

DMA addresses (marked `@` by hns-sim) are normalised. Notes (`# ...`) are
ignored. Modes:

  --profile C_TRACE RS_TRACE
      The Rust driver of today runs the bring-up profile and clears the
      function. Its trace must equal the C driver's trace up to the first
      mailbox (the first QUERY_MB_ST), followed by the C driver's
      FUNC_CLEAR commands.

  --full C_TRACE RS_TRACE
      The traces must be equal.

Prints a unified diff and exits 1 on a difference.
"""
import difflib
import re
import sys


def load(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        out.append(re.sub(r"@[0-9a-f]+", "@ADDR", line))
    return out


def profile_expectation(c):
    end = next((i for i, line in enumerate(c) if " op=8505 " in line), None)
    if end is None:
        sys.exit("C trace has no mailbox (QUERY_MB_ST)")
    return c[:end] + [l for l in c[end:] if " op=8508 FUNC_CLEAR " in l]


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("--profile", "--full"):
        sys.exit(__doc__)
    c, rs = load(sys.argv[2]), load(sys.argv[3])
    want = profile_expectation(c) if sys.argv[1] == "--profile" else c
    if want == rs:
        print(f"traces match ({len(rs)} lines)")
        return
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in want], [l + "\n" for l in rs],
                                               "C driver", "Rust driver", n=2))
    sys.exit(1)


if __name__ == "__main__":
    main()
