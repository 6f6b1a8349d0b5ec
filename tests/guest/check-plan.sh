#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The guest part of `make check`: our module's KUnit suites (run by the KUnit
# core at insmod; the kernel log of the first load is printed between
# HNS-KTAP markers for the host to parse), load/unload cycles of hns_roce_rs
# and of the C reference driver, then the rxe sanity plan.
. /opt/hns/lib.sh
KO=/opt/run/modules/hns_roce_rs.ko

kunit_load() {
    dmesg -c >/dev/null
    insmod $KO || return 1
    dmesg >/tmp/kunit.log
    rmmod hns_roce_rs
}
check module/rs-kunit-load kunit_load
echo "HNS-KTAP-BEGIN"
cat /tmp/kunit.log 2>/dev/null
echo "HNS-KTAP-END"

rs_cycles() {
    i=0
    while [ $i -lt "${1:-3}" ]; do
        insmod $KO || return 1
        grep -q '^hns_roce_rs ' /proc/modules || return 1
        rmmod hns_roce_rs || return 1
        i=$((i + 1))
    done
    ! grep -q '^hns_roce_rs ' /proc/modules
}
check module/rs-load-unload-x3 rs_cycles 3

c_cycle() {
    modprobe hns-roce-hw-v2 || return 1
    grep -q '^hns_roce_hw_v2 ' /proc/modules || return 1
    rmmod hns_roce_hw_v2
}
check module/c-load-unload c_cycle

[ "${HNS_PLAN_RXE:-1}" = 1 ] && { sh /opt/hns/rxe-sanity.sh || HNS_FAILS=$((HNS_FAILS + 1)); }
plan_exit
