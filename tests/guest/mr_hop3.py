# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A user MR whose page list needs hop 3, used for traffic.

With 16 KiB BT pages (2048 addresses each) a page list of 4 KiB pages
needs hop 3 beyond 2048 * 2048 pages (16 GiB): this MR has one page more.
The guest has no 16 GiB: the MR's memory is one 16 MiB memfd mapped
shared over and over (1025 mappings side by side), so its pages repeat
every 4096 pages (the kernel pins each page once per mapping; pinning the
zero page of an untouched private mapping would allocate every page). The
mappings start at an address with bit 12 set, which keeps the page size
at 4 KiB: each mapping ends a DMA run at such an address
(ib_umem_find_best_pgsz). Two
pages get a pattern: page 2048 * 1024 + 5 (L1 page 0, L2 page 1024; memfd
page 5) and the last page (L1 page 1, the second root entry; memfd page
0). An RC QP sends each from the MR to a second QP of the same device;
the engine finds the bytes by walking the root, L1, L2 and page entries.
Prints what arrived; exits 0 when both sends completed with the pattern,
1 otherwise.
Usage: mr_hop3.py GID_INDEX
"""
import ctypes
import mmap
import os

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.wr import RecvWR, SGE, SendWR

from rcpair import Dev, poll

PAGE = 4096
PAGES = 2048 * 2048 + 1
CHUNK = 16 << 20
# Page indexes that get a pattern: L2 page 1024 of L1 page 0, and the last.
MARKED = (2048 * 1024 + 5, PAGES - 1)

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long)
MAP_FAILED = ctypes.c_void_p(-1).value
# x86_64 and arm64 values (Python's mmap module lacks these).
PROT_NONE, MAP_FIXED, MAP_NORESERVE = 0, 0x10, 0x4000
nchunks = -(-PAGES * PAGE // CHUNK)
fd = os.memfd_create('mr_hop3')
os.ftruncate(fd, CHUNK)
for i, p in enumerate(MARKED):
    os.pwrite(fd, bytes([0x51 + i]) * PAGE, p * PAGE % CHUNK)
res = libc.mmap(None, nchunks * CHUNK + 2 * PAGE, PROT_NONE,
                mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
if res in (None, MAP_FAILED):
    raise SystemExit(f"reserve: errno {ctypes.get_errno()}")
# The first address from RES on whose bit 12 is set.
base = res if res & PAGE else res + PAGE
for c in range(nchunks):
    a = libc.mmap(base + c * CHUNK, CHUNK, mmap.PROT_READ | mmap.PROT_WRITE,
                  mmap.MAP_SHARED | MAP_FIXED, fd, 0)
    if a != base + c * CHUNK:
        raise SystemExit(f"map {c}: errno {ctypes.get_errno()}")
d = Dev()
big = MR(d.pd, PAGES * PAGE, 0, address=base)
print(f"MR of {PAGES} pages registered")
dst = MR(d.pd, PAGE, e.IBV_ACCESS_LOCAL_WRITE)
cqa, cqb = d.cq(), d.cq()
qa, qb = d.rc_qp(cqa), d.rc_qp(cqb)
d.connect(qa, qb)
ok = True
for i, p in enumerate(MARKED):
    qb.post_recv(RecvWR(wr_id=i, num_sge=1,
                        sg=[SGE(dst.buf, PAGE, dst.lkey)]))
    qa.post_send(SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(base + p * PAGE, PAGE, big.lkey)],
                        send_flags=e.IBV_SEND_SIGNALED))
    ws, wr = poll(cqa, 1), poll(cqb, 1)
    st = (ws[0].status if ws else None, wr[0].status if wr else None)
    got = dst.read(PAGE, 0)
    good = got == bytes([0x51 + i]) * PAGE
    print(f"page {p}: send/recv status {st}, data {'ok' if good else 'wrong'}")
    ok = ok and st == (e.IBV_WC_SUCCESS, e.IBV_WC_SUCCESS) and good
for o in (qa, qb, cqa, cqb, dst, big):
    o.close()
d.pd.close()
d.ctx.close()
raise SystemExit(0 if ok else 1)
