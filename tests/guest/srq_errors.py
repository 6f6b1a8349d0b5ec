#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""SRQ attributes and refusals through libhns, one line per case, for
comparing the two drivers (data-plan.sh runs it on both): depth and SGEs
over the device's limits or no SGE, what a valid SRQ got (query), a
resize (not supported), a limit above the depth, a valid limit read back,
`rdma res show srq` (-dd, and the first words of the raw SRQC). Some
refusals may come from libhns before the kernel sees them; either way the
driver must answer as C does. EXPECT holds the lines the C driver printed
on hns-sim's default caps (C and Rust alike).
Usage: srq_errors.py   (exit 0 when the lines are EXPECT's)"""
import json
import subprocess

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

EXPECT = """\
depth over max_srq_wr: error 22
no SGE: error 22
SGEs over max_srq_sge: error 22
100 WRs of 3 SGEs: created
100 WRs of 3 SGEs: max_wr 128, max_sge 4, srq_limit 0
resize: error 95
limit above the depth: error 22
limit 10: ok
after limit 10: max_wr 128, max_sge 4, srq_limit 10
res -dd: {"drv_max_gs": 4, "drv_srqn": 0, "drv_wqe_cnt": 128, "drv_xrcdn": 0}
res -r: 64 bytes, words 0-1 00000079 0000000a
destroyed""".splitlines()
got = []
_print = print


def print(line):
    _print(line, flush=True)
    got.append(line)


ctx = Context(name='hns_0')
pd = PD(ctx)
attr = ctx.query_device()
_print(f"device: max_srq {attr.max_srq}, max_srq_wr {attr.max_srq_wr}, "
       f"max_srq_sge {attr.max_srq_sge}")


def err(exc):
    code = getattr(exc, 'error_code', None)
    return f"error {code}" if code is not None else f"error ({exc})"


def create(name, max_wr, max_sge):
    try:
        s = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=max_wr, max_sge=max_sge)))
    except (PyverbsRDMAError, PyverbsError) as exc:
        print(f"{name}: {err(exc)}")
        return None
    print(f"{name}: created")
    return s


def query(name, s):
    q = s.query()
    print(f"{name}: max_wr {q.max_wr}, max_sge {q.max_sge}, "
          f"srq_limit {q.srq_limit}")
    return q


def modify(name, s, mask, **kw):
    try:
        s.modify(SrqAttr(**kw), mask)
    except (PyverbsRDMAError, PyverbsError) as exc:
        print(f"{name}: {err(exc)}")
        return
    print(f"{name}: ok")


create("depth over max_srq_wr", attr.max_srq_wr + 1, 1)
create("no SGE", 16, 0)
create("SGEs over max_srq_sge", 16, attr.max_srq_sge + 1)
s = create("100 WRs of 3 SGEs", 100, 3)
if s is None:
    raise SystemExit(1)
q = query("100 WRs of 3 SGEs", s)
modify("resize", s, e.IBV_SRQ_MAX_WR, max_wr=2 * q.max_wr)
modify("limit above the depth", s, e.IBV_SRQ_LIMIT, srq_limit=q.max_wr + 1)
modify("limit 10", s, e.IBV_SRQ_LIMIT, srq_limit=10)
query("after limit 10", s)
# restrack: the driver details, and the raw SRQC read back (its address
# fields differ from boot to boot: only its length and first two words).
for flags in (['-dd'], ['-r']):
    p = subprocess.run(['rdma', '-j'] + flags + ['res', 'show', 'srq', 'dev', 'hns_0'],
                       capture_output=True, text=True, timeout=60)
    try:
        objs = json.loads(p.stdout)
    except ValueError:
        print(f"res {flags[0]}: exit {p.returncode} {' '.join(p.stderr.split())}")
        continue
    for o in objs:
        drv = {k: v for k, v in o.items() if k.startswith('drv_')}
        if drv:
            print(f"res {flags[0]}: {json.dumps(drv, sort_keys=True)}")
        if isinstance(o.get('data'), list):
            b = o['data']
            w = [int.from_bytes(bytes(b[i:i + 4]), 'little') for i in (0, 4)]
            print(f"res {flags[0]}: {len(b)} bytes, words 0-1 {w[0]:08x} {w[1]:08x}")
s.close()
print("destroyed")
if got != EXPECT:
    _print("differs from the C driver's lines:")
    for a, b in zip(EXPECT + [''] * len(got), got + [''] * len(EXPECT)):
        if a != b:
            _print(f"  want {a!r}, got {b!r}")
    raise SystemExit(1)
