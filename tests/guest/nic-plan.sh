#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The upstream NIC side (run-guest.sh HNS_NIC=hclge, SIM=1): hclge and hns3
# on hns-sim, with a RoCE driver as hclge's RoCE client.
#
#   sh /opt/hns/nic-plan.sh [c|rs|none] [data]
#
# The driver defaults to DRIVER of the run (/opt/run/env); init already
# loaded hns_sim (nic_hclge=1), the NIC modules and the RoCE driver. TEST
# lines in the group "nic-<driver>/":
#   hclge-probe       hclge logged the end of its probe
#   netdev            hns3 registered a net_device on the function
#   roce-base-vector  (c, rs) the RoCE driver's abnormal-event interrupt
#                     is MSI-X vector roce_base_vector of hns-sim's caps,
#                     the NIC vector count hclge was told (QUERY_PF_RSRC)
#   then reg-plan.sh's "trace" mode (probe, `ibv_devinfo -v`, remove; its
#   lines in the group "regtrace-<driver>/", which check.sh renames), with
#   the interface down: an up interface that sends trips the TX watchdog
#   after about 5 s (no TQP ring completes TX) and hns3's reset would take
#   the RoCE client down and up in the middle of the trace;
#   link-up           after the RoCE driver is gone, `ip link set up`
#                     gives carrier within 3 s (QUERY_LINK_STATUS), and
#                     the interface is set down again at once.
# With "data" (c, rs) instead: IPv6 off on the interface (so that it sends
# nothing and the TX watchdog stays quiet), the interface up, then
# rc-pingpong, ud-pingpong and srq-pingpong (100 iterations on GID 0,
# both ends on hns_0) through the RoCE driver on hclge. This mode's
# traffic is in the RoCE trace: check.sh's registration comparison does
# not run it.
. /opt/hns/lib.sh
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
D=${1:-$DRIVER}
case "$D" in
c | rs | none) ;;
*)
    echo "nic-plan.sh: driver must be c, rs or none (got '$D')"
    exit 2
    ;;
esac
G=nic-$D
MODE=${2:-}

# The simulated function: the one hns3 is bound to.
fn=""
for p in /sys/bus/pci/drivers/hns3/0000:*; do
    [ -e "$p" ] && fn=${p##*/} && break
done

probed() {
    dmesg | grep -q "hns3 $fn: hclge driver initialization finished"
}
check "$G/hclge-probe" probed

dev=""
[ -n "$fn" ] && for n in /sys/bus/pci/devices/"$fn"/net/*; do
    [ -e "$n" ] && dev=${n##*/} && break
done
has_netdev() {
    [ -n "$dev" ] && echo "$fn: $dev"
}
check "$G/netdev" has_netdev

# roce_vector: the MSI-X index of the RoCE abnormal-event interrupt
# ("hns-<function>-abn-0"), from /proc/interrupts' "<index>-edge" column.
if [ "$MODE" = data ]; then
    if [ "$D" = none ] || [ -z "$dev" ]; then
        report "$G/data" FAIL "needs a RoCE driver and the netdev"
        plan_exit
    fi
    echo 1 >/proc/sys/net/ipv6/conf/"$dev"/disable_ipv6
    ip link set "$dev" up
    wait_hns0
    for t in rc ud srq; do
        pair "$G/$t-pingpong" "ibv_${t}_pingpong -d hns_0 -g 0 -n 100" \
            "ibv_${t}_pingpong -d hns_0 -g 0 -n 100 127.0.0.1"
    done
    ip link set "$dev" down
    plan_exit
fi

roce_vector() {
    awk -v n="hns-$fn-abn-0" '$NF == n { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+-edge$/) { sub(/-edge/, "", $i); print $i } }' /proc/interrupts
}
base_matches() {
    wait_hns0 || return 1
    want=$(sed -n 's/^roce_base_vector = //p' /opt/run/caps.txt)
    want=$((${want:-0}))
    got=$(roce_vector)
    echo "roce_base_vector $want, abn-0 on MSI-X $got"
    [ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ]
}
if [ "$D" != none ]; then
    check "$G/roce-base-vector" base_matches
    sh /opt/hns/reg-plan.sh "$D" trace || HNS_FAILS=$((HNS_FAILS + 1))
fi

link_up() {
    [ -n "$dev" ] || return 1
    ip link set "$dev" up || return 1
    lw=0
    while [ $lw -lt 30 ]; do
        if [ "$(cat /sys/class/net/"$dev"/carrier 2>/dev/null)" = 1 ]; then
            ip link set "$dev" down
            echo "$dev carrier after $lw tenths of a second"
            return 0
        fi
        sleep 0.1
        lw=$((lw + 1))
    done
    ip link set "$dev" down
    echo "$dev: no carrier after 3 s"
    return 1
}
check "$G/link-up" link_up
plan_exit
