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

# The guest clock: the clocksource must resolve a millisecond.
# CLOCK_MONOTONIC read in a loop until 1 ms has passed; the first reading
# past it must be at most 10 % late (median of 21 tries: a host preemption
# makes a single try late). refined-jiffies (4 ms steps) fails this.
clock_1ms() {
    python3 - <<'PY'
import statistics
import time

src = open("/sys/devices/system/clocksource/clocksource0/current_clocksource").read().strip()
busy, slept = [], []
for _ in range(21):
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    t = t0
    while t - t0 < 1_000_000:
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    busy.append(t - t0)
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    time.sleep(0.001)
    slept.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - t0)
b, s = statistics.median(busy), statistics.median(slept)
line = (f"CLOCK source {src}: 1 ms apart by busy-wait median {b / 1000:.1f} us, "
        f"sleep(1 ms) median {s / 1000:.1f} us")
print(line)
open("/tmp/clock.out", "w").write(line + "\n")
raise SystemExit(0 if 1_000_000 <= b <= 1_100_000 else 1)
PY
}
check guest/clock-1ms clock_1ms
sed 's/^/    /' /tmp/clock.out 2>/dev/null

[ "${HNS_PLAN_RXE:-1}" = 1 ] && { sh /opt/hns/rxe-sanity.sh || HNS_FAILS=$((HNS_FAILS + 1)); }
plan_exit
