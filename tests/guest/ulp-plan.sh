#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# NVMe over RDMA between the two simulated functions (SIM=2): the
# in-kernel NVMe target (nvmet, nvmet-rdma) with a memory-backed null_blk
# namespace listens on hns_1's address (192.168.77.2), the in-kernel host
# (nvme-rdma) connects from hns_0's (192.168.77.1, nvme-cli's -w) with two
# I/O queues. Through it: a known 64 MiB pattern written with dd and
# O_DIRECT in 1 MiB blocks (the host's data in fast-registered MRs: REG_MR
# WQEs on hns_0, RDMA READs by the target, SEND_WITH_INV answers that
# invalidate the host's rkeys), read back the same way (RDMA WRITEs into
# the host's MRs) and compared byte for byte, then 4 KiB writes (inline
# data in the command capsule) read back and compared too; then disconnect
# and unload everything. Prints the I/O rates (MB/s from the guest clock).
# The hns-sim counters (REG_MR, LOCAL_INV, SEND_WITH_INV) are printed by
# scripts/check.sh after the boot. TEST lines are in the group "ulp/..."
# (C driver) or "ulp-rs/..." (hns_roce_rs).
#
# ULP_SRQ=1 loads nvmet-rdma with use_srq=1: the target's queues then
# receive through one kernel SRQ of hns_1 (post_srq_recv, receive
# completions taking their WR ids through the index queue); the plan
# checks with "rdma res show srq" that the target has one, and its TEST
# lines are in the group "ulp-srq/..." or "ulp-srq-rs/...".
#
# ULP_RESET=1 adds, after the I/O checks, a function reset
# (hns_sim resets both functions) while dd writes to the namespace: the
# host's QPs have receive WRs (and maybe sends) outstanding, so the reset's
# UNINIT step runs their CQs' handlers and the software poll flushes them
# (hns_roce_handle_device_err, hns_roce_v2_sw_poll_cq); the ib_device's
# unregistration deletes the controller, whose teardown drains its QPs
# during the reset (the drain WR into the WR-id ring, completed by the
# software poll). Checked: the reset write returns with both functions
# reset, dd ends within 60 s, the controller is gone, no drain failure is
# logged; then the target is taken down and the driver unloaded as
# usual. Its TEST lines are in the group "ulp-reset/..." or
# "ulp-reset-rs/...".
#
#   [ULP_SRQ=1] [ULP_RESET=1] sh /opt/hns/ulp-plan.sh [DRIVER-MODULE]     (default hns_roce_hw_v2)
. /opt/hns/lib.sh
mod=${1:-hns_roce_hw_v2}
SRQ=${ULP_SRQ:-0}
RST=${ULP_RESET:-0}
g=ulp
[ "$SRQ" = 1 ] && g=ulp-srq
[ "$RST" = 1 ] && g=ulp-reset
[ "$mod" = hns_roce_rs ] && g=$g-rs
HNS_TIMEOUT=${HNS_TIMEOUT:-300}
NQN=nqn.2026-12.io.github.hns-roce-rs:ulp
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:6e5f0a14-0000-4000-8000-000000000014
HOSTID=6e5f0a14-0000-4000-8000-000000000014
MIB=${ULP_MIB:-64}

check $g/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
check $g/hns1-active port_state hns_1 PORT_ACTIVE || plan_exit
N0=$(rdma_netdev hns_0)
N1=$(rdma_netdev hns_1)
check $g/ipv4-static-neighbours ipv4_pair "$N0" "$N1" || plan_exit
echo "    hns_0: $N0 192.168.77.1, hns_1: $N1 192.168.77.2"

# Target: a 1 GiB memory-backed null_blk (pages allocated as written) as
# namespace 1 of one subsystem, any host allowed, port 1 = RDMA on hns_1's
# address.
target_up() {
    modprobe null_blk nr_devices=1 gb=1 memory_backed=1 &&
        if [ "$SRQ" = 1 ]; then modprobe nvmet-rdma use_srq=1; else modprobe nvmet-rdma; fi &&
        nvmet_export "$NQN" &&
        dmesg | grep 'nvmet_rdma: enabling port 1'
}
check $g/target-listens target_up || plan_exit
echo "    $out"

# Host: one CPU, so nr_io_queues (-i) is capped at 1 by nvme-fabrics; one
# write queue (-W) more gives two I/O queues that both carry traffic
# (writes on the default queue, reads on the read queue).
host_up() {
    modprobe nvme-rdma &&
        nvme connect -t rdma -a 192.168.77.2 -s 4420 -w 192.168.77.1 -n "$NQN" \
            -i 2 -W 1 --hostnqn="$HOSTNQN" --hostid="$HOSTID" || return 1
    wait_nvme0n1 || return 1
    echo "$(cat /sys/class/nvme/nvme0/transport) $(cat /sys/class/nvme/nvme0/address)"
    echo "size: $(($(cat /sys/block/nvme0n1/size) / 2048)) MiB," \
        "max I/O: $(cat /sys/block/nvme0n1/queue/max_hw_sectors_kb) KiB"
    dmesg | grep -E 'nvme nvme0: (creating|mapped)'
}
check $g/connect host_up || plan_exit
printf '%s\n' "$out" | sed 's/^/    /'
check $g/io-queues sh -c "dmesg | grep 'nvme nvme0: creating 2 I/O queues'"

# Which functions carry the queues: the host's RC QPs (admin + 2 I/O) on
# hns_0, the target's on hns_1 (rdma res: lqpn, peer rqpn, owner).
qps_per_device() {
    rdma res show qp | grep 'type RC' | sed 's/^/  /'
    h=$(rdma res show qp link hns_0/1 | grep -c 'type RC')
    t=$(rdma res show qp link hns_1/1 | grep -c 'type RC')
    echo "RC QPs: hns_0 $h, hns_1 $t"
    [ "$h" -eq 3 ] && [ "$t" -eq 3 ]
}
check $g/queues-hns0-to-hns1 qps_per_device
printf '%s\n' "$out" | sed 's/^/    /'

# With use_srq=1 the target (hns_1) receives through kernel SRQs (one per
# completion vector: hns-sim gives one) and the host (hns_0) has none.
target_srqs() {
    rdma res show srq | sed 's/^/  /'
    rdma res show srq -dd dev hns_1 | sed 's/^/  /'
    t=$(rdma res show srq dev hns_1 | grep -c 'srqn')
    h=$(rdma res show srq dev hns_0 | grep -c 'srqn')
    echo "SRQs: hns_1 $t, hns_0 $h"
    [ "$t" -ge 1 ] && [ "$h" -eq 0 ]
}
if [ "$SRQ" = 1 ]; then
    check $g/target-uses-srq target_srqs
    printf '%s\n' "$out" | sed 's/^/    /'
fi

# The pattern: 1 MiB of seeded pseudo-random bytes repeated, every 512-byte
# sector stamped with its byte offset (a misplaced block shows where it
# came from). pattern FILE MIB SEED
pattern() {
    python3 - "$@" <<'EOF'
import array, random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]) << 20, int(sys.argv[3])
buf = bytearray(random.Random(seed).randbytes(1 << 20) * (size >> 20))
memoryview(buf).cast("Q")[::64] = array.array("Q", range(0, size, 512))
open(path, "wb").write(buf)
EOF
}
now() { cut -d' ' -f1 /proc/uptime; }
# rate BYTES T0 T1: MB/s (10^6 bytes).
rate() {
    awk -v b="$1" -v a="$2" -v z="$3" 'BEGIN { d = z - a; if (d <= 0) d = 0.01;
        printf "%.1f MB/s (%d bytes in %.2f s)", b / d / 1e6, b, d }'
}
check $g/pattern pattern /tmp/pattern "$MIB" 14 || plan_exit
BYTES=$((MIB << 20))

# timed_dd WHAT DD-ARGS...: dd, then "RATE WHAT <MB/s> ..." for $BYTES.
timed_dd() {
    what=$1
    shift
    t0=$(now)
    timeout "$HNS_TIMEOUT" dd "$@" || return 1
    t1=$(now)
    echo "RATE $what $(rate $BYTES "$t0" "$t1")"
}
check $g/write-${MIB}m-direct timed_dd write if=/tmp/pattern of=/dev/nvme0n1 bs=1M count="$MIB" oflag=direct
printf '%s\n' "$out" | grep '^RATE' | sed 's/^/    /'
check $g/read-${MIB}m-direct timed_dd read if=/dev/nvme0n1 of=/tmp/back bs=1M count="$MIB" iflag=direct
printf '%s\n' "$out" | grep '^RATE' | sed 's/^/    /'
check $g/compare-${MIB}m cmp /tmp/pattern /tmp/back
rm -f /tmp/back

# Small writes: 4 KiB each, which the host sends as inline data in the
# command capsule (no MR, no READ by the target), past the first region;
# read back in one 1 MiB O_DIRECT read.
small_io() {
    pattern /tmp/small 1 15 &&
        dd if=/tmp/small of=/dev/nvme0n1 bs=4k count=256 seek=$((BYTES / 4096)) oflag=direct &&
        dd if=/dev/nvme0n1 of=/tmp/small-back bs=1M count=1 skip="$MIB" iflag=direct &&
        cmp /tmp/small /tmp/small-back
}
check $g/inline-writes-4k small_io
rm -f /tmp/small /tmp/small-back /tmp/pattern

disconnect() {
    nvme disconnect -n "$NQN" || return 1
    lw=0
    while [ -e /dev/nvme0n1 ] && [ $lw -lt 100 ]; do
        sleep 0.1
        lw=$((lw + 1))
    done
    [ ! -e /dev/nvme0n1 ] || { echo "/dev/nvme0n1 still there after 10 s"; return 1; }
    rmmod nvme_rdma && rmmod nvme_fabrics && rmmod nvme_core
}
# reset_under_io: the ULP_RESET step (see the header).
reset_under_io() {
    dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=900 oflag=direct >/tmp/rdd.out 2>&1 &
    ddp=$!
    sleep 3
    kill -0 $ddp 2>/dev/null || { echo "dd ended before the reset: $(tail -n 1 /tmp/rdd.out)"; return 1; }
    rn0=$(dmesg | grep -c 'hns-sim: function reset done')
    timeout 120 sh -c "echo 1 >/sys/module/hns_sim/parameters/reset" ||
        echo "reset write failed or took over 120 s"
    rn1=$(dmesg | grep -c 'hns-sim: function reset done')
    echo "function resets done: $((rn1 - rn0))"
    lw=0
    while kill -0 $ddp 2>/dev/null && [ $lw -lt 60 ]; do
        sleep 1
        lw=$((lw + 1))
    done
    if kill -0 $ddp 2>/dev/null; then
        echo "dd still running 60 s after the reset"
        kill -9 $ddp
        return 1
    fi
    wait $ddp
    echo "dd exit $?: $(tail -n 1 /tmp/rdd.out)"
    lw=0
    while [ -e /dev/nvme0n1 ] && [ $lw -lt 100 ]; do
        sleep 0.1
        lw=$((lw + 1))
    done
    dmesg | grep -E 'nvme nvme0|drain' | tail -n 8
    [ ! -e /dev/nvme0n1 ] || { echo "/dev/nvme0n1 still there 10 s after dd ended"; return 1; }
    ! dmesg | grep -E 'drain (rq|sq)' || { echo "a drain failed"; return 1; }
    [ "$rn1" -eq $((rn0 + 2)) ]
}
if [ "$RST" = 1 ]; then
    check $g/reset-under-io reset_under_io
    printf '%s\n' "$out" | sed 's/^/    /'
    check $g/host-modules-out sh -c "rmmod nvme_rdma && rmmod nvme_fabrics && rmmod nvme_core"
else
    check $g/disconnect disconnect
fi
target_down() {
    nvmet_unexport "$NQN" &&
        rmmod nvmet_rdma && rmmod nvmet && rmmod null_blk
}
check $g/target-down target_down
check $g/no-qps-left sh -c "! rdma res show qp | grep 'type RC'"
check $g/unload sh -c "rmmod $mod && rmmod hns_sim"
plan_exit
