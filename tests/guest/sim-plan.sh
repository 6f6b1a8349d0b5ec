#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The hns-sim acceptance plan on the C reference driver (SIM=1, DRIVER=none,
# hns-sim started with --fault 0x8408:2:once): a probe that fails on the
# injected QUERY_PF_CAPS_NUM error, a clean re-probe, ibv_devinfo against
# the caps table, rdma link, object create/destroy through libhns, pyverbs
# test_device/test_pd, hns_roce_rs and the C driver refusing each other,
# and three unload/reload cycles.
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

# One RoCE driver at a time: hnae3 serves one RoCE client, so with the C
# driver attached hns_roce_rs must refuse to load, and with hns_roce_rs
# attached the C driver must be refused; each time one hns_0, the refusal
# in the kernel log, and clean unloads (a second client used to be taken
# as a no-op, and its unload tore down the first one's instances).
RSKO=/opt/run/modules/hns_roce_rs.ko
one_hns0() {
    n=$(rdma dev show | grep -c ' hns_')
    [ "$n" = 1 ] || { echo "$n hns devices"; return 1; }
}
rs_beside_c() {
    dmesg -c >/dev/null
    if insmod $RSKO; then
        echo "hns_roce_rs loaded beside the C driver"
        rmmod hns_roce_rs
        return 1
    fi
    dmesg | grep 'another hnae3 RoCE client drives the functions' || return 1
    ! grep -q '^hns_roce_rs ' /proc/modules && one_hns0
}
check sim/one-driver-rs-refused-beside-c rs_beside_c
c_beside_rs() {
    rmmod hns_roce_hw_v2 && insmod $RSKO && has_hns0 || return 1
    dmesg -c >/dev/null
    if modprobe hns-roce-hw-v2; then
        echo "hns_roce_hw_v2 loaded beside hns_roce_rs"
        return 1
    fi
    dmesg | grep 'refusing to load hns_roce_hw_v2' || return 1
    ! grep -q '^hns_roce_hw_v2 ' /proc/modules && one_hns0 || return 1
    rmmod hns_roce_rs && modprobe hns-roce-hw-v2 && has_hns0
}
check sim/one-driver-c-refused-beside-rs c_beside_rs

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
