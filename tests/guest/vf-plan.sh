#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A plan for hns-sim's VF personality (run-guest.sh with
# HNS_SIM_ARGS="--personality hip09,vf", --driver none, --sim 2): device 0
# is a HIP09 PF (hns_0), device 1 a HIP09 VF of it (PCI device 0xa22f,
# hns_1). The driver given as argument is loaded; both functions must
# register, hns_1 on the VF; `ibv_devinfo -v` of the VF is printed between
# HNS-REG-BEGIN/END devinfo (the PF's as devinfo-pf); the VF must have no
# hardware counters (the C driver sets none on a VF) while the PF has
# them; then on the VF: ibv_rc_pingpong (loopback on hns_1), ib_write_bw
# (loopback) between two trace marks, rping over an IPv4 address on the
# VF's netdev, and ibv_rc_pingpong between the PF (client) and the VF
# (server). The marks are IPv4 addresses added to the VF's netdev
# (192.168.78.2 before ib_write_bw, 192.168.79.2 after): their RoCE GIDs
# reach the VF's trace as CFG_GMV_TBL commands, and make check compares
# the two drivers' VF traces before the first and after the second,
# leaving out perftest's server and client, which create their objects in
# an order that varies from run to run. The unload
# goes VF first (its PCI function unbound from hns_sim, as SR-IOV removes
# VFs before their PF), then the driver (the PF clears function 1 and
# releases its resources, then itself) and hns_sim; hns_sim and the
# driver are then loaded again (both functions register after the PF's
# clear), the VF reset alone, then both functions, and unloaded the same
# way; on Rust ten more such cycles.
# TEST lines in the group "vf/...".
#
#   sh /opt/hns/vf-plan.sh c|rs
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-3}
HNS_TIMEOUT=${HNS_TIMEOUT:-120}
d=${1:-c}
MOD=$(driver_module "$d") || exit 2

# wait_dev DEV: RDMA device DEV is listed by libibverbs within 10 s.
wait_dev() {
    lw=0
    while [ $lw -lt 100 ]; do
        ibv_devices 2>/dev/null | grep -qw "$1" && return 0
        sleep 0.1
        lw=$((lw + 1))
    done
    echo "no $1 after 10 s"
    ibv_devices 2>&1
    return 1
}

# pci_of DEV: the PCI address of RDMA device DEV.
pci_of() {
    basename "$(readlink -f "/sys/class/infiniband/$1/device")"
}

# pci_id DEV WANT: the PCI device ID of DEV's function is WANT.
pci_id() {
    got=$(cat "/sys/bus/pci/devices/$(pci_of "$1")/device")
    echo "$1: $(pci_of "$1") device $got revision $(cat "/sys/bus/pci/devices/$(pci_of "$1")/revision")"
    [ "$got" = "$2" ]
}

# hw_counters DEV yes|no: DEV's port has hardware counters (or not).
hw_counters() {
    if [ -d "/sys/class/infiniband/$1/ports/1/hw_counters" ]; then
        echo "$1: hw_counters: $(ls "/sys/class/infiniband/$1/ports/1/hw_counters" | wc -l) files"
        [ "$2" = yes ]
    else
        echo "$1: no hw_counters"
        [ "$2" = no ]
    fi
}

# unload_vf_first: the VF's function unbound from hns_sim (its RoCE
# instance goes), then the driver (the PF: FUNC_CLEAR of function 1, its
# resources released, FUNC_CLEAR of itself), then hns_sim.
unload_vf_first() {
    vfpci=$(pci_of hns_1) || return 1
    echo "$vfpci" >/sys/bus/pci/drivers/hns_sim/unbind || return 1
    if ibv_devices 2>/dev/null | grep -qw hns_1; then
        echo "hns_1 still listed after unbinding $vfpci"
        return 1
    fi
    ibv_devices 2>/dev/null | grep -qw hns_0 || { echo "hns_0 gone with the VF"; return 1; }
    rmmod "$MOD" && rmmod hns_sim
}

check vf/load load_roce "$d"
check vf/hns0 wait_dev hns_0 || plan_exit
check vf/hns1 wait_dev hns_1 || plan_exit
check vf/hns0-is-pf pci_id hns_0 0xa222
echo "$out" | sed 's/^/    /'
check vf/hns1-is-vf pci_id hns_1 0xa22f || plan_exit
echo "$out" | sed 's/^/    /'
check vf/attach-says-vf sh -c "dmesg | grep 'hns-sim: HIP09 VF RoCE function'"
check vf/hns1-active port_state hns_1 PORT_ACTIVE || plan_exit
check vf/hns0-active port_state hns_0 PORT_ACTIVE
GIDX=$(roce_v2_gid hns_1)
if [ -n "$GIDX" ]; then
    report vf/roce-v2-gid PASS "index $GIDX: $(cat /sys/class/infiniband/hns_1/ports/1/gids/$GIDX)"
else
    report vf/roce-v2-gid FAIL "no RoCE v2 GID on hns_1 after 10 s"
    plan_exit
fi
G0=$(roce_v2_gid hns_0)
echo "HNS-REG-BEGIN devinfo"
ibv_devinfo -v -d hns_1 2>&1
echo "[ibv_devinfo exit $?]"
echo "HNS-REG-END devinfo"
echo "HNS-REG-BEGIN devinfo-pf"
ibv_devinfo -v -d hns_0 2>&1
echo "[ibv_devinfo exit $?]"
echo "HNS-REG-END devinfo-pf"
# What the caps tables imply (tests/guest/sim-devinfo.py: the VF's own
# table, caps-1.txt; the PF's with its function count).
python3 /opt/hns/sim-devinfo.py /opt/run/caps-1.txt hns_1 vf/devinfo || HNS_FAILS=$((HNS_FAILS + 1))
python3 /opt/hns/sim-devinfo.py /opt/run/caps.txt hns_0 vf/devinfo-pf || HNS_FAILS=$((HNS_FAILS + 1))
check vf/no-hw-counters-on-vf hw_counters hns_1 no
echo "$out" | sed 's/^/    /'
check vf/hw-counters-on-pf hw_counters hns_0 yes
echo "$out" | sed 's/^/    /'

pair vf/rc-pingpong \
    "ibv_rc_pingpong -d hns_1 -g $GIDX -p 18515 -n 10" \
    "ibv_rc_pingpong -d hns_1 -g $GIDX -p 18515 -n 10 127.0.0.1"
# mark IP: IP added to the VF's netdev, its RoCE GID in hns_1's table
# within 10 s (so its commands are done when the next step starts).
mark() {
    /usr/bin/ip addr add "$1/24" dev "$N1" && /usr/bin/ip link set "$N1" up || return 1
    hex=$(printf '%02x%02x:%02x%02x' $(echo "$1" | tr . ' '))
    lw=0
    while [ $lw -lt 100 ]; do
        cat /sys/class/infiniband/hns_1/ports/1/gids/* 2>/dev/null | grep -q "ffff:$hex$" && return 0
        sleep 0.1
        lw=$((lw + 1))
    done
    echo "no GID for $1 on hns_1"
    return 1
}
N1=$(rdma_netdev hns_1)
N0=$(rdma_netdev hns_0)
check vf/mark-1 mark 192.168.78.2
pair vf/write-bw \
    "ib_write_bw -d hns_1 -x $GIDX -p 18600 -n 200 -F --no_ddp" \
    "ib_write_bw -d hns_1 -x $GIDX -p 18600 -n 200 -F --no_ddp 127.0.0.1"
echo "    server: $(perf_rows </tmp/server.out)"
echo "    client: $(printf '%s\n' "$cout" | perf_rows)"
check vf/mark-2 mark 192.168.79.2

# rdma_cm over an IPv4 address on the VF's netdev (the destination is
# local: the CM MADs go through the VF's GSI QP to itself).
echo "    netdevs: hns_0 $N0, hns_1 $N1"
check vf/ipv4 sh -c "/usr/bin/ip addr add 192.168.77.2/24 dev $N1 && /usr/bin/ip link set $N1 up"
pair vf/rping "rping -s -a 192.168.77.2 -C 5 -v" "rping -c -a 192.168.77.2 -C 5 -v"

# PF -> VF (the engine's wire between the two devices): link-local RoCE v2
# GIDs with static neighbours, as data2-plan.sh does between two PFs.
neigh() {
    /usr/bin/ip -6 neigh replace "$(cat /sys/class/infiniband/$1/ports/1/gids/$2)" \
        lladdr "$(cat /sys/class/net/$3/address)" dev "$4" nud permanent
}
static_neighbours() {
    neigh hns_1 "$GIDX" "$N1" "$N0" && neigh hns_0 "$G0" "$N0" "$N1"
}
if [ -n "$G0" ]; then
    check vf/static-neighbours static_neighbours
    pair vf/rc-pingpong-pf-to-vf \
        "ibv_rc_pingpong -d hns_1 -g $GIDX -p 18516 -n 10" \
        "ibv_rc_pingpong -d hns_0 -g $G0 -p 18516 -n 10 127.0.0.1"
else
    report vf/rc-pingpong-pf-to-vf FAIL "no RoCE v2 GID on hns_0"
fi

check vf/unload-vf-first unload_vf_first
dmesg | grep -E "hns3|hns_roce|hns-sim|roce" | grep -iE "fail|error|timeout" | tail -n 20 | sed 's/^/    dmesg: /'

# Again: the PF cleared function 1 at its removal; both come back.
reprobe() {
    insmod /opt/run/modules/hns_sim.ko && load_roce "$d" &&
        wait_dev hns_0 && wait_dev hns_1 && pci_id hns_1 0xa22f &&
        port_state hns_1 PORT_ACTIVE && timeout 60 ibv_devinfo -d hns_1 >/dev/null
}
check vf/reprobe reprobe

# Resets (hns_sim's reset parameter): the VF's own ("f1": DOWN, UNINIT,
# INIT, UP of the VF's RoCE client), then both functions (the VF goes
# down before the PF, whose UNINIT clears function 1; the PF comes back
# first); after each, both ports active and a pingpong on the VF.
reset_to() {
    n=$(dmesg | grep -c 'hns-sim: function reset done')
    echo "$1" >/sys/module/hns_sim/parameters/reset || return 1
    [ "$(dmesg | grep -c 'hns-sim: function reset done')" -eq $((n + $2)) ] || {
        echo "not $2 more 'function reset done' in the kernel log"
        return 1
    }
    port_state hns_1 PORT_ACTIVE && port_state hns_0 PORT_ACTIVE
}
vf_pingpong() {
    g=$(roce_v2_gid hns_1) || { echo "no RoCE v2 GID on hns_1"; return 1; }
    timeout 60 ibv_rc_pingpong -d hns_1 -g "$g" -p "$1" -n 10 >/tmp/server.out 2>&1 &
    sleep "$HNS_SERVER_DELAY"
    timeout 60 ibv_rc_pingpong -d hns_1 -g "$g" -p "$1" -n 10 127.0.0.1 && wait $!
}
check vf/reset-vf reset_to f1 1
check vf/pingpong-after-reset-vf vf_pingpong 18517
check vf/reset-all reset_to all 2
check vf/pingpong-after-reset-all vf_pingpong 18519
check vf/unload-again unload_vf_first
# Ten more cycles on Rust (as reg-rs and hip08-rs).
cycles() {
    i=0
    while [ $i -lt "$1" ]; do
        reprobe && unload_vf_first || { echo "cycle $i failed"; return 1; }
        i=$((i + 1))
    done
}
[ "$d" = rs ] && check vf/reload-x10 cycles 10
plan_exit
