#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Destroy racing use on the same uverbs handles from two processes (the
race part of the SMP stress plan, tests/guest/stress-plan.sh).

Rounds until the deadline, in WORKERS forked processes: a PD, a CQ, an SRQ
and an RC QP moved to INIT on one device context; then a forked child
(sharing the uverbs file and so the handles) calls, in a loop, query and
modify (to ERR and back is not allowed, so: ERR, and INIT while that
still works) on the QP, query and modify (limit) on the SRQ, and creates
an RC QP on the parent's PD and CQ and destroys it again, while the
parent, after a random pause of 0 to 20 ms, destroys the QP, the SRQ, the
CQ and the PD. The uverbs core serialises the two: a call on a handle
that is being destroyed or gone fails with an errno, a destroy of an
object in use fails with EBUSY and is tried again (up to 2 s). The child
ends when every call of a pass failed (all handles gone), or after 1 s,
with os._exit (pyverbs' destructors would destroy the parent's objects).

Python and pyverbs take long to start in a loaded TCG guest, so the
script imports, writes "ready" to READY_FILE and waits for GO_FILE, which
holds the deadline (epoch seconds).

Output: one line "RESULT rounds R raced C ok N refused F busy B errors E"
per worker (raced: rounds whose child ended because every call of a pass
failed, the parent having destroyed the objects under it, not because its
time ran out; ok: the child's calls that succeeded; refused: the child's
calls that failed with an errno (a line "REFUSED CALL:ERRNO=COUNT ..."
before it names them);
busy: destroys the parent tried again on EBUSY; errors: anything else,
a destroy that never succeeded, a child that did not end), each error as
"ERROR ...". Exit status 0 when no worker had an error.

  race_uverbs.py DEVICE READY_FILE GO_FILE SEED WORKERS
"""
import errno
import os
import random
import sys
import time
import traceback

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

DEV, READY_FILE, GO_FILE = sys.argv[1], sys.argv[2], sys.argv[3]
SEED, WORKERS = int(sys.argv[4]), int(sys.argv[5])
CAP = dict(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)


def child(pd, cq, srq, qp, wfd):
    """The child's loop on the parent's handles; writes "ok refused gone
    NAME:ERRNO,..." to WFD and ends with os._exit. gone: 1 when it ended
    because every call of a pass failed (the parent destroyed the objects
    under it), 0 when its time ran out."""
    ok = refused = gone = 0
    why = {}
    end = time.time() + 1
    calls = [
        ("query_qp", lambda: qp.query(e.IBV_QP_STATE)),
        ("modify_qp", lambda: qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)),
        ("query_srq", lambda: srq.query()),
        ("modify_srq", lambda: srq.modify(SrqAttr(srq_limit=4), e.IBV_SRQ_LIMIT)),
        ("create_qp", lambda: QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                                                cap=QPCap(**CAP))).close()),
    ]
    rc = 0
    try:
        while time.time() < end:
            failed = 0
            for name, c in calls:
                try:
                    c()
                    ok += 1
                except (PyverbsRDMAError, PyverbsError) as ex:
                    refused += 1
                    failed += 1
                    k = f"{name}:{getattr(ex, 'error_code', '?')}"
                    why[k] = why.get(k, 0) + 1
            if failed == len(calls):
                gone = 1
                break
    except Exception:
        traceback.print_exc()
        rc = 1
    w = ",".join(f"{k}={v}" for k, v in sorted(why.items())) or "-"
    os.write(wfd, f"{ok} {refused} {gone} {w}\n".encode())
    os._exit(rc)


def destroy(obj, what, st):
    """Destroys OBJ, again on EBUSY (the child holds it) for up to 2 s."""
    end = time.time() + 2
    while True:
        try:
            obj.close()
            return
        except PyverbsRDMAError as ex:
            if ex.error_code != errno.EBUSY or time.time() > end:
                st["errors"] += 1
                print(f"ERROR destroy {what}: {ex}", flush=True)
                return
            st["busy"] += 1
            time.sleep(0.001)


def one_round(ctx, rnd, st):
    pd = PD(ctx)
    cq = CQ(ctx, 32)
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(**CAP)))
    qp.to_init(QPAttr(port_num=1))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        child(pd, cq, srq, qp, w)
    os.close(w)
    time.sleep(rnd.random() * 0.02)
    for obj, what in ((qp, "QP"), (srq, "SRQ"), (cq, "CQ"), (pd, "PD")):
        destroy(obj, what, st)
    out = b""
    end = time.time() + 30
    done = False
    while time.time() < end:
        wpid, status = os.waitpid(pid, os.WNOHANG)
        if wpid:
            done = True
            break
        time.sleep(0.01)
    if not done:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        st["errors"] += 1
        print("ERROR child did not end within 30 s", flush=True)
        status = 0
    out = os.read(r, 4096).decode().split()
    os.close(r)
    if status != 0 or len(out) != 4:
        st["errors"] += 1
        print(f"ERROR child status {status} output {out}", flush=True)
        return
    st["ok"] += int(out[0])
    st["refused"] += int(out[1])
    st["raced"] += int(out[2])
    st["rounds"] += 1
    if out[3] != "-":
        for kv in out[3].split(","):
            k, v = kv.split("=")
            st["why"][k] = st["why"].get(k, 0) + int(v)


def worker(n, deadline):
    rnd = random.Random(SEED * 100 + n)
    st = dict(rounds=0, raced=0, ok=0, refused=0, busy=0, errors=0, why={})
    try:
        ctx = Context(name=DEV)
        while time.time() < deadline:
            one_round(ctx, rnd, st)
        ctx.close()
    except Exception:
        st["errors"] += 1
        for line in traceback.format_exc().splitlines()[-4:]:
            print(f"ERROR {line}", flush=True)
    print("REFUSED " + (" ".join(f"{k}={v}" for k, v in sorted(st["why"].items())) or "-"),
          flush=True)
    print("RESULT rounds {rounds} raced {raced} ok {ok} refused {refused} busy {busy} "
          "errors {errors}".format(**st), flush=True)
    os._exit(1 if st["errors"] else 0)


def main():
    with open(READY_FILE, "w") as f:
        f.write("ready\n")
    while not os.path.exists(GO_FILE):
        time.sleep(0.1)
    with open(GO_FILE) as f:
        deadline = float(f.read().split()[0])
    pids = []
    for n in range(WORKERS):
        pid = os.fork()
        if pid == 0:
            worker(n, deadline)
        pids.append(pid)
    failed = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            failed += 1
    print(f"WORKERS {len(pids)} failed {failed}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
