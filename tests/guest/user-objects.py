#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A deterministic workload of user objects through libhns, for comparing
the C driver's firmware traffic with hns_roce_rs's (equal hns-sim traces):
user MRs of 4 KiB, 2 MiB and 64 MiB, re-registration (access, PD, a new
translation of the same size), user CQs, then everything destroyed in a
fixed order. Each step prints a TEST line; the exit status is non-zero if
any failed.

libhns always asks for the CQE size its context was given (64 B on HIP09),
so the last part speaks the uverbs write ABI itself: its own context, CQs
with 32 B and 64 B CQEs, one without the cqe_size field (32 B), one with a
size the driver must refuse (EINVAL), record doorbells sharing a page.
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
mrs = [step(f"reg-mr-{n}", lambda s=s: MR(pd, s, acc))
       for n, s in (("4k", PAGE), ("2m", 2 << 20), ("64m", 64 << 20))]
mr4k, mr2m, _ = mrs
step("rereg-access", lambda: mr4k.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0,
                                        acc | e.IBV_ACCESS_REMOTE_ATOMIC))
step("rereg-pd", lambda: mr4k.rereg(e.IBV_REREG_MR_CHANGE_PD, pd2, 0, 0, 0))
buf = posix_memalign(2 << 20, PAGE)
step("rereg-translation", lambda: mr2m.rereg(e.IBV_REREG_MR_CHANGE_TRANSLATION, None,
                                             buf, 2 << 20, 0))
cqs = [step(f"create-cq-{n}", lambda n=n: CQ(ctx, n)) for n in (64, 1000)]
for i, c in enumerate(cqs):
    step(f"destroy-cq-{i}", c.close)
for i, m in enumerate(mrs):
    step(f"dereg-mr-{i}", m.close)
free(buf)
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
# hns_roce_ib_alloc_ucontext {config, reserved}; answer: core 8 + hns 32.
step("raw-context", lambda: uverbs(fd, CMD_GET_CONTEXT, struct.pack("<II", 0, 0), 40))
bufs = [mmap.mmap(-1, 2 * PAGE) for _ in range(3)]
dbpage = mmap.mmap(-1, PAGE)


def create_cq(i, cqe_size):
    """hns_roce_ib_create_cq {buf_addr, db_addr, cqe_size, reserved};
    cqe_size None: the request ends before it (an old libhns)."""
    drv = struct.pack("<QQ", addr(bufs[i]), addr(dbpage) + 8 * i)
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
for h in handles:
    if h is not None:
        step(f"raw-destroy-cq-{h}",
             lambda h=h: uverbs(fd, CMD_DESTROY_CQ, struct.pack("<II", h, 0), 8))
os.close(fd)
sys.exit(1 if fails else 0)
