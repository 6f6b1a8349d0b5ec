# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A deterministic QP workload for comparing the drivers (uqp-plan.sh).

One process on hns_0: an RC QP pair and a UD QP moved through the states
of the C driver's table with fixed PSNs and attributes: RESET->INIT->RTR
(address vector to the other QP of the pair)->RTS->RTS (new timeout)->
ERR->RESET, a refused RTS->SQD, ibv_query_qp after every step, then
destroy. Prints one line per step ("<step> ok|errno N" and the queried
attributes), which must be the same on both drivers, and so must the
hns-sim trace (single process: compared in order).

  python3 /opt/hns/qp_states.py GID_INDEX
"""
import sys

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr, QPCap, QPInitAttr, QP

sys.path.insert(0, '/opt/hns')
from rcpair import Dev  # noqa: E402
import restrack  # noqa: E402

MASK = (e.IBV_QP_STATE | e.IBV_QP_CUR_STATE | e.IBV_QP_PKEY_INDEX |
        e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS | e.IBV_QP_AV |
        e.IBV_QP_PATH_MTU | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
        e.IBV_QP_RNR_RETRY | e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC |
        e.IBV_QP_MIN_RNR_TIMER | e.IBV_QP_SQ_PSN |
        e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_DEST_QPN | e.IBV_QP_CAP |
        e.IBV_QP_QKEY)


def show(name, qp):
    """The attributes ibv_query_qp reports for QP."""
    a, i = qp.query(MASK)
    g = a.ah_attr
    print(f"{name} query: state={a.qp_state} cur={a.cur_qp_state} "
          f"mtu={a.path_mtu} qkey={a.qkey:#x} rq_psn={a.rq_psn:#x} "
          f"sq_psn={a.sq_psn:#x} dqpn={a.dest_qp_num:#x} "
          f"access={a.qp_access_flags:#x} port={a.port_num} "
          f"rd_atomic={a.max_rd_atomic}/{a.max_dest_rd_atomic} "
          f"rnr_timer={a.min_rnr_timer} timeout={a.timeout} "
          f"retry={a.retry_cnt}/{a.rnr_retry} sl={g.sl} "
          f"hop_limit={g.hop_limit} sgid_index={g.sgid_index} "
          f"tclass={g.traffic_class} flow_label={g.flow_label} "
          f"cap={a.cap.max_send_wr}/{a.cap.max_recv_wr}/"
          f"{a.cap.max_send_sge}/{a.cap.max_recv_sge}/"
          f"{a.cap.max_inline_data} sig_all={i.sq_sig_all}")


def step(name, qp, attr, mask):
    """One ibv_modify_qp; prints its outcome and the queried attributes."""
    try:
        qp.modify(attr, mask)
        print(f"{name} ok")
    except PyverbsRDMAError as ex:
        print(f"{name} errno {ex.error_code}")
    show(name, qp)


def main():
    d = Dev()
    cq = d.cq()
    qa, qb = d.rc_qp(cq), d.rc_qp(cq)
    for q, peer, psn in ((qa, qb, 0x100), (qb, qa, 0x200)):
        show("rc reset", q)
        a = QPAttr(port_num=1)
        a.qp_state = e.IBV_QPS_INIT
        a.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
        step("rc init", q, a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
             e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
        a = QPAttr(port_num=1)
        a.qp_state = e.IBV_QPS_RTR
        a.path_mtu = e.IBV_MTU_1024
        gr = GlobalRoute(dgid=d.ctx.query_gid(1, d.gr.sgid_index),
                         sgid_index=d.gr.sgid_index,
                         hop_limit=17, flow_label=0x12345,
                         traffic_class=0x20)
        a.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr, dlid=0)
        a.dest_qp_num = peer.qp_num
        a.rq_psn = psn
        a.max_dest_rd_atomic = 4
        a.min_rnr_timer = 12
        step("rc rtr", q, a, e.IBV_QP_STATE | e.IBV_QP_AV |
             e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
             e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
        a = QPAttr(port_num=1)
        a.qp_state = e.IBV_QPS_RTS
        a.timeout, a.retry_cnt, a.rnr_retry = 14, 7, 7
        a.sq_psn = psn + 1
        a.max_rd_atomic = 2
        step("rc rts", q, a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT |
             e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_SQ_PSN |
             e.IBV_QP_MAX_QP_RD_ATOMIC)
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_RTS
    a.timeout = 18
    step("rc rts->rts", qa, a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT)
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_SQD
    step("rc rts->sqd", qa, a, e.IBV_QP_STATE)
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_ERR
    step("rc rts->err", qa, a, e.IBV_QP_STATE)
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_RESET
    step("rc err->reset", qa, a, e.IBV_QP_STATE)

    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    ud = QP(d.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap))
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_INIT
    a.qkey = 0x1234
    step("ud init", ud, a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
         e.IBV_QP_PORT | e.IBV_QP_QKEY)
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_RTR
    step("ud rtr", ud, a, e.IBV_QP_STATE)
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_RTS
    a.sq_psn = 0x300
    step("ud rts", ud, a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
    # rdma res show of the QPs (one in RESET, two in RTS), the CQ, an MR
    # and the kernel's objects, for scripts/restrack-diff.py (the host
    # leaves these lines out of the text it compares).
    mr = MR(d.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    restrack.dump("qp-states")
    mr.close()
    for q in (ud, qb, qa):
        q.close()
    cq.close()
    print("done")


if __name__ == '__main__':
    main()
