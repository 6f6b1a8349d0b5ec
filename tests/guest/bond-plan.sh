#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# RoCE bonding (docs/harness.md "RoCE bonding") on four hns-sim
# functions: f0, f1 and f2 are functions 0, 1 and 2 of one PCI slot (the
# RoCE driver indexes bond members by PCI function number), f3 sits in a
# slot of its own and stays a plain hns_3, the peer. The model needs the BOND
# cap (bit 21). The driver is loaded before the plan runs (as init.sh
# does), so its netdev notifiers see the bond being built.
#
#   HNS_GUEST_LANE=3 HNS_SIM_PCI="3.0 3.1 3.2 4.0" \
#   HNS_SIM_ARGS="--set cap_flags=0x68077f" \
#   scripts/run-guest.sh --driver c --sim 4 --name bond-c \
#       --cmd "sh /opt/hns/bond-plan.sh c"
#
# 1. active-backup bond0 of f0's and f1's netdevs (miimon 100): the driver
#    tears both RoCE devices down and registers f0 again as hns_bond_0
#    (SET_BOND_INFO); hns_3 stays.
# 2. IPv4 on bond0 and f3's netdev (static neighbours), RC ping-pong
#    hns_3 <-> hns_bond_0 over the IPv4 GIDs; in the middle of a long run
#    f0's port goes down (the glue's link parameter: the model's port and
#    the carrier): bonding fails over to f1, the driver sends
#    CHANGE_ACTIVE_PORT and moves the port to f1's netdev, and the run
#    completes (the model holds the traffic that needs f0's port, or the
#    bond's GID while the RDMA core moves it, until then). f0 up again:
#    f1 stays active, traffic still flows. bond0 deleted: CLEAR_BOND_INFO,
#    hns_0 and hns_1 back.
# 3a. 802.3ad (layer2 hash, no LACP partner): SET with bond_mode
#    BOND_MODE_2_4, hash L2, both slaves active; bond0 deleted: CLEAR.
# 3. The same as 2 with balance-xor, xmit_hash_policy layer3+4 (bond_mode
#    BOND_MODE_2_4, hash L34, both slaves active; f1 alone after f0 goes
#    down, both again after it comes back).
# 5. f2 joins the balance-xor bond and leaves it again (each a
#    CHANGE_ACTIVE_PORT with the new slave mask: the joining function's
#    RoCE device goes, the leaving one's comes back); f1 leaves (nomaster:
#    with two slaves that ends the bond, CLEAR), joins again (SET), and
#    the driver is unloaded while bonded
#    (CLEAR from the main's unregistration) with f0's link going down
#    meanwhile (a notifier call meeting the unload), RTNL free afterwards;
#    kernel log checked by the host as for every run.
# 4. (after step 2, before bond0 is deleted) a reset of f0, the bond's
#    main function: SET_BOND_INFO again from its re-init, traffic again.
# TEST lines are in the group "bond-<c|rs>/...". The host side (the
# commands in the model's trace, its bond table, the stall counters, bad
# DMA) is checked by scripts/bond-run.sh, which also boots this plan.
. /opt/hns/lib.sh
D=${1:-$DRIVER}
MOD=$(driver_module "$D") || { echo "$MOD"; exit 2; }
G=bond-$D
IP=/usr/bin/ip
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-1}

# wait_for SECONDS CMD...: CMD succeeds within SECONDS (polled every
# 0.2 s); else the last output of CMD.
wait_for() {
    wf_n=$(($1 * 5))
    shift
    while [ "$wf_n" -gt 0 ]; do
        wf_out=$("$@" 2>&1) && return 0
        sleep 0.2
        wf_n=$((wf_n - 1))
    done
    echo "not within the time: $*"
    printf '%s\n' "$wf_out"
    return 1
}

# has_rdma DEV / no_rdma DEV: RDMA device DEV is (not) registered.
has_rdma() { rdma link show | grep -q "^link $1/"; }
no_rdma() { ! rdma link show | grep -q "^link $1/"; }
# netdev_is DEV NDEV: DEV's port 1 has netdev NDEV.
netdev_is() {
    nd=$(rdma_netdev "$1")
    [ "$nd" = "$2" ] || { echo "$1: netdev '$nd', expected $2"; rdma link show; return 1; }
}
# pci_fn NDEV FN: NDEV is PCI function 00:0FN (e.g. 03.1).
pci_fn() {
    p=$(basename "$(readlink "/sys/class/net/$1/device")")
    [ "$p" = "0000:00:$2" ] || { echo "$1 is $p, expected 0000:00:$2"; return 1; }
}
# active_slave NDEV: /proc/net/bonding/bond0 names NDEV as active.
active_slave() {
    grep -q "^Currently Active Slave: $1\$" /proc/net/bonding/bond0 ||
        { cat /proc/net/bonding/bond0; return 1; }
}
# klog TEXT: the kernel log has TEXT.
klog() { dmesg | grep -q "$1" || { echo "no '$1' in the kernel log"; return 1; }; }
# klog_count TEXT N: the kernel log has TEXT at least N times.
klog_count() {
    kc=$(dmesg | grep -c "$1")
    [ "$kc" -ge "$2" ] || { echo "'$1' $kc times in the kernel log, expected >= $2"; return 1; }
}
# ipv4_gid DEV HEX: prints the index of DEV's RoCE v2 GID ::ffff:<HEX>
# (e.g. c0a8:4d01) within 10 s.
ipv4_gid() {
    lw=0
    lp=/sys/class/infiniband/$1/ports/1
    while [ $lw -lt 50 ]; do
        for lt in "$lp"/gid_attrs/types/*; do
            li=${lt##*/}
            [ "$(cat "$lt" 2>/dev/null)" = "RoCE v2" ] || continue
            [ "$(cat "$lp/gids/$li" 2>/dev/null)" = "0000:0000:0000:0000:0000:ffff:$2" ] || continue
            echo "$li"
            return 0
        done
        sleep 0.2
        lw=$((lw + 1))
    done
    return 1
}

# --- the four functions ------------------------------------------------------
four() { has_rdma hns_0 && has_rdma hns_1 && has_rdma hns_2 && has_rdma hns_3; }
check "$G/four-devices" wait_for 10 four || plan_exit
N0=$(rdma_netdev hns_0)
N1=$(rdma_netdev hns_1)
NX=$(rdma_netdev hns_2)
NP=$(rdma_netdev hns_3)
echo "    hns_0 $N0, hns_1 $N1, hns_2 $NX, hns_3 $NP"
check "$G/pci-function-f0" pci_fn "$N0" 03.0 &&
    check "$G/pci-function-f1" pci_fn "$N1" 03.1 &&
    check "$G/pci-function-f2" pci_fn "$NX" 03.2 &&
    check "$G/pci-function-f3" pci_fn "$NP" 04.0 || plan_exit

# --- 1. active-backup bond of f0 + f1 -------------------------------------------
# max_bonds=0: no default bond0 (the plan makes its own).
check "$G/modprobe-bonding" modprobe bonding max_bonds=0 || plan_exit
make_bond() {
    $IP link add bond0 type bond mode "$1" miimon 100 ${2:+xmit_hash_policy $2} &&
        $IP link set bond0 up &&
        $IP link set "$N0" down && $IP link set "$N0" master bond0 &&
        $IP link set "$N1" down && $IP link set "$N1" master bond0
}
check "$G/ab-enslave" make_bond active-backup || plan_exit
check "$G/ab-hns-bond-0" wait_for 20 has_rdma hns_bond_0 || plan_exit
check "$G/ab-members-gone" sh -c "! rdma link show | grep -qE '^link hns_[01]/'"
check "$G/ab-others-stay" sh -c 'rdma link show | grep -q "^link hns_2/" && rdma link show | grep -q "^link hns_3/"'
check "$G/ab-netdev-f0" netdev_is hns_bond_0 "$N0"
check "$G/ab-set-bond-logged" wait_for 10 klog "RoCE set bond finished"
check "$G/ab-active-f0" active_slave "$N0"
rdma link show | sed 's/^/    /'

# --- 2. RC traffic hns_3 <-> hns_bond_0, failover in the middle -----------------
check "$G/ipv4" ipv4_pair bond0 "$NP" || plan_exit
check "$G/bond-active" port_state hns_bond_0 PORT_ACTIVE
GB=$(ipv4_gid hns_bond_0 c0a8:4d01)
GP=$(ipv4_gid hns_3 c0a8:4d02)
if [ -z "$GB" ] || [ -z "$GP" ]; then
    report "$G/ipv4-gids" FAIL "hns_bond_0: '$GB', hns_3: '$GP'"
    for d in hns_bond_0 hns_3; do
        grep -H . /sys/class/infiniband/$d/ports/1/gids/* 2>/dev/null | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$' | sed 's/^/    /'
    done
    plan_exit
fi
report "$G/ipv4-gids" PASS "hns_bond_0 index $GB ($(cat /sys/class/infiniband/hns_bond_0/ports/1/gid_attrs/ndevs/$GB)), hns_3 index $GP"

pair "$G/rc-pingpong-before" \
    "ibv_rc_pingpong -d hns_bond_0 -g $GB -p 18700 -n 10" \
    "ibv_rc_pingpong -d hns_3 -g $GP -p 18700 -n 10 127.0.0.1"

# failover_run T PORT: a long RC ping-pong (completion events, so the
# pingpongs leave the CPU to the bond work) between hns_3 and hns_bond_0
# (GID index $GB) on TCP port PORT; f0's port goes down 2 s after the
# client started. TEST lines T-run-in-flight, T-rc-pingpong.
PPN=${BOND_PP_ITERS:-8000}
failover_run() {
    timeout 120 ibv_rc_pingpong -d hns_bond_0 -g "$GB" -p "$2" -n "$PPN" -e >/tmp/server.out 2>&1 &
    spid=$!
    sleep 1
    timeout 120 ibv_rc_pingpong -d hns_3 -g "$GP" -p "$2" -n "$PPN" -e 127.0.0.1 >/tmp/client.out 2>&1 &
    cpid=$!
    sleep 2
    if kill -0 $cpid 2>/dev/null && kill -0 $spid 2>/dev/null; then
        report "$1-run-in-flight" PASS "$PPN iterations, both sides running at link down"
    else
        report "$1-run-in-flight" FAIL "the run ended before the link went down (raise BOND_PP_ITERS)"
    fi
    t0=$(date +%s)
    check "$1-f0-link-down" sh -c 'echo f0:down >/sys/module/hns_sim/parameters/link'
    wait $cpid
    crc=$?
    wait $spid
    src=$?
    t1=$(date +%s)
    if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
        report "$1-rc-pingpong" PASS "completed $((t1 - t0)) s after the link went down"
    else
        report "$1-rc-pingpong" FAIL "server exit $src, client exit $crc"
    fi
    echo "    server: $(grep -E 'iters in' /tmp/server.out | tr '\n' ' ')"
    echo "    client: $(grep -E 'iters in' /tmp/client.out | tr '\n' ' ')"
    [ $crc -eq 0 ] && [ $src -eq 0 ] || { tail -n 8 /tmp/server.out /tmp/client.out | sed 's/^/    /'; }
}

ncs=$(dmesg | grep -c "RoCE slave changestate finished")
failover_run "$G/failover" 18701
check "$G/failover-active-f1" active_slave "$N1"
check "$G/failover-changestate-logged" wait_for 10 klog_count "RoCE slave changestate finished" $((ncs + 1))
check "$G/failover-netdev-f1" wait_for 10 netdev_is hns_bond_0 "$N1"
check "$G/failover-bond-active" port_state hns_bond_0 PORT_ACTIVE

# f0 back: bonding keeps f1 active (no primary); the driver sends
# CHANGE_ACTIVE_PORT again (the lower state changed), traffic as before.
ncs=$(dmesg | grep -c "RoCE slave changestate finished")
check "$G/f0-link-up" sh -c 'echo f0:up >/sys/module/hns_sim/parameters/link'
check "$G/f0-up-changestate-logged" wait_for 10 klog_count "RoCE slave changestate finished" $((ncs + 1))
check "$G/f0-up-active-still-f1" active_slave "$N1"
check "$G/f0-up-netdev-f1" netdev_is hns_bond_0 "$N1"
GB=$(ipv4_gid hns_bond_0 c0a8:4d01)
pair "$G/rc-pingpong-after" \
    "ibv_rc_pingpong -d hns_bond_0 -g $GB -p 18702 -n 10" \
    "ibv_rc_pingpong -d hns_3 -g $GP -p 18702 -n 10 127.0.0.1"

# --- 4. reset of the bond's main function ----------------------------------------
# DOWN/UNINIT/INIT/UP of f0 alone (the glue's reset parameter, as hclge
# walks the client through a function reset): hns_bond_0 goes and comes
# back, its init sends SET_BOND_INFO again (recover_bond; f1 is the
# active slave by now); traffic again.
nrs=$(dmesg | grep -c "reset done, RoCE client reinit finished")
check "$G/reset-f0" sh -c 'echo f0 >/sys/module/hns_sim/parameters/reset'
check "$G/reset-reinit-logged" klog_count "reset done, RoCE client reinit finished" $((nrs + 1))
check "$G/reset-hns-bond-0" wait_for 10 has_rdma hns_bond_0
check "$G/reset-netdev-f1" wait_for 10 netdev_is hns_bond_0 "$N1"
check "$G/reset-bond-active" port_state hns_bond_0 PORT_ACTIVE
GB=$(ipv4_gid hns_bond_0 c0a8:4d01)
pair "$G/reset-rc-pingpong" \
    "ibv_rc_pingpong -d hns_bond_0 -g $GB -p 18705 -n 10" \
    "ibv_rc_pingpong -d hns_3 -g $GP -p 18705 -n 10 127.0.0.1"

# --- bond gone ---------------------------------------------------------------
# plain NDEV: a plain RDMA device (hns_N, not the bond's) has netdev NDEV.
plain() { rdma link show | grep -qE "^link hns_[0-9]+/1 .*netdev $1( |\$)"; }
members() { plain "$N0" && plain "$N1"; }
# unbonded T N: after the bond's end, hns_0 and hns_1 are back (the C
# driver's clear_bond re-inits both), no hns_bond_0, the N-th "RoCE clear
# bond finished".
unbonded() {
    check "$1-members-back" wait_for 20 members
    check "$1-no-bond-dev" no_rdma hns_bond_0
    check "$1-clear-logged" wait_for 10 klog_count "RoCE clear bond finished" "$2"
    rdma link show | sed 's/^/    /'
}
check "$G/del-bond0" $IP link del bond0
unbonded "$G/unbonded" 1

# --- 3a. 802.3ad ------------------------------------------------------------
# The bonding driver reports mode 4 as a hashing bond, as balance-xor
# (NETDEV_LAG_TX_TYPE_HASH; xmit_hash_policy layer2: hash L2). No LACP
# partner answers here, so each slave stays an aggregator of its own with
# its carrier up: SET with bond_mode BOND_MODE_2_4, hash_policy 0 (L2),
# both slaves active; then the bond goes (CLEAR).
check "$G/lacp-enslave" make_bond 802.3ad layer2 || plan_exit
check "$G/lacp-hns-bond-0" wait_for 20 has_rdma hns_bond_0 || plan_exit
check "$G/lacp-set-bond-logged" wait_for 10 klog_count "RoCE set bond finished" 2
check "$G/lacp-members-gone" sh -c "! rdma link show | grep -qE '^link hns_[01]/'"
check "$G/lacp-del-bond0" $IP link del bond0
unbonded "$G/lacp-unbonded" 2

# --- 3. balance-xor, layer3+4 --------------------------------------------------
# SET with bond_mode 1 (BOND_MODE_2_4), hash_policy 1 (L34), both slaves
# active; f0 down: CHANGE_ACTIVE_PORT with f1 alone, traffic held by the
# model (when the QP's egress was f0) until then; f0 up: both again.
check "$G/xor-enslave" make_bond balance-xor layer3+4 || plan_exit
check "$G/xor-hns-bond-0" wait_for 20 has_rdma hns_bond_0 || plan_exit
check "$G/xor-set-bond-logged" wait_for 10 klog_count "RoCE set bond finished" 3
bond_ipv4() {
    $IP addr add 192.168.77.1/24 dev bond0 &&
        $IP neigh replace 192.168.77.2 lladdr "$(cat "/sys/class/net/$NP/address")" \
            dev bond0 nud permanent &&
        $IP neigh replace 192.168.77.1 lladdr "$(cat /sys/class/net/bond0/address)" \
            dev "$NP" nud permanent
}
check "$G/xor-ipv4" bond_ipv4
check "$G/xor-bond-active" port_state hns_bond_0 PORT_ACTIVE
GB=$(ipv4_gid hns_bond_0 c0a8:4d01)
if [ -n "$GB" ]; then
    report "$G/xor-ipv4-gid" PASS "hns_bond_0 index $GB"
    ncs=$(dmesg | grep -c "RoCE slave changestate finished")
    failover_run "$G/xor-failover" 18703
    check "$G/xor-failover-changestate-logged" wait_for 10 klog_count "RoCE slave changestate finished" $((ncs + 1))
    check "$G/xor-failover-netdev-f1" wait_for 10 netdev_is hns_bond_0 "$N1"
    ncs=$(dmesg | grep -c "RoCE slave changestate finished")
    check "$G/xor-f0-link-up" sh -c 'echo f0:up >/sys/module/hns_sim/parameters/link'
    check "$G/xor-f0-up-changestate-logged" wait_for 10 klog_count "RoCE slave changestate finished" $((ncs + 1))
    pair "$G/xor-rc-pingpong-after" \
        "ibv_rc_pingpong -d hns_bond_0 -g $GB -p 18704 -n 10" \
        "ibv_rc_pingpong -d hns_3 -g $GP -p 18704 -n 10 127.0.0.1"
else
    report "$G/xor-ipv4-gid" FAIL "no RoCE v2 GID ::ffff:192.168.77.1 on hns_bond_0"
fi

# --- 5. a third slave joins and leaves; a slave leaves; the bond again; rmmod --
ncn=$(dmesg | grep -c "RoCE slave change num finished")
check "$G/join-f2" sh -c "$IP link set $NX down && $IP link set $NX master bond0"
check "$G/join-change-num-logged" wait_for 10 klog_count "RoCE slave change num finished" $((ncn + 1))
check "$G/join-f2-plain-gone" sh -c "! rdma link show | grep -qE '^link hns_[0-9]+/1 .*netdev $NX( |\$)'"
check "$G/join-bond-stays" has_rdma hns_bond_0
check "$G/join-bond-active" port_state hns_bond_0 PORT_ACTIVE
check "$G/leave-f2" $IP link set "$NX" nomaster
check "$G/leave-change-num-logged" wait_for 10 klog_count "RoCE slave change num finished" $((ncn + 2))
check "$G/leave-f2-plain-back" wait_for 10 plain "$NX"
check "$G/leave-bond-stays" has_rdma hns_bond_0
rdma link show | sed 's/^/    /'
GB=$(ipv4_gid hns_bond_0 c0a8:4d01)
pair "$G/leave-rc-pingpong" \
    "ibv_rc_pingpong -d hns_bond_0 -g $GB -p 18706 -n 10" \
    "ibv_rc_pingpong -d hns_3 -g $GP -p 18706 -n 10 127.0.0.1"
# With two slaves, one leaving ends the bond (C: fewer than two slaves is
# no bond, clear_bond), so this is a CLEAR, not a CHANGE_ACTIVE_PORT of a
# smaller bond.
check "$G/nomaster-f1" $IP link set "$N1" nomaster
unbonded "$G/nomaster" 3
check "$G/reenslave-f1" sh -c "$IP link set $N1 down && $IP link set $N1 master bond0"
check "$G/rebond-hns-bond-0" wait_for 20 has_rdma hns_bond_0
check "$G/rebond-set-bond-logged" wait_for 10 klog_count "RoCE set bond finished" 4
# The driver goes while bonded: the main's unregistration re-inits f1
# (hns_bond_cleanup) and sends CLEAR_BOND_INFO, then everything goes.
# Meanwhile f0's link goes down, so that a bond notifier call (the
# slave's CHANGELOWERSTATE) meets the end of the unload. Rust's test
# build makes the two meet: its bond registry, once the hnae3 client is
# gone, announces itself and waits for a notifier's group lookup, and the
# lookup waits until the registry has dropped its groups. A lookup that
# held the groups' hooks would drop them in the notifier with RTNL held
# (self-deadlock, lockdep's recursive locking report); with the registry
# owning them, the unload waits for the notifier. Then the registry queues
# the groups' work (the functions' uninit cancelled it) and waits for a
# work item's lookup of its own group, which waits in turn until the
# registry has dropped its groups. A lookup that held the group's hooks
# would drop them in the work, whose drop then waits for the work itself
# (hang, lockdep's recursive locking report) and never logs the release;
# with the registry owning them, the unload waits for the work, which
# logs its release before the registry is done. After the unload RTNL
# must be free. C (no such build) gets the link change after its unload,
# so that both send the same bond commands; the registry's lines are
# Rust's only.
if [ "$D" = rs ]; then
    rmmod "$MOD" >/tmp/rmmod.out 2>&1 &
    rmpid=$!
    check "$G/rmmod-registry-waits" wait_for 60 klog "bond registry: unloading, waiting for a lookup"
    check "$G/rmmod-f0-link-down" sh -c 'echo f0:down >/sys/module/hns_sim/parameters/link'
    wait $rmpid
    rmrc=$?
    [ $rmrc -eq 0 ] && report "$G/rmmod-bonded" PASS || report "$G/rmmod-bonded" FAIL "exit $rmrc: $(cat /tmp/rmmod.out)"
    check "$G/rmmod-lookup-held" klog "bond registry: lookup during unload, held"
    check "$G/rmmod-work-lookup-held" klog "bond registry: work lookup during unload, held"
    # released before the registry was done (else it logs "not released").
    work_released() {
        klog "bond registry: work lookup released" &&
            ! klog "bond registry: work lookup not released" >/dev/null
    }
    check "$G/rmmod-work-lookup-released" work_released
else
    check "$G/rmmod-bonded" rmmod "$MOD"
    check "$G/rmmod-f0-link-down" sh -c 'echo f0:down >/sys/module/hns_sim/parameters/link'
fi
check "$G/rmmod-rtnl-free" timeout 20 $IP link set bond0 down
check "$G/rmmod-bonded-clear-logged" klog_count "RoCE clear bond finished" 4
check "$G/rmmod-bonded-no-rdma" sh -c '[ -z "$(rdma link show)" ] || { rdma link show; exit 1; }'
check "$G/final-unload" sh -c "$IP link del bond0 && rmmod hns_sim"
plan_exit
