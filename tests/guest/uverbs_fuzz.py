#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The uverbs fuzzer: malformed create/modify/destroy requests
through the legacy write() interface of /dev/infiniband/uverbsN
(struct ib_uverbs_cmd_hdr + the command + the driver's udata,
include/uapi/rdma/ib_user_verbs.h and hns-abi.h), for every object the
driver supports: ucontext, PD, MR (reg, rereg, dereg), CQ, RC and UD QPs
(create, modify, destroy), SRQ (create, modify, destroy) and AH.

Each call starts from a valid request and applies 0-3 malformations:
udata cut short, made longer (zeros or garbage) or left out, garbage in
reserved fields, huge and zero counts, unaligned, unmapped, read-only and
kernel addresses for buffers, doorbells and responses, invalid and
wrong-type handles, out-of-range attributes, invalid QP state
transitions, bad access flags, bad command headers. The foreign-*
classes (foreign_reg_mr, foreign_rereg_mr, foreign_cq, foreign_qp_rc,
foreign_qp_ud, foreign_srq) send otherwise valid requests whose buffer,
doorbell or response addresses lie in memory a child process maps at a
fixed address and the fuzzer does not (TEST uverbs-fuzz/foreign-memory
checks both).

Beyond the legacy writes, what else user space reaches:
- ioctl_* classes: methods through RDMA_VERBS_IOCTL (struct
  ib_uverbs_ioctl_hdr + ib_uverbs_attr array, ib_user_ioctl_cmds.h):
  CQ_CREATE, QP_CREATE of every type (ioctl_create_qp_rc, _ud, _xrc_ini,
  _xrc_tgt, _other), REG_MR, REG_DMABUF_MR, QUERY_MR, ADVISE_MR,
  DM_MR_REG, DM_ALLOC, the COUNTERS methods, QP_ATTACH_COMP_CNTR,
  ASYNC_EVENT_ALLOC, the device queries, the destroy methods. Valid
  bundles, and bundles with unknown attribute ids (mandatory or not),
  mandatory attributes left out, attributes twice, wrong lengths, bad
  pointers for PTR_IN/PTR_OUT, unknown attribute flags, reserved fields,
  a wrong header (length, count, driver id, object, method), and the
  driver's udata (UVERBS_ATTR_UHW_IN/OUT) malformed as in the writes;
- XRC: open_xrcd (without and with a file, O_CREAT/O_EXCL, bad fds),
  close_xrcd (in use, closed, wrong), create_xsrq of every SRQ type,
  open_qp, create_qp_xrc_ini, create_qp_xrc_tgt, create_qp_other (UC,
  raw packet, unknown types), on objects in every state: the fixtures, a
  handle destroyed just before the request (prep-stale), wrong handles;
  query_qp and alloc_mw;
- mmap_* classes: mmap of the uverbs file at the context's doorbell page
  (offset 0), at a fresh QP's direct-WQE key (hns_roce_ib_create_qp_resp;
  make fuzz runs hns-sim with direct WQE on), after its destroy_qp, held
  across destroy_qp, on another context, at offsets nobody handed out, on
  a file without a context, with wrong lengths, MAP_PRIVATE, PROT_EXEC,
  mprotect of a read-only mapping (mmap_mprotect), the file closed under
  a mapping (mmap_close_fd). A mapping is unmapped at once; nothing is
  read or written through it. key-dwqe counts the keys handed out.

The requests depend only on the seed, never on an earlier answer (but
the handles and the direct-WQE key the driver returned), so the same
seed sends the same requests to both drivers. What a call creates is destroyed at once
(class cleanup-*; objects a call needs first: prep-*); the fixtures (PD,
CQ, MR, SRQ, RC and UD QP) at the
end.

  FUZZ_SEED=N FUZZ_CALLS=N FUZZ_TIME=S [FUZZ_GROUPS=G,...] python3 uverbs_fuzz.py [DEVICE]

FUZZ_GROUPS draws the calls from the named groups only: legacy (the
create/modify/destroy writes and the foreign-memory classes), ioctl, xrc,
mmap; the default is all four. "FUZZ group G calls N" counts the calls
drawn from each.

FUZZ_C_BUGS=1 also sends the create_cq requests that hang the C driver
(docs/c-driver-findings.md 8); FUZZ_TRACE=class,... prints every call of
those classes ("CALL <n> <class> <errno> <request hex>").

FUZZ_C_BUGS=1 also sends ioctl CQ_CREATE with an unwritable
UVERBS_ATTR_UHW_OUT (the same C hang).

Output: "FUZZ <class> calls N errno {errno: count, ...}" per class (0 =
success), "FUZZ total calls N classes M", and TEST lines (group
uverbs-fuzz): fixtures made, every cleanup and preparation worked, all
calls sent within the time limit (FUZZ_TIME, default 600 s; when it is
reached the run stops, says so, and cleans up).
"""
import ctypes
import glob
import os
import random
import struct
import sys
import time

DEV = sys.argv[1] if len(sys.argv) > 1 else "hns_0"
SEED = int(os.environ.get("FUZZ_SEED", "15"))
CALLS = int(os.environ.get("FUZZ_CALLS", "10000"))
TIME_LIMIT = float(os.environ.get("FUZZ_TIME", "600"))
C_BUGS = os.environ.get("FUZZ_C_BUGS") == "1"
# FUZZ_TRACE=class,class: one "CALL <n> <class> <errno> <request hex>"
# line per call of those classes, to find the calls behind a difference.
TRACE = set(filter(None, os.environ.get("FUZZ_TRACE", "").split(",")))
G = "uverbs-fuzz"
PAGE = 4096

# Write commands (enum ib_uverbs_write_cmds).
GET_CONTEXT, ALLOC_PD, DEALLOC_PD, CREATE_AH, DESTROY_AH = 0, 3, 4, 5, 8
REG_MR, REREG_MR, DEREG_MR = 9, 11, 13
CREATE_CQ, DESTROY_CQ = 18, 20
CREATE_QP, MODIFY_QP, DESTROY_QP = 24, 26, 27
CREATE_SRQ, MODIFY_SRQ, DESTROY_SRQ = 32, 33, 35

# QP states and attribute masks (enum ib_qp_state, ib_qp_attr_mask).
RESET, INIT, RTR, RTS, SQD, SQE, ERR = range(7)
M_STATE, M_CUR, M_SQD_NOTIFY, M_ACCESS, M_PKEY, M_PORT, M_QKEY, M_AV = (
    1, 2, 4, 8, 16, 32, 64, 128)
M_MTU, M_TIMEOUT, M_RETRY, M_RNR_RETRY, M_RQ_PSN, M_RD_ATOMIC = (
    256, 512, 1024, 2048, 4096, 8192)
M_ALT, M_MIN_RNR, M_SQ_PSN, M_DEST_RD_ATOMIC, M_MIG, M_CAP, M_DEST_QPN = (
    1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20)
RC, UD = 2, 4
ACC_LW, ACC_RW, ACC_RR, ACC_RA = 1, 2, 4, 8

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]


def anon(size, prot):
    """Anonymous private memory (PROT_READ 1, PROT_WRITE 2)."""
    a = libc.mmap(None, size, prot, 0x22, -1, 0)
    if a in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    return a


BUF_SIZE = 8 << 20
BUF = anon(BUF_SIZE, 3)
ctypes.memset(BUF, 0, BUF_SIZE)
DB = anon(PAGE, 3)
ctypes.memset(DB, 0, PAGE)
RO = anon(4 * PAGE, 1)
HOLE = anon(PAGE, 0)
RESP = ctypes.create_string_buffer(PAGE)
RESP_ADDR = ctypes.addressof(RESP)
UNMAPPED = 0x1000
KERNEL = 0xffff888000000000
NONCANON = 0x8000000000000000

# --- another process's memory ---
# A child, forked before the device is opened (it holds no uverbs file),
# maps FOREIGN_PAGES pages at FOREIGN (a fixed address, so the requests
# do not depend on where the kernel puts mappings), fills them and waits
# until the fuzzer ends; the fuzzer itself never maps that range. The
# foreign-* classes point buffers, doorbells and responses there.
FOREIGN = 0x3f0000000000
FOREIGN_PAGES = 256
libc.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def mapped_here(addr):
    """Whether the page at addr is mapped in this process (msync: ENOMEM
    for an unmapped range)."""
    return libc.msync(addr, PAGE, 1) == 0


def foreign_child():
    """(pid, pipe to close at the end, whether the child mapped FOREIGN)."""
    hold_r, hold_w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(hold_w)
        os.close(ready_r)
        # MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE
        a = libc.mmap(FOREIGN, FOREIGN_PAGES * PAGE, 3, 0x22 | 0x100000 | 0x8000, -1, 0)
        ok = a == FOREIGN
        if ok:
            ctypes.memset(FOREIGN, 0x5a, FOREIGN_PAGES * PAGE)
        os.write(ready_w, b"1" if ok else b"0")
        os.read(hold_r, 1)
        os._exit(0)
    os.close(hold_r)
    os.close(ready_w)
    ok = os.read(ready_r, 1) == b"1"
    os.close(ready_r)
    return pid, hold_w, ok


FOREIGN_PID, FOREIGN_HOLD, FOREIGN_OK = foreign_child()

# --- random choices (all drawn from one seeded generator) ---
rng = random.Random(SEED)


def chance(p):
    return rng.random() < p


def bad_count():
    return rng.choice([0, 1, 2, 3, 7, 63, 64, 65, 0x7fff, 0x8000, 0xffff,
                       0x10000, 0x400000, 0x7fffffff, 0x80000000, 0xffffffff,
                       rng.getrandbits(32), rng.randrange(0, 1 << 16)])


def bad_addr(good, read_only=True):
    """A wrong address for a buffer at `good`; `read_only=False` leaves
    out read-only memory, for buffers the engine writes (a CQ's): the C
    driver pins those read-only and takes them, Rust refuses them
    (docs/c-driver-findings.md 24; hip08-plan.sh tests it)."""
    ro = [RO, RO + 8] if read_only else []
    return rng.choice([0, good + 1, good + 4, good + 8, good + 64, UNMAPPED,
                       HOLE, KERNEL, NONCANON, (1 << 47) - PAGE,
                       BUF + BUF_SIZE - 8, rng.getrandbits(64)] + ro)


def bad_handle(good, *spare):
    """An invalid handle, or a fixture's (wrong type, or in use) but
    those named in `spare`, which the call could destroy or change."""
    others = [fixture[k] for k in FIXTURE_KEYS if k not in spare]
    return rng.choice([good + 1, good + 100, 0xffffffff, 0x7fffffff,
                       rng.getrandbits(32)] + others)


def garbage(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


# --- a request: fields of the command and of the driver's udata ---
class Req:
    """One write command: core fields (the response pointer first when
    the command has one), udata fields, response length, cut/extension
    of the udata and a broken header, all changed by the mutators."""

    def __init__(self, op, core_fmt, core, out_len=0, udata_fmt="<", udata=None,
                 has_resp=True):
        self.op, self.core_fmt, self.core = op, core_fmt, list(core)
        self.udata_fmt, self.udata = udata_fmt, list(udata or [])
        self.out_len, self.has_resp = out_len, has_resp
        self.cut, self.tail, self.bad_words = None, b"", None
        self.resp = RESP_ADDR

    def set(self, i, v, udata=False):
        fmt = self.udata_fmt if udata else self.core_fmt
        fields = self.udata if udata else self.core
        width = field_width(fmt, i)
        if isinstance(fields[i], bytes):
            fields[i] = v if isinstance(v, bytes) else garbage(len(fields[i]))
        else:
            fields[i] = v & ((1 << (8 * width)) - 1)

    def pack(self):
        core = list(self.core)
        if self.has_resp:
            core[0] = self.resp
        body = struct.pack(self.core_fmt, *core)
        ud = struct.pack(self.udata_fmt, *self.udata) if self.udata else b""
        if self.cut is not None:
            ud = ud[:self.cut]
        ud += self.tail
        words = (8 + len(body) + len(ud)) // 4
        if self.bad_words is not None:
            words = self.bad_words
        hdr = struct.pack("<IHH", self.op, words & 0xffff, (self.out_len // 4) & 0xffff)
        return hdr + body + ud


def field_width(fmt, i):
    """Byte width of field i of a struct format like '<QQII16s'."""
    codes = []
    num = ""
    for c in fmt[1:]:
        if c.isdigit():
            num += c
            continue
        if c == "s":
            codes.append(int(num))
        else:
            codes.extend([struct.calcsize("<" + c)] * int(num or 1))
        num = ""
    return codes[i]


def send(fd, req):
    """Returns 0 or the errno of the write."""
    try:
        os.write(fd, req.pack())
        return 0
    except OSError as ex:
        return ex.errno


def resp_u32(i, req=None):
    """Word i of the response (of `req`, which may have moved it)."""
    off = 0 if req is None else req.resp - RESP_ADDR
    return struct.unpack_from("<I", RESP.raw, off + 4 * i)[0]


# --- generic malformations of any request ---
def mutate_generic(req):
    k = rng.randrange(7)
    if k == 0 and req.udata:
        size = struct.calcsize(req.udata_fmt)
        req.cut = rng.choice([0, 4, 8, size - 8, size - 4, size // 2 // 4 * 4])
    elif k == 1:
        req.tail = bytes(rng.choice([4, 8, 16, 64, 256]))
    elif k == 2:
        req.tail = garbage(rng.choice([4, 8, 16, 64]))
    elif k == 3 and req.has_resp:
        req.out_len = rng.choice([0, 4, req.out_len - 4, req.out_len - 8,
                                  req.out_len + 64, 1024])
        req.out_len = max(req.out_len, 0)
    elif k == 4 and req.has_resp:
        req.resp = rng.choice([0, UNMAPPED, RO, HOLE, KERNEL, RESP_ADDR + 1])
    elif k == 5:
        req.bad_words = rng.choice([0, 1, 2, 3, rng.getrandbits(16)])
    else:
        req.cut = 0  # no udata at all


def fuzz(req, mutators, valid_p=0.1):
    """Applies 0 (with probability valid_p) to 3 malformations."""
    if chance(valid_p):
        return req
    for _ in range(rng.randrange(1, 4)):
        if chance(0.25):
            mutate_generic(req)
        else:
            rng.choice(mutators)(req)
    return req


def m_core(i, gen):
    return lambda req: req.set(i, gen())


def m_udata(i, gen):
    return lambda req: req.set(i, gen(), udata=True)


# --- request builders (valid templates) ---
def req_get_context(config=0):
    return Req(GET_CONTEXT, "<Q", [0], 40, "<II", [config, 0])


def req_alloc_pd():
    return Req(ALLOC_PD, "<Q", [0], 8)


def req_handle(op, h):
    return Req(op, "<I", [h], has_resp=False)


def req_destroy(op, h, out_len):
    return Req(op, "<QII", [0, h, 0], out_len)


def req_reg_mr(pd, off=0, length=PAGE, access=ACC_LW):
    return Req(REG_MR, "<QQQQII", [0, BUF + off, length, BUF + off, pd, access], 12)


def req_create_cq(cqe=64, off=0, dbi=0):
    return Req(CREATE_CQ, "<QQIIII", [0, 7, cqe, 0, 0xffffffff, 0], 24,
               "<QQII", [BUF + off, DB + 8 * dbi, 64, 0])


def req_create_qp(pd, cq, qp_type=RC, srq=None, off=0, dbi=0):
    is_srq = srq is not None
    core = [0, 9, pd, cq, cq, srq or 0, 16, 0 if is_srq else 16, 1, 1, 0, 0,
            qp_type, int(is_srq), 0]
    udata = [BUF + off, DB + 8 * dbi, 4, 6, 0, bytes(5), DB + 8 * dbi + 4, 0, 0, 0]
    return Req(CREATE_QP, "<QQIIIIIIIIIBBBB", core, 48,
               "<QQBBB5sQQQQ", udata)


def req_create_srq(pd, off=0, dbi=0):
    return Req(CREATE_SRQ, "<QQIIII", [0, 11, pd, 16, 1, 0], 24,
               "<QQQII", [BUF + off, DB + 8 * dbi, BUF + off + 64 * PAGE, 1, 0])


def req_create_ah(pd, sgid, dgid):
    core = [0, 5, pd, 0, dgid, 0, sgid, 64, 0, 0, 0, 0, 0, 0, 1, 1, 0]
    return Req(CREATE_AH, "<QQII16sIBBBBHBBBBBB", core, 12)


# modify_qp: dest, alt_dest ('<16sIHHBBBBBBBB' each), then the rest.
MQ_FMT = "<16sIHHBBBBBBBB16sIHHBBBBBBBBIIIIIIIHHBBBBBBBBBBBBBB2s"
DEST = {"dgid": 0, "flow": 1, "dlid": 2, "sgid": 4, "hop": 5, "tclass": 6,
        "sl": 7, "static_rate": 9, "is_global": 10, "port": 11}
MQ = {"handle": 24, "mask": 25, "qkey": 26, "rq_psn": 27, "sq_psn": 28,
      "dest_qpn": 29, "access": 30, "pkey": 31, "alt_pkey": 32, "state": 33,
      "cur_state": 34, "mtu": 35, "mig": 36, "sqd_notify": 37,
      "rd_atomic": 38, "dest_rd_atomic": 39, "min_rnr": 40, "port": 41,
      "timeout": 42, "retry": 43, "rnr_retry": 44, "alt_port": 45,
      "alt_timeout": 46, "reserved": 47}


def req_modify_qp(qp, qpn, qp_type, state, mask):
    f = [0] * 48
    f[0] = f[12] = DGID
    f[DEST["sgid"]] = SGID
    f[DEST["hop"]] = 64
    f[DEST["is_global"]] = 1
    f[DEST["port"]] = 1
    f[47] = bytes(2)
    vals = {"handle": qp, "mask": mask, "qkey": 0x11111111, "rq_psn": 0,
            "sq_psn": 0, "dest_qpn": qpn, "access": ACC_LW | ACC_RW | ACC_RR,
            "state": state, "mtu": 3, "dest_rd_atomic": 1, "rd_atomic": 1,
            "min_rnr": 12, "port": 1, "timeout": 14, "retry": 7, "rnr_retry": 7}
    for k, v in vals.items():
        f[MQ[k]] = v
    return Req(MODIFY_QP, MQ_FMT, f, has_resp=False)


def transition_mask(qp_type, cur, new):
    """The attribute mask of a valid transition (the common ones)."""
    if new in (RESET, ERR):
        return M_STATE
    if qp_type == RC:
        table = {(RESET, INIT): M_STATE | M_PKEY | M_PORT | M_ACCESS,
                 (INIT, INIT): M_STATE,
                 (INIT, RTR): M_STATE | M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN
                 | M_DEST_RD_ATOMIC | M_MIN_RNR,
                 (RTR, RTS): M_STATE | M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_SQ_PSN
                 | M_RD_ATOMIC,
                 (RTS, RTS): M_STATE}
    else:
        table = {(RESET, INIT): M_STATE | M_PKEY | M_PORT | M_QKEY,
                 (INIT, INIT): M_STATE, (INIT, RTR): M_STATE,
                 (RTR, RTS): M_STATE | M_SQ_PSN, (RTS, RTS): M_STATE}
    return table.get((cur, new), M_STATE)


# --- the device ---
def own_gid():
    """Index and bytes of the first non-zero RoCE v2 GID of port 1."""
    base = f"/sys/class/infiniband/{DEV}/ports/1"
    for t in sorted(glob.glob(base + "/gid_attrs/types/*"),
                    key=lambda p: int(p.rsplit("/", 1)[1])):
        i = int(t.rsplit("/", 1)[1])
        try:
            kind = open(t).read().strip()
            gid = open(f"{base}/gids/{i}").read().strip()
        except OSError:
            continue
        if kind == "RoCE v2" and gid.replace(":", "").strip("0"):
            return i, bytes.fromhex(gid.replace(":", ""))
    return 0, bytes.fromhex("fe800000000000000000000000000001")


def open_dev():
    node = os.path.basename(glob.glob(
        f"/sys/class/infiniband/{DEV}/device/infiniband_verbs/uverbs*")[0])
    return os.open(f"/dev/infiniband/{node}", os.O_RDWR)


SGID, DGID = own_gid()
counts = {}
CALL_NO = 0
FIXTURE_KEYS = ("pd", "cq", "mr", "srq", "rc", "ud")


def record(cls, err, req=None):
    if cls in TRACE:
        print(f"CALL {CALL_NO} {cls} {err} {req.pack().hex() if req else ''}")
    c = counts.setdefault(cls, {})
    c[err] = c.get(err, 0) + 1


def make(fd, cls, req, handle_word=0):
    """Sends a create; returns its handle (None on failure)."""
    err = send(fd, req)
    record(cls, err, req)
    return None if err else resp_u32(handle_word, req)


# --- fixtures ---
FD = open_dev()
fixture = {}


def fixtures():
    if make(FD, "fixture", req_get_context()) is None:
        return False
    fixture["pd"] = make(FD, "fixture", req_alloc_pd())
    fixture["cq"] = make(FD, "fixture", req_create_cq(64, 0, 0))
    fixture["mr"] = make(FD, "fixture", req_reg_mr(fixture["pd"], 0, 16 * PAGE))
    fixture["srq"] = make(FD, "fixture", req_create_srq(fixture["pd"], 4 * PAGE, 1))
    for name, qt, dbi in (("rc", RC, 2), ("ud", UD, 3)):
        h = make(FD, "fixture", req_create_qp(fixture["pd"], fixture["cq"], qt,
                                              off=(16 + 16 * dbi) * PAGE, dbi=dbi))
        fixture[name] = h
        fixture[name + "n"] = resp_u32(1) if h is not None else 0
    if None in fixture.values():
        return False
    return xrc_fixtures()


def destroy(cls, op, h):
    if op in (DEALLOC_PD, DEREG_MR, DESTROY_AH):
        err = send(FD, req_handle(op, h))
    else:
        err = send(FD, req_destroy(op, h, {DESTROY_CQ: 8}.get(op, 4)))
    record(cls, err)
    return err


def close_event_fd(n):
    """Closes the context's async event file (only if fd n is one)."""
    try:
        if "infiniband" in os.readlink(f"/proc/self/fd/{n}"):
            os.close(n)
    except OSError:
        pass


# --- call classes ---
def c_get_context():
    req = req_get_context(rng.choice([0, 1, 2, 3, 4, 7, 0xffffffff]))
    fuzz(req, [m_udata(0, lambda: rng.getrandbits(32)),
               m_udata(1, lambda: rng.getrandbits(32))])
    fd = open_dev()
    try:
        err = send(fd, req)
        record("get_context", err)
        if err == 0:
            close_event_fd(resp_u32(0, req))
            # The context must work: a PD on it, freed with the fd.
            h = make(fd, "cleanup-pd-on-context", req_alloc_pd())
            if h is not None:
                record("cleanup-pd", send(fd, req_handle(DEALLOC_PD, h)))
    finally:
        os.close(fd)


def c_alloc_pd():
    req = fuzz(req_alloc_pd(), [lambda r: None])
    h = make(FD, "alloc_pd", req)
    if h is not None:
        destroy("cleanup-pd", DEALLOC_PD, h)


ACCESS_BITS = [0, ACC_LW, ACC_RW, ACC_RR, ACC_RA, ACC_LW | ACC_RW | ACC_RR | ACC_RA,
               0x10, 0x20, 0x40, 0x100, 0x1000, 0x100000, 0x80000000]


def bad_access():
    return rng.choice(ACCESS_BITS) | rng.choice(ACCESS_BITS) | rng.choice([0, rng.getrandbits(32)])


def mr_mutators():
    return [m_core(1, lambda: bad_addr(BUF)), m_core(2, bad_count),
            m_core(2, lambda: rng.choice([0, 1, PAGE - 1, PAGE + 1, BUF_SIZE + PAGE,
                                          1 << 40, (1 << 64) - 1])),
            m_core(3, lambda: rng.getrandbits(64)), m_core(4, lambda: bad_handle(fixture["pd"])),
            m_core(5, bad_access)]


def c_reg_mr():
    req = fuzz(req_reg_mr(fixture["pd"], rng.randrange(0, 64) * PAGE,
                          rng.choice([PAGE, 2 * PAGE, 64 * PAGE]),
                          rng.choice([ACC_LW, ACC_LW | ACC_RW | ACC_RR])), mr_mutators())
    h = make(FD, "reg_mr", req)
    if h is not None:
        destroy("cleanup-mr", DEREG_MR, h)


def c_rereg_mr():
    flags = rng.choice([1, 2, 4, 7, 0, 8, 0xffffffff])
    victim = make(FD, "prep-mr", req_reg_mr(fixture["pd"], 0, PAGE))
    start = BUF + rng.randrange(0, 64) * PAGE
    req = Req(REREG_MR, "<QIIQQQII", [0, victim or 0, flags, start, PAGE, start,
                                      fixture["pd"], ACC_LW], 8)
    fuzz(req, [m_core(1, lambda: bad_handle(victim or 0, "mr")),
               m_core(2, lambda: rng.choice([0, 8, 16, rng.getrandbits(32)])),
               m_core(3, lambda: bad_addr(start)), m_core(4, bad_count),
               m_core(5, lambda: rng.getrandbits(64)),
               m_core(6, lambda: bad_handle(fixture["pd"])), m_core(7, bad_access)])
    record("rereg_mr", send(FD, req), req)
    if victim is not None:
        destroy("cleanup-mr", DEREG_MR, victim)


def c_destroy(cls, op, make_victim, fixture_key, out_len):
    """A victim (half of the time), then the destroy with its handle or a
    bad one (invalid, another object's, the fixture's: in use)."""
    victim = make_victim() if chance(0.5) else None
    good = victim if victim is not None else fixture[fixture_key] + 1000
    # The fixtures a destroy of this kind could take away (CQ and PD
    # fixtures are in use: EBUSY).
    spare = {"dereg_mr": ("mr",), "destroy_qp": ("rc", "ud"),
             "destroy_srq": ("srq",)}.get(cls, ())
    if op in (DEALLOC_PD, DEREG_MR, DESTROY_AH):
        req, hi = req_handle(op, good), 0
        muts = [m_core(0, lambda: bad_handle(good, *spare))]
    else:
        req, hi = req_destroy(op, good, out_len), 1
        muts = [m_core(1, lambda: bad_handle(good, *spare)),
                m_core(2, lambda: rng.getrandbits(32))]
    fuzz(req, muts, valid_p=0.4)
    err = send(FD, req)
    record(cls, err)
    if victim is not None and (err or req.core[hi] != victim):
        # A destroy that named the victim and failed may still have
        # destroyed it (the core destroys, then fails to write the
        # response): then ENOENT here is right (class recheck-*).
        named = req.core[hi] == victim
        destroy(("recheck-" if named else "cleanup-") + cls.split("_")[-1], op, victim)


def cq_mutators():
    return [m_core(1, lambda: rng.getrandbits(64)), m_core(2, bad_count),
            m_core(3, lambda: rng.choice([1, 2, 63, 64, 0xffffffff, rng.getrandbits(32)])),
            m_core(4, lambda: rng.choice([0, 1, 3, 100, 0x7fffffff])),
            m_core(5, lambda: rng.getrandbits(32)),
            m_udata(0, lambda: bad_addr(BUF, read_only=False)), m_udata(1, lambda: bad_addr(DB)),
            m_udata(2, lambda: rng.choice([0, 16, 32, 48, 63, 64, 65, 128, 0xffffffff])),
            m_udata(3, lambda: rng.getrandbits(32))]


def c_create_cq():
    req = fuzz(req_create_cq(rng.choice([1, 64, 1000, 4096]), rng.randrange(0, 64) * PAGE,
                             rng.randrange(8, 64)), cq_mutators())
    # The C driver's unwind when it cannot write its response (unwritable
    # response buffer, room for the driver's part) underflows the CQ's
    # refcount and waits forever on an uninitialised completion
    # (docs/c-driver-findings.md 8): sent only with FUZZ_C_BUGS=1.
    if req.resp not in (RESP_ADDR, RESP_ADDR + 1) and req.out_len > 8 and not C_BUGS:
        req.resp = RESP_ADDR
    h = make(FD, "create_cq", req)
    if h is not None:
        destroy("cleanup-cq", DESTROY_CQ, h)


def qp_mutators():
    cnt = bad_count
    return [m_core(2, lambda: bad_handle(fixture["pd"])),
            m_core(3, lambda: bad_handle(fixture["cq"])),
            m_core(4, lambda: bad_handle(fixture["cq"])),
            m_core(5, lambda: rng.choice([fixture["srq"], fixture["srq"] + 1, fixture["cq"]])),
            m_core(6, cnt), m_core(7, cnt), m_core(8, cnt), m_core(9, cnt),
            m_core(10, lambda: rng.choice([1, 32, 64, 65, 1024, 0xffff, 0x10000, 0xffffffff])),
            m_core(11, lambda: rng.getrandbits(8)),
            m_core(12, lambda: rng.choice([0, 1, 3, 5, 8, 9, 10, 0xff])),
            m_core(13, lambda: rng.choice([1, 2, 0xff])),
            m_core(14, lambda: rng.getrandbits(8)),
            m_udata(0, lambda: bad_addr(BUF)), m_udata(1, lambda: bad_addr(DB)),
            m_udata(2, lambda: rng.choice([0, 1, 3, 8, 15, 16, 31, 32, 255])),
            m_udata(3, lambda: rng.choice([0, 4, 5, 7, 8, 12, 255])),
            m_udata(4, lambda: rng.getrandbits(8)), m_udata(5, lambda: garbage(5)),
            m_udata(6, lambda: bad_addr(DB)), m_udata(7, lambda: rng.choice([1, 2, rng.getrandbits(64)])),
            m_udata(8, lambda: rng.choice([1, 2, 4, rng.getrandbits(64)])),
            m_udata(9, lambda: rng.choice([1, 2, 4, 8, 16, rng.getrandbits(64)]))]


def c_create_qp(qp_type):
    use_srq = chance(0.2)
    req = req_create_qp(fixture["pd"], fixture["cq"], qp_type,
                        fixture["srq"] if use_srq else None,
                        rng.randrange(0, 64) * PAGE, rng.randrange(8, 64))
    h = make(FD, "create_qp_" + ("rc" if qp_type == RC else "ud"), fuzz(req, qp_mutators()))
    if h is not None:
        destroy("cleanup-qp", DESTROY_QP, h)


def modify(cls, qp, qpn, qp_type, state, mask):
    record(cls, send(FD, req_modify_qp(qp, qpn, qp_type, state, mask)))


def prep_qp(name, target):
    """Brings fixture QP `name` to state `target` by valid transitions."""
    qp, qpn, qt = fixture[name], fixture[name + "n"], RC if name == "rc" else UD
    modify("prep-qp", qp, qpn, qt, RESET, M_STATE)
    path = {RESET: [], INIT: [INIT], RTR: [INIT, RTR], RTS: [INIT, RTR, RTS],
            ERR: [INIT, ERR]}[target]
    cur = RESET
    for s in path:
        modify("prep-qp", qp, qpn, qt, s, transition_mask(qt, cur, s))
        cur = s


def c_modify_qp():
    name = rng.choice(["rc", "ud"])
    qt = RC if name == "rc" else UD
    cur = rng.choice([RESET, INIT, RTR, RTS, ERR])
    new = rng.choice([RESET, INIT, RTR, RTS, SQD, SQE, ERR, 7, 200])
    good = cur + 1 if cur in (RESET, INIT, RTR) else cur
    if chance(0.5):
        new = good
    mask = transition_mask(qt, cur, new) if chance(0.7) else \
        transition_mask(qt, rng.choice([RESET, INIT, RTR]), rng.choice([INIT, RTR, RTS]))
    req = req_modify_qp(fixture[name], fixture[name + "n"], qt, new, mask)
    D2 = 12  # the alternate path's offset
    muts = [m_core(DEST["dgid"], lambda: rng.choice([bytes(16), garbage(16), b"\xff\x02" + bytes(13) + b"\x01"])),
            m_core(DEST["flow"], lambda: rng.choice([0xfffff, 0x100000, 0xffffffff])),
            m_core(DEST["sgid"], lambda: rng.getrandbits(8)),
            m_core(DEST["hop"], lambda: rng.getrandbits(8)),
            m_core(DEST["tclass"], lambda: rng.getrandbits(8)),
            m_core(DEST["sl"], lambda: rng.choice([7, 8, 15, 16, 255])),
            m_core(DEST["static_rate"], lambda: rng.getrandbits(8)),
            m_core(DEST["is_global"], lambda: rng.choice([0, 2, 255])),
            m_core(DEST["port"], lambda: rng.choice([0, 2, 255])),
            m_core(D2 + DEST["port"], lambda: rng.choice([0, 1, 2])),
            m_core(MQ["handle"], lambda: bad_handle(fixture[name])),
            m_core(MQ["mask"], lambda: mask | (1 << rng.randrange(32))),
            m_core(MQ["mask"], lambda: rng.getrandbits(32)),
            m_core(MQ["mask"], lambda: mask | M_CUR),
            m_core(MQ["mask"], lambda: mask | rng.choice([M_ALT, M_MIG, M_CAP, M_SQD_NOTIFY, 1 << 25])),
            m_core(MQ["rq_psn"], lambda: rng.getrandbits(32)),
            m_core(MQ["sq_psn"], lambda: rng.getrandbits(32)),
            m_core(MQ["dest_qpn"], lambda: rng.choice([0, 1, 0xffffff, 0x1000000, rng.getrandbits(32)])),
            m_core(MQ["access"], bad_access),
            m_core(MQ["pkey"], lambda: rng.choice([1, 2, 0xffff])),
            m_core(MQ["cur_state"], lambda: rng.randrange(0, 9)),
            m_core(MQ["mtu"], lambda: rng.choice([0, 1, 5, 6, 7, 255])),
            m_core(MQ["mig"], lambda: rng.randrange(0, 4)),
            m_core(MQ["rd_atomic"], lambda: rng.choice([0, 2, 16, 17, 128, 255])),
            m_core(MQ["dest_rd_atomic"], lambda: rng.choice([0, 2, 16, 17, 128, 255])),
            m_core(MQ["min_rnr"], lambda: rng.choice([0, 31, 32, 255])),
            m_core(MQ["port"], lambda: rng.choice([0, 2, 255])),
            m_core(MQ["timeout"], lambda: rng.choice([0, 31, 32, 255])),
            m_core(MQ["retry"], lambda: rng.choice([0, 8, 255])),
            m_core(MQ["rnr_retry"], lambda: rng.choice([0, 8, 255])),
            m_core(MQ["reserved"], lambda: garbage(2))]
    fuzz(req, muts, valid_p=0.2)
    prep_qp(name, cur)
    record("modify_qp_" + name, send(FD, req), req)


def srq_mutators():
    return [m_core(1, lambda: rng.getrandbits(64)),
            m_core(2, lambda: bad_handle(fixture["pd"])),
            m_core(3, bad_count), m_core(4, bad_count),
            m_core(5, lambda: rng.choice([1, 15, 16, 17, 0xffffffff])),
            m_udata(0, lambda: bad_addr(BUF)), m_udata(1, lambda: bad_addr(DB)),
            m_udata(2, lambda: bad_addr(BUF)),
            m_udata(3, lambda: rng.choice([0, 2, 0xffffffff, rng.getrandbits(32)])),
            m_udata(4, lambda: rng.getrandbits(32))]


def c_create_srq():
    req = fuzz(req_create_srq(fixture["pd"], rng.randrange(0, 64) * PAGE,
                              rng.randrange(8, 64)), srq_mutators())
    h = make(FD, "create_srq", req)
    if h is not None:
        destroy("cleanup-srq", DESTROY_SRQ, h)


def c_modify_srq():
    victim = make(FD, "prep-srq", req_create_srq(fixture["pd"], 0, 4)) if chance(0.5) else None
    target = victim if victim is not None else fixture["srq"]
    req = Req(MODIFY_SRQ, "<IIII", [target, rng.choice([1, 2, 3]), 16,
                                    rng.choice([0, 1, 8, 15])], has_resp=False)
    fuzz(req, [m_core(0, lambda: bad_handle(target)),
               m_core(1, lambda: rng.choice([0, 4, 7, rng.getrandbits(32)])),
               m_core(2, bad_count), m_core(3, bad_count)], valid_p=0.3)
    record("modify_srq", send(FD, req))
    if victim is not None:
        destroy("cleanup-srq", DESTROY_SRQ, victim)


def ah_mutators():
    return [m_core(1, lambda: rng.getrandbits(64)),
            m_core(2, lambda: bad_handle(fixture["pd"])),
            m_core(3, lambda: rng.getrandbits(32)),
            m_core(4, lambda: rng.choice([bytes(16), garbage(16), b"\xff\x02" + bytes(13) + b"\x01"])),
            m_core(5, lambda: rng.choice([0xfffff, 0x100000, 0xffffffff])),
            m_core(6, lambda: rng.getrandbits(8)),
            m_core(7, lambda: rng.choice([0, 1, 255])),
            m_core(8, lambda: rng.getrandbits(8)),
            m_core(10, lambda: rng.getrandbits(16)),
            m_core(11, lambda: rng.choice([7, 8, 15, 16, 255])),
            m_core(12, lambda: rng.getrandbits(8)),
            m_core(13, lambda: rng.getrandbits(8)),
            m_core(14, lambda: rng.choice([0, 2, 255])),
            m_core(15, lambda: rng.choice([0, 2, 255])),
            m_core(16, lambda: rng.getrandbits(8))]


def c_create_ah():
    h = make(FD, "create_ah", fuzz(req_create_ah(fixture["pd"], SGID, DGID), ah_mutators()))
    if h is not None:
        destroy("cleanup-ah", DESTROY_AH, h)


def foreign_addr():
    """A page of the child's mapping, sometimes not page aligned."""
    a = FOREIGN + rng.randrange(0, FOREIGN_PAGES - 64) * PAGE
    return a + rng.choice([0, 0, 0, 8, 64])


def c_foreign():
    """A valid create (or rereg) whose buffer, doorbell or response
    address (one or more of them, per the driver's udata) lies in the
    child's memory; the rest of the request stays valid, but sometimes
    one generic malformation is added. Class foreign_<kind>."""
    kind = rng.choice(["reg_mr", "rereg_mr", "cq", "qp_rc", "qp_ud", "srq"])
    victim = None
    off, dbi = rng.randrange(0, 64) * PAGE, rng.randrange(8, 64)
    if kind == "reg_mr":
        req = req_reg_mr(fixture["pd"], off, rng.choice([PAGE, 2 * PAGE, 16 * PAGE]))
        fields = [(1, False)]
    elif kind == "rereg_mr":
        victim = make(FD, "prep-mr", req_reg_mr(fixture["pd"], 0, PAGE))
        start = BUF + off
        # IB_MR_REREG_TRANS (1), with or without PD (2) and access (4).
        req = Req(REREG_MR, "<QIIQQQII", [0, victim or 0, rng.choice([1, 3, 5, 7]), start,
                                          PAGE, start, fixture["pd"], ACC_LW], 8)
        fields = [(3, False)]
    elif kind == "cq":
        req = req_create_cq(rng.choice([1, 64, 1000]), off, dbi)
        fields = [(0, True), (1, True)]
    elif kind == "srq":
        req = req_create_srq(fixture["pd"], off, dbi)
        fields = [(0, True), (1, True), (2, True)]
    else:
        qt = RC if kind == "qp_rc" else UD
        use_srq = qt == RC and chance(0.3)
        req = req_create_qp(fixture["pd"], fixture["cq"], qt,
                            fixture["srq"] if use_srq else None, off, dbi)
        fields = [(0, True), (1, True), (6, True)]
    picked = [f for f in fields if chance(0.5)] or [rng.choice(fields)]
    for i, ud in picked:
        req.set(i, foreign_addr(), udata=ud)
    # The response in the child's memory too (not for create_cq: C's
    # unwind of an unwritable CQ response hangs, c-driver-findings 8).
    if kind != "cq" and chance(0.2):
        req.resp = foreign_addr()
    if chance(0.2):
        mutate_generic(req)
        if kind == "cq" and req.resp not in (RESP_ADDR, RESP_ADDR + 1) and not C_BUGS:
            req.resp = RESP_ADDR
    cls = "foreign_" + kind
    if kind == "rereg_mr":
        record(cls, send(FD, req), req)
        if victim is not None:
            destroy("cleanup-mr", DEREG_MR, victim)
        return
    h = make(FD, cls, req)
    if h is not None:
        op = {"reg_mr": DEREG_MR, "cq": DESTROY_CQ, "srq": DESTROY_SRQ}.get(kind, DESTROY_QP)
        destroy("cleanup-" + kind.split("_")[0], op, h)


def new_mr():
    return make(FD, "prep-mr", req_reg_mr(fixture["pd"]))


# --- ioctl methods: RDMA_VERBS_IOCTL (rdma_user_ioctl_cmds.h) ---
# _IOWR(0x1b, 1, struct ib_uverbs_ioctl_hdr): the header is 24 bytes,
# each struct ib_uverbs_attr 16.
RDMA_VERBS_IOCTL = 0xC0181B01
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
libc.ioctl.restype = ctypes.c_int
F_MAND, F_VALID_OUT = 1, 2
UHW_IN, UHW_OUT = 0x1000, 0x1001
RDMA_DRIVER_HNS = 12  # enum rdma_driver_id (IRDMA shares I40IW's 9)
# enum uverbs_default_objects
(O_DEVICE, O_PD, O_COMP_CHANNEL, O_CQ, O_QP, O_SRQ, O_AH, O_MR, O_MW, O_FLOW,
 O_XRCD, O_RWQ_IND_TBL, O_WQ, O_FLOW_ACTION, O_DM, O_COUNTERS,
 O_ASYNC_EVENT) = range(17)
# enum ib_uverbs_qp_type (and enum ib_qp_type for the legacy writes)
UC, RAW_PACKET, XRC_INI, XRC_TGT, QPT_DRIVER = 3, 8, 9, 10, 0xff
# The request (header and attributes) and the payloads its attributes
# point to. The payload arena is 32 pages and payloads start in its first
# half, so a length of up to 0xffff from any payload stays in it.
IOC = anon(PAGE, 3)
ARENA_SIZE = 32 * PAGE
ARENA = anon(ARENA_SIZE, 3)


class A:
    """One struct ib_uverbs_attr: kind "idr" (val = handle), "fd" (val =
    fd), "in" (fields packed with fmt; up to 8 bytes inline, else a
    pointer into the arena) or "out" (size bytes of the arena). len,
    data and attr_data override what pack() would put there."""

    def __init__(self, aid, kind, val=0, fmt="<", fields=None, size=0, mand=True):
        self.aid, self.kind, self.val = aid, kind, val
        self.fmt, self.fields, self.size = fmt, list(fields or []), size
        self.flags = F_MAND if mand else 0
        self.len = self.data = None
        self.attr_data = 0
        self.cut, self.tail = None, b""
        self.idx = None

    def payload(self):
        b = struct.pack(self.fmt, *self.fields) if self.fields else b""
        if self.cut is not None:
            b = b[:self.cut]
        return b + self.tail


class IReq:
    """One RDMA_VERBS_IOCTL call: object, method, attributes, and the
    header fields the mutators may break."""

    def __init__(self, obj, meth, attrs):
        self.obj, self.meth, self.attrs = obj, meth, list(attrs)
        self.driver_id, self.res1, self.res2 = RDMA_DRIVER_HNS, 0, 0
        self.length = self.num = None
        self.packed = b""

    def attr(self, aid):
        for a in self.attrs:
            if a.aid == aid:
                return a
        return None

    def pack(self):
        """Writes header, attributes and payloads; returns the bytes of
        header and attributes (for FUZZ_TRACE)."""
        ctypes.memset(ARENA, 0, ARENA_SIZE // 2 + PAGE)
        off = 0
        body = b""
        for i, a in enumerate(self.attrs):
            a.idx = i
            length, data = 0, a.val
            if a.kind == "in":
                p = a.payload()
                length = len(p)
                if length <= 8:
                    data = int.from_bytes(p.ljust(8, b"\0"), "little")
                else:
                    ctypes.memmove(ARENA + off, p, min(length, ARENA_SIZE // 2 - off))
                    data = ARENA + off
                    off += (length + 63) // 64 * 64
            elif a.kind == "out":
                length, data = a.size, ARENA + off
                off += (a.size + 63) // 64 * 64
            off = min(off, ARENA_SIZE // 2 - PAGE)
            if a.len is not None:
                length = a.len
            if a.data is not None:
                data = a.data
            body += struct.pack("<HHHHQ", a.aid & 0xffff, length & 0xffff, a.flags & 0xffff,
                                a.attr_data & 0xffff, data & ((1 << 64) - 1))
        length = 24 + len(body) if self.length is None else self.length
        num = len(self.attrs) if self.num is None else self.num
        hdr = struct.pack("<HHHHQII", length & 0xffff, self.obj & 0xffff, self.meth & 0xffff,
                          num & 0xffff, self.res1, self.driver_id, self.res2)
        buf = (hdr + body)[:PAGE]
        ctypes.memset(IOC, 0, PAGE)
        ctypes.memmove(IOC, buf, len(buf))
        return buf

    def out_data(self, a):
        """The data word of attribute a as the kernel left it."""
        return struct.unpack_from("<Q", ctypes.string_at(IOC + 24 + 16 * a.idx + 8, 8))[0]


def send_ioctl(fd, req):
    """Returns 0 or the errno of the ioctl."""
    req.packed = req.pack()
    if libc.ioctl(fd, RDMA_VERBS_IOCTL, IOC) == 0:
        return 0
    return ctypes.get_errno()


def itrace(req):
    """Header and attributes in hex, then each "in" payload (id:hex)."""
    # What was sent: packing again would overwrite the handles the
    # kernel wrote back into the attributes.
    hexed = req.packed.hex()
    return hexed + " " + " ".join(f"{a.aid:#x}:{a.payload().hex()}"
                                  for a in req.attrs if a.kind == "in")


def in_arena(addr):
    return ARENA <= addr < ARENA + ARENA_SIZE // 2


UNKNOWN_ATTR_IDS = [13, 18, 19, 31, 0xfff, 0x1002, 0x1003, 0x1fff, 0x2000, 0xf000, 0xffff]


def imut_generic(req):
    """A malformation of the bundle itself (header, attribute table)."""
    a = rng.choice(req.attrs) if req.attrs else None
    k = rng.randrange(13)
    if k == 0 or a is None:
        b = A(rng.choice(UNKNOWN_ATTR_IDS + [rng.getrandbits(16) & 0xefff]), "in", fmt="<Q",
              fields=[rng.getrandbits(64)], mand=chance(0.5))
        req.attrs.insert(rng.randrange(len(req.attrs) + 1), b)
    elif k == 1:
        req.attrs.remove(a)  # often a mandatory one
    elif k == 2:
        b = A(a.aid, a.kind, a.val, a.fmt, a.fields, a.size)
        b.flags = a.flags
        req.attrs.append(b)
    elif k == 3:
        a.len = rng.choice([0, 1, 2, 3, 4, 5, 7, 9, 12, 16, 24, 0xffff, rng.getrandbits(16)])
    elif k == 4:
        a.data = rng.choice([0, UNMAPPED, RO, HOLE, KERNEL, NONCANON, (1 << 47) - 8,
                             rng.getrandbits(64)])
    elif k == 5:
        a.flags = rng.choice([0, F_VALID_OUT, F_MAND | F_VALID_OUT, 4, 0x8000, rng.getrandbits(16)])
    elif k == 6:
        a.attr_data = rng.choice([1, 0x100, rng.getrandbits(16)])
    elif k == 7:
        if chance(0.5):
            req.res1 = rng.choice([1, 1 << 63, rng.getrandbits(64)])
        else:
            req.res2 = rng.choice([1, rng.getrandbits(32)])
    elif k == 8:
        req.driver_id = rng.choice([0, 1, 8, 10, 0xffffffff])
    elif k == 9:
        n = 24 + 16 * len(req.attrs)
        req.length = rng.choice([0, 8, 23, 24, n - 16, n - 1, n + 1, n + 16, 0xffff])
    elif k == 10:
        req.num = rng.choice([0, len(req.attrs) - 1, len(req.attrs) + 1, 0xffff])
    elif k == 11:
        if chance(0.5):
            req.obj = rng.choice([O_DEVICE, O_PD, O_MW, O_FLOW, O_WQ, 17, 18, 19, 20, 0x1000,
                                  0xffff])
        else:
            req.meth = rng.choice([0, 1, 2, 3, 6, 7, 0x1000, 0xffff])
    else:
        req.attrs.reverse()


def imut_uhw(req):
    """The driver's udata (UVERBS_ATTR_UHW_IN/OUT) cut, longer, absent,
    misplaced, or the response too short, too long or misplaced."""
    ui, uo = req.attr(UHW_IN), req.attr(UHW_OUT)
    k = rng.randrange(8)
    if k == 0 and ui:
        size = struct.calcsize(ui.fmt)
        ui.cut = rng.choice([0, 4, 8, size - 8, size - 4, size // 2 // 4 * 4])
    elif k == 1 and ui:
        ui.tail = bytes(rng.choice([4, 8, 16, 64, 256]))
    elif k == 2 and ui:
        ui.tail = garbage(rng.choice([4, 8, 16, 64]))
    elif k == 3 and ui:
        req.attrs.remove(ui)
    elif k == 4 and ui:
        ui.data = rng.choice([UNMAPPED, HOLE, KERNEL, NONCANON, RO + PAGE - 8])
    elif k == 5 and uo:
        uo.size = rng.choice([0, 4, 8, uo.size - 8, uo.size + 8, 256, 4096])
        uo.size = max(uo.size, 0)
    elif k == 6 and uo:
        uo.data = rng.choice([0, UNMAPPED, RO, HOLE, KERNEL])
    elif uo:
        req.attrs.remove(uo)


def m_attr(aid, i, gen):
    """Sets field i of the first attribute aid (an "in" attribute), or the
    value of an idr/fd attribute."""
    def mut(req):
        a = req.attr(aid)
        if a is None:
            return
        v = gen()
        if a.kind == "in" and a.fields:
            width = field_width(a.fmt, i)
            if isinstance(a.fields[i], bytes):
                a.fields[i] = v if isinstance(v, bytes) else garbage(len(a.fields[i]))
            else:
                a.fields[i] = v & ((1 << (8 * width)) - 1)
        else:
            a.val = v
    return mut


def ifuzz(req, mutators, valid_p=0.1, uhw=False):
    """0 (with probability valid_p) to 3 malformations, a quarter of them
    of the bundle itself (or of the udata, for methods that take one)."""
    if chance(valid_p):
        return req
    for _ in range(rng.randrange(1, 4)):
        if chance(0.25):
            imut_generic(req)
        elif uhw and chance(0.2):
            imut_uhw(req)
        else:
            rng.choice(mutators)(req)
    return req


def icall(cls, req, handle_aid=0, fd=None):
    """Sends req; returns the new object's handle (attribute handle_aid's
    data word) or None."""
    err = send_ioctl(FD if fd is None else fd, req)
    if cls in TRACE:
        print(f"CALL {CALL_NO} {cls} {err} {itrace(req)}")
    record(cls, err)
    if err:
        return None
    a = req.attr(handle_aid)
    return None if a is None or a.idx is None else req.out_data(a) & 0xffffffff


def uhw_cq(off, dbi):
    return [A(UHW_IN, "in", fmt="<QQII", fields=[BUF + off, DB + 8 * dbi, 64, 0], mand=False),
            A(UHW_OUT, "out", size=16, mand=False)]


def ireq_create_cq(cqe=64, off=0, dbi=0):
    return IReq(O_CQ, 0, [A(0, "idr"), A(1, "in", fmt="<I", fields=[cqe]),
                          A(2, "in", fmt="<Q", fields=[7]), A(4, "in", fmt="<I", fields=[0]),
                          A(6, "out", size=4)] + uhw_cq(off, dbi))


def c_ioctl_create_cq():
    req = ireq_create_cq(rng.choice([1, 64, 1000, 4096]), rng.randrange(0, 64) * PAGE,
                         rng.randrange(8, 64))
    umem = [1, 0xffffffff, 0, 0, BUF + 512 * PAGE, 4 * PAGE]
    muts = [m_attr(1, 0, bad_count), m_attr(2, 0, lambda: rng.getrandbits(64)),
            m_attr(4, 0, lambda: rng.choice([1, 3, 100, 0x7fffffff, 0xffffffff])),
            lambda r: r.attrs.append(A(5, "in", fmt=rng.choice(["<I", "<Q"]),
                                       fields=[rng.choice([0, 1, 2, 3, 4, 1 << 31])],
                                       mand=chance(0.5))),
            lambda r: r.attrs.append(A(3, "fd", rng.choice([-1, 0, 1, 2, 1000, FD]))),
            lambda r: r.attrs.append(A(7, "fd", rng.choice([-1, 0, 1000, FD]))),
            lambda r: r.attrs.extend([A(8, "in", fmt="<Q", fields=[BUF + 512 * PAGE], mand=False),
                                      A(9, "in", fmt="<Q", fields=[rng.choice([0, PAGE, 4 * PAGE])],
                                        mand=False)]),
            lambda r: r.attrs.append(A(10, "fd", rng.choice([-1, 0, FD]))),
            lambda r: r.attrs.append(A(11, "in", fmt="<Q", fields=[rng.getrandbits(64)])),
            lambda r: r.attrs.append(A(12, "in", fmt="<IIIIQQ", fields=list(umem), mand=False)),
            m_attr(12, 0, lambda: rng.choice([0, 1, 2, 0xffffffff])),
            m_attr(12, 2, lambda: rng.choice([1, 0x80000000])),
            m_attr(12, 5, bad_count),
            m_attr(UHW_IN, 0, lambda: bad_addr(BUF, read_only=False)),
            m_attr(UHW_IN, 1, lambda: bad_addr(DB)),
            m_attr(UHW_IN, 2, lambda: rng.choice([0, 16, 32, 48, 63, 64, 65, 128, 0xffffffff])),
            m_attr(UHW_IN, 3, lambda: rng.getrandbits(32))]
    ifuzz(req, muts, uhw=True)
    # C hangs when it cannot write its udata response
    # (docs/c-driver-findings.md 8): an unwritable UHW_OUT is sent only
    # with FUZZ_C_BUGS=1.
    uo = req.attr(UHW_OUT)
    if uo is not None and uo.data is not None and not in_arena(uo.data) and not C_BUGS:
        uo.data = None
    h = icall("ioctl_create_cq", req)
    if h is not None:
        destroy("cleanup-cq", DESTROY_CQ, h)


def uhw_qp(off, dbi):
    ud = [BUF + off, DB + 8 * dbi, 4, 6, 0, bytes(5), DB + 8 * dbi + 4, 0, 0, 0]
    return [A(UHW_IN, "in", fmt="<QQBBB5sQQQQ", fields=ud, mand=False),
            A(UHW_OUT, "out", size=16, mand=False)]


QP_CLASS = {RC: "rc", UD: "ud", XRC_INI: "xrc_ini", XRC_TGT: "xrc_tgt"}


def ireq_create_qp(qt, off, dbi, use_srq=False):
    attrs = [A(0, "idr")]
    if qt == XRC_TGT:
        attrs.append(A(1, "idr", xfix["xrcd"]))
        cap = [64, 0, 1, 0, 0]
    else:
        attrs += [A(2, "idr", fixture["pd"]), A(4, "idr", fixture["cq"])]
        cap = [16, 16, 1, 1, 0]
        if qt != XRC_INI:
            attrs.append(A(5, "idr", fixture["cq"]))
        else:
            cap[1] = cap[3] = 0
        if use_srq and qt != XRC_INI:
            attrs.append(A(3, "idr", fixture["srq"]))
            cap[1] = cap[3] = 0
    attrs += [A(7, "in", fmt="<Q", fields=[9]), A(8, "in", fmt="<IIIII", fields=cap),
              A(9, "in", fmt="<Q", fields=[qt]), A(13, "out", size=20), A(14, "out", size=4)]
    return IReq(O_QP, 0, attrs + uhw_qp(off, dbi))


def c_ioctl_create_qp():
    qt = rng.choice([RC, UD, XRC_INI, XRC_TGT, RC, UD, XRC_INI, XRC_TGT, UC, RAW_PACKET,
                     QPT_DRIVER, 0, 1, 5, 11])
    req = ireq_create_qp(qt, rng.randrange(0, 64) * PAGE, rng.randrange(8, 64),
                         chance(0.2))
    cnt = bad_count
    muts = [m_attr(1, 0, lambda: rng.choice([xfix["xrcd"], fixture["pd"], stale("xrcd"),
                                             0xffffffff])),
            lambda r: r.attrs.append(A(1, "idr", rng.choice([xfix["xrcd"], stale("xrcd")]))),
            m_attr(2, 0, lambda: bad_handle(fixture["pd"])),
            m_attr(4, 0, lambda: rng.choice([bad_handle(fixture["cq"]), stale("cq")])),
            m_attr(5, 0, lambda: rng.choice([bad_handle(fixture["cq"]), stale("cq")])),
            lambda r: r.attrs.append(A(3, "idr", rng.choice([fixture["srq"], xfix["xsrq"],
                                                              stale("srq")]))),
            lambda r: r.attrs.append(A(6, "idr", rng.choice([0, 1, fixture["cq"]]))),
            m_attr(7, 0, lambda: rng.getrandbits(64)),
            m_attr(8, 0, cnt), m_attr(8, 1, cnt), m_attr(8, 2, cnt), m_attr(8, 3, cnt),
            m_attr(8, 4, lambda: rng.choice([1, 32, 64, 65, 1024, 0xffff, 0xffffffff])),
            m_attr(9, 0, lambda: rng.choice([0, 1, 3, 5, 8, 9, 10, 11, 0xff, 1 << 32])),
            lambda r: r.attrs.append(A(10, "in", fmt=rng.choice(["<I", "<Q"]),
                                       fields=[rng.choice([0, 2, 1 << 8, 1 << 9, 1 << 11, 1 << 12,
                                                           1 << 13, 1 << 31])],
                                       mand=chance(0.5))),
            lambda r: r.attrs.append(A(11, "in", fmt="<I", fields=[rng.choice([0, 1, 2, 0xffffff])])),
            lambda r: r.attrs.append(A(12, "fd", rng.choice([-1, 0, 1000, FD]))),
            lambda r: r.attrs.append(A(rng.choice([15, 16, 17]), "in", fmt="<IIIIQQ",
                                       fields=[1, 0xffffffff, 0, 0, BUF + 256 * PAGE, 4 * PAGE],
                                       mand=False)),
            m_attr(UHW_IN, 0, lambda: bad_addr(BUF)), m_attr(UHW_IN, 1, lambda: bad_addr(DB)),
            m_attr(UHW_IN, 2, lambda: rng.choice([0, 1, 3, 8, 15, 16, 31, 32, 255])),
            m_attr(UHW_IN, 3, lambda: rng.choice([0, 4, 5, 7, 8, 12, 255])),
            m_attr(UHW_IN, 4, lambda: rng.getrandbits(8)),
            m_attr(UHW_IN, 5, lambda: garbage(5)),
            m_attr(UHW_IN, 6, lambda: bad_addr(DB)),
            m_attr(UHW_IN, 7, lambda: rng.choice([1, 2, rng.getrandbits(64)])),
            m_attr(UHW_IN, 8, lambda: rng.choice([1, 2, 4, rng.getrandbits(64)])),
            m_attr(UHW_IN, 9, lambda: rng.choice([1, 2, 4, 8, 16, rng.getrandbits(64)]))]
    ifuzz(req, muts, uhw=True)
    h = icall("ioctl_create_qp_" + QP_CLASS.get(qt, "other"), req)
    if h is not None:
        destroy("cleanup-qp", DESTROY_QP, h)


def ireq_reg_mr(off, length, access):
    return IReq(O_MR, 5, [A(0, "idr"), A(1, "idr", fixture["pd"]),
                          A(3, "in", fmt="<Q", fields=[BUF + off]),
                          A(4, "in", fmt="<Q", fields=[BUF + off], mand=False),
                          A(5, "in", fmt="<Q", fields=[length]),
                          A(6, "in", fmt="<I", fields=[access]),
                          A(9, "out", size=4), A(10, "out", size=4)])


def mr_attr_mutators(base):
    return [m_attr(1, 0, lambda: bad_handle(fixture["pd"])),
            m_attr(base[0], 0, lambda: bad_addr(BUF)),
            m_attr(base[1], 0, lambda: rng.choice([0, 1, PAGE - 1, PAGE + 1, BUF_SIZE + PAGE,
                                                   1 << 40, (1 << 64) - 1])),
            m_attr(base[1], 0, bad_count),
            m_attr(base[2], 0, bad_access)]


def c_ioctl_reg_mr():
    """REG_MR, and REG_DMABUF_MR with fds that are no dma-buf."""
    off = rng.randrange(0, 64) * PAGE
    length = rng.choice([PAGE, 2 * PAGE, 64 * PAGE])
    access = rng.choice([ACC_LW, ACC_LW | ACC_RW | ACC_RR])
    if chance(0.75):
        cls = "ioctl_reg_mr"
        req = ireq_reg_mr(off, length, access)
        muts = mr_attr_mutators((3, 5, 6)) + [
            m_attr(4, 0, lambda: bad_addr(BUF)),
            lambda r: r.attrs.append(A(2, "idr", rng.choice([0, fixture["pd"], 0xffff]))),
            lambda r: r.attrs.append(A(7, "fd", rng.choice([-1, 0, 1000, FD]))),
            lambda r: r.attrs.append(A(8, "in", fmt="<Q", fields=[rng.choice([0, PAGE, 1 << 63])])),
            lambda r: r.attrs.extend(uhw_cq(0, 1))]
    else:
        cls = "ioctl_reg_dmabuf_mr"
        req = IReq(O_MR, 4, [A(0, "idr"), A(1, "idr", fixture["pd"]),
                             A(2, "in", fmt="<Q", fields=[0]),
                             A(3, "in", fmt="<Q", fields=[length]),
                             A(4, "in", fmt="<Q", fields=[BUF + off]),
                             A(5, "in", fmt="<I", fields=[rng.choice([0xffffffff, 0, 2, 1000, FD])]),
                             A(6, "in", fmt="<I", fields=[access]),
                             A(7, "out", size=4), A(8, "out", size=4)])
        muts = mr_attr_mutators((4, 3, 6)) + [m_attr(2, 0, lambda: rng.getrandbits(64))]
    ifuzz(req, muts)
    h = icall(cls, req)
    if h is not None:
        destroy("cleanup-mr", DEREG_MR, h)


def c_ioctl_mr_other():
    """QUERY_MR on the fixture MR (or a wrong handle), ADVISE_MR,
    DM_MR_REG (the driver has no device memory)."""
    k = rng.randrange(3)
    if k == 0:
        cls = "ioctl_query_mr"
        req = IReq(O_MR, 3, [A(0, "idr", fixture["mr"]), A(1, "out", size=4),
                             A(2, "out", size=4), A(3, "out", size=8)])
        if chance(0.5):
            req.attrs.append(A(4, "out", size=8, mand=False))
        muts = [m_attr(0, 0, lambda: bad_handle(fixture["mr"])),
                m_attr(0, 0, lambda: stale("mr"))]
    elif k == 1:
        cls = "ioctl_advise_mr"
        sges = rng.choice([1, 2, 4])
        req = IReq(O_MR, 2, [A(0, "idr", fixture["pd"]),
                             A(1, "in", fmt="<Q", fields=[rng.choice([0, 1, 2])]),
                             A(2, "in", fmt="<I", fields=[rng.choice([0, 1])]),
                             A(3, "in", fmt="<" + "QII" * sges,
                               fields=[BUF, PAGE, rng.getrandbits(32)] * sges)])
        muts = [m_attr(0, 0, lambda: bad_handle(fixture["pd"])),
                m_attr(1, 0, lambda: rng.choice([3, 4, 0xffffffff])),
                m_attr(2, 0, lambda: rng.choice([2, 0x80000000])),
                m_attr(3, 0, lambda: bad_addr(BUF))]
    else:
        cls = "ioctl_dm_mr_reg"
        req = IReq(O_MR, 0, [A(0, "idr"), A(1, "in", fmt="<Q", fields=[0]),
                             A(2, "in", fmt="<Q", fields=[PAGE]),
                             A(3, "idr", fixture["pd"]), A(4, "in", fmt="<I", fields=[ACC_LW]),
                             A(5, "idr", rng.choice([0, 1, fixture["mr"], 0xffff])),
                             A(6, "out", size=4), A(7, "out", size=4)])
        muts = [m_attr(1, 0, lambda: rng.getrandbits(64)), m_attr(2, 0, bad_count),
                m_attr(4, 0, bad_access)]
    ifuzz(req, muts, valid_p=0.3)
    h = icall(cls, req)
    if h is not None and cls == "ioctl_dm_mr_reg":
        destroy("cleanup-mr", DEREG_MR, h)


def c_ioctl_objects():
    """Methods of objects the driver does not have (device memory,
    counters, completion counters via QP attach, flows, memory windows)
    and the async event file, which the core serves."""
    k = rng.randrange(6)
    close_fd = False
    if k == 0:
        cls = "ioctl_dm_alloc"
        req = IReq(O_DM, 0, [A(0, "idr"), A(1, "in", fmt="<Q", fields=[rng.choice([PAGE, 64, 0])]),
                             A(2, "in", fmt="<I", fields=[rng.choice([0, 6, 12, 64])])])
        muts = [m_attr(1, 0, bad_count), m_attr(2, 0, bad_count)]
    elif k == 1:
        cls = "ioctl_counters"
        meth = rng.choice([0, 0, 1, 2])
        attrs = [A(0, "idr", 0 if meth == 0 else rng.choice([0, 1, 0xffff]))]
        if meth == 2:
            attrs += [A(1, "out", size=64), A(2, "in", fmt="<I", fields=[0], mand=False)]
        req = IReq(O_COUNTERS, meth, attrs)
        muts = [m_attr(0, 0, lambda: rng.getrandbits(32))]
    elif k == 2:
        cls = "ioctl_async_event_alloc"
        req = IReq(O_ASYNC_EVENT, 0, [A(0, "fd", 0)])
        muts = [m_attr(0, 0, lambda: rng.choice([-1, 1, 1000, FD]))]
        close_fd = True
    elif k == 3:
        cls = "ioctl_qp_attach_comp_cntr"
        req = IReq(O_QP, 2, [A(0, "idr", fixture["rc"]), A(1, "idr", rng.choice([0, 1, 0xffff])),
                             A(2, "in", fmt="<I", fields=[1])])
        muts = [m_attr(0, 0, lambda: bad_handle(fixture["rc"])),
                m_attr(2, 0, lambda: rng.getrandbits(32))]
    elif k == 4:
        # Destroy methods of the objects the driver has no ops for: no
        # such object exists here, so a refusal either way.
        cls = "ioctl_destroy_other"
        obj = rng.choice([O_MW, O_FLOW, O_WQ, O_RWQ_IND_TBL, O_FLOW_ACTION, O_DM])
        meth = {O_WQ: 1, O_FLOW_ACTION: 1, O_DM: 1}.get(obj, 0)
        req = IReq(obj, meth, [A(0, "idr", rng.choice([0, 1, 2, 3, 0xffff]))])
        muts = [m_attr(0, 0, lambda: rng.getrandbits(32))]
    else:
        cls = "ioctl_device_query"
        m = rng.choice([1, 2, 4, 5, 6, 7, 8])
        if m == 1:
            attrs = [A(0, "in", fmt="<Q", fields=[rng.choice([O_CQ, O_QP, O_MR, O_PD, 30])]),
                     A(1, "out", size=4, mand=False), A(2, "out", size=64, mand=False)]
        elif m == 2:
            attrs = [A(0, "in", fmt="<Q", fields=[rng.choice([1, 1, 0, 2, 255])]),
                     A(1, "out", size=rng.choice([40, 48, 64]))]
        elif m == 4:
            attrs = [A(0, "out", size=4, mand=False), A(1, "out", size=8, mand=False)]
        elif m == 5:
            attrs = [A(0, "in", fmt="<Q", fields=[rng.choice([32, 16, 64, 0])]),
                     A(1, "in", fmt="<I", fields=[0], mand=False),
                     A(2, "out", size=rng.choice([32 * 8, 32 * 300, 0, 16])),
                     A(3, "out", size=8)]
        elif m == 6:
            attrs = [A(0, "in", fmt="<Q", fields=[rng.choice([1, 1, 0, 2])]),
                     A(1, "in", fmt="<Q", fields=[rng.choice([0, 1, 3, 255, 256, 0xffffffff])]),
                     A(2, "in", fmt="<I", fields=[rng.choice([0, 0, 1])]),
                     A(3, "out", size=32)]
        else:
            attrs = [A(0, "in", fmt="<Q", fields=[rng.choice([1, 1, 0, 2])]),
                     A(1, "out", size=8)]
        req = IReq(O_DEVICE, m, attrs)
        muts = [m_attr(0, 0, lambda: rng.getrandbits(32))]
    ifuzz(req, muts, valid_p=0.3)
    err = send_ioctl(FD, req)
    if cls in TRACE:
        print(f"CALL {CALL_NO} {cls} {err} {itrace(req)}")
    record(cls, err)
    if err == 0:
        a = req.attr(0)
        if close_fd and a is not None and a.kind == "fd" and a.idx is not None:
            close_event_fd(req.out_data(a) & 0xffffffff)
        elif cls == "ioctl_dm_alloc" and a is not None and a.idx is not None:
            record("cleanup-dm", send_ioctl(FD, IReq(O_DM, 1, [A(0, "idr", req.out_data(a))])))
        elif cls == "ioctl_counters" and req.meth == 0 and a is not None and a.idx is not None:
            record("cleanup-counters",
                   send_ioctl(FD, IReq(O_COUNTERS, 1, [A(0, "idr", req.out_data(a))])))


def c_ioctl_destroy():
    """The destroy methods (CQ, QP, SRQ, PD, MR, AH, XRCD) on a fresh
    victim or a wrong handle (class ioctl_destroy_<kind>)."""
    kind = rng.choice(["cq", "qp", "srq", "pd", "mr", "ah", "xrcd"])
    mk = {"cq": lambda: make(FD, "prep-cq", req_create_cq(64, 0, 5)),
          "qp": lambda: make(FD, "prep-qp-create",
                             req_create_qp(fixture["pd"], fixture["cq"], RC, off=128 * PAGE, dbi=6)),
          "srq": lambda: make(FD, "prep-srq", req_create_srq(fixture["pd"], 0, 7)),
          "pd": lambda: make(FD, "prep-pd", req_alloc_pd()),
          "mr": new_mr,
          "ah": lambda: make(FD, "prep-ah", req_create_ah(fixture["pd"], SGID, DGID)),
          "xrcd": lambda: make(FD, "prep-xrcd", req_open_xrcd())}[kind]
    obj, meth, out = {"cq": (O_CQ, 1, 8), "qp": (O_QP, 1, 4), "srq": (O_SRQ, 1, 4),
                      "pd": (O_PD, 0, 0), "mr": (O_MR, 1, 0), "ah": (O_AH, 0, 0),
                      "xrcd": (O_XRCD, 0, 0)}[kind]
    victim = mk() if chance(0.6) else None
    good = victim if victim is not None else 0x7000
    spare = {"qp": ("rc", "ud"), "srq": ("srq",), "mr": ("mr",)}.get(kind, ())
    attrs = [A(0, "idr", good)]
    if out:
        attrs.append(A(1, "out", size=out))
    req = ifuzz(IReq(obj, meth, attrs), [m_attr(0, 0, lambda: bad_handle(good, *spare))],
                valid_p=0.4)
    # Fixtures a bundle broken to another object type could take away.
    if req.obj != obj or req.meth != meth:
        req.obj, req.meth = obj, meth
    err = send_ioctl(FD, req)
    record("ioctl_destroy_" + kind, err)
    a = req.attr(0)
    named = a is not None and a.val == victim and a.data is None
    if victim is not None and (err or not named):
        xdestroy(("recheck-" if named else "cleanup-") + kind, XDESTROY[kind], victim)


# --- XRC: domains, XRC SRQs, opening a target QP, QPs of every type ---
OPEN_XRCD, CLOSE_XRCD, CREATE_XSRQ, OPEN_QP = 37, 38, 39, 40
QUERY_QP, ALLOC_MW, DEALLOC_MW = 25, 14, 16
O_CREAT, O_EXCL = 0o100, 0o200
XRCD_FILE = "/tmp/uverbs-fuzz-xrcd"
XRCD_FD = os.open(XRCD_FILE, os.O_RDWR | os.O_CREAT, 0o600)
XDESTROY = {"cq": DESTROY_CQ, "qp": DESTROY_QP, "srq": DESTROY_SRQ, "pd": DEALLOC_PD,
            "mr": DEREG_MR, "ah": DESTROY_AH, "xrcd": CLOSE_XRCD, "mw": DEALLOC_MW}
xfix = {}


def req_open_xrcd(fd=0xffffffff, oflags=0):
    return Req(OPEN_XRCD, "<QII", [0, fd, oflags], 4)


def req_create_xsrq(srq_type, xrcd, cq, off=0, dbi=0):
    core = [0, 11, srq_type, fixture["pd"], 16, 1, 0, 0, xrcd, cq]
    return Req(CREATE_XSRQ, "<QQIIIIIIII", core, 24,
               "<QQQII", [BUF + off, DB + 8 * dbi, BUF + off + 64 * PAGE, 1, 0])


def req_create_qp_any(qt, off=0, dbi=0, use_srq=False):
    """A legacy CREATE_QP of any type: an XRC target names its domain
    in pd_handle and has no CQs or queues; an XRC initiator no RQ."""
    req = req_create_qp(fixture["pd"], fixture["cq"], RC, fixture["srq"] if use_srq else None,
                        off, dbi)
    req.core[12] = qt
    if qt == XRC_TGT:
        # The core creates a target without udata, and the driver sizes
        # a kernel SQ from max_send_wr (c-driver-findings 12): libhns
        # sends its minimum of 64.
        req.core[2:11] = [xfix["xrcd"], 0, 0, 0, 64, 0, 1, 0, 0]
        req.core[13] = 0
    elif qt == XRC_INI:
        req.core[4] = req.core[5] = 0
        req.core[7] = req.core[9] = 0
        req.core[13] = 0
    return req


def xrc_fixtures():
    """An XRC domain (no file), an XRC SRQ and an XRC target QP on it."""
    xfix["xrcd"] = make(FD, "fixture", req_open_xrcd())
    if xfix["xrcd"] is None:
        return False
    xfix["xsrq"] = make(FD, "fixture", req_create_xsrq(1, xfix["xrcd"] or 0, fixture["cq"],
                                                       200 * PAGE, 40))
    xfix["xtgt"] = make(FD, "fixture", req_create_qp_any(XRC_TGT, 300 * PAGE, 41))
    xfix["xtgtn"] = resp_u32(1) if xfix["xtgt"] is not None else 0
    if None in xfix.values():
        return False
    # One valid QP_CREATE of a target on the XRC SRQ each run (class
    # ioctl_create_qp_xrc_tgt_srq): C creates it; Rust refused it once.
    req = ireq_create_qp(XRC_TGT, 320 * PAGE, 45)
    req.attrs.append(A(3, "idr", xfix["xsrq"]))
    h = icall("ioctl_create_qp_xrc_tgt_srq", req)
    if h is not None:
        destroy("cleanup-qp", DESTROY_QP, h)
    return True


def stale(kind):
    """The handle of an object of `kind` created and destroyed just now
    (uverbs hands out the lowest free handle, so it is stale only until
    the next create: these are made while a request is built)."""
    req, op = {"xrcd": (req_open_xrcd(), CLOSE_XRCD),
               "cq": (req_create_cq(64, 400 * PAGE, 42), DESTROY_CQ),
               "srq": (req_create_srq(fixture["pd"], 420 * PAGE, 43), DESTROY_SRQ),
               "mr": (req_reg_mr(fixture["pd"]), DEREG_MR)}[kind]
    h = make(FD, "prep-stale", req)
    if h is None:
        return 0xfffffffe
    xdestroy("prep-stale", op, h)
    return h


def xdestroy(cls, op, h):
    if op == CLOSE_XRCD or op == DEALLOC_MW:
        err = send(FD, req_handle(op, h))
    else:
        return destroy(cls, op, h)
    record(cls, err)
    return err


def stale_or(h):
    return rng.choice([h, h, h + 1000, 0xffffffff]) if chance(0.6) else \
        stale(rng.choice(["xrcd", "cq", "srq"]))


def c_open_xrcd():
    """Without a file, on a file (created, found, O_EXCL), bad fds and
    flags; closed at once (class close_xrcd for the close)."""
    fd = rng.choice([0xffffffff, 0xffffffff, XRCD_FD, XRCD_FD, FD, 1000, 0x7fffffff])
    oflags = rng.choice([0, O_CREAT, O_CREAT, O_CREAT | O_EXCL, O_EXCL, 0xffffffff])
    req = fuzz(req_open_xrcd(fd, oflags),
               [m_core(1, lambda: rng.choice([0, 2, XRCD_FD, 0xfffffffe])),
                m_core(2, lambda: rng.getrandbits(32))])
    # A second domain on the file while the first is open: O_EXCL fails.
    holder = None
    if fd == XRCD_FD and chance(0.3):
        holder = make(FD, "prep-xrcd", req_open_xrcd(XRCD_FD, O_CREAT))
    h = make(FD, "open_xrcd", req)
    if h is not None:
        xdestroy("cleanup-xrcd", CLOSE_XRCD, h)
    if holder is not None:
        xdestroy("cleanup-xrcd", CLOSE_XRCD, holder)


def c_close_xrcd():
    """A fresh domain, or one in use by an XRC SRQ or target QP (EBUSY),
    a closed one, wrong handles."""
    k = rng.randrange(4)
    victim = make(FD, "prep-xrcd", req_open_xrcd()) if k < 3 else None
    user = None
    if k == 1 and victim is not None:
        user = make(FD, "prep-xsrq", req_create_xsrq(1, victim, fixture["cq"], 440 * PAGE, 44))
    req = fuzz(req_handle(CLOSE_XRCD, victim if victim is not None else stale("xrcd")),
               [m_core(0, lambda: stale_or(victim or 0)),
                m_core(0, lambda: rng.choice([xfix["xrcd"], fixture["pd"], fixture["cq"]]))],
               valid_p=0.5)
    err = send(FD, req)
    record("close_xrcd", err)
    if user is not None:
        destroy("cleanup-srq", DESTROY_SRQ, user)
    if victim is not None and (err or req.core[0] != victim):
        xdestroy("cleanup-xrcd", CLOSE_XRCD, victim)


def c_create_xsrq():
    """CREATE_XSRQ of each type (basic, XRC, tag matching, unknown) on the
    domain, a closed domain, a destroyed CQ..."""
    st = rng.choice([0, 1, 1, 2, 3, 0xffffffff])
    req = req_create_xsrq(st, xfix["xrcd"], fixture["cq"], rng.randrange(0, 64) * PAGE,
                          rng.randrange(8, 64))
    muts = [m_core(1, lambda: rng.getrandbits(64)),
            m_core(3, lambda: bad_handle(fixture["pd"])),
            m_core(4, bad_count), m_core(5, bad_count),
            m_core(6, lambda: rng.choice([1, 15, 16, 17, 0xffffffff])),
            m_core(7, bad_count),
            m_core(8, lambda: stale_or(xfix["xrcd"])),
            m_core(8, lambda: rng.choice([fixture["pd"], fixture["cq"]])),
            m_core(9, lambda: stale_or(fixture["cq"])),
            m_udata(0, lambda: bad_addr(BUF)), m_udata(1, lambda: bad_addr(DB)),
            m_udata(2, lambda: bad_addr(BUF)),
            m_udata(3, lambda: rng.choice([0, 2, 0xffffffff]))]
    h = make(FD, "create_xsrq", fuzz(req, muts))
    if h is not None:
        destroy("cleanup-srq", DESTROY_SRQ, h)


def c_open_qp():
    """OPEN_QP of the XRC target (its number on its domain), other
    numbers, types, domains."""
    req = Req(OPEN_QP, "<QQIIB7s", [0, 13, xfix["xrcd"], xfix["xtgtn"], XRC_TGT, bytes(7)], 32)
    muts = [m_core(2, lambda: stale_or(xfix["xrcd"])),
            m_core(2, lambda: rng.choice([fixture["pd"], fixture["cq"]])),
            m_core(3, lambda: rng.choice([0, 1, fixture["rcn"], fixture["udn"], xfix["xtgtn"] + 1,
                                          0xffffff, rng.getrandbits(32)])),
            m_core(4, lambda: rng.choice([RC, UD, XRC_INI, 0, 0xff])),
            m_core(5, lambda: garbage(7))]
    h = make(FD, "open_qp", fuzz(req, muts, valid_p=0.3))
    if h is not None:
        destroy("cleanup-qp", DESTROY_QP, h)


def c_create_qp_xrc():
    """Legacy CREATE_QP of the types the older classes do not send."""
    qt = rng.choice([XRC_INI, XRC_TGT, XRC_INI, XRC_TGT, UC, RAW_PACKET, 0, 1, 5, 11, 0xff])
    req = req_create_qp_any(qt, rng.randrange(0, 64) * PAGE, rng.randrange(8, 64),
                            qt not in (XRC_INI, XRC_TGT) and chance(0.2))
    muts = qp_mutators() + [m_core(2, lambda: stale_or(xfix["xrcd"])),
                            m_core(3, lambda: stale_or(fixture["cq"])),
                            m_core(5, lambda: rng.choice([xfix["xsrq"], stale("srq")]))]
    cls = {XRC_INI: "create_qp_xrc_ini", XRC_TGT: "create_qp_xrc_tgt"}.get(qt, "create_qp_other")
    h = make(FD, cls, fuzz(req, muts))
    if h is not None:
        destroy("cleanup-qp", DESTROY_QP, h)


def c_query_qp():
    """QUERY_QP of the fixture QPs (any mask), the XRC target, wrong
    handles; the response short or misplaced."""
    name = rng.choice(["rc", "ud", "xtgt"])
    h = xfix["xtgt"] if name == "xtgt" else fixture[name]
    req = Req(QUERY_QP, "<QII", [0, h, rng.choice([0, M_STATE, 0x1fffff, 0xffffffff])], 128)
    fuzz(req, [m_core(1, lambda: stale_or(h)), m_core(2, lambda: rng.getrandbits(32))],
         valid_p=0.3)
    record("query_qp", send(FD, req), req)


def c_alloc_mw():
    """ALLOC_MW of both types (the engine has no windows)."""
    req = Req(ALLOC_MW, "<QIB3s", [0, fixture["pd"], rng.choice([1, 2, 0, 3]), bytes(3)], 8)
    fuzz(req, [m_core(1, lambda: bad_handle(fixture["pd"])), m_core(3, lambda: garbage(3))])
    h = make(FD, "alloc_mw", req)
    if h is not None:
        xdestroy("cleanup-mw", DEALLOC_MW, h)


# --- mmap of the uverbs file ---
PROT_R, PROT_W, PROT_X = 1, 2, 4
MAP_SHARED, MAP_PRIVATE = 1, 2
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
DWQE_PAGES = 16  # HNS_ROCE_DWQE_SIZE (64 KiB) in pages


def try_mmap(cls, fd, length, prot, flags, pgoff, then=None):
    """One mmap; its errno is the class's entry. A mapping is unmapped at
    once (after `then(addr)`, which may change its protection). Nothing
    is read or written through it."""
    a = libc.mmap(None, length, prot, flags, fd, pgoff * PAGE)
    if a in (None, ctypes.c_void_p(-1).value):
        err = ctypes.get_errno()
    else:
        err = 0
        if then is not None:
            then(a, length)
        libc.munmap(a, length)
    if cls in TRACE:
        print(f"CALL {CALL_NO} {cls} {err} len={length:#x} prot={prot} flags={flags} pgoff={pgoff:#x}")
    record(cls, err)
    return err


def mprotect_to(prot):
    def then(a, length):
        r = libc.mprotect(a, length, prot)
        record("mmap_mprotect", 0 if r == 0 else ctypes.get_errno())
    return then


def bad_map_args(npages):
    """Length, protection and flags: right, or one of them wrong."""
    length, prot, flags = npages * PAGE, PROT_R | PROT_W, MAP_SHARED
    k = rng.randrange(8)
    if k == 1:
        length = rng.choice([PAGE // 2, (npages + 1) * PAGE, (npages - 1) * PAGE or 2 * PAGE,
                             npages * PAGE + 1, 1 << 30])
    elif k == 2:
        flags = MAP_PRIVATE
    elif k == 3:
        prot = rng.choice([PROT_R | PROT_W | PROT_X, PROT_X, PROT_R | PROT_X])
    elif k == 4:
        prot = rng.choice([PROT_R, PROT_W, 0])
    elif k == 5:
        flags = MAP_SHARED | rng.choice([0x8000, 0x10000, 0x20000, 0x40000])  # POPULATE...
    return length, prot, flags


def c_mmap_db():
    """The context's doorbell page (offset 0), with right and wrong
    length, protection and flags; a read-only one made writable or
    executable with mprotect (class mmap_mprotect)."""
    length, prot, flags = bad_map_args(1)
    then = None
    if chance(0.3):
        prot = PROT_R
        then = mprotect_to(rng.choice([PROT_R | PROT_W, PROT_R | PROT_X, PROT_W,
                                       PROT_R | PROT_W | PROT_X]))
    try_mmap("mmap_db", FD, length, prot, flags, rng.choice([0, 0, 0, 1]), then)


def c_mmap_badoff():
    """Offsets nobody handed out, out of range, on this context or on a
    file without one."""
    pgoff = rng.choice([2, 3, 15, 16, 1000, 0xffff, 0xfffff, 1 << 31, (1 << 32) - 1,
                        1 << 32, (1 << 40), (1 << 51) - 1, rng.getrandbits(36)])
    length, prot, flags = bad_map_args(rng.choice([1, DWQE_PAGES]))
    if chance(0.2):
        fd = open_dev()  # no context on this file
        try:
            try_mmap("mmap_no_context", fd, length, prot, flags, rng.choice([0, 1, pgoff]))
        finally:
            os.close(fd)
        return
    try_mmap("mmap_badoff", FD, length, prot, flags, pgoff)


def dwqe_key(req):
    """The direct-WQE mmap key (pages) of a created QP's response
    (struct hns_roce_ib_create_qp_resp after the core's 32 bytes)."""
    return struct.unpack_from("<Q", RESP.raw, 32 + 8)[0] // PAGE


def c_mmap_dwqe():
    """A fresh QP's direct-WQE page by its key (right and wrong
    length/protection/flags), while the QP lives, after destroy_qp, and
    a mapping kept across destroy_qp. The key the driver handed out is
    counted too (class key-dwqe, pages): both drivers must give the
    same."""
    qt = rng.choice([RC, UD, XRC_INI])
    req = req_create_qp_any(qt, 128 * PAGE, 6) if qt == XRC_INI else \
        req_create_qp(fixture["pd"], fixture["cq"], qt, off=128 * PAGE, dbi=6)
    h = make(FD, "prep-qp-create", req)
    if h is None:
        return
    key = dwqe_key(req)
    record("key-dwqe", key)
    k = rng.randrange(4)
    length, prot, flags = bad_map_args(DWQE_PAGES)
    if k == 0:
        try_mmap("mmap_dwqe", FD, length, prot, flags, key + rng.choice([0, 0, 0, 1, -1, 16]))
    elif k == 1:
        destroy("cleanup-qp", DESTROY_QP, h)
        try_mmap("mmap_dwqe_after_destroy", FD, length, prot, flags, key)
        return
    elif k == 2:
        # Mapped, then the QP destroyed under the mapping, then unmapped.
        a = libc.mmap(None, DWQE_PAGES * PAGE, PROT_R | PROT_W, MAP_SHARED, FD, key * PAGE)
        mapped = a not in (None, ctypes.c_void_p(-1).value)
        record("mmap_dwqe_held", 0 if mapped else ctypes.get_errno())
        err = destroy("mmap_dwqe_held_destroy", DESTROY_QP, h)
        if mapped:
            libc.munmap(a, DWQE_PAGES * PAGE)
        if err:
            destroy("cleanup-qp", DESTROY_QP, h)
        return
    else:
        # The key on another context's file (the key is per context).
        fd = open_dev()
        try:
            send(fd, req_get_context())
            close_event_fd(resp_u32(0))
            try_mmap("mmap_dwqe_other_context", fd, DWQE_PAGES * PAGE, PROT_R | PROT_W,
                     MAP_SHARED, key)
        finally:
            os.close(fd)
    destroy("cleanup-qp", DESTROY_QP, h)


def c_mmap_close():
    """A new context's doorbell page mapped, the file closed while mapped
    (the mapping keeps it), then unmapped; or mapped again after a
    close_xrcd... (class mmap_close_fd)."""
    fd = open_dev()
    err = send(fd, req_get_context())
    if err == 0:
        close_event_fd(resp_u32(0))
    length, prot, flags = bad_map_args(1)
    a = libc.mmap(None, length, prot, flags, fd, 0)
    mapped = a not in (None, ctypes.c_void_p(-1).value)
    record("mmap_close_fd", 0 if mapped else ctypes.get_errno())
    if mapped and chance(0.5):
        # An object on the context while the mapping holds the file.
        h = make(fd, "cleanup-pd-on-context", req_alloc_pd())
        if h is not None:
            record("cleanup-pd", send(fd, req_handle(DEALLOC_PD, h)))
    os.close(fd)
    if mapped:
        libc.munmap(a, length)


LEGACY = [
    c_get_context, c_alloc_pd,
    lambda: c_destroy("dealloc_pd", DEALLOC_PD,
                      lambda: make(FD, "prep-pd", req_alloc_pd()), "pd", 0),
    c_reg_mr, c_rereg_mr,
    lambda: c_destroy("dereg_mr", DEREG_MR, new_mr, "mr", 0),
    c_create_cq,
    lambda: c_destroy("destroy_cq", DESTROY_CQ,
                      lambda: make(FD, "prep-cq", req_create_cq(64, 0, 5)), "cq", 8),
    lambda: c_create_qp(RC), lambda: c_create_qp(UD), c_modify_qp,
    lambda: c_destroy("destroy_qp", DESTROY_QP,
                      lambda: make(FD, "prep-qp-create",
                                   req_create_qp(fixture["pd"], fixture["cq"], RC, off=128 * PAGE,
                                                 dbi=6)), "rc", 4),
    c_create_srq, c_modify_srq,
    lambda: c_destroy("destroy_srq", DESTROY_SRQ,
                      lambda: make(FD, "prep-srq", req_create_srq(fixture["pd"], 0, 7)), "srq", 4),
    c_create_ah,
    lambda: c_destroy("destroy_ah", DESTROY_AH,
                      lambda: make(FD, "prep-ah", req_create_ah(fixture["pd"], SGID, DGID)), "pd", 0),
]
# Another process's memory: twice, so it gets about as many calls as the
# two create_qp classes together.
if FOREIGN_OK:
    LEGACY += [c_foreign, c_foreign]
# The ioctl methods, XRC and the other writes, mmap: a group's entries
# decide its share of the calls (ioctl_create_qp twice: it covers every
# QP type; create_qp_xrc and mmap_dwqe twice for the same reason).
GROUPS = {
    "legacy": LEGACY,
    "ioctl": [c_ioctl_create_cq, c_ioctl_create_qp, c_ioctl_create_qp, c_ioctl_reg_mr,
              c_ioctl_mr_other, c_ioctl_objects, c_ioctl_destroy],
    "xrc": [c_open_xrcd, c_close_xrcd, c_create_xsrq, c_open_qp, c_create_qp_xrc,
            c_create_qp_xrc, c_query_qp, c_alloc_mw],
    "mmap": [c_mmap_db, c_mmap_badoff, c_mmap_dwqe, c_mmap_dwqe, c_mmap_close],
}
# FUZZ_GROUPS=ioctl,xrc,mmap draws from those groups only (a long run of
# the newer classes, as make check-kasan's); default: all of them.
GROUP_NAMES = [g for g in os.environ.get("FUZZ_GROUPS", "").split(",") if g] or list(GROUPS)
if any(g not in GROUPS for g in GROUP_NAMES):
    sys.exit(f"uverbs_fuzz.py: FUZZ_GROUPS={GROUP_NAMES}: groups are {','.join(GROUPS)}")
# Each entry with its group, so the draw can count calls per group.
CLASSES = [(g, c) for g in GROUP_NAMES for c in GROUPS[g]]
GROUP_CALLS = {g: 0 for g in GROUP_NAMES}


def teardown():
    for key, op in (("xtgt", DESTROY_QP), ("xsrq", DESTROY_SRQ), ("xrcd", CLOSE_XRCD)):
        if xfix.get(key) is not None:
            xdestroy("cleanup-fixture", op, xfix[key])
    os.close(XRCD_FD)
    os.unlink(XRCD_FILE)
    for key, op in (("rc", DESTROY_QP), ("ud", DESTROY_QP), ("srq", DESTROY_SRQ),
                    ("cq", DESTROY_CQ), ("mr", DEREG_MR), ("pd", DEALLOC_PD)):
        if fixture.get(key) is not None:
            destroy("cleanup-fixture", op, fixture[key])
    os.close(FD)
    os.close(FOREIGN_HOLD)
    os.waitpid(FOREIGN_PID, 0)


def fuzz_classes():
    return [k for k in counts
            if not k.startswith(("cleanup", "prep", "fixture", "recheck", "key-"))]


def main():
    print(f"FUZZ groups {','.join(GROUP_NAMES)}", flush=True)
    print(f"FUZZ seed {SEED} calls {CALLS} time-limit {TIME_LIMIT:g}s device {DEV}", flush=True)
    fails = 0
    if not fixtures():
        print(f"TEST {G}/fixtures FAIL {counts} {fixture}")
        os.system("dmesg | tail -n 15")
        teardown()
        return 1
    print(f"TEST {G}/fixtures PASS")
    # The foreign-* classes need the child's mapping, absent here.
    if FOREIGN_OK and not mapped_here(FOREIGN):
        print(f"TEST {G}/foreign-memory PASS child {FOREIGN_PID} maps {FOREIGN:#x}, this process does not")
    else:
        print(f"TEST {G}/foreign-memory FAIL child mapped it: {FOREIGN_OK}, "
              f"mapped here: {mapped_here(FOREIGN)}")
        fails += 1
    t0 = time.monotonic()
    done = 0
    global CALL_NO
    for done in range(1, CALLS + 1):
        CALL_NO = done
        group, entry = rng.choice(CLASSES)
        GROUP_CALLS[group] += 1
        entry()
        if time.monotonic() - t0 > TIME_LIMIT:
            print(f"FUZZ stopped: time limit {TIME_LIMIT:g}s reached after {done} of {CALLS} calls",
                  flush=True)
            break
    elapsed = time.monotonic() - t0
    teardown()
    for cls in sorted(counts):
        c = counts[cls]
        table = ", ".join(f"{k}: {c[k]}" for k in sorted(c))
        print(f"FUZZ {cls} calls {sum(c.values())} errno {{{table}}}")
    total = sum(sum(counts[k].values()) for k in fuzz_classes())
    print(f"FUZZ total calls {total} classes {len(fuzz_classes())} ({elapsed:.0f} s)")
    for g in GROUP_NAMES:
        print(f"FUZZ group {g} calls {GROUP_CALLS[g]}")
    if done < CALLS:
        print(f"TEST {G}/all-calls FAIL {done} of {CALLS} within {TIME_LIMIT:g}s")
        fails += 1
    else:
        print(f"TEST {G}/all-calls PASS {done} calls in {elapsed:.0f}s")
    bad = {k: v for k, v in counts.items()
           if k.startswith(("cleanup", "fixture", "prep")) and set(v) != {0}}
    if bad:
        print(f"TEST {G}/cleanup FAIL {bad}")
        fails += 1
    else:
        print(f"TEST {G}/cleanup PASS")
    if mapped_here(FOREIGN):
        print(f"TEST {G}/foreign-unmapped FAIL {FOREIGN:#x} got mapped in the fuzzer")
        fails += 1
    return 1 if fails else 0


# The process runs without address-space randomisation (personality
# ADDR_NO_RANDOMIZE, re-executed once), so an address a request computes
# from the process's own mappings is the same on every run and on both
# drivers: with randomisation, one create_cq of the foreign classes was
# seen to succeed in one C run and fail with EFAULT in the next.
ADDR_NO_RANDOMIZE = 0x0040000


def no_aslr():
    libc = ctypes.CDLL(None, use_errno=True)
    cur = libc.personality(0xFFFFFFFF)
    if cur == -1 or cur & ADDR_NO_RANDOMIZE:
        return
    if libc.personality(cur | ADDR_NO_RANDOMIZE) == -1:
        return
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)


if __name__ == "__main__":
    no_aslr()
    sys.exit(main())
