# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Responder access error: RC QPs A -> B, B with remote write, an RDMA
WRITE from A with a wrong rkey (the MR's key with another tag byte): A's
CQE is IBV_WC_REM_ACCESS_ERR, and the engine raises LOCAL_WQ_ACCESS_ERROR
(AEQE 0x07) on B, which the driver reports as IBV_EVENT_QP_ACCESS_ERR.
Usage: rc_access.py GID_INDEX"""
import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.wr import SGE, SendWR

from rcpair import Dev, poll

d = Dev()
mr = MR(d.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
cqa, cqb = d.cq(), d.cq()
qa, qb = d.rc_qp(cqa), d.rc_qp(cqb)
d.connect(qa, qb, access=e.IBV_ACCESS_REMOTE_WRITE)
bad = (mr.rkey & ~0xff) | ((mr.rkey + 1) & 0xff)
wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
            sg=[SGE(mr.buf, 64, mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
wr.set_wr_rdma(bad, mr.buf + 1024)
qa.post_send(wr)
wcs = poll(cqa, 1)
got = wcs[0].status if wcs else None
assert got == e.IBV_WC_REM_ACCESS_ERR, f"requester status {got}"
ev = d.ctx.get_async_event()
ev.ack()
assert ev.event_type == e.IBV_EVENT_QP_ACCESS_ERR, f"event {ev.event_type}"
print(f"rkey {bad:#x} (MR {mr.rkey:#x}): IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR")
