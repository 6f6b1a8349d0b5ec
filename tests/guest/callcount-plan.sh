#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make call-count: the guest side of counting the instructions
# one kverbs call executes in either driver. For each driver (C, then Rust):
# load it, print the module symbols of the RoCE driver ("CC-SYM ADDR TYPE
# NAME") and the addresses of its ib_device ops post_send, post_recv and
# poll_cq ("CC-OPS"), print "CC-SYNC <driver>" and call sync(2): the host's
# gdb (scripts/call-count.py) stops at ksys_sync, reads these lines and
# sets its breakpoints on the ops. Then hns_kbench.ko runs its metrics with
# a few samples while gdb single-steps some of the calls, and the driver is
# unloaded. A last "CC-SYNC end" lets gdb detach.
#
#   sh /opt/hns/callcount-plan.sh [SAMPLES]        (default 12)
. /opt/hns/lib.sh
X=/opt/run/extra
N=${1:-12}

# cc_sync WHAT: the marker, time for the serial port to carry it out, then
# the stop the host waits for.
cc_sync() {
    echo "CC-SYNC $1"
    sleep 1
    sync
}

for DRV in c rs; do
    MOD=$(driver_module $DRV)
    if ! load_roce $DRV || ! wait_hns0 || ! port_state hns_0 PORT_ACTIVE >/dev/null; then
        echo "CC-ERROR $DRV: hns_0 not up: $(dmesg | tail -n 2 | tr '\n' ' ')"
        continue
    fi
    grep "\[$MOD\]" /proc/kallsyms | sed 's/^/CC-SYM /'
    case $DRV in
    c) ops="hns_roce_v2_post_send hns_roce_v2_post_recv hns_roce_v2_poll_cq" ;;
    # The Rust ops are the rdma layer's generic entry points, which the
    # RDMA core calls directly: found by a piece of their mangled names.
    rs) ops="5verbs9post_send 5verbs9post_recv 5verbs7poll_cq" ;;
    esac
    line="CC-OPS $DRV"
    for f in $ops; do
        a=$(awk -v f="$f" -v m="[$MOD]" \
            '$3 == f || ($4 == m && index($3, f)) { print $1; exit }' /proc/kallsyms)
        line="$line ${a:-0}"
    done
    echo "$line"
    cc_sync $DRV
    dmesg -c >/dev/null
    if insmod $X/hns_kbench.ko dev=hns_0 samples="$N"; then
        rmmod hns_kbench
    else
        echo "CC-ERROR $DRV: hns_kbench: $(dmesg | grep BENCHK | tail -n 1)"
    fi
    dmesg | sed -n 's/.*BENCHK /CC-BENCHK /p'
    rmmod $MOD || echo "CC-ERROR $DRV: rmmod $MOD failed"
done
cc_sync end
echo "CC-END"
