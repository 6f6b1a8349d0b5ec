# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Asynchronous events for a QP number while a new QP takes it (run by
hip08-plan.sh on either driver, hns-sim's HIP08 personality).

Each round creates and destroys two user RC QPs to learn the number the
next one takes (the QPN allocator moves on within its bank after each QP,
on both drivers, so the step between the two is the step to the next);
then hns-sim is told to keep the SCC context clear of HIP08's QP creation busy
for four polls (`sccc-busy:4`, about 80 ms inside create_qp, after the
driver has stored the QP in its table and before the core's QP knows the
driver's), and a second process injects LOCAL_WQ_ACCESS_ERROR events
(`aeq:0x7:0:QPN`: the driver moves the QP to ERR from a work item, through
the QP's `ib_qp`) for that number every few milliseconds while this one
creates the next QP, which takes it. A driver that lets events
reach the QP before it is complete follows a null pointer from the work
item. Before its creation returns the QP must not be found ("async event
for bogus QP"); after, an event moves it to ERR, which destroying it
does not mind.

Prints one line per round and a summary, and exits 0 when every creation
succeeded, the new QP took the number and events for it were injected
during its creation, with no new WARN, BUG, Oops or lockdep report in the kernel log.

  python3 /opt/hns/qp_create_race.py [ROUNDS]
"""
import os
import re
import select
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr

FAULT = '/sys/module/hns_sim/parameters/fault'
EV_LOCAL_WQ_ACCESS = 0x07
REPORTS = re.compile(r'WARNING:|BUG:|Oops|possible (circular|recursive)|'
                     r'inconsistent lock state|general protection')


def arm(spec):
    with open(FAULT, 'w') as f:
        f.write(spec)


def reports():
    log = subprocess.run(['dmesg'], capture_output=True, text=True).stdout
    return sum(1 for line in log.splitlines() if REPORTS.search(line))


def injector(qpn, stop, out):
    """Child: events for QPN until STOP is readable (closed); writes the
    injection times (monotonic) to OUT."""
    spec = f'aeq:{EV_LOCAL_WQ_ACCESS:#x}:0:{qpn:#x}'
    times = []
    while not select.select([stop], [], [], 0)[0]:
        try:
            arm(spec)
            times.append(time.monotonic())
        except OSError:
            pass
        time.sleep(0.004)
    os.write(out, ' '.join(f'{t:.6f}' for t in times).encode())
    os._exit(0)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    r0 = reports()
    ctx = Context(name='hns_0')
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)

    def make():
        return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))

    foreseen = inside = 0
    ok = True
    for r in range(rounds):
        q = make()
        first = q.qp_num
        q.close()
        q = make()
        qpn = 2 * q.qp_num - first
        q.close()
        arm('sccc-busy:4')
        stop_r, stop_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(stop_w)
            os.close(res_r)
            injector(qpn, stop_r, res_w)
        os.close(stop_r)
        os.close(res_w)
        time.sleep(0.02)
        t0 = time.monotonic()
        try:
            q = make()
            err = None
        except Exception as ex:  # the summary says what failed
            q, err = None, ex
        t1 = time.monotonic()
        os.close(stop_w)
        data = b''
        while True:
            chunk = os.read(res_r, 65536)
            if not chunk:
                break
            data += chunk
        os.close(res_r)
        os.waitpid(pid, 0)
        arm('clear')
        times = [float(t) for t in data.split()]
        n_in = sum(1 for t in times if t0 <= t <= t1)
        # The flush work of events after the creation runs meanwhile.
        time.sleep(0.3)
        if q is None:
            print(f'round {r}: QP {qpn:#x}: create failed: {err}', flush=True)
            ok = False
            continue
        same = q.qp_num == qpn
        foreseen += same
        inside += n_in if same else 0
        print(f'round {r}: QP {qpn:#x} -> {q.qp_num:#x}, create {1000 * (t1 - t0):.0f} ms, '
              f'{n_in} of {len(times)} events during it', flush=True)
        q.close()
    new = reports() - r0
    print(f'{rounds} rounds, number foreseen in {foreseen}, {inside} events during '
          f'creations that took it, {new} new kernel reports', flush=True)
    return 0 if ok and foreseen and inside and not new else 1


if __name__ == '__main__':
    sys.exit(main())
