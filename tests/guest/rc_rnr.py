# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RNR retry count: RC QPs A -> B, no receive posted on B. A SEND from A
with rnr_retry 0 (B's min_rnr_timer 1 = 10 us) and with rnr_retry 1 ends in
IBV_WC_RNR_RETRY_EXC_ERR; with rnr_retry 1 and B's timer 31 (491 ms) a
receive posted right after the send is taken by the retry. (rnr_retry 7 =
infinite is what every other test uses.) Usage: rc_rnr.py GID_INDEX"""
import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.wr import SGE, RecvWR, SendWR

from rcpair import Dev, poll

d = Dev()
mr = MR(d.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)


def run(rnr_retry, timer, post_recv):
    cqa, cqb = d.cq(), d.cq()
    qa, qb = d.rc_qp(cqa), d.rc_qp(cqb)
    d.connect(qa, qb, rnr_retry=rnr_retry, min_rnr_timer=timer)
    qa.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(mr.buf, 64, mr.lkey)], send_flags=e.IBV_SEND_SIGNALED))
    if post_recv:
        qb.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(mr.buf + 128, 64, mr.lkey)]))
    wcs = poll(cqa, 1)
    return wcs[0].status if wcs else None


for r, t, rx, want in ((0, 1, False, e.IBV_WC_RNR_RETRY_EXC_ERR),
                       (1, 1, False, e.IBV_WC_RNR_RETRY_EXC_ERR),
                       (1, 31, True, e.IBV_WC_SUCCESS)):
    got = run(r, t, rx)
    assert got == want, f"rnr_retry {r} timer {t} receive {rx}: status {got}, want {want}"
print("rnr_retry 0 and 1: RNR_RETRY_EXC_ERR; rnr_retry 1 with a late receive: success")
