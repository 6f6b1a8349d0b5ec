#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Create and destroy the basic verbs objects on an hns device through
libhns: PD, CQ, MR on user memory, SRQ, and an RC QP taken
RESET -> INIT -> RTR -> RTS with itself as destination. Each step prints a
TEST line; the exit status is non-zero if any failed."""
import sys

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

DEV = sys.argv[1] if len(sys.argv) > 1 else "hns_0"
fails = 0


def step(name, fn):
    global fails
    try:
        r = fn()
        print(f"TEST objects/{name} PASS")
        return r
    except Exception as ex:  # noqa: BLE001 - any failure is a test failure
        fails += 1
        print(f"TEST objects/{name} FAIL {type(ex).__name__}: {ex}")
        return None


ctx = step("open-context", lambda: Context(name=DEV))
if ctx is None:
    sys.exit(1)
pd = step("alloc-pd", lambda: PD(ctx))
cq = step("create-cq", lambda: CQ(ctx, 64))
access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
mr = step("reg-mr", lambda: MR(pd, 64 * 1024, access))
srq = step("create-srq", lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=1))))
cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
qp = step("create-rc-qp", lambda: QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)))


def to_rts():
    a = QPAttr()
    a.qp_state = e.IBV_QPS_INIT
    a.pkey_index = 0
    a.port_num = 1
    a.qp_access_flags = access
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    gid = ctx.query_gid(1, 1)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = qp.qp_num
    a.rq_psn = 0
    a.max_dest_rd_atomic = 1
    a.min_rnr_timer = 12
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=1), is_global=1, port_num=1)
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN
              | e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTS
    a.timeout = 14
    a.retry_cnt = 7
    a.rnr_retry = 7
    a.sq_psn = 0
    a.max_rd_atomic = 1
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY
              | e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)


def query_rts():
    attr, _ = qp.query(e.IBV_QP_STATE)
    if attr.qp_state != e.IBV_QPS_RTS:
        raise RuntimeError(f"ibv_query_qp reports state {attr.qp_state}, not RTS")


if qp is not None:
    step("modify-qp-to-rts", to_rts)
    step("query-qp-rts", query_rts)
for name, obj in [("destroy-qp", qp), ("destroy-srq", srq), ("dereg-mr", mr), ("destroy-cq", cq),
                  ("dealloc-pd", pd), ("close-context", ctx)]:
    if obj is not None:
        step(name, obj.close)
sys.exit(1 if fails else 0)
