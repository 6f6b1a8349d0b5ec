# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A function reset, then the driver's unload, while a process holds a
device context with live objects, run by faults-plan.sh on
either driver with hns_0 registered.

The process makes a PD, a CQ, an MR, an RC QP in INIT and an SRQ, then
  reset: resets the function through hns_sim (the hnae3 client goes down,
         uninit, init, up); the device goes away and comes back;
  rmmod: unloads the RoCE driver (the RDMA core disassociates the
         context).
  nic:   unloads the NIC driver MODULE (hclge, on the upstream NIC side:
         nic-plan.sh); the hnae3 core takes the RoCE client off the
         function, which unregisters the ib_device and disassociates the
         context.
  unbind: unbinds the PCI function MODULE (its address, e.g.
         0000:00:04.0) from hns3 through sysfs (nic-plan.sh): hclge's
         remove of that one function takes the RoCE client off it, as
         in mode nic; the driver stays loaded for the other functions.
It prints

  MBX live-<mode> event <async events> [rmmod|unbind <exit> new-pd <outcome>] destroy <outcomes> | <kernel log>

(the async event types user space received, e.g. 8 = DEVICE_FATAL; in
modes nic and unbind the exit status of the rmmod or of the sysfs write
and how making a PD on the dead context went; how destroying each object
went), which the host compares between the drivers
(scripts/compare-faults.py; check.sh's equivalence/nic-live-objects and
equivalence/nic-live-unbind for modes nic and unbind). After the reset a new
context must work (TEST live/reset-new-context); the plan's kmemleak scan and the
unload check that nothing leaked.

  python3 /opt/hns/live_faults.py reset|rmmod|nic MODULE
  python3 /opt/hns/live_faults.py unbind PCI_FUNCTION
"""
import subprocess
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

from mbx_faults import async_fd, kernel_log, outcome, rc_qp, take_events, to_init

RESET = '/sys/module/hns_sim/parameters/reset'
UNBIND = '/sys/bus/pci/drivers/hns3/unbind'


def unbind(fn):
    """Writes the PCI function fn to hns3's unbind file; 0 when the
    write went through, else the errno it failed with."""
    try:
        with open(UNBIND, 'w') as f:
            f.write(fn)
    except OSError as err:
        return err.errno
    return 0


def main():
    mode, mod = sys.argv[1], sys.argv[2]
    ctx = Context(name='hns_0')
    fd = async_fd()
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    qp = rc_qp(pd, cq)
    to_init(qp)
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
    kernel_log()
    if mode == 'reset':
        with open(RESET, 'w') as f:
            f.write('1')
    elif mode == 'unbind':
        rm = unbind(mod)
    else:
        rm = subprocess.run(['rmmod', mod], check=False).returncode
    got = take_events(ctx, fd, 2.0)
    ev = ','.join(str(g) for g in got) if got else 'none'
    if mode == 'nic':
        ev += f' rmmod {rm} new-pd {outcome(lambda: PD(ctx))}'
    elif mode == 'unbind':
        ev += f' unbind {rm} new-pd {outcome(lambda: PD(ctx))}'
    res = [outcome(o.close) for o in (qp, srq, mr, cq, pd, ctx)]
    log = kernel_log()
    print(f'MBX live-{mode} event {ev} destroy {",".join(res)} | {log}', flush=True)
    if mode == 'reset':
        def again():
            c = Context(name='hns_0')
            PD(c).close()
            c.close()
        r = outcome(again)
        print(f'TEST live/reset-new-context {"PASS" if r == "ok" else "FAIL " + r}',
              flush=True)
        return r != 'ok'
    return False


if __name__ == '__main__':
    raise SystemExit(1 if main() else 0)
