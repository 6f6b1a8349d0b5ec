#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""rdma-core's test_mr.MRTest.test_mr_rereg_pd with a pause after
restate_qps (RESET..RTS of both QPs), before the server's MR goes back to
the server's PD: the previous life's SEND WQEs sit in the restarted SQs
with valid owner bits for that long. A device (or model) that executes
them fails the test every time (docs/hns-sim.md, "Stale WQEs"); one that
executes only new work passes. PAUSE (seconds, default 0.3; 0 = the
unmodified test), other arguments go to unittest (-v)."""
import os
import sys
import time
import unittest
from importlib.machinery import SourceFileLoader

TESTS = '/usr/share/doc/rdma-core/tests'
sys.path.insert(0, TESTS)
os.chdir(TESTS)
sys.argv = [sys.argv[0], '--dev', os.environ.get('DEV', 'hns_0')] + sys.argv[1:] + \
    ['test_mr.MRTest.test_mr_rereg_pd']
from args_parser import parser  # noqa: E402

tests = SourceFileLoader('tests', os.path.join(TESTS, '__init__.py')).load_module()
parser.parse_args()
test_mr = sys.modules['tests.test_mr']
restate = test_mr.MRTest.restate_qps


def restate_then_pause(self):
    restate(self)
    time.sleep(float(os.environ.get('PAUSE', '0.3')))


test_mr.MRTest.restate_qps = restate_then_pause
unittest.main(module=tests)
