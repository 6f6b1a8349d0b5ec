# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Flush on the move to ERR: RC QPs A -> B on hns_0, two receives and two
sends posted on A while B has no receive (the sends wait: receiver not
ready). A to ERR: the four WQEs complete with WR_FLUSH_ERR (the driver
writes its SQ/RQ heads into the QPC, the hardware flushes up to them); a
send posted in ERR is flushed too (libhns moves the QP to ERR again with the
new head). Usage: rc_flush.py GID_INDEX"""
import time

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.qp import QPAttr
from pyverbs.wr import SGE, RecvWR, SendWR

from rcpair import Dev, poll

d = Dev()
mr = MR(d.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
cqa, cqb = d.cq(64), d.cq(64)
qa, qb = d.rc_qp(cqa), d.rc_qp(cqb)
d.connect(qa, qb)
sge = SGE(mr.buf, 64, mr.lkey)


def send(wr_id):
    qa.post_send(SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=1, sg=[sge],
                        send_flags=e.IBV_SEND_SIGNALED))


for i in (11, 12):
    qa.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(mr.buf + 128, 64, mr.lkey)]))
send(1)
send(2)
time.sleep(0.3)
early = poll(cqa, 1, 0.2)
assert not early, f"completions before ERR: {[(w.wr_id, w.status) for w in early]}"
qa.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
got = sorted((w.wr_id, w.status) for w in poll(cqa, 4))
want = [(i, e.IBV_WC_WR_FLUSH_ERR) for i in (1, 2, 11, 12)]
assert got == want, f"after ERR: {got}, want {want}"
send(3)
got = [(w.wr_id, w.status) for w in poll(cqa, 1)]
assert got == [(3, e.IBV_WC_WR_FLUSH_ERR)], f"send in ERR: {got}"
assert not poll(cqa, 1, 0.3), "an extra completion"
print("flushed: sends 1 2, receives 11 12; posted in ERR: send 3")
