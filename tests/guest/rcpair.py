# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Shared setup of the pyverbs checks of data-plan.sh (rc_*.py).

One device, RC QPs connected in pairs through its RoCE v2 GID (the engine
loops the traffic back), and a CQ poll with a deadline. The scripts run as
`python3 /opt/hns/rc_NAME.py GID_INDEX`; their directory is on sys.path.
"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx


class Dev:
    """hns_0 (or NAME), a PD, and the route to its own GID at GIDX."""

    def __init__(self, gidx=None, name='hns_0'):
        if gidx is None:
            gidx = int(sys.argv[1])
        self.ctx = Context(name=name)
        self.pd = PD(self.ctx)
        self.gr = GlobalRoute(dgid=self.ctx.query_gid(1, gidx), sgid_index=gidx)

    def cq(self, depth=16):
        return CQ(self.ctx, depth)

    def rc_qp(self, scq, rcq=None, depth=8):
        """An RC QP in RESET: DEPTH send and receive WRs of one SGE."""
        cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=1,
                    max_recv_sge=1)
        return QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=scq,
                                      rcq=rcq or scq, cap=cap))

    def rc_qp_ex(self, cq, send_ops, depth=2, inline=32):
        """An RC QP for libhns' ibv_wr_* API (SEND_OPS: ibv_qp_ex's
        send_ops_flags), DEPTH WRs, INLINE bytes of inline data."""
        cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=1,
                    max_recv_sge=1, max_inline_data=inline)
        mask = e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
        return QPEx(self.ctx, QPInitAttrEx(qp_type=e.IBV_QPT_RC, scq=cq,
                                           rcq=cq, cap=cap, pd=self.pd,
                                           comp_mask=mask,
                                           send_ops_flags=send_ops))

    def connect(self, qa, qb, rnr_retry=7, min_rnr_timer=12, access=0):
        """Moves QA and QB to RTS, each the other's destination."""
        for q, peer in ((qa, qb), (qb, qa)):
            a = QPAttr(port_num=1)
            a.path_mtu = e.IBV_MTU_1024
            a.timeout, a.retry_cnt = 14, 7
            a.rnr_retry, a.min_rnr_timer = rnr_retry, min_rnr_timer
            a.qp_access_flags = access
            a.ah_attr = AHAttr(port_num=1, is_global=1, gr=self.gr, dlid=0)
            a.dest_qp_num = peer.qp_num
            a.rq_psn = a.sq_psn = 0
            q.to_rts(a)


def poll(cq, n, secs=10):
    """Up to N work completions of CQ, waiting at most SECS."""
    got, end = [], time.time() + secs
    while len(got) < n and time.time() < end:
        k, wcs = cq.poll(n - len(got))
        got += wcs[:k]
        if not k:
            time.sleep(0.01)
    return got
