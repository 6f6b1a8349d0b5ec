# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Events for a CQ or SRQ while it is being created, and a QP destroyed
while its flush work waits for the hardware (run by hip08-plan.sh on
either driver, hns-sim's HIP08 personality).

hns-sim's `mbx:CMD:hold:once` runs the next mailbox CMD but holds its
completion event until the control command `release`: the verb that sent
it sleeps in the driver's mailbox wait meanwhile. A second process waits
until this one sleeps inside the kernel (its state S or D inside a system
call: nothing else in these verbs sleeps), does its part and releases the
mailbox; the verb must return only after the release (so the part was
done while it slept).

  cq   Holds CREATE_CQC (0x16) of a user CQ while CQ_OVERFLOW events
       (`aeq:0xc:0:CQN`) and CEQEs (`ceq:CQN`) for the number the CQ takes
       are injected. The number is foreseen from two CQs made before (the
       CQN of each raw CQC `rdma res show cq -r` reports) and checked
       afterwards.
  srq  The same with CREATE_SRQ (0x70) of a user SRQ and SRQ_LIMIT_REACH
       events (`aeq:0x8:0:SRQN`); the number is the driver's `drv_srqn`
       of `rdma res show srq -dd`.
       For both: no event may reach the object before its creation
       returns (the driver finds no CQ/SRQ, "bogus"), so no asynchronous
       event reaches this process's async file (the anonymous inode
       [infinibandevent]) for it.
  qp-destroy-flush
       Two user RC QPs A and B in INIT with two receives posted each;
       MODIFY_QPC (0x41) is held, and LOCAL_WQ_ACCESS_ERROR events for both
       come in one interrupt (`aeq:0x7:0:A,B`): the driver queues a flush
       work item for each on its ordered work queue; A's moves A to ERR
       and sleeps in the held MODIFY_QPC, B's waits behind it. B is
       destroyed at once, while its flush work is queued and will use it.
       The destroy must succeed and return only after the release (it
       waits for B's flush work), and a new QP be made afterwards.

Every mode needs no new WARN, BUG, Oops or lockdep report in the kernel
log; its events must have been injected while the verb slept.
Prints one line per round and a summary, exit 0 when all holds. On the C
driver (DRIVER c), `cq` exits 3 when its only reports are C's known
refcount WARNs (docs/c-driver-findings.md 21: C's CQ is in its table
with refcount 0 during CREATE_CQC, and its AEQ handler takes a reference
with refcount_inc); the plan counts that as a SKIP.

  python3 /opt/hns/obj_event_race.py cq|srq|qp-destroy-flush [ROUNDS [DRIVER]]
"""
import json
import os
import re
import select
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR
from mbx_faults import FAULT, CREATE_CQC, CREATE_SRQ, MODIFY_QPC, async_fd
from mbx_faults import EV_SRQ_LIMIT, EV_CQ_OVERFLOW
from mbx_faults import EV_ACCESS as EV_LOCAL_WQ_ACCESS

REPORTS = re.compile(r'WARNING:|BUG:|Oops|possible (circular|recursive)|'
                     r'inconsistent lock state|general protection|refcount_t:')
# C's WARNs for CQ events during CREATE_CQC (refcount_inc on 0, then the
# decrement underflows, then an increment finds the count saturated: a
# WARN_ONCE each), the two lines of each that REPORTS takes.
KNOWN_C_CQ = re.compile(r'refcount_t: (addition on 0|underflow); use-after-free|'
                        r'refcount_t: saturated; leaking memory|'
                        r'WARNING: .* refcount_warn_saturate')


def arm(spec):
    with open(FAULT, 'w') as f:
        f.write(spec)


def reports():
    log = subprocess.run(['dmesg'], capture_output=True, text=True).stdout
    return [line for line in log.splitlines() if REPORTS.search(line)]


def sleeping_in_kernel(pid):
    """PID sleeps inside a system call."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
        with open(f'/proc/{pid}/syscall') as f:
            sc = f.read().split()
    except OSError:
        return False
    return state in ('S', 'D') and bool(sc) and sc[0] not in ('running', '-1')


def numbers(kind):
    """The hardware numbers of the CQs on hns_0 (CQC_CQN, bits 55:32 of
    each raw CQC: `rdma res show`'s own cqn is the core's index), or of
    this process's SRQs (the driver's drv_srqn)."""
    flag = '-r' if kind == 'cq' else '-dd'
    p = subprocess.run(['rdma', '-j', flag, 'res', 'show', kind, 'dev', 'hns_0'],
                       capture_output=True, text=True, timeout=60)
    try:
        objs = json.loads(p.stdout or '[]')
    except ValueError:
        return set()
    if kind == 'cq':
        return {int.from_bytes(bytes(o['data'][4:7]), 'little') for o in objs
                if len(o.get('data', [])) >= 7}
    return {o['drv_srqn'] for o in objs if o.get('pid') == os.getpid() and 'drv_srqn' in o}


def made(kind, make):
    """Makes an object; returns it and the number it took."""
    before = numbers(kind)
    obj = make()
    new = numbers(kind) - before
    return obj, (new.pop() if len(new) == 1 else None)


def foresee(kind, make):
    """The number the next object of KIND takes: two made and closed."""
    a, na = made(kind, make)
    a.close()
    b, nb = made(kind, make)
    b.close()
    if na is None or nb is None:
        return None
    return 2 * nb - na


def helper(parent, specs, stop_after, out):
    """Child: once PARENT sleeps in the kernel, writes SPECS (a few times
    each, 10 ms apart), releases the held mailbox after STOP_AFTER s and
    writes the release's time (monotonic) to OUT; exits 1 if the parent
    was never seen sleeping."""
    t_end = time.monotonic() + 10
    seen = True
    while not sleeping_in_kernel(parent):
        if time.monotonic() > t_end:
            seen = False
            break
        time.sleep(0.005)
    if seen:
        for _ in range(3):
            for s in specs:
                arm(s)
            time.sleep(0.01)
        time.sleep(0.05 + stop_after)
    t_rel = time.monotonic()
    arm('release')
    os.write(out, f'{t_rel:.6f}'.encode())
    os._exit(0 if seen else 1)


def with_helper(specs, stop_after, verb):
    """Runs VERB while the helper injects SPECS; returns (result or the
    exception, seconds VERB took, whether VERB returned only after the
    release, the injections made while it slept)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        helper(os.getppid(), specs, stop_after, w)
    os.close(w)
    t0 = time.monotonic()
    try:
        res = verb()
    except Exception as ex:  # the caller says what failed
        res = ex
    t1 = time.monotonic()
    _, st = os.waitpid(pid, 0)
    data = os.read(r, 64)
    os.close(r)
    t_rel = float(data) if data else float('inf')
    return res, t1 - t0, os.WEXITSTATUS(st) == 0 and t1 >= t_rel


def create_race(kind, mb, specs_for, make, rounds):
    ctx_fd = async_fd()
    ok, foreseen, inside, events = True, 0, 0, 0
    for r in range(rounds):
        n = foresee(kind, make)
        if n is None:
            print(f'round {r}: {kind} numbers not found by rdma res show', flush=True)
            return False, 0, 0, 0
        arm(f'mbx:{mb:#x}:hold:once')
        before = numbers(kind)
        obj, took, was_in = with_helper(specs_for(n), 0.1, make)
        arm('clear')
        if isinstance(obj, Exception):
            print(f'round {r}: {kind} {n:#x}: create failed: {obj}', flush=True)
            ok = False
            continue
        new = numbers(kind) - before
        got = new.pop() if len(new) == 1 else None
        foreseen += got == n
        inside += was_in
        # An event that reached the object shows on the async file.
        ev = ctx_fd is not None and bool(select.select([ctx_fd], [], [], 0.3)[0])
        events += ev
        print(f'round {r}: {kind} {n:#x} -> {got if got is None else hex(got)}, create '
              f'{1000 * took:.0f} ms, events injected while it slept: {was_in}, '
              f'async event after: {ev}', flush=True)
        obj.close()
    return ok, foreseen, inside, events


def destroy_flush(ctx, pd, rounds):
    cq = CQ(ctx, 16)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)

    def qp_in_init():
        q = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
        a = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
        a.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE
        q.to_init(a)
        for i in range(2):
            q.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
        return q

    ok, inside, waited = True, 0, 0
    for r in range(rounds):
        qa, qb = qp_in_init(), qp_in_init()
        na, nb = qa.qp_num, qb.qp_num
        arm(f'mbx:{MODIFY_QPC:#x}:hold:once')
        # One interrupt finds both events: A's flush work takes the held
        # MODIFY_QPC and keeps the driver's ordered work queue busy, B's
        # flush work waits behind it, not started.
        arm(f'aeq:{EV_LOCAL_WQ_ACCESS:#x}:0:{na:#x},{nb:#x}')
        time.sleep(0.1)
        res, took, was_in = with_helper([], 0.3, qb.close)
        arm('clear')
        if isinstance(res, Exception):
            print(f'round {r}: QP {nb:#x}: destroy failed: {res}', flush=True)
            ok = False
            continue
        inside += was_in
        waited += took >= 0.3
        qa.close()
        q2 = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
        print(f'round {r}: QP {nb:#x} destroyed while its flush work waited behind '
              f'{na:#x}\'s: {1000 * took:.0f} ms, slept in the kernel until the '
              f'release: {was_in}; next QP {q2.qp_num:#x}', flush=True)
        q2.close()
    mr.close()
    cq.close()
    return ok, inside, waited


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else 'cq'
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    driver = sys.argv[3] if len(sys.argv) > 3 else 'rs'
    r0 = len(reports())
    t_start = time.monotonic()
    ctx = Context(name='hns_0')
    pd = PD(ctx)
    if mode == 'cq':
        ok, foreseen, inside, events = create_race(
            'cq', CREATE_CQC,
            lambda n: [f'aeq:{EV_CQ_OVERFLOW:#x}:0:{n:#x}', f'ceq:{n:#x}'],
            lambda: CQ(ctx, 16), rounds)
        good = ok and foreseen == rounds and inside == rounds and not events
        summary = (f'number foreseen in {foreseen}, events inside the create in {inside}, '
                   f'async events for the new CQ in {events}')
    elif mode == 'srq':
        ok, foreseen, inside, events = create_race(
            'srq', CREATE_SRQ,
            lambda n: [f'aeq:{EV_SRQ_LIMIT:#x}:0:{n:#x}'],
            lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=4, max_sge=1))), rounds)
        good = ok and foreseen == rounds and inside == rounds and not events
        summary = (f'number foreseen in {foreseen}, events inside the create in {inside}, '
                   f'async events for the new SRQ in {events}')
    elif mode == 'qp-destroy-flush':
        ok, inside, waited = destroy_flush(ctx, pd, rounds)
        good = ok and inside == rounds and waited == rounds
        summary = (f'destroy slept until the release in {inside}, '
                   f'waited for the flush work in {waited}')
    else:
        print(f'unknown mode {mode}', flush=True)
        return 2
    pd.close()
    ctx.close()
    new = reports()[r0:]
    for line in new:
        print(f'kernel: {line}', flush=True)
    print(f'{mode}: {rounds} rounds, {summary}, {len(new)} new kernel reports '
          f'({time.monotonic() - t_start:.1f} s)', flush=True)
    if good and not new:
        return 0
    if driver == 'c' and mode == 'cq' and new and ok and inside == rounds and all(
            KNOWN_C_CQ.search(line) for line in new):
        print('only C\'s known refcount WARNs in hns_roce_cq_event '
              '(docs/c-driver-findings.md 21)', flush=True)
        return 3
    return 1


if __name__ == '__main__':
    sys.exit(main())
