# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""MADs through the kernel's GSI QP without user QPs: a user MAD agent
(/dev/infiniband/umadN of DEV port 1, vendor class 0x09) sends a GET to
its own GID (QP 1, GRH), receives it, answers with a GetResp of the same
TID, and receives that as the response to its GET. Each MAD is one kernel
post_send (UD with GRH) on the GSI QP and one receive completion polled
from the GSI QP's CQ (woken by the CEQ), then a receive re-posted.
Usage: umad_ping.py GID_INDEX [DEV] [COUNT]"""
import fcntl
import os
import struct
import sys

gidx = int(sys.argv[1])
dev = sys.argv[2] if len(sys.argv) > 2 else 'hns_0'
count = int(sys.argv[3]) if len(sys.argv) > 3 else 3

# struct ib_user_mad_hdr (ABI 5 with P_Key index): host-order words, then
# struct ib_mad_addr (network order), then pkey_index and padding.
HDR = 64
MAD = 256
ENABLE_PKEY = 0x1b << 8 | 3                   # _IO(0x1b, 3)
REGISTER = 0xc0000000 | 28 << 16 | 0x1b << 8 | 1  # _IOWR(0x1b, 1, 28 B)
CLASS, VERSION, GET, GET_RESP = 0x09, 1, 0x01, 0x81


def umad_dev():
    for n in sorted(os.listdir('/sys/class/infiniband_mad')):
        if not n.startswith('umad'):
            continue
        p = f'/sys/class/infiniband_mad/{n}'
        with open(f'{p}/ibdev') as f, open(f'{p}/port') as g:
            if f.read().strip() == dev and g.read().strip() == '1':
                return f'/dev/infiniband/{n}'
    raise SystemExit(f'no umad device for {dev} port 1')


def gid():
    with open(f'/sys/class/infiniband/{dev}/ports/1/gids/{gidx}') as f:
        return bytes.fromhex(f.read().strip().replace(':', ''))


fd = os.open(umad_dev(), os.O_RDWR)
fcntl.ioctl(fd, ENABLE_PKEY)
req = bytearray(struct.pack('=I4IBBB3sB', 0, 1 << GET, 0, 0, 0, 1, CLASS,
                            VERSION, b'\0\0\0', 0).ljust(28, b'\0'))
fcntl.ioctl(fd, REGISTER, req)
agent = struct.unpack_from('=I', req)[0]
me = gid()


def send(method, tid, timeout_ms):
    hdr = (struct.pack('=IIIII', agent, 0, timeout_ms, 0, MAD) +
           struct.pack('>IIHBBBBBB16sI', 1, 0x80010000, 0, 0, 0, 1, gidx, 64,
                       0, me, 0) +
           struct.pack('=H6s', 0, b''))
    assert len(hdr) == HDR
    mad = struct.pack('>BBBBHHQHHI', 1, CLASS, VERSION, method, 0, 0, tid,
                      0x10, 0, 0).ljust(MAD, b'\xa5')
    os.write(fd, hdr + mad)


def recv():
    """(status, class, method, TID, GRH present) of the next MAD."""
    b = os.read(fd, HDR + MAD)
    status = struct.unpack_from('=I', b, 4)[0]
    grh = b[32]
    _, cls, _, method, _, _, tid = struct.unpack_from('>BBBBHHQ', b, HDR)
    return status, cls, method, tid, grh


for i in range(count):
    send(GET, 0x1000 + i, 2000)
    st, cls, method, tid, grh = recv()
    assert st == 0 and cls == CLASS and method == GET, f'request: {st} {cls:#x} {method:#x}'
    assert grh == 1, 'request without GRH'
    send(GET_RESP, tid, 0)
    st, cls, method, rtid, _ = recv()
    assert st == 0 and method == GET_RESP and rtid == tid, \
        f'response: status {st} method {method:#x} tid {rtid:#x} want {tid:#x}'
print(f'{count} GET/GetResp pairs through QP 1 of {dev}')
