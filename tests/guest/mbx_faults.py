# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Runtime mailbox faults (issue 15), run by faults-plan.sh on either
driver with hns_0 registered.

For each case one mailbox command is armed to fail once in hns-sim
(through hns_sim's `fault` parameter, `mbx:CMD:STATUS:once`, status 0x11)
and a verb that sends it is called from user space through libhns. Each
case prints

  MBX <case> ok|errno N | <kernel log lines of the case>

which the host compares between the drivers (scripts/compare-faults.py),
then disarms the fault and checks that the same verb works again (the
driver recovered, nothing half-made stays in its way). What is left must
be undone by destroying the objects; the plan's kmemleak scan and the
driver's unload after it check that nothing leaked.

  python3 /opt/hns/mbx_faults.py
"""
import re
import subprocess
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

FAULT = '/sys/module/hns_sim/parameters/fault'
# Mailbox commands (hns_roce_cmd.h).
CREATE_MPT, DESTROY_MPT, QUERY_MPT = 0x0d, 0x0f, 0x62
CREATE_CQC, DESTROY_CQC = 0x16, 0x17
MODIFY_QPC, QUERY_QPC = 0x41, 0x42
CREATE_SRQ, MODIFY_SRQC, QUERY_SRQC, DESTROY_SRQ = 0x70, 0x72, 0x73, 0x74
STATUS = 0x11
# Each failing mailbox prints through rate-limited call sites (ten lines
# per site in a five-second window, in both drivers). So that the lines do
# not depend on how fast a driver runs the cases, a pause longer than the
# window follows every CASES_PER_WINDOW cases.
CASES_PER_WINDOW = 7
WINDOW_S = 5.2
ACC = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
fails = 0
cases = 0


def arm(spec):
    with open(FAULT, 'w') as f:
        f.write(spec)


def kernel_log():
    """The kernel log since the last call, in the form faults-plan.sh
    compares: lines naming RoCE, hns or the mailbox, no timestamps, no PCI
    address."""
    out = subprocess.run(['dmesg', '-c'], capture_output=True, text=True).stdout
    keep = []
    for line in out.splitlines():
        if not re.search(r'roce|hns|cmq|cmdq|mailbox|mbox', line, re.I):
            continue
        if 'hns-sim: ' in line:
            continue
        line = re.sub(r'^\[ *[0-9.]+\] ', '', line)
        line = re.sub(r'[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9]', 'PCI', line)
        keep.append(line)
    return ';'.join(keep)


def outcome(fn):
    try:
        fn()
        return 'ok'
    except PyverbsRDMAError as ex:
        return f'errno {ex.error_code}'


def case(name, cmd, verb, again=None):
    """Arms CMD, calls VERB, prints the MBX line; then AGAIN (default:
    VERB) must work with nothing armed."""
    global fails, cases
    if cases and cases % CASES_PER_WINDOW == 0:
        time.sleep(WINDOW_S)
    cases += 1
    kernel_log()
    arm(f'mbx:{cmd:#x}:{STATUS:#x}:once')
    res = outcome(verb)
    arm('clear')
    print(f'MBX {name} {res} | {kernel_log()}', flush=True)
    after = outcome(again or verb)
    if after != 'ok':
        fails += 1
        print(f'TEST mbx/{name}-recovers FAIL {after}', flush=True)
    else:
        print(f'TEST mbx/{name}-recovers PASS', flush=True)


def rc_qp(pd, cq):
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))


def to_init(qp):
    a = QPAttr(port_num=1)
    a.qp_state = e.IBV_QPS_INIT
    a.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_ACCESS_FLAGS)


def main():
    ctx = Context(name='hns_0')
    pd = PD(ctx)
    keep = []

    def new_mr():
        keep.append(MR(pd, 4096, ACC))

    def new_cq():
        keep.append(CQ(ctx, 16))

    case('mr-create', CREATE_MPT, new_mr)
    mr = MR(pd, 4096, ACC)
    case('mr-dereg', DESTROY_MPT, mr.close, new_mr)
    mr = MR(pd, 4096, ACC)
    case('mr-rereg-query', QUERY_MPT,
         lambda: mr.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0, ACC))
    case('mr-rereg-destroy', DESTROY_MPT,
         lambda: mr.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0,
                          e.IBV_ACCESS_LOCAL_WRITE))
    case('mr-rereg-create', CREATE_MPT,
         lambda: mr.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0, ACC),
         new_mr)
    # C leaves an MR whose new MPT failed disabled: re-registering it again
    # is refused.
    res = outcome(lambda: mr.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0, ACC))
    print(f'MBX mr-rereg-after-failure {res} | {kernel_log()}', flush=True)
    case('cq-create', CREATE_CQC, new_cq)
    cq = CQ(ctx, 16)
    case('cq-destroy', DESTROY_CQC, cq.close, new_cq)
    cq = CQ(ctx, 16)
    qp = rc_qp(pd, cq)
    case('qp-modify', MODIFY_QPC, lambda: to_init(qp))
    case('qp-query', QUERY_QPC, lambda: qp.query(e.IBV_QP_STATE))
    case('qp-destroy', MODIFY_QPC, qp.close, lambda: keep.append(rc_qp(pd, cq)))

    def new_srq():
        keep.append(SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1))))

    def srq_limit(q, n):
        q.modify(SrqAttr(srq_limit=n), e.IBV_SRQ_LIMIT)

    case('srq-create', CREATE_SRQ, new_srq)
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
    case('srq-modify', MODIFY_SRQC, lambda: srq_limit(srq, 4))
    case('srq-query', QUERY_SRQC, srq.query)
    case('srq-destroy', DESTROY_SRQ, srq.close, new_srq)
    for o in reversed(keep):
        o.close()
    mr.close()
    cq.close()
    pd.close()
    ctx.close()
    return fails


if __name__ == '__main__':
    raise SystemExit(1 if main() else 0)
