#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The upstream NIC side on a VF (run-guest.sh HNS_NIC=hclge with
# HNS_SIM_ARGS="--personality vf", SIM=1): the function shows as 19e5:a22f,
# hns3 binds it and hands it to hclgevf, hns-sim playing the PF's hclge
# (docs/hns-sim.md "VF (hclgevf)"), with a RoCE driver as hclgevf's RoCE
# client.
#
#   sh /opt/hns/nicvf-plan.sh [c|rs|none]
#
# The driver defaults to DRIVER of the run (/opt/run/env). TEST lines in
# the group "nicvf-<driver>/":
#   hclgevf-probe     hclgevf logged the end of its probe on the function
#   vf-identity       the function hns3 bound is 19e5:a22f
#   netdev            hns3 registered a net_device on the function
#   roce-base-vector  (c, rs) the RoCE driver's abnormal-event interrupt
#                     is MSI-X vector roce_base_vector of hns-sim's caps,
#                     the base QUERY_VF_RSRC told hclgevf
#   then reg-plan.sh's "trace" mode (probe, `ibv_devinfo -v`, remove; its
#   lines in the group "regtrace-<driver>/"), with the interface down;
#   link-up           after the RoCE driver is gone, `ip link set up`
#                     gives carrier within 3 s (the model's
#                     LINK_STAT_CHANGE push), and the interface goes down;
# Then (c, rs), after the compared registration window (the RoCE driver's
# reload):
#   order-hclgevf-first
#                     the RoCE driver loaded again with hclgevf bound:
#                     hns_0 listed, vendor part 0xa22f, port ACTIVE once
#                     the interface (IPv6 off) is up;
#   rc-, ud-pingpong  20 iterations each on hns_0 (GID 0), both ends on
#                     the VF;
#   vf-reset          hclgevf's function reset (ETHTOOL_RESET, as
#                     `ethtool --reset DEV dedicated`): "Reset done"
#                     within 30 s, hns_0 back and ACTIVE;
#   rc-pingpong-after-reset
#                     20 iterations on hns_0 after the reset;
#   unload            the RoCE driver unloads (kmemleak at the boot's end).
. /opt/hns/lib.sh
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
D=$(plan_driver nicvf-plan.sh "${1:-$DRIVER}") || {
    echo "$D"
    exit 2
}
G=nicvf-$D

# The simulated function: the one hns3 is bound to.
fn=$(hns3_function)

probed() {
    dmesg | grep -q "hns3 $fn: finished initializing hclgevf driver"
}
check "$G/hclgevf-probe" probed

vf_identity() {
    [ -n "$fn" ] || return 1
    v=$(cat /sys/bus/pci/devices/"$fn"/vendor)
    d=$(cat /sys/bus/pci/devices/"$fn"/device)
    echo "$fn: $v:$d"
    [ "$v" = 0x19e5 ] && [ "$d" = 0xa22f ]
}
check "$G/vf-identity" vf_identity

dev=$(netdev_of "$fn")
has_netdev() {
    [ -n "$dev" ] && echo "$fn: $dev"
}
check "$G/netdev" has_netdev

if [ "$D" != none ]; then
    check "$G/roce-base-vector" base_matches
    sh /opt/hns/reg-plan.sh "$D" trace || HNS_FAILS=$((HNS_FAILS + 1))
fi

check "$G/link-up" link_up
[ "$D" = none ] && plan_exit

# --- After the compared window (the RoCE driver's first removal).
MOD=$(driver_module "$D")
vf_first() {
    load_roce "$D" || return 1
    echo 1 >/proc/sys/net/ipv6/conf/"$dev"/disable_ipv6 && ip link set "$dev" up || return 1
    wait_hns0 || return 1
    part=$(ibv_devinfo -d hns_0 | sed -n 's/^[[:space:]]*vendor_part_id:[[:space:]]*//p')
    echo "hns_0 vendor part $part"
    [ "$part" = 41519 ] && port_state hns_0 PORT_ACTIVE
}
check "$G/order-hclgevf-first" vf_first || plan_exit

for t in rc ud; do
    pair_on "$G/$t-pingpong" tcp 18515 "ibv_${t}_pingpong -d hns_0 -g 0 -n 20" \
        "ibv_${t}_pingpong -d hns_0 -g 0 -n 20 127.0.0.1"
done

# vf-reset: hclgevf's function reset asked for as `ethtool --reset DEV
# dedicated` does (the ETHTOOL_RESET ioctl, cmd 0x34 with the flags
# 0xffff): hclgevf sends the PF the RESET mailbox request, takes the RoCE
# client through uninit and init around its own re-init and logs "Reset
# done"; hns_0 must come back ACTIVE and carry an RC pingpong. The model
# counts the request and resets nothing of its own (docs/hns-sim.md "VF
# (hclgevf)").
vf_reset() {
    n0=$(dmesg | grep -c "hns3 $fn: Reset done")
    ethtool_reset "$dev" 0xffff || return 1
    rw=0
    while [ "$(dmesg | grep -c "hns3 $fn: Reset done")" -le "$n0" ]; do
        [ $rw -lt 30 ] || { echo "no Reset done within 30 s"; return 1; }
        sleep 1
        rw=$((rw + 1))
    done
    echo "Reset done after about $rw s"
    wait_hns0 && port_state hns_0 PORT_ACTIVE
}
if check "$G/vf-reset" vf_reset; then
    pair_on "$G/rc-pingpong-after-reset" tcp 18515 "ibv_rc_pingpong -d hns_0 -g 0 -n 20" \
        "ibv_rc_pingpong -d hns_0 -g 0 -n 20 127.0.0.1"
fi
ip link set "$dev" down

check "$G/unload" rmmod "$MOD"
plan_exit
