#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Per-test outcomes of a verbose unittest run (`run_tests.py -v ...`) read
on stdin, one line per test: "<id> <outcome>[ <reason>]", in run order.

<id> is the test id without the leading "tests." package
(test_device.DeviceTest.test_dev_list); class/module fixtures that fail or
skip (setUpClass ...) get "<class>.<fixture>". <outcome> is ok, skip, fail,
error, xfail (expected failure), xpass (unexpected success), or incomplete
when the output ends before the test's result (crash, timeout). Skips carry
their reason after the outcome.

A test with a docstring is printed over two lines by unittest:
    test_x (tests.test_pd.PDTest.test_x)
    First docstring line ... ok
and output the test itself prints can come between the two."""
import re
import sys

HEAD = re.compile(r"^(test\w*|setUpClass|tearDownClass|setUpModule|tearDownModule) \(([\w.]+)\)(.*)$")
RESULT = r"(ok|skipped (?P<reason>.*)|FAIL|ERROR|expected failure|unexpected success)$"
TAIL = re.compile(r"(?:^|\.\.\. )" + RESULT)
OUTCOME = {"ok": "ok", "FAIL": "fail", "ERROR": "error", "expected failure": "xfail",
           "unexpected success": "xpass"}


def test_id(word, ident):
    if ident.startswith("tests."):
        ident = ident[len("tests."):]
    return ident if ident.split(".")[-1] == word else f"{ident}.{word}"


def result(text):
    m = TAIL.search(text)
    if not m:
        return None
    if m.group("reason") is not None:
        return "skip " + m.group("reason").strip("'\"")
    return OUTCOME[m.group(1)]


def main():
    pending = None
    for line in sys.stdin:
        line = line.rstrip("\n")
        m = HEAD.match(line)
        if m:
            if pending:
                print(f"{pending} incomplete")
            pending = test_id(m.group(1), m.group(2))
            rest = m.group(3)
            res = result(rest) if " ... " in rest else None
        elif pending:
            res = result(line)
        else:
            continue
        if res:
            print(f"{pending} {res}")
            pending = None
    if pending:
        print(f"{pending} incomplete")


if __name__ == "__main__":
    main()
