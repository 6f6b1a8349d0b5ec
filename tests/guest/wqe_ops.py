# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Every RC send opcode once through ibv_post_send, for the WQE and CQE
words hns-sim dumps (`--dump-data`, tests/guest/dump-plan.sh): SEND with
two SGEs, SEND_WITH_IMM (solicited), RDMA_WRITE with three SGEs (the third
in the extended SGE area), RDMA_WRITE_WITH_IMM, RDMA_READ, both atomics,
an inline SEND with FENCE; then a UD SEND_WITH_IMM. Each must complete with
IBV_WC_SUCCESS on both sides.
Usage: wqe_ops.py GID_INDEX"""
import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr
from pyverbs.mr import MR
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

from rcpair import Dev, poll

d = Dev()
acc = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
       e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
mr = MR(d.pd, 65536, acc)
cqa, cqb = d.cq(32), d.cq(32)
cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=3, max_recv_sge=2,
            max_inline_data=32)
qa = QP(d.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cqa, rcq=cqa, cap=cap))
qb = QP(d.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cqb, rcq=cqb, cap=cap))
for q, peer in ((qa, qb), (qb, qa)):
    a = QPAttr(port_num=1)
    a.path_mtu = e.IBV_MTU_1024
    a.timeout, a.retry_cnt, a.rnr_retry, a.min_rnr_timer = 14, 7, 7, 12
    a.qp_access_flags = acc
    a.max_rd_atomic = a.max_dest_rd_atomic = 1
    a.ah_attr = AHAttr(port_num=1, is_global=1, gr=d.gr, dlid=0)
    a.dest_qp_num = peer.qp_num
    a.rq_psn = a.sq_psn = 0
    q.to_rts(a)
for i in range(4):
    qb.post_recv(RecvWR(wr_id=0x100 + i, num_sge=1,
                        sg=[SGE(mr.buf + 0x8000 + 0x400 * i, 0x400, mr.lkey)]))
sig = e.IBV_SEND_SIGNALED


def send(wr_id, op, sges, flags=sig, rdma=None, atomic=None, imm=None):
    wr = SendWR(wr_id=wr_id, opcode=op, num_sge=len(sges), sg=sges,
                send_flags=flags)
    if rdma:
        wr.set_wr_rdma(mr.rkey, mr.buf + rdma)
    if atomic:
        wr.set_wr_atomic(mr.rkey, mr.buf + atomic[0], atomic[1], atomic[2])
    if imm is not None:
        wr.imm_data = imm
    qa.post_send(wr)


send(1, e.IBV_WR_SEND, [SGE(mr.buf, 16, mr.lkey), SGE(mr.buf + 64, 32, mr.lkey)])
send(2, e.IBV_WR_SEND_WITH_IMM, [SGE(mr.buf, 8, mr.lkey)],
     flags=sig | e.IBV_SEND_SOLICITED, imm=0x12345678)
send(3, e.IBV_WR_RDMA_WRITE, [SGE(mr.buf, 8, mr.lkey), SGE(mr.buf + 8, 8, mr.lkey),
                              SGE(mr.buf + 16, 8, mr.lkey)], rdma=0x4000)
send(4, e.IBV_WR_RDMA_WRITE_WITH_IMM, [SGE(mr.buf, 8, mr.lkey)], rdma=0x4100,
     imm=0xa5a5)
send(5, e.IBV_WR_RDMA_READ, [SGE(mr.buf + 0x2000, 64, mr.lkey)], rdma=0x4000)
send(6, e.IBV_WR_ATOMIC_CMP_AND_SWP, [SGE(mr.buf + 0x3000, 8, mr.lkey)],
     atomic=(0x5000, 0, 0x1122334455667788))
send(7, e.IBV_WR_ATOMIC_FETCH_AND_ADD, [SGE(mr.buf + 0x3008, 8, mr.lkey)],
     atomic=(0x5008, 5, 0))
send(8, e.IBV_WR_SEND, [SGE(mr.buf + 0x100, 16, mr.lkey)],
     flags=sig | e.IBV_SEND_INLINE | e.IBV_SEND_FENCE)
wa = poll(cqa, 8)
wb = poll(cqb, 4)
bad = [(w.wr_id, w.status) for w in wa + wb if w.status != e.IBV_WC_SUCCESS]
assert len(wa) == 8 and len(wb) == 4 and not bad, f"{len(wa)} {len(wb)} {bad}"

# UD: SEND_WITH_IMM to a second UD QP through an AH of the own GID.
ucq = d.cq(8)
ucap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
ua = QP(d.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=ucq, rcq=ucq, cap=ucap))
ub = QP(d.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=ucq, rcq=ucq, cap=ucap))
for q in (ua, ub):
    a = QPAttr(port_num=1)
    a.qkey = 0x11111111
    q.to_rts(a)
ub.post_recv(RecvWR(wr_id=0x200, num_sge=1,
                    sg=[SGE(mr.buf + 0xc000, 1024, mr.lkey)]))
ah = AH(d.pd, attr=AHAttr(port_num=1, is_global=1, gr=d.gr, dlid=0))
wr = SendWR(wr_id=9, opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1,
            sg=[SGE(mr.buf, 100, mr.lkey)], send_flags=sig)
wr.imm_data = 0x01020304
wr.set_wr_ud(ah, ub.qp_num, 0x11111111)
ua.post_send(wr)
wu = poll(ucq, 2)
bad = [(w.wr_id, w.status) for w in wu if w.status != e.IBV_WC_SUCCESS]
assert len(wu) == 2 and not bad, f"UD: {len(wu)} {bad}"
print(f"RC: {len(wa)} send and {len(wb)} receive completions, UD: {len(wu)}, all successful")
