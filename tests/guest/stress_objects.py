#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Object churn of the SMP stress plan (tests/guest/stress-plan.sh, issue
15): user objects created and destroyed through libhns, in rounds, until
an absolute deadline, while other processes pass traffic.

Each round, on a device context opened every few rounds: a PD, an MR of
4 KiB to 1 MiB, one or two CQs of 16 to 256 entries, an SRQ half of the
time, two RC QPs (one on the SRQ when there is one), sometimes connected
to each other through the device's own RoCE v2 GID and a message passed
(receive posted, send, both completions polled), sometimes moved to ERR
with receives outstanding (flush CQEs), then everything destroyed in a
random order (pyverbs closes an object's dependents first), or left to
the context's close. The choices come from SEED only.

Two lines of work, in forked children: one child runs rounds to the
deadline and closes everything; beside it, children one after the other
until the deadline each end after a random number of rounds (5 to 20)
with os._exit() while their last round's objects are live, so the
kernel destroys them at the file's release (uverbs cleanup racing the
other processes).

Python and pyverbs take long to start in a TCG guest under load, so the
script first imports, then writes "ready" to READY_FILE and waits for
GO_FILE, which holds the deadline (epoch seconds): every worker runs for
the whole stress window.

Output: one line "RESULT ops N errors E rounds R" per child (ops:
create, destroy, modify, post and poll calls that succeeded); each
error's last lines as "ERROR ..."; "CHILDREN N failed F" at the end.
Exit status 0 when every child ended with status 0 (no call failed).

  stress_objects.py DEVICE GID_INDEX READY_FILE GO_FILE SEED
"""
import os
import random
import sys
import time
import traceback

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

DEV, GIDX = sys.argv[1], int(sys.argv[2])
READY_FILE, GO_FILE, SEED = sys.argv[3], sys.argv[4], int(sys.argv[5])
ABRUPT = False
rnd = random.Random(SEED)
DEADLINE = 0.0
ops = errors = rounds = 0
ACC = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ


def op(fn, *args, **kw):
    """One verb call, counted."""
    global ops
    r = fn(*args, **kw)
    ops += 1
    return r


def poll(cq, n, secs=10):
    """N completions of CQ within SECS, else an error."""
    got, end = [], time.time() + secs
    while len(got) < n:
        k, wcs = op(cq.poll, n - len(got))
        got += wcs[:k]
        if not k:
            if time.time() > end:
                raise RuntimeError(f"{len(got)} of {n} completions after {secs} s")
            time.sleep(0.005)
    return got


def connect(ctx, gr, qa, qb):
    """QA and QB to RTS, each the other's destination."""
    for q, peer in ((qa, qb), (qb, qa)):
        a = QPAttr(port_num=1)
        a.path_mtu = e.IBV_MTU_1024
        a.timeout, a.retry_cnt, a.rnr_retry, a.min_rnr_timer = 14, 7, 7, 12
        a.qp_access_flags = ACC
        a.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr, dlid=0)
        a.dest_qp_num = peer.qp_num
        a.rq_psn = a.sq_psn = 0
        op(q.to_rts, a)


def one_round(ctx, gr, live, keep):
    """Creates a round's objects (kept in LIVE) and uses them; KEEP: leave
    them live."""
    pd = op(PD, ctx)
    live.append(pd)
    size = rnd.choice((4096, 65536, 1 << 20))
    mr = op(MR, pd, size, ACC)
    live.append(mr)
    scq = op(CQ, ctx, rnd.choice((16, 64, 256)))
    rcq = op(CQ, ctx, rnd.choice((16, 64))) if rnd.random() < 0.5 else scq
    live += [scq, rcq]
    srq = None
    if rnd.random() < 0.5:
        srq = op(SRQ, pd, SrqInitAttr(SrqAttr(max_wr=rnd.choice((16, 64)), max_sge=1)))
        live.append(srq)
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
    qa = op(QP, pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=scq, rcq=rcq, cap=cap))
    qb = op(QP, pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=scq, rcq=rcq, cap=cap, srq=srq))
    live += [qa, qb]
    what = rnd.random()
    if what < 0.4:
        connect(ctx, gr, qa, qb)
        rsge = SGE(mr.buf + 2048, 64, mr.lkey)
        if srq is not None:
            op(srq.post_recv, RecvWR(wr_id=2, num_sge=1, sg=[rsge]))
        else:
            op(qb.post_recv, RecvWR(wr_id=2, num_sge=1, sg=[rsge]))
        op(qa.post_send, SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                                sg=[SGE(mr.buf, 64, mr.lkey)],
                                send_flags=e.IBV_SEND_SIGNALED))
        cqs = [scq] if rcq is scq else [scq, rcq]
        got = []
        for cq in cqs:
            got += poll(cq, 2 if rcq is scq else 1)
        bad = [(w.wr_id, w.status) for w in got if w.status != e.IBV_WC_SUCCESS]
        if bad:
            raise RuntimeError(f"completions with errors: {bad}")
    elif what < 0.7:
        # Receives left posted, then ERR: the hardware flushes them.
        op(qa.to_init, QPAttr(port_num=1))
        for i in range(rnd.randint(1, 8)):
            op(qa.post_recv, RecvWR(wr_id=10 + i, num_sge=1,
                                    sg=[SGE(mr.buf + 64 * i, 64, mr.lkey)]))
        op(qa.modify, QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    # Destroy: a random order, or (rarely) left for the context's close.
    if not keep and rnd.random() < 0.9:
        rnd.shuffle(live)
        while live:
            op(live.pop().close)


def churn():
    """Rounds until the deadline (ABRUPT: until the child's last round,
    then an exit with the objects live)."""
    global errors, rounds
    gr = None
    ctx = None
    left = rnd.randint(5, 20) if ABRUPT else -1
    live = []
    while time.time() < DEADLINE and left != 0:
        try:
            if ctx is None or rnd.random() < 0.2:
                if ctx is not None:
                    op(ctx.close)
                live = []
                ctx = op(Context, name=DEV)
                gr = GlobalRoute(dgid=ctx.query_gid(1, GIDX), sgid_index=GIDX)
            one_round(ctx, gr, live, ABRUPT and left == 1)
            rounds += 1
        except Exception:  # noqa: BLE001 - every failure is counted
            errors += 1
            if errors <= 5:
                for line in traceback.format_exc().splitlines()[-4:]:
                    print(f"ERROR {line}", flush=True)
            live = []
            try:
                if ctx is not None:
                    ctx.close()
            except Exception:  # noqa: BLE001 - already counted
                pass
            ctx = None
        left -= 1
    print(f"RESULT ops {ops} errors {errors} rounds {rounds}", flush=True)
    if ABRUPT:
        # Objects live: the kernel cleans up at the file's release.
        os._exit(1 if errors else 0)
    if ctx is not None:
        ctx.close()
    return 1 if errors else 0


def main():
    """Ready, wait for the start, then churn in two forked lines of work:
    one child to the deadline, and children one after the other that end
    abruptly."""
    global ABRUPT, DEADLINE, rnd
    with open(READY_FILE, "w") as f:
        f.write("ready\n")
    while not os.path.exists(GO_FILE):
        time.sleep(0.05)
    time.sleep(0.05)
    with open(GO_FILE) as f:
        DEADLINE = float(f.read().split()[0])
    sys.stdout.flush()
    clean = os.fork()
    if clean == 0:
        ABRUPT = False
        os._exit(churn())
    ABRUPT = True
    bad = 0
    child = 0
    while time.time() < DEADLINE:
        child += 1
        pid = os.fork()
        if pid == 0:
            rnd = random.Random(SEED * 1000 + child)
            churn()
        _, status = os.waitpid(pid, 0)
        if status != 0:
            bad += 1
            print(f"ERROR child {child}: wait status {status:#x}", flush=True)
    _, status = os.waitpid(clean, 0)
    if status != 0:
        bad += 1
        print(f"ERROR the child to the deadline: wait status {status:#x}", flush=True)
    print(f"CHILDREN {child + 1} failed {bad}", flush=True)
    return 1 if bad else 0


sys.exit(main())
