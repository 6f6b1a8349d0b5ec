# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""C-driver finding 1 (docs/c-driver-findings.md): ibv_rereg_mr with
IBV_REREG_MR_CHANGE_TRANSLATION keeps the MPT's old PBL_HOP_NUM.

A one-page MR (page list hop 0) is moved to a three-page buffer (the C
driver builds a hop-1 page list for it), then an RDMA WRITE of 12 KiB fills
it. The MPT the C driver writes says hop 0 with three pages: pages 0 and 1
come from PA0/PA1, page 2 has no page list hop 0 could name. hns-sim
refuses that page ("bad DMA refused" in hns-sim.log, the requester gets
IBV_WC_REM_ACCESS_ERR); hardware would write it wherever its hop-0 walk
leads. Prints what happened and exits 0 when the write completed and the
buffer holds the data (a fixed driver), 1 otherwise.
Usage: rereg_hop.py GID_INDEX   (not part of make check: it fails on the
unmodified C driver by design)"""
import pyverbs.enums as e
from pyverbs.mem_alloc import free, posix_memalign
from pyverbs.mr import MR
from pyverbs.wr import SGE, SendWR

from rcpair import Dev, poll

PAGE = 4096
d = Dev()
acc = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
dst = MR(d.pd, PAGE, acc)
src = MR(d.pd, 3 * PAGE, acc)
src.write(b''.join(bytes([0x41 + i]) * PAGE for i in range(3)), 3 * PAGE)
buf = posix_memalign(3 * PAGE, PAGE)
dst.rereg(e.IBV_REREG_MR_CHANGE_TRANSLATION, None, buf, 3 * PAGE, 0)
cqa, cqb = d.cq(), d.cq()
qa, qb = d.rc_qp(cqa), d.rc_qp(cqb)
d.connect(qa, qb, access=e.IBV_ACCESS_REMOTE_WRITE)
wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
            sg=[SGE(src.buf, 3 * PAGE, src.lkey)],
            send_flags=e.IBV_SEND_SIGNALED)
wr.set_wr_rdma(dst.rkey, buf)
qa.post_send(wr)
wcs = poll(cqa, 1)
status = wcs[0].status if wcs else None
got = dst.read(3 * PAGE, 0)
pages = ['ok' if got[i * PAGE:(i + 1) * PAGE] == bytes([0x41 + i]) * PAGE
         else 'wrong' for i in range(3)]
print(f"RDMA WRITE of 3 pages into the re-registered MR: status {status}, "
      f"pages {pages}")
free(buf)
raise SystemExit(0 if status == e.IBV_WC_SUCCESS and pages == ['ok'] * 3
                 else 1)
