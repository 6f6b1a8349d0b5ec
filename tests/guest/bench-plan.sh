#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Benchmark plan (make bench, SIM=1): perftest on hns_0 looped back to
# itself, server and client in the guest. Prints one line per run:
#
#   BENCH <tool> size=<bytes> iters=<n> <perftest's result columns>
#
# for the host (scripts/bench.sh) to tabulate. Nothing here passes or fails
# on a number: speed targets are read off the table, not asserted.
#
#   sh /opt/hns/bench-plan.sh [ITERS]
. /opt/hns/lib.sh
ITERS=${1:-20000}
HNS_SERVER_DELAY=1
HNS_TIMEOUT=600

port_state hns_0 PORT_ACTIVE || exit 1
GIDX=$(roce_v2_gid hns_0) || { echo "no RoCE v2 GID"; exit 1; }

# See tests/guest/data-plan.sh for --no_ddp and -F. perftest's own numbers
# are meaningless under TCG (its cycle counter does not calibrate), so each
# tool runs twice, with 10 and with N iterations, timed by /proc/uptime
# around the client; the rate is (N - 10) / (t_N - t_10), which leaves the
# connection setup out.
now() {
    cut -d' ' -f1 /proc/uptime
}
# cpu_ticks: "busy total" of the guest's one CPU from /proc/stat (idle and
# iowait are not busy), sampled at the scheduler tick.
cpu_ticks() {
    awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t }' /proc/stat
}
timed() {
    tool=$1 size=$2 iters=$3 port=$4
    shift 4
    c0=$(cpu_ticks)
    t0=$(now)
    pair "bench/$tool-$size-$iters" \
        "$tool -d hns_0 -x $GIDX -p $port -s $size -n $iters -F --no_ddp $*" \
        "$tool -d hns_0 -x $GIDX -p $port -s $size -n $iters -F --no_ddp $* 127.0.0.1" >/dev/null
    t1=$(now)
    c1=$(cpu_ticks)
    echo "$t0 $t1 $c0 $c1"
}
# run TOOL SIZE ITERS PORT [EXTRA...]: one BENCH line; "guest CPU busy" is
# the share of the N-iteration run's ticks the guest was not idle.
run() {
    tool=$1 size=$2 iters=$3 port=$4
    shift 4
    short=$(timed "$tool" "$size" 10 "$port" "$@")
    long=$(timed "$tool" "$size" "$iters" $((port + 1)) "$@")
    echo "$short $long" | awk -v t="$tool${*:+ $*}" -v s="$size" -v n="$iters" '{
        d = ($8 - $7) - ($2 - $1)
        busy = ($12 - $10) == 0 ? 0 : 100 * ($11 - $9) / ($12 - $10)
        if (d > 0)
            printf "BENCH %s size=%s iters=%s %.0f msg/s (%.1f us/msg; %.2f s for 10, %.2f s for %s; guest CPU busy %.0f%%)\n",
                t, s, n, (n - 10) / d, 1e6 * d / (n - 10), $2 - $1, $8 - $7, n, busy
        else
            printf "BENCH %s size=%s iters=%s no result (%.2f s vs %.2f s)\n", t, s, n, $2 - $1, $8 - $7
    }'
}
run ib_send_bw 64 "$ITERS" 18600
run ib_send_bw 4096 "$ITERS" 18602
run ib_write_bw 64 "$ITERS" 18604
run ib_send_lat 64 $((ITERS / 100)) 18606
# Completion events instead of busy polling: both processes sleep while
# they wait, so a message does not wait for the scheduler tick.
run ib_send_lat 64 $((ITERS / 100)) 18608 -e
rmmod hns_roce_hw_v2 2>/dev/null
rmmod hns_roce_rs 2>/dev/null
rmmod hns_sim
plan_exit
