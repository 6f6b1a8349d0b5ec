#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A PF reset with its VF live: hclge on the PF and hclgevf on the VF
# (run-guest.sh HNS_NIC=hclge HNS_SIM_ARGS="--personality hip09,vf",
# SIM=2), a RoCE driver on both. hclge's function reset of the PF
# (ETHTOOL_RESET on the PF's netdev) reaches the VF as on hardware: the
# VF is told (ASSERTING_RESET, FUN_RST_ING), stops, is reset with the PF
# and waits until the PF is up again (docs/hns-sim.md "PF reset with the
# VF live"); hclgevf then takes its RoCE client through DOWN, UNINIT, INIT
# and UP.
#
#   sh /opt/hns/nicpfvf-plan.sh [c|rs]
#
# TEST lines in the group "nicpfvf-<driver>/":
#   both-active       hns3 bound the PF (19e5:a222) and the VF (19e5:a22f),
#                     each function's RDMA device PORT_ACTIVE with its
#                     netdev up (IPv6 off)
#   pf-reset          an `ibv_rc_pingpong -e -n 100000` pair on the VF's
#                     device passing traffic, then the PF's function
#                     reset: hclge logs one more "Reset done,", hclgevf
#                     "prepare reset(2) wait done" (HNAE3_VF_PF_FUNC_RESET:
#                     the reset its PF told it of) and one more "Reset
#                     done", both processes end with an error within 60 s
#                     (hclgevf's UNINIT unregisters the VF's device), and
#                     `rdma res show` counts for the VF's device what it
#                     counted before
#   vf-back, pf-back  each function's RDMA device PORT_ACTIVE again
#   vf-pingpong-after, pf-pingpong-after
#                     a fresh 20-iteration RC pair on each device
#   unbind-vf         the VF unbound from hns3 first (hclgevf's remove
#                     takes its RoCE client off), as SR-IOV removes VFs
#                     before their PF: the PF's RoCE removal then clears
#                     a function nobody drives
#   unload            the RoCE driver unloads
# Lines starting "    outcome:" are what make check compares between the
# drivers.
. /opt/hns/lib.sh
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
D=${1:-$DRIVER}
MOD=$(driver_module "$D") || {
    echo "nicpfvf-plan.sh: $MOD"
    exit 2
}
G=nicpfvf-$D

# pf, vf: the PCI functions hns3 bound, by device ID.
pf="" vf=""
for p in /sys/bus/pci/drivers/hns3/0000:*; do
    [ -e "$p" ] || continue
    case $(cat "$p/device") in
    0xa222) pf=${p##*/} ;;
    0xa22f) vf=${p##*/} ;;
    esac
done
# ibdev_of FN: the function's RDMA device.
ibdev_of() {
    for i in /sys/bus/pci/devices/"$1"/infiniband/*; do
        [ -e "$i" ] && echo "${i##*/}" && return 0
    done
}
# active FN: the function's RDMA device listed and PORT_ACTIVE within
# 10 s each; its name in $ib.
active() {
    ib="" lw=0
    while [ -z "$ib" ] && [ $lw -lt 100 ]; do
        ib=$(ibdev_of "$1")
        [ -n "$ib" ] || sleep 0.1
        lw=$((lw + 1))
    done
    [ -n "$ib" ] || {
        echo "$1: no RDMA device after 10 s"
        return 1
    }
    port_state "$ib" PORT_ACTIVE
}

both_active() {
    [ -n "$pf" ] && [ -n "$vf" ] || {
        echo "hns3 functions: PF '$pf', VF '$vf'"
        return 1
    }
    pdev=$(netdev_of "$pf") vdev=$(netdev_of "$vf")
    for n in $pdev $vdev; do
        echo 1 >/proc/sys/net/ipv6/conf/"$n"/disable_ipv6 && ip link set "$n" up || return 1
    done
    active "$pf" || return 1
    pib=$ib
    active "$vf" || return 1
    vib=$ib
    echo "PF $pf $pdev $pib, VF $vf $vdev $vib"
}
# Run here, not through check, so that the names stay set.
if out=$(both_active 2>&1); then
    report "$G/both-active" PASS
    pdev=$(netdev_of "$pf") vdev=$(netdev_of "$vf") pib=$(ibdev_of "$pf") vib=$(ibdev_of "$vf")
    echo "    $out"
else
    report "$G/both-active" FAIL
    printf '%s\n' "$out" | tail -n 25 | sed 's/^/    /'
    plan_exit
fi

pf_reset() {
    res0=$(res_line "$vib")
    err=""
    cmd="ibv_rc_pingpong -e -d $vib -g 0 -p 18700 -n 100000"
    bg_start server "$cmd"
    sleep "${HNS_SERVER_DELAY:-2}"
    bg_start client "$cmd 127.0.0.1"
    s1=$(cq_events "$vib") s2=$s1 w=0
    while [ "$s2" -le "$s1" ] && [ $w -lt 15 ]; do
        sleep 1
        s2=$(cq_events "$vib")
        w=$((w + 1))
    done
    [ "$s2" -gt "$s1" ] || err="; no traffic before the reset (completion events $s1 -> $s2)"
    pn=$(log_count "hns3 $pf: Reset done,")
    vp=$(log_count "hns3 $vf: prepare reset(2) wait done")
    vn=$(log_count "hns3 $vf: Reset done")
    t0=$(date +%s)
    ethtool_reset "$pdev" 0xffff || err="$err; the ETHTOOL_RESET ioctl failed"
    # hclge defers a reset asked for within 10 s of its probe (its reset
    # timer); the VF's reset ends after the PF's.
    wait_log "hns3 $pf: Reset done," "$pn" 40 || err="$err; no 'Reset done' from hclge"
    vtype=no
    wait_log "hns3 $vf: prepare reset(2) wait done" "$vp" 20 && vtype=yes
    wait_log "hns3 $vf: Reset done" "$vn" 40 || err="$err; no 'Reset done' from hclgevf"
    se=$(bg_end server "ibv_rc_pingpong -e -d $vib -g 0 -p 18700")
    ce=$(bg_end client "ibv_rc_pingpong -e -d $vib -g 0 -p 18700")
    echo "    events $s1 -> $s2, apps done $(($(date +%s) - t0)) s after the reset request"
    echo "    outcome: pf-reset hclgevf told of the PF's reset (prepare reset(2)): $vtype"
    echo "    outcome: pf-reset VF server $se"
    echo "    outcome: pf-reset VF client $ce"
    [ $vtype = yes ] || err="$err; hclgevf ran no PF-asserted reset"
    for e in "$se" "$ce"; do
        case "$e" in
        hang | "exit 0:"* | "exit 124:"*) err="$err; an application did not end with an error ($e)" ;;
        esac
    done
    # The VF's device may come back under another name.
    active "$vf" >/dev/null 2>&1 && vib=$ib
    res1=$(res_line "$vib")
    echo "    outcome: pf-reset VF rdma res same as before: $([ "$res1" = "$res0" ] && echo yes || echo "no ('$res0' -> '$res1')")"
    [ -z "$err" ] || {
        echo "FAIL$err"
        return 1
    }
}
check "$G/pf-reset" pf_reset
printf '%s\n' "$out" | grep -E '^    (outcome|events)' || true

if check "$G/vf-back" active "$vf"; then
    vib=$(ibdev_of "$vf")
    pair_on "$G/vf-pingpong-after" tcp 18701 "ibv_rc_pingpong -d $vib -g 0 -p 18701 -n 20" \
        "ibv_rc_pingpong -d $vib -g 0 -p 18701 -n 20 127.0.0.1"
fi
if check "$G/pf-back" active "$pf"; then
    pib=$(ibdev_of "$pf")
    pair_on "$G/pf-pingpong-after" tcp 18702 "ibv_rc_pingpong -d $pib -g 0 -p 18702 -n 20" \
        "ibv_rc_pingpong -d $pib -g 0 -p 18702 -n 20 127.0.0.1"
fi

unbind_vf() {
    echo "$vf" >/sys/bus/pci/drivers/hns3/unbind || return 1
    [ -z "$(ibdev_of "$vf")" ] || {
        echo "the VF's RDMA device still listed"
        return 1
    }
}
check "$G/unbind-vf" unbind_vf
for n in $pdev; do ip link set "$n" down; done
check "$G/unload" rmmod "$MOD"
plan_exit
