#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The hns-sim acceptance plan on the C reference driver (SIM=1, DRIVER=none,
# hns-sim started with --fault 0x8408:2:once): a probe that fails on the
# injected QUERY_PF_CAPS_NUM error, a clean re-probe, ibv_devinfo against
# the caps table, rdma link, object create/destroy through libhns, pyverbs
# test_device/test_pd, and three unload/reload cycles.
. /opt/hns/lib.sh
SIMKO=/opt/run/modules/hns_sim.ko

has_hns0() {
    w=0
    while [ $w -lt 50 ]; do
        ibv_devices 2>/dev/null | grep -q hns_0 && return 0
        sleep 0.1
        w=$((w + 1))
    done
    return 1
}

fault_probe() {
    modprobe hns-roce-hw-v2 || return 1
    ! ibv_devices | grep -q hns_0
}
check sim/probe-fails-on-injected-fault fault_probe
reprobe() {
    rmmod hns_roce_hw_v2 && modprobe hns-roce-hw-v2 && has_hns0
}
check sim/probe-after-fault reprobe || plan_exit

python3 /opt/hns/sim-devinfo.py /opt/run/caps.txt hns_0 || HNS_FAILS=$((HNS_FAILS + 1))
check sim/rdma-link sh -c 'rdma link show hns_0/1 | grep -q "state ACTIVE physical_state LINK_UP netdev eth0"'
python3 /opt/hns/sim-objects.py hns_0 || HNS_FAILS=$((HNS_FAILS + 1))

# pyverbs, one process per module; skips are fine, failures and errors not.
for m in test_device test_pd; do
    out=$(cd /usr/share/doc/rdma-core/tests && timeout 300 python3 run_tests.py --dev hns_0 -v "$m" 2>&1)
    summary=$(printf '%s\n' "$out" | grep -E '^(Ran|OK|FAILED)' | tr '\n' ' ')
    if printf '%s\n' "$out" | grep -q '^OK'; then
        report "pyverbs/$m" PASS "$summary"
    else
        report "pyverbs/$m" FAIL "$summary"
        printf '%s\n' "$out" | grep -E 'FAIL:|ERROR:|Error' | head -n 20 | sed 's/^/    /'
    fi
done

reload() {
    n=0
    while [ $n -lt 3 ]; do
        rmmod hns_roce_hw_v2 || return 1
        rmmod hns_sim || return 1
        insmod $SIMKO || return 1
        modprobe hns-roce-hw-v2 || return 1
        has_hns0 || { echo "no hns_0 after reload $n"; return 1; }
        n=$((n + 1))
    done
}
check sim/unload-reload-x3 reload
check sim/final-unload sh -c 'rmmod hns_roce_hw_v2 && rmmod hns_sim'
plan_exit
