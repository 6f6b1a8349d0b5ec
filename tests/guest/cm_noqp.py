# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""An RDMA CM connection without QPs, client and server in one process on
ADDR (default 192.168.77.1, on the device's netdev): the client connects
with a made-up QPN (ConnParam.qp_num, no rdma_cm QP), the server accepts
likewise, the client establishes, then disconnects. Every step is a CM MAD
(REQ, REP, RTU, DREQ, DREP) sent by the kernel's GSI QP (post_send UD with
GRH) and received on it (CEQ -> completion handler -> poll_cq -> receive
re-posted), so this runs the driver's kernel data path with no user QP.
Usage: cm_noqp.py [ADDR] [COUNT]"""
import sys

import pyverbs.cm_enums as ce
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID, ConnParam

addr = sys.argv[1] if len(sys.argv) > 1 else '192.168.77.1'
count = int(sys.argv[2]) if len(sys.argv) > 2 else 3
port = '7174'


def event(ch, want):
    ev = CMEvent(ch)
    got = ev.event_type
    ev.ack_cm_event()
    assert got == want, f'CM event {got}, want {want}'
    return ev


sch = CMEventChannel()
listen = CMID(creator=sch, port_space=ce.RDMA_PS_TCP)
listen.bind_addr(AddrInfo(src=addr, src_service=port, port_space=ce.RDMA_PS_TCP,
                          flags=ce.RAI_PASSIVE))
listen.listen()
for i in range(count):
    cch = CMEventChannel()
    cli = CMID(creator=cch, port_space=ce.RDMA_PS_TCP)
    cli.resolve_addr(AddrInfo(src=addr, dst=addr, dst_service=port,
                              port_space=ce.RDMA_PS_TCP))
    event(cch, ce.RDMA_CM_EVENT_ADDR_RESOLVED)
    cli.resolve_route()
    event(cch, ce.RDMA_CM_EVENT_ROUTE_RESOLVED)
    cli.connect(ConnParam(qp_num=0x100 + i))
    req = CMEvent(sch)
    assert req.event_type == ce.RDMA_CM_EVENT_CONNECT_REQUEST, \
        f'server event {req.event_type}'
    child = CMID(creator=req, listen_id=listen)
    req.ack_cm_event()
    child.accept(ConnParam(qp_num=0x200 + i))
    event(cch, ce.RDMA_CM_EVENT_CONNECT_RESPONSE)
    cli.establish()
    event(sch, ce.RDMA_CM_EVENT_ESTABLISHED)
    cli.disconnect()
    event(sch, ce.RDMA_CM_EVENT_DISCONNECTED)
    child.disconnect()
    event(cch, ce.RDMA_CM_EVENT_DISCONNECTED)
    child.close()
    cli.close()
    cch.close()
print(f'{count} connections (REQ, REP, RTU, DREQ, DREP) through QP 1 at {addr}')
