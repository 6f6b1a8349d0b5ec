#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A lean plan for hns-sim's HIP08 personality (run-guest.sh with
# HNS_SIM_ARGS="--personality hip08", --driver none, SIM=1): the driver
# given as argument is loaded, `ibv_devinfo -v` is printed between
# HNS-REG-BEGIN/END devinfo (make check compares C's with Rust's) and
# checked against the caps table (sim-devinfo.py),
# then ibv_rc_pingpong (plain, -e, -s 64) and ibv_srq_pingpong loopback
# on hns_0, the refusal of a user UD QP (libhns does not create UD QPs on
# HIP08, hw_ver 0x100), a user MR of hop 3 sent from (mr_hop3.py), rping
# and ucmatose (rdma_cm: MADs through the kernel GSI QP), a MAC change of
# the netdev, events for a QP number
# while a new QP takes it (qp_create_race.py), for a CQ and an SRQ while
# they are created and a QP destroyed while its flush work runs
# (obj_event_race.py), a CQ on a read-only buffer refused (cq_pin.py),
# ib_write_bw, a second MAC
# change, on Rust ten reloads, and the unload.
# The two MAC changes mark the trace (CFG_SMAC_TB): make check compares
# the two drivers' traces before the first and after the second, leaving
# out perftest's server and client, which create their objects in an
# order that varies from run to run.
# TEST lines in the group "hip08/...".
#
#   sh /opt/hns/hip08-plan.sh c|rs
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-3}
HNS_TIMEOUT=${HNS_TIMEOUT:-120}
d=${1:-rs}
MOD=$(driver_module "$d") || exit 2
check hip08/load load_roce "$d"
check hip08/hns0 wait_hns0 || plan_exit
check hip08/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
need_roce_v2_gid hip08
echo "HNS-REG-BEGIN devinfo"
ibv_devinfo -v -d hns_0 2>&1
echo "[ibv_devinfo exit $?]"
echo "HNS-REG-END devinfo"
# What the caps table implies (sim-devinfo.py derives it from the caps,
# independently of the driver).
python3 /opt/hns/sim-devinfo.py /opt/run/caps.txt hns_0 hip08/devinfo || HNS_FAILS=$((HNS_FAILS + 1))

pingpong() {
    tool=$1 tname=$2 port=$3
    shift 3
    pair "hip08/$tname" \
        "$tool -d hns_0 -g $GIDX -p $port -n 10 $*" \
        "$tool -d hns_0 -g $GIDX -p $port -n 10 $* 127.0.0.1"
}
pingpong ibv_rc_pingpong rc-pingpong 18515
pingpong ibv_rc_pingpong rc-pingpong-events 18516 -e
pingpong ibv_rc_pingpong rc-pingpong-small 18517 -s 64
pingpong ibv_srq_pingpong srq-pingpong 18518
# No user UD QP on HIP08: ibv_ud_pingpong stops at its QP.
out=$(timeout 60 ibv_ud_pingpong -d hns_0 -g "$GIDX" -p 18519 -s 512 -n 1 127.0.0.1 2>&1)
rc=$?
if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q "Couldn't create QP"; then
    report hip08/ud-qp-refused PASS
else
    report hip08/ud-qp-refused FAIL "exit $rc: $(printf '%s\n' "$out" | tail -n 2 | tr '\n' ' ')"
fi
# A user MR whose page list needs hop 3 (16 GiB and a page: one 16 MiB
# memfd mapped 1025 times), sent from at two of its pages: make
# check's hip08 boots also set the buffers' hop caps (CQE, SRQ WQE and
# index hop 3; SQ hop 3, extended SGE hop 0, RQ hop 1), which every QP,
# CQ and SRQ of the plan takes. Before rdma_cm: the flush its MRs'
# deregistrations start on HIP08's free-MR QPs is over before the MAC
# change marks the end of the compared trace.
check hip08/mr-hop3 python3 /opt/hns/mr_hop3.py "$GIDX"
# rdma_cm over an IPv4 address on eth0: the CM MADs go through the kernel's
# GSI QP with kernel AHs (HIP08: the AH's VLAN in the UD WQE).
/usr/bin/ip addr add 192.168.77.1/24 dev eth0 && /usr/bin/ip link set eth0 up
pair hip08/rping "rping -s -a 192.168.77.1 -C 5 -v" "rping -c -a 192.168.77.1 -C 5 -v"
pair hip08/ucmatose "ucmatose -b 192.168.77.1" "ucmatose -s 192.168.77.1"
# A new MAC on the netdev: both drivers write it to the SMAC table (the
# netdevice notifier: NETDEV_CHANGEADDR, then NETDEV_UP with the same
# address, which writes nothing); make check compares the
# CFG_SMAC_TB commands of the two traces.
mac_now() {
    /usr/bin/ip link set dev eth0 down &&
        /usr/bin/ip link set dev eth0 address "$1" &&
        /usr/bin/ip link set dev eth0 up &&
        sleep 1 && grep -qx "$1" /sys/class/net/eth0/address
}
# The free-MR QPs' moves to ERR that the last deregistrations queued run
# from a work queue; let them end before the MAC change closes the
# compared workload window, or one run has them inside it and another
# not.
sleep 2
check hip08/mac-change mac_now 02:19:e5:00:03:42
# Events for a QP number while a new QP takes it (qp_create_race.py):
# hns-sim holds HIP08's SCC clear busy inside create_qp, and a second
# process injects flush events for the number meanwhile. Between the MAC
# changes: its objects stay out of the compared trace windows.
check hip08/qp-create-event-race python3 /opt/hns/qp_create_race.py 3
# The same for a CQ and an SRQ, and a QP destroyed while its flush work
# waits for its MODIFY_QPC (obj_event_race.py: hns-sim holds the mailbox's
# completion event until released). Its lines are printed; exit 3 is C's
# known CQ refcount WARN, a SKIP naming the finding.
# known_c NAME WHY CMD...: CMD's last lines printed; exit 0 PASS, 3 a C
# fault the script recognised (SKIP WHY), anything else FAIL.
known_c() {
    name=$1 why=$2
    shift 2
    out=$(timeout "$HNS_TIMEOUT" "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out" | tail -n 12 | sed 's/^/    /'
    case $rc in
    0) report "$name" PASS ;;
    3) report "$name" SKIP "$why" ;;
    *) report "$name" FAIL "exit $rc" ;;
    esac
}
race() {
    name=$1
    shift
    known_c "$name" "C's CQ refcount WARN (docs/c-driver-findings.md 21)" \
        python3 /opt/hns/obj_event_race.py "$@"
}
race hip08/cq-create-event-race cq 2 "$d"
race hip08/srq-create-event-race srq 2 "$d"
race hip08/qp-destroy-during-flush-work qp-destroy-flush 2 "$d"
# A user CQ buffer (the engine writes its CQEs) is pinned writable: a
# read-only file mapping is refused with ENOMEM (cq_pin.py); C pins it
# read-only and takes it. Between the MAC changes: the CQs C makes stay
# out of the compared trace windows.
known_c hip08/cq-buffer-pinned-writable \
    "C pins CQ buffers read-only (docs/c-driver-findings.md 24)" \
    python3 /opt/hns/cq_pin.py hns_0 "$d"
# -F as in every other correctness pair: without it perftest exits 1
# ("Can't produce a report") whenever its cycle-counter calibration fails,
# which a loaded TCG host makes happen now and then (docs/harness.md).
pair hip08/write-bw "ib_write_bw -d hns_0 -x $GIDX -p 18600 -n 200 -F --no_ddp" \
    "ib_write_bw -d hns_0 -x $GIDX -p 18600 -n 200 -F --no_ddp 127.0.0.1"
check hip08/mac-change-2 mac_now 02:19:e5:00:03:43
# Ten reloads of the Rust driver on HIP08 (as reg-rs does on HIP09).
[ "$d" = rs ] && check hip08/reload-x10 reload_cycles rs 10
check hip08/unload rmmod "$MOD"
plan_exit
