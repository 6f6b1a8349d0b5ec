#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A deterministic workload of user objects through libhns, for comparing
the C driver's firmware traffic with hns_roce_rs's (equal hns-sim traces):
user MRs of 4 KiB, 2 MiB and 64 MiB, re-registration (access, PD, a new
one-page translation), user CQs, an RC QP with a refused modify and a
refused AH, then everything destroyed in a fixed order. Each step prints a TEST line; the exit status is non-zero if
any failed.

libhns always asks for the CQE size its context was given (64 B on HIP09),
so the last part speaks the uverbs write ABI itself: its own context, CQs
with 32 B and 64 B CQEs, one without the cqe_size field (32 B), one with a
size the driver must refuse (EINVAL), record doorbells sharing a page,
and an mmap of an offset the context never handed out (EINVAL). At the
end the driver's software counters (debugfs sw_stat/sw_stat) are printed
between HNS-SWSTAT-BEGIN and HNS-SWSTAT-END: scripts/check.sh compares the
two drivers' (equivalence/user-objects-sw-stat).
Usage: user-objects.py [DEVICE [GROUP]]  (TEST lines: "TEST GROUP/<step>",
GROUP defaults to user-objects)"""
import ctypes
import errno
import glob
import mmap
import os
import struct
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mem_alloc import free, posix_memalign
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

DEV = sys.argv[1] if len(sys.argv) > 1 else "hns_0"
GROUP = sys.argv[2] if len(sys.argv) > 2 else "user-objects"
PAGE = 4096
fails = 0


def step(name, fn):
    global fails
    try:
        r = fn()
        print(f"TEST {GROUP}/{name} PASS")
        return r
    except Exception as ex:  # noqa: BLE001 - any failure is a test failure
        fails += 1
        print(f"TEST {GROUP}/{name} FAIL {type(ex).__name__}: {ex}")
        return None


ctx = step("open-context", lambda: Context(name=DEV))
if ctx is None:
    sys.exit(1)
pd = step("alloc-pd", lambda: PD(ctx))
pd2 = step("alloc-pd2", lambda: PD(ctx))
acc = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
libc = ctypes.CDLL(None, use_errno=True)
MADV_NOHUGEPAGE = 15


def buffer(size):
    """Page-aligned memory in 4 KiB pages: no (multi-size) transparent huge
    pages, each page faulted in on its own. Otherwise the kernel may back
    the buffer with physically contiguous folios in one run and not in the
    other, the best page size of the MR differs (seen: 32 KiB and 128 KiB
    folios), and so does the MPT, for reasons that are no driver's."""
    b = posix_memalign(size, PAGE)
    # EINVAL without transparent huge pages in the kernel: nothing to undo.
    libc.madvise(ctypes.c_void_p(b), ctypes.c_size_t(size), MADV_NOHUGEPAGE)
    for off in range(0, size, PAGE):
        ctypes.memset(b + off, 0x5a, 1)
    return b


sizes = (("4k", PAGE), ("2m", 2 << 20), ("64m", 64 << 20))
bufs_mr = [buffer(s) for _, s in sizes]
mrs = [step(f"reg-mr-{n}", lambda s=s, b=b: MR(pd, s, acc, address=b))
       for (n, s), b in zip(sizes, bufs_mr)]
mr4k = mrs[0]


def expect_errno(want, fn):
    """fn must fail with errno `want` (the C driver's)."""
    try:
        fn()
    except Exception as ex:  # noqa: BLE001 - pyverbs and OSError alike
        got = getattr(ex, "error_code", None) or getattr(ex, "errno", None)
        if got == want:
            return
        raise RuntimeError(f"errno {got}, want {want}: {ex}") from ex
    raise RuntimeError(f"succeeded, want errno {want}")


# Memory that cannot be pinned: the driver answers ENOMEM whatever the core
# said (C's mtr_alloc_bufs).
step("reg-mr-unmapped-enomem",
     lambda: expect_errno(errno.ENOMEM, lambda: MR(pd, PAGE, acc, address=0x1000)))
step("rereg-access", lambda: mr4k.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0,
                                        acc | e.IBV_ACCESS_REMOTE_ATOMIC))
step("rereg-pd", lambda: mr4k.rereg(e.IBV_REREG_MR_CHANGE_PD, pd2, 0, 0, 0))
# A new translation of one page: always one 4 KiB page (a larger buffer
# can be backed by physically contiguous, suitably aligned memory in one
# run and not in the other, and then its best page size differs: seen with
# 2 MiB, 32 KiB and 128 KiB pages; no driver's doing).
buf = buffer(PAGE)
step("rereg-translation", lambda: mr4k.rereg(e.IBV_REREG_MR_CHANGE_TRANSLATION, None,
                                             buf, PAGE, 0))
cqs = [step(f"create-cq-{n}", lambda n=n: CQ(ctx, n)) for n in (64, 1000)]
# rdma res show of these CQs and MRs (and the kernel's), both drivers
# compared by scripts/restrack-diff.py.
sys.path.insert(0, "/opt/hns")
import restrack  # noqa: E402
restrack.dump("user-objects")
for i, c in enumerate(cqs):
    step(f"destroy-cq-{i}", c.close)
for i, m in enumerate(mrs):
    step(f"dereg-mr-{i}", m.close)
free(buf)
for b in bufs_mr:
    free(b)
# A user RC QP (created as in uqp's plans), then the refusals the driver
# counts in sw_stat: RESET to RTS, a move the core's state table refuses
# (EINVAL, one qp_modify_err), and an AH with SL 8, past the SLs the
# driver takes (EINVAL, one ah_create_err).
qcq = step("qp-create-cq", lambda: CQ(ctx, 16))
qp = step("create-qp-rc", lambda: QP(pd, QPInitAttr(
    qp_type=e.IBV_QPT_RC, scq=qcq, rcq=qcq,
    cap=QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1))))
if qp is not None:
    step("modify-qp-reset-to-rts-einval", lambda: expect_errno(
        errno.EINVAL, lambda: qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)))
step("create-ah-sl8-einval", lambda: expect_errno(errno.EINVAL, lambda: AH(pd, attr=AHAttr(
    gr=GlobalRoute(dgid=ctx.query_gid(1, 0), sgid_index=0), is_global=1, port_num=1, sl=8))))
if qp is not None:
    step("destroy-qp-rc", qp.close)
if qcq is not None:
    step("qp-destroy-cq", qcq.close)
step("dealloc-pds", lambda: (pd2.close(), pd.close()))
step("close-context", ctx.close)

# --- uverbs write ABI (include/uapi/rdma/ib_user_verbs.h, hns-abi.h) ---
CMD_GET_CONTEXT, CMD_CREATE_CQ, CMD_DESTROY_CQ = 0, 18, 20


def uverbs(fd, op, body, out_len):
    """One legacy write command: header, response pointer, body."""
    resp = ctypes.create_string_buffer(out_len)
    payload = struct.pack("<Q", ctypes.addressof(resp)) + body
    hdr = struct.pack("<IHH", op, (8 + len(payload)) // 4, out_len // 4)
    os.write(fd, hdr + payload)
    return resp.raw


def addr(m):
    return ctypes.addressof(ctypes.c_char.from_buffer(m))


node = os.path.basename(glob.glob(
    f"/sys/class/infiniband/{DEV}/device/infiniband_verbs/uverbs*")[0])
fd = os.open(f"/dev/infiniband/{node}", os.O_RDWR)


def context_unwritable_answer():
    """GET_CONTEXT on a fresh file whose response ends the core's 8 bytes
    at the end of a writable page, the driver's answer falling on a
    read-only one: the core's copy succeeds, the driver's fails (EFAULT)
    and the context is undone, one uctx_alloc_err."""
    m = mmap.mmap(-1, 2 * PAGE)
    base = addr(m)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    if libc.mprotect(base + PAGE, PAGE, mmap.PROT_READ) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    fd2 = os.open(f"/dev/infiniband/{node}", os.O_RDWR)
    try:
        payload = struct.pack("<QII", base + PAGE - 8, 0, 0)
        os.write(fd2, struct.pack("<IHH", CMD_GET_CONTEXT, (8 + len(payload)) // 4, 40 // 4)
                 + payload)
    finally:
        os.close(fd2)


step("raw-context-unwritable-answer-efault",
     lambda: expect_errno(errno.EFAULT, context_unwritable_answer))
# hns_roce_ib_alloc_ucontext {config, reserved}; answer: core 8 + hns 32.
step("raw-context", lambda: uverbs(fd, CMD_GET_CONTEXT, struct.pack("<II", 0, 0), 40))
# No mmap entry at page 4096 of the context: EINVAL, one mmap_err.
step("raw-mmap-unknown-offset-einval",
     lambda: expect_errno(errno.EINVAL, lambda: mmap.mmap(fd, PAGE, offset=4096 * PAGE)))
bufs = [mmap.mmap(-1, 2 * PAGE) for _ in range(3)]
dbpage = mmap.mmap(-1, PAGE)


def create_cq(i, cqe_size, buf=None, db=None):
    """hns_roce_ib_create_cq {buf_addr, db_addr, cqe_size, reserved};
    cqe_size None: the request ends before it (an old libhns)."""
    buf = addr(bufs[i]) if buf is None else buf
    db = addr(dbpage) + 8 * i if db is None else db
    drv = struct.pack("<QQ", buf, db)
    if cqe_size is not None:
        drv += struct.pack("<II", cqe_size, 0)
    core = struct.pack("<QIIiI", i, 64, 0, -1, 0)
    r = uverbs(fd, CMD_CREATE_CQ, core + drv, 24)
    handle, _cqe, _cqn, cap = struct.unpack("<IIQQ", r)
    if cap != 1:
        raise RuntimeError(f"cap_flags {cap}, want RECORD_DB")
    return handle


def refused():
    try:
        create_cq(2, 48)
    except OSError as ex:
        if ex.errno == errno.EINVAL:
            return
        raise
    raise RuntimeError("a 48 B CQE size was accepted")


handles = [step(f"raw-cq-{n}", lambda i=i, n=n: create_cq(i, n))
           for i, n in enumerate((32, 64))]
handles.append(step("raw-cq-no-size", lambda: create_cq(2, None)))
step("raw-cq-bad-size-einval", refused)
# An unmapped CQ buffer: ENOMEM (mtr_alloc_bufs); an unmapped record page:
# the core's EFAULT (hns_roce_db_map_user passes it on).
step("raw-cq-unmapped-buf-enomem",
     lambda: expect_errno(errno.ENOMEM, lambda: create_cq(2, 64, buf=0x1000)))
step("raw-cq-unmapped-db-efault",
     lambda: expect_errno(errno.EFAULT, lambda: create_cq(2, 64, db=0x1000)))
# CQ moderation (ibv_modify_cq; pyverbs has no call for it): the extended
# command IB_USER_VERBS_EX_CMD_MODIFY_CQ (57) with IB_CQ_MODERATE, which
# the driver turns into MODIFY_CQC (count and period, the rest masked).
EX_CMD_MODIFY_CQ, CMD_FLAG_EXTENDED, CQ_MODERATE = 57, 0x80000000, 1


def modify_cq(handle, count, period):
    """ib_uverbs_cmd_hdr, ib_uverbs_ex_cmd_hdr (no response), then
    ib_uverbs_ex_modify_cq {cq_handle, attr_mask, cq_count, cq_period,
    reserved}."""
    body = struct.pack("<IIHHI", handle, CQ_MODERATE, count, period, 0)
    hdr = struct.pack("<IHH", CMD_FLAG_EXTENDED | EX_CMD_MODIFY_CQ, len(body) // 8, 0)
    ex = struct.pack("<QHHI", 0, 0, 0, 0)
    os.write(fd, hdr + ex + body)


if handles[0] is not None:
    step("raw-modify-cq", lambda: modify_cq(handles[0], 16, 10))
    step("raw-modify-cq-max", lambda: modify_cq(handles[0], 0xffff, 0xffff))
for h in handles:
    if h is not None:
        step(f"raw-destroy-cq-{h}",
             lambda h=h: uverbs(fd, CMD_DESTROY_CQ, struct.pack("<II", h, 0), 8))
os.close(fd)

# The software counters after the workload (none if the file is missing).
print("HNS-SWSTAT-BEGIN")
for f in sorted(glob.glob("/sys/kernel/debug/hns_roce/*/sw_stat/sw_stat")):
    with open(f) as sw:
        sys.stdout.write(sw.read())
print("HNS-SWSTAT-END")
sys.exit(1 if fails else 0)
