# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""CQ overflow: QP A sends 70 signaled SENDs to B (70 receives posted) while
A's send CQ holds 64 CQEs and nobody polls it: the 65th CQE finds it full,
the engine raises CQ_OVERFLOW (AEQE 0x0c), the driver reports
IBV_EVENT_CQ_ERR for that CQ; the model holds the rest, which complete once
the CQ is polled. Usage: rc_cq_overflow.py GID_INDEX"""
import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.wr import SGE, RecvWR, SendWR

from rcpair import Dev, poll

d = Dev()
mr = MR(d.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
cq_a, cq_b = d.cq(64), d.cq(256)
assert cq_a.cqe <= 127, f"send CQ of {cq_a.cqe} entries"
qa, qb = d.rc_qp(cq_a, cq_b, depth=128), d.rc_qp(cq_b, depth=128)
d.connect(qa, qb)
n = cq_a.cqe + 6
for i in range(n):
    qb.post_recv(RecvWR(wr_id=1000 + i, num_sge=1, sg=[SGE(mr.buf + 128, 64, mr.lkey)]))
for i in range(n):
    qa.post_send(SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(mr.buf, 64, mr.lkey)], send_flags=e.IBV_SEND_SIGNALED))
ev = d.ctx.get_async_event()
ev.ack()
assert ev.event_type == e.IBV_EVENT_CQ_ERR, f"event {ev.event_type}"
got = poll(cq_a, n)
bad = [(w.wr_id, w.status) for w in got if w.status != e.IBV_WC_SUCCESS]
assert len(got) == n and not bad, f"{len(got)} of {n} send completions, errors {bad}"
print(f"IBV_EVENT_CQ_ERR for a full {cq_a.cqe}-entry CQ; all {n} sends completed after polling")
