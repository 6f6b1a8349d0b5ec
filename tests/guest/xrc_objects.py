# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A deterministic XRC workload for comparing the drivers (uqp-plan.sh).

One process on hns_0: an XRC domain, an XRC SRQ completing to its own CQ,
an XRC_TGT QP of the domain (the RDMA core creates it without udata, as a
kernel QP) and an XRC_INI QP; both moved to RTS with fixed PSNs, each the
other's destination; one SEND from the initiator into the SRQ behind the
target. Prints one line per step ("<step> ok|errno N" and the completions),
which must be the same on both drivers, then `rdma res show` of the CQs,
QPs, MRs and SRQs with -dd and -r (restrack.py lines, compared by
scripts/restrack-diff.py), then destroys everything.

  python3 /opt/hns/xrc_objects.py GID_INDEX
"""
import os
import stat
import sys
import tempfile

import pyverbs.enums as e
from pyverbs.addr import AHAttr
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttrEx
from pyverbs.srq import SRQ, SrqInitAttrEx
from pyverbs.wr import SGE, RecvWR, SendWR
from pyverbs.xrcd import XRCD, XRCDInitAttr

sys.path.insert(0, '/opt/hns')
from rcpair import Dev, poll  # noqa: E402
import restrack  # noqa: E402


def step(name, fn):
    """Runs FN, prints "<name> ok" or "<name> errno N"; FN's result."""
    try:
        r = fn()
        print(f"{name} ok", flush=True)
        return r
    except PyverbsRDMAError as ex:
        print(f"{name} errno {ex.error_code}", flush=True)
        return None


def main():
    d = Dev()
    cq = d.cq(16)
    tmp = tempfile.NamedTemporaryFile()
    fd = os.open(tmp.name, os.O_RDONLY | os.O_CREAT, stat.S_IRUSR | stat.S_IRGRP)
    xrcd = step("xrcd", lambda: XRCD(d.ctx, XRCDInitAttr(
        e.IBV_XRCD_INIT_ATTR_FD | e.IBV_XRCD_INIT_ATTR_OFLAGS, os.O_CREAT, fd)))
    if xrcd is None:
        return 1

    sa = SrqInitAttrEx(max_wr=16, max_sge=1)
    sa.srq_type = e.IBV_SRQT_XRC
    sa.pd, sa.xrcd, sa.cq = d.pd, xrcd, cq
    sa.comp_mask = (e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD |
                    e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_XRCD)
    srq = step("xrc-srq", lambda: SRQ(d.ctx, sa))
    tgt = step("xrc-tgt", lambda: QP(d.ctx, QPInitAttrEx(
        qp_type=e.IBV_QPT_XRC_RECV, comp_mask=e.IBV_QP_INIT_ATTR_XRCD, xrcd=xrcd)))
    ini = step("xrc-ini", lambda: QP(d.ctx, QPInitAttrEx(
        qp_type=e.IBV_QPT_XRC_SEND, sq_sig_all=1, comp_mask=e.IBV_QP_INIT_ATTR_PD,
        pd=d.pd, scq=cq, cap=QPCap(max_send_wr=8, max_recv_wr=0, max_recv_sge=0))))
    if None in (srq, tgt, ini):
        return 1

    for name, q, peer, access in (("tgt", tgt, ini, e.IBV_ACCESS_LOCAL_WRITE |
                                   e.IBV_ACCESS_REMOTE_WRITE),
                                  ("ini", ini, tgt, 0)):
        a = QPAttr(port_num=1)
        a.path_mtu = e.IBV_MTU_1024
        a.timeout, a.retry_cnt, a.rnr_retry, a.min_rnr_timer = 14, 7, 7, 12
        a.max_rd_atomic = a.max_dest_rd_atomic = 1
        a.qp_access_flags = access
        a.ah_attr = AHAttr(port_num=1, is_global=1, gr=d.gr, dlid=0)
        a.dest_qp_num = peer.qp_num
        a.rq_psn = a.sq_psn = 0
        step(f"{name}-to-rts", lambda q=q, a=a: q.to_rts(a))

    size = 64
    rmr = MR(d.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    smr = MR(d.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    smr.write(b"x" * size, size)
    step("srq-post-recv", lambda: srq.post_recv(
        RecvWR(wr_id=7, num_sge=1, sg=[SGE(rmr.buf, size, rmr.lkey)])))
    wr = SendWR(wr_id=9, num_sge=1, sg=[SGE(smr.buf, size, smr.lkey)])
    wr.set_qp_type_xrc(srq.get_srq_num())
    step("ini-send", lambda: ini.post_send(wr))
    for wc in sorted(poll(cq, 2), key=lambda w: w.wr_id):
        print(f"wc wr_id={wc.wr_id} status={wc.status} opcode={wc.opcode} "
              f"byte_len={wc.byte_len}", flush=True)
    print(f"received {rmr.read(size, 0) == b'x' * size}", flush=True)

    restrack.dump("xrc-objects", kinds=("cq", "qp", "mr", "srq"))
    for o in (ini, tgt, srq, rmr, smr, xrcd, cq):
        o.close()
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
