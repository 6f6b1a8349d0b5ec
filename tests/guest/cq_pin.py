#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A user CQ buffer is memory the engine writes (its CQEs), so the driver
must pin it writable: a buffer the process may only read is refused.

The process maps a file it opened read-only (MAP_SHARED, PROT_READ) and
asks for a CQ there through the uverbs write ABI (CREATE_CQ with
hns_roce_ib_create_cq {buf_addr, db_addr}, no CQE size: 32 B CQEs). A
writable pin fails, which the driver answers with ENOMEM (as every pin
failure of a queue buffer). The C driver of 7.3 pins queue buffers
read-only and takes the CQ: the engine would then write CQEs into the
page cache of a file the process cannot write
(docs/c-driver-findings.md 24). A private anonymous buffer nobody has
touched yet must still be taken (the writable pin faults its pages in).

Prints a "CQPIN <step> ok|failed" line per step; exit 0 when every step
passed, 3 when the only failure is the read-only buffer taken by the C
driver (the known fault: the plan reports a SKIP naming it), 1
otherwise.

  python3 /opt/hns/cq_pin.py DEVICE c|rs
"""
import ctypes
import errno
import glob
import mmap
import os
import struct
import sys

DEV, DRIVER = sys.argv[1], sys.argv[2]
PAGE = 4096
GET_CONTEXT, CREATE_CQ, DESTROY_CQ = 0, 18, 20
results = []


def write_cmd(fd, op, body, out_len):
    """One legacy uverbs write (response pointer first); the response."""
    resp = ctypes.create_string_buffer(max(out_len, 8))
    body = struct.pack("<Q", ctypes.addressof(resp)) + body
    os.write(fd, struct.pack("<IHH", op, (8 + len(body)) // 4, out_len // 4) + body)
    return resp.raw


def cq_on(fd, buf, db):
    """A 64-entry CQ on the user buffer `buf`; its handle (or OSError)."""
    core = struct.pack("<QIIiI", 1, 64, 0, -1, 0)
    return struct.unpack_from("<I", write_cmd(fd, CREATE_CQ, core + struct.pack("<QQ", buf, db), 24))[0]


def destroy(fd, handle):
    write_cmd(fd, DESTROY_CQ, struct.pack("<II", handle, 0), 8)


def address(m):
    return ctypes.addressof(ctypes.c_char.from_buffer(m))


def report(name, ok, detail=""):
    results.append((name, ok))
    print(f"CQPIN {name} {'ok' if ok else 'failed'}{' ' + detail if detail else ''}", flush=True)


node = os.path.basename(glob.glob(f"/sys/class/infiniband/{DEV}/device/infiniband_verbs/uverbs*")[0])
fd = os.open(f"/dev/infiniband/{node}", os.O_RDWR)
write_cmd(fd, GET_CONTEXT, struct.pack("<II", 0, 0), 40)
dbpage = mmap.mmap(-1, PAGE)
db = address(dbpage)

# A file of a known pattern, mapped shared and read-only.
path = "/tmp/cq_pin.dat"
pattern = bytes(range(256)) * (2 * PAGE // 256)
with open(path, "wb") as f:
    f.write(pattern)
rfd = os.open(path, os.O_RDONLY)
ro = mmap.mmap(rfd, 2 * PAGE, mmap.MAP_SHARED, mmap.PROT_READ)
# mmap objects of PROT_READ give no writable buffer to take the address
# of; /proc/self/maps names the file's mapping.
with open("/proc/self/maps") as maps:
    ro_addr = next(int(line.split("-")[0], 16) for line in maps if line.rstrip().endswith(path))
try:
    h = cq_on(fd, ro_addr, db + 8)
    destroy(fd, h)
    report("read-only-file-buffer-enomem", False, "CQ created on a read-only file mapping")
except OSError as ex:
    report("read-only-file-buffer-enomem", ex.errno == errno.ENOMEM, f"errno {ex.errno}")
with open(path, "rb") as f:
    report("read-only-file-unchanged", f.read() == pattern)

# Untouched private anonymous memory: pinned writable, it is taken.
fresh = mmap.mmap(-1, 2 * PAGE)
try:
    destroy(fd, cq_on(fd, address(fresh), db + 16))
    report("untouched-anon-buffer", True)
except OSError as ex:
    report("untouched-anon-buffer", False, f"errno {ex.errno}")
os.close(fd)
os.close(rfd)
os.unlink(path)

failed = [n for n, ok in results if not ok]
if not failed:
    sys.exit(0)
sys.exit(3 if DRIVER == "c" and failed == ["read-only-file-buffer-enomem"] else 1)
