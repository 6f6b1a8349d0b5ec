# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A producer preempted in the middle of an ibv_wr_* WQE. libhns' WR API
(perftest's post path) makes the WQE's owner bit valid in
ibv_wr_rdma_write() and writes length and inline data after it, up to
ibv_wr_complete()'s doorbell. Here the producer sleeps PAUSE seconds
between the two, as if descheduled: the write must carry the data set after
the pause, every time (a model that takes a valid-looking WQE before its
doorbell sends what the slot held before: zeros in a fresh slot, so an
empty write; ib_write_lat's peer then waited for ever for its byte).
Usage: rc_wr_api.py GID_INDEX [PAUSE]"""
import sys
import time

import pyverbs.enums as e
from pyverbs.mr import MR

from rcpair import Dev, poll

pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.02
d = Dev()
acc = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
src = MR(d.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
dst = MR(d.pd, 4096, acc)
cqa, cqb = d.cq(), d.cq()
qa = d.rc_qp_ex(cqa, e.IBV_QP_EX_WITH_RDMA_WRITE)
qb = d.rc_qp_ex(cqb, e.IBV_QP_EX_WITH_RDMA_WRITE)
d.connect(qa, qb, access=e.IBV_ACCESS_REMOTE_WRITE)
n = 6
for i in range(n):
    data = bytes([0x41 + i] * 8)
    src.write(data, 8, 64 * i)
    qa.wr_start()
    qa.wr_id = i
    qa.wr_flags = e.IBV_SEND_SIGNALED | e.IBV_SEND_INLINE
    qa.wr_rdma_write(dst.rkey, dst.buf + 64 * i)
    time.sleep(pause)
    qa.wr_set_inline_data(src.buf + 64 * i, 8)
    qa.wr_complete()
    wcs = poll(cqa, 1)
    st = wcs[0].status if wcs else None
    assert st == e.IBV_WC_SUCCESS, f"write {i}: completion {st}"
    got = dst.read(8, 64 * i)
    assert got == data, f"write {i}: remote bytes {got.hex()}, want {data.hex()}"
print(f"{n} inline RDMA WRITEs through ibv_wr_*, {pause * 1000:.0f} ms pause "
      "inside each WQE: every remote buffer right")
