#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# hns-sim data engine across two devices on the C reference driver (SIM=2,
# DRIVER=c): hns_0 and hns_1 are served by one hns-sim whose engine delivers
# between them by destination GID (RoCEv2 addressing). Server on one device,
# client on the other (their TCP exchange over 127.0.0.1), each with the
# link-local RoCE v2 GID of its own device (the DMAC comes from the GID, so
# static IPv6 neighbour entries stand in for neighbour discovery), perftest
# send/write/read/atomic bw, write/send/read lat and rping from hns_0 to
# hns_1. TEST lines are in the group "data2/...".
#
#   sh /opt/hns/data2-plan.sh
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-1}
HNS_TIMEOUT=${HNS_TIMEOUT:-120}

check data2/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
check data2/hns1-active port_state hns_1 PORT_ACTIVE || plan_exit

for d in hns_0 hns_1; do
    i=$(roce_v2_gid $d)
    if [ -z "$i" ]; then
        report data2/roce-v2-gid-$d FAIL "no RoCE v2 GID on $d after 10 s"
        plan_exit
    fi
    report data2/roce-v2-gid-$d PASS "index $i: $(cat /sys/class/infiniband/$d/ports/1/gids/$i) ($(cat /sys/class/infiniband/$d/ports/1/gid_attrs/ndevs/$i))"
    eval "GIDX_$d=$i"
done
G0=$GIDX_hns_0
G1=$GIDX_hns_1

# RoCE v2 resolves the destination MAC through the IP stack even for a
# link-local GID (ib_resolve_unicast_gid_dmac -> rdma_addr_find_l2_eth_by_grh):
# the route to the other device's address leaves through the own netdev,
# whose frames hns_sim drops, so neighbour discovery never answers. Static
# neighbour entries (the other netdev's MAC for its link-local address) stand
# in for it (/usr/bin/ip: the shell would run busybox's ip applet, which
# cannot add neighbours).
# neigh DEV GIDX NDEV OTHER_NDEV: DEV's GID (= its netdev's link-local
# address) -> its netdev's MAC, in OTHER_NDEV's neighbour table.
neigh() {
    /usr/bin/ip -6 neigh replace "$(cat /sys/class/infiniband/$1/ports/1/gids/$2)" \
        lladdr "$(cat /sys/class/net/$3/address)" dev "$4" nud permanent
}
N0=$(cat /sys/class/infiniband/hns_0/ports/1/gid_attrs/ndevs/$G0)
N1=$(cat /sys/class/infiniband/hns_1/ports/1/gid_attrs/ndevs/$G1)
static_neighbours() {
    neigh hns_1 "$G1" "$N1" "$N0" && neigh hns_0 "$G0" "$N0" "$N1" &&
        /usr/bin/ip -6 neigh show nud permanent
}
check data2/static-neighbours static_neighbours
echo "$out" | sed 's/^/    /'

# cross TOOL NAME PORT SDEV SGIDX CDEV CGIDX EXTRA: server on SDEV, client
# on CDEV; both print their summary lines.
cross() {
    tool=$1 tname=$2 port=$3 sdev=$4 sg=$5 cdev=$6 cg=$7
    shift 7
    pair "data2/$tname" \
        "$tool -d $sdev -g $sg -p $port -n 10 $*" \
        "$tool -d $cdev -g $cg -p $port -n 10 $* 127.0.0.1"
    echo "    server: $(grep -E 'bytes in|iters in|^success' /tmp/server.out | tr '\n' ' ')"
    echo "    client: $(printf '%s\n' "$cout" | grep -E 'bytes in|iters in|^success' | tr '\n' ' ')"
}
cross ibv_rc_pingpong rc-pingpong-1-0 18615 hns_1 "$G1" hns_0 "$G0"
cross ibv_rc_pingpong rc-pingpong-0-1-events 18616 hns_0 "$G0" hns_1 "$G1" -e
cross ibv_ud_pingpong ud-pingpong-1-0 18618 hns_1 "$G1" hns_0 "$G0" -s 512
cross ibv_srq_pingpong srq-pingpong-1-0 18619 hns_1 "$G1" hns_0 "$G0"
cross ibv_xsrq_pingpong xsrq-pingpong-1-0 18626 hns_1 "$G1" hns_0 "$G0"

# perftest across the devices (server on hns_1, client on hns_0): RDMA
# WRITE, READ (data comes back over the wire) and FETCH_AND_ADD (the
# original value comes back). Options as in data-plan.sh.
PERF_OPTS="-n 50 -F --no_ddp"
perf2() {
    tool=$1 tname=$2 port=$3
    shift 3
    perf_pair "data2/$tname" \
        "$tool -d hns_1 -x $G1 -p $port $PERF_OPTS $*" \
        "$tool -d hns_0 -x $G0 -p $port $PERF_OPTS $* 127.0.0.1"
}
perf2 ib_send_bw send-bw-0-1 18630
perf2 ib_write_bw write-bw-0-1 18631
perf2 ib_read_bw read-bw-0-1 18632
perf2 ib_atomic_bw atomic-bw-0-1 18633
# Latency across the wire: ib_write_lat polls its buffer for the peer's
# byte (libhns' ibv_wr_* post path, see rc_wr_api.py), send and read.
perf2 ib_write_lat write-lat-0-1 18634
perf2 ib_send_lat send-lat-0-1 18635
perf2 ib_read_lat read-lat-0-1 18636

# rdma_cm across the devices: IPv4 addresses on both netdevs, the rping
# client bound to hns_0's (-I), the server listening on hns_1's. The client's
# route leaves through hns_0's netdev (bound to it), so ARP would be needed:
# static entries again (ipv4_pair, lib.sh). The engine routes by GID: CM
# MADs from hns_0's GSI QP reach hns_1's and the RC traffic crosses the wire.
check data2/ipv4-static-neighbours ipv4_pair "$N0" "$N1"
pair data2/rping-0-1 "rping -s -a 192.168.77.2 -C 5 -v" \
    "rping -c -I 192.168.77.1 -a 192.168.77.2 -C 5 -v"
echo "    server: $(tail -n 1 /tmp/server.out)"
echo "    client: $(printf '%s\n' "$cout" | tail -n 1)"

check data2/final-unload sh -c "rmmod $DRV_MODULE && rmmod hns_sim"
plan_exit
