# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Runtime mailbox faults and asynchronous events, run by
faults-plan.sh on either driver with hns_0 registered.

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

A late mailbox event (`late-event`): a QUERY_QPC whose completion hns-sim
holds back until the driver posts the next mailbox on the same token slot;
the driver's wait times out, and the late event must complete none of the
queries after it.

Then each asynchronous event type is injected through hns-sim
(`aeq:TYPE:0:QUEUE`) for a QP, CQ or SRQ of this process (numbers from
`rdma res`), for numbers no object has, and for the device-wide kinds;
the MBX line of an `ev-*` case gives the async event types user space
received (`event none` when none) and, for QPs, the state after.

Last, abnormal interrupts (`abn-*` cases): status bits through
`abn:STATUS` (AEQ overflow, which asks the ae_dev for a reset, unknown
bits, none: a RAM ECC query with no error) and RAM ECC errors of each
resource type through `ecc:TYPE:TAG`; the MBX line gives the async events
user space got, the reset requests hns_sim's ae_dev counted and whether a
CQ and an MR can be made after.

  python3 /opt/hns/mbx_faults.py
"""
import json
import os
import re
import select
import stat
import subprocess
import tempfile
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr, QPInitAttrEx
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
from pyverbs.xrcd import XRCD, XRCDInitAttr

FAULT = '/sys/module/hns_sim/parameters/fault'
# Mailbox commands (hns_roce_cmd.h).
CREATE_MPT, DESTROY_MPT, QUERY_MPT = 0x0d, 0x0f, 0x62
CREATE_CQC, DESTROY_CQC = 0x16, 0x17
MODIFY_QPC, QUERY_QPC = 0x41, 0x42
CREATE_SRQ, MODIFY_SRQC, QUERY_SRQC, DESTROY_SRQ = 0x70, 0x72, 0x73, 0x74
STATUS = 0x11
# Event-mode mailbox slots (CMD_MAX_NUM): a slot is used again after this
# many mailboxes.
MAX_CMDS = 32
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
    except PyverbsError:
        return 'error'


def pace():
    """Counts a case; a pause after every CASES_PER_WINDOW of them."""
    global cases
    if cases and cases % CASES_PER_WINDOW == 0:
        time.sleep(WINDOW_S)
    cases += 1


def case(name, cmd, verb, again=None):
    """Arms CMD, calls VERB, prints the MBX line; then AGAIN (default:
    VERB) must work with nothing armed."""
    global fails
    pace()
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


def late_event(pd, cq):
    """A mailbox completion that comes after the driver stopped waiting:
    hns-sim runs a QUERY_QPC but holds its event back (`mbx:0x42:late:once`)
    until the driver posts a mailbox on the same token slot, then posts it
    just before that mailbox's own event. The first query times out (the
    driver's 10 s wait); the late event carries a token the slot no longer
    has and must complete nothing: each of the next MAX_CMDS + 1 queries
    (through the slot again) must return the QP's own state, INIT."""
    global fails
    pace()
    qp = rc_qp(pd, cq)
    to_init(qp)
    kernel_log()
    spec = f'mbx:{QUERY_QPC:#x}:late:once'
    print(f'ARM late-event {spec}', flush=True)
    arm(spec)
    res = outcome(lambda: qp.query(e.IBV_QP_STATE))
    states = []
    for _ in range(MAX_CMDS + 1):
        try:
            states.append(qp.query(e.IBV_QP_STATE)[0].qp_state)
        except PyverbsError as ex:
            states.append(f'error {ex}')
    arm('clear')
    print(f'MBX late-event {res} | {kernel_log()}', flush=True)
    wrong = [(i, st) for i, st in enumerate(states) if st != e.IBV_QPS_INIT]
    if wrong:
        fails += 1
        print(f'TEST mbx/late-event-next-queries FAIL {wrong[:3]}', flush=True)
    else:
        print(f'TEST mbx/late-event-next-queries PASS ({len(states)} queries)', flush=True)
    qp.close()


# Asynchronous events (enum hns_roce_event) injected through hns-sim's
# control channel (`aeq:TYPE:SUBTYPE:QUEUE`).
EV_PATH_MIG, EV_PATH_MIG_FAILED, EV_COMM_EST, EV_SQ_DRAINED = 0x01, 0x02, 0x03, 0x04
EV_WQ_CATAS, EV_INV_REQ, EV_ACCESS = 0x05, 0x06, 0x07
EV_SRQ_LIMIT, EV_LAST_WQE, EV_SRQ_CATAS = 0x08, 0x09, 0x0a
EV_CQ_ACCESS, EV_CQ_OVERFLOW, EV_CQ_ID_INVALID = 0x0b, 0x0c, 0x0d
EV_PORT_CHANGE, EV_DB_OVERFLOW, EV_FLR = 0x0f, 0x12, 0x15
EV_XRCD_VIOLATION, EV_INVALID_XRCETH = 0x16, 0x17
BOGUS = 0xfff0


def async_fd():
    """The uverbs event file of this process's one device context."""
    for fd in os.listdir('/proc/self/fd'):
        try:
            if os.readlink(f'/proc/self/fd/{fd}') == 'anon_inode:[infinibandevent]':
                return int(fd)
        except OSError:
            pass
    return None


def take_events(ctx, fd, wait):
    """The async event types that arrive within WAIT seconds, acked."""
    got = []
    end = time.monotonic() + wait
    while fd is not None:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        ev = ctx.get_async_event()
        got.append(ev.event_type)
        ev.ack()
    return got


def res(kind, *opts):
    """hns_0's objects of KIND in restrack (JSON entries)."""
    out = subprocess.run(['rdma', 'res', 'show', kind, *opts, '-j'],
                         capture_output=True, text=True).stdout
    try:
        return [o for o in json.loads(out or '[]')
                if o.get('ifname', o.get('dev')) == 'hns_0']
    except ValueError:
        return []


def new_number(kind, make):
    """Makes an object; its hardware number from restrack: the QPN, the
    SRQN of the driver's details, the CQN in word 1 of the raw CQC (the
    core's own `cqn` and `srqn` are restrack ids)."""
    key, opts = {'qp': ('lqpn', ()), 'srq': ('drv_srqn', ('-dd',)),
                 'cq': ('cqn', ())}[kind]
    before = {o.get(key) for o in res(kind, *opts)}
    obj = make()
    new = [o for o in res(kind, *opts) if o.get(key) not in before]
    if len(new) != 1:
        return obj, None
    if kind != 'cq':
        return obj, new[0][key]
    # The raw lines carry no restrack id: ask for the one CQ.
    raw = [o.get('data') for o in res('cq', 'dev', 'hns_0', 'cqn', str(new[0]['cqn']), '-r')]
    if len(raw) != 1 or not isinstance(raw[0], list) or len(raw[0]) < 8:
        return obj, None
    return obj, int.from_bytes(bytes(raw[0][4:8]), 'little') & 0xffffff


def event_case(ctx, fd, name, ev, queue, state=None):
    """Injects event EV for QUEUE, prints the events user space got (and
    the QP state STATE() reads after) and the kernel log lines."""
    pace()
    kernel_log()
    if queue is None:
        print(f'MBX {name} errno 0 | no object number in restrack', flush=True)
        return
    spec = f'aeq:{ev:#x}:0:{queue:#x}'
    print(f'ARM {name} {spec}', flush=True)
    arm(spec)
    got = take_events(ctx, fd, 1.0)
    # The driver's flush of a QP in error runs from a work item.
    time.sleep(0.3)
    st = f' qp-state {state()}' if state else ''
    arm('clear')
    res = 'event ' + (','.join(str(g) for g in got) if got else 'none') + st
    print(f'MBX {name} {res} | {kernel_log()}', flush=True)


def xrc_events(ctx, pd, cq, fd, keep, state, flush):
    """Events of XRC objects: an XRC SRQ's limit, COMM_EST on an XRC_TGT
    QP (the core's real QP, created without udata; the event reaches this
    process through the QP it opened), and with FLUSH the two XRC error
    types, which flush the QP, on another target."""
    tmp = tempfile.NamedTemporaryFile()
    xfd = os.open(tmp.name, os.O_RDONLY | os.O_CREAT, stat.S_IRUSR | stat.S_IRGRP)
    xrcd = XRCD(ctx, XRCDInitAttr(e.IBV_XRCD_INIT_ATTR_FD | e.IBV_XRCD_INIT_ATTR_OFLAGS,
                                  os.O_CREAT, xfd))

    def xrc_srq():
        a = SrqInitAttrEx(max_wr=16, max_sge=1)
        a.srq_type, a.pd, a.xrcd, a.cq = e.IBV_SRQT_XRC, pd, xrcd, cq
        a.comp_mask = (e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD |
                       e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_XRCD)
        return SRQ(ctx, a)

    def tgt():
        q, n = new_number('qp', lambda: QP(ctx, QPInitAttrEx(
            qp_type=e.IBV_QPT_XRC_RECV, comp_mask=e.IBV_QP_INIT_ATTR_XRCD, xrcd=xrcd)))
        to_init(q)
        return q, n

    s, n = new_number('srq', xrc_srq)
    event_case(ctx, fd, 'ev-xrc-srq-limit', EV_SRQ_LIMIT, n)
    objs = [s]
    q, n = tgt()
    objs.append(q)
    event_case(ctx, fd, 'ev-xrc-tgt-comm-est', EV_COMM_EST, n, state(q))
    for name, ev in (('xrcd-violation', EV_XRCD_VIOLATION),
                     ('invalid-xrceth', EV_INVALID_XRCETH)) if flush else ():
        q, n = tgt()
        objs.append(q)
        event_case(ctx, fd, f'ev-xrc-tgt-{name}', ev, n, state(q))
    # The domain goes after its QPs and SRQ.
    keep.extend([xrcd] + objs)
    keep.append(tmp)


def events(ctx, pd, cq, keep):
    """Every asynchronous event the drivers handle, on objects of this
    process, on numbers nothing has, and of the device-wide kinds."""
    fd = async_fd()
    qps = []

    def qp():
        q, n = new_number('qp', lambda: rc_qp(pd, cq))
        to_init(q)
        qps.append(q)
        return q, n

    def state(q):
        return lambda: q.query(e.IBV_QP_STATE)[0].qp_state

    q, n = qp()
    for name, ev in (('comm-est', EV_COMM_EST), ('sq-drained', EV_SQ_DRAINED),
                     ('path-mig', EV_PATH_MIG), ('path-mig-failed', EV_PATH_MIG_FAILED),
                     ('last-wqe', EV_LAST_WQE)):
        event_case(ctx, fd, f'ev-qp-{name}', ev, n, state(q))
    # The types that flush a QP from the interrupt handler make the C
    # driver's next teardown trip lockdep (docs/c-driver-findings.md 2),
    # which would end lock checking for the rest of the boot: only with
    # MBX_FLUSH_EVENTS=1 (FAULTS_FLUSH_EVENTS=1 make faults).
    flush = os.environ.get('MBX_FLUSH_EVENTS') == '1'
    for name, ev in (('catas', EV_WQ_CATAS), ('req-err', EV_INV_REQ),
                     ('access-err', EV_ACCESS)) if flush else ():
        q, n = qp()
        event_case(ctx, fd, f'ev-qp-{name}', ev, n, state(q))
    c, n = new_number('cq', lambda: CQ(ctx, 16))
    keep.append(c)
    event_case(ctx, fd, 'ev-cq-access-err', EV_CQ_ACCESS, n)
    event_case(ctx, fd, 'ev-cq-overflow', EV_CQ_OVERFLOW, n)
    s, n = new_number('srq',
                      lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1))))
    keep.append(s)
    event_case(ctx, fd, 'ev-srq-limit', EV_SRQ_LIMIT, n)
    event_case(ctx, fd, 'ev-srq-catas', EV_SRQ_CATAS, n)
    xrc_events(ctx, pd, cq, fd, keep, state, flush)
    event_case(ctx, fd, 'ev-bogus-qp', EV_WQ_CATAS if flush else EV_COMM_EST, BOGUS)
    event_case(ctx, fd, 'ev-bogus-cq', EV_CQ_OVERFLOW, BOGUS)
    event_case(ctx, fd, 'ev-bogus-srq', EV_SRQ_LIMIT, BOGUS)
    for name, ev in (('cq-id-invalid', EV_CQ_ID_INVALID), ('port-change', EV_PORT_CHANGE),
                     ('db-overflow', EV_DB_OVERFLOW), ('flr', EV_FLR), ('unknown', 0x30)):
        event_case(ctx, fd, f'ev-{name}', ev, 0)
    keep.extend(qps)


RESET_REQUESTS = '/sys/module/hns_sim/parameters/reset_requests'
# Resource types of the RAM ECC query (enum ecc_resource_type).
ECC_QPC, ECC_CQC, ECC_MPT, ECC_SRQC, ECC_GMV = 0, 1, 2, 3, 4
ECC_QPC_TIMER, ECC_CQC_TIMER, ECC_SCCC, ECC_COUNT = 5, 6, 7, 8


def reset_requests():
    """The reset events the driver asked hns_sim's ae_dev for."""
    try:
        with open(RESET_REQUESTS) as f:
            return int(f.read())
    except (OSError, ValueError):
        return -1


def abnormal_case(ctx, pd, fd, name, spec):
    """Raises an abnormal interrupt through hns-sim (`abn:STATUS`, or
    `ecc:TYPE:TAG` for a RAM ECC error), prints the async events user
    space got, the reset requests the driver made, whether a new CQ and
    MR can be made after, and the kernel log lines."""
    global fails
    pace()
    kernel_log()
    if spec is None:
        print(f'MBX {name} event none | no object number in restrack', flush=True)
        return
    before = reset_requests()
    print(f'ARM {name} {spec}', flush=True)
    arm(spec)
    got = take_events(ctx, fd, 0.5)
    # The RAM ECC recovery runs from a work item.
    time.sleep(0.3)
    arm('clear')
    resets = reset_requests() - before
    after = outcome(lambda: (CQ(ctx, 16).close(), MR(pd, 4096, ACC).close()))
    ev = ','.join(str(g) for g in got) if got else 'none'
    print(f'MBX {name} event {ev} reset-requests {resets} after {after} | {kernel_log()}',
          flush=True)
    if after != 'ok':
        fails += 1
        print(f'TEST mbx/{name}-usable-after FAIL {after}', flush=True)
    else:
        print(f'TEST mbx/{name}-usable-after PASS', flush=True)


def abnormal(ctx, pd, cq, keep):
    """Abnormal interrupts: each status bit the drivers know (AEQ
    overflow) and others, and RAM ECC errors of each resource type on
    objects of this process (the recovery reads the entry's BT0 back and
    writes it again)."""
    fd = async_fd()
    for name, st in (('aeq-overflow', 0x1), ('unknown-bit', 0x4),
                     ('aeq-overflow-and-other', 0x3), ('no-status', 0x0)):
        abnormal_case(ctx, pd, fd, f'abn-{name}', f'abn:{st:#x}')
    q, qpn = new_number('qp', lambda: rc_qp(pd, cq))
    keep.append(q)
    c, cqn = new_number('cq', lambda: CQ(ctx, 16))
    keep.append(c)
    s, srqn = new_number('srq',
                         lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1))))
    keep.append(s)
    mr = MR(pd, 4096, ACC)
    keep.append(mr)
    for name, ty, tag in (('qpc', ECC_QPC, qpn), ('cqc', ECC_CQC, cqn),
                          ('mpt', ECC_MPT, mr.lkey >> 8), ('srqc', ECC_SRQC, srqn),
                          ('gmv', ECC_GMV, 0), ('qpc-timer', ECC_QPC_TIMER, 0),
                          ('cqc-timer', ECC_CQC_TIMER, 0), ('sccc', ECC_SCCC, 0),
                          ('gmv-unmapped', ECC_GMV, 0x3f),
                          ('qpc-unmapped', ECC_QPC, 0xfff0),
                          ('unsupported-type', ECC_COUNT, 0)):
        spec = None if tag is None else f'ecc:{ty}:{tag:#x}'
        abnormal_case(ctx, pd, fd, f'abn-ecc-{name}', spec)


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
    late_event(pd, cq)
    events(ctx, pd, cq, keep)
    abnormal(ctx, pd, cq, keep)
    for o in reversed(keep):
        o.close()
    mr.close()
    cq.close()
    pd.close()
    ctx.close()
    return fails


if __name__ == '__main__':
    raise SystemExit(1 if main() else 0)
