#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Benchmark plan (make bench; run-guest.sh --driver none --sim 2):
# both RoCE drivers in the same boot on the same hns-sim, alternating. Each
# round has three slots, c, rs and c2 (the C driver again: the C/C rows
# measure the noise of a ratio); odd rounds run them as c rs c2, even
# rounds as c2 rs c, so a drift over the boot weighs on both C slots alike.
# In every slot:
#
#   probe     insmod -> hns_0 registered, rmmod (bench_probe.py, BENCH_PROBES
#             cycles; the driver stays loaded afterwards)
#   verbs     the verbs control path through libibverbs (verbs_bench)
#   kpath     ib_post_send/ib_post_recv/ib_poll_cq inside the kernel
#             (hns_kbench.ko, kverbs on hns_0)
#   perftest  send/write/read bw and lat on hns_0 looped back to itself
#   nvme      NVMe over RDMA hns_0 -> hns_1, 4 KiB random reads (rndread)
#   ceq       the completion interrupt: each CEQ hard interrupt's duration,
#             the C driver's CEQ work (a BH work item) and the time from the
#             interrupt to the ULP's completion handler, from trace events,
#             under ib_send_bw and ib_send_lat with completion events (-e);
#             and those two perftest figures (ceq_trace.py)
#
# and once per driver after the rounds (counts, not times):
#
#   alloc     kernel allocations per verbs op (verbs_bench under the kmem
#             trace events of its own process), printed as
#             "BA <driver> <metric> <kmalloc> <kmem_cache> <pages>"
#
# The programs verbs_bench, rndread and hns_kbench.ko come in /opt/run/extra
# (scripts/bench.sh builds them; run-guest.sh HNS_GUEST_EXTRA). Every
# figure is printed as one line
#
#   BR <round> <slot> <part>/<metric> <wall_ns> <cpu_ns or ->
#
# in nanoseconds per operation (lower is better) for scripts/bench-report.py.
# Nothing passes or fails on a number; a part that cannot run prints
# "BENCH-ERROR <round> <slot> <part> <why>" and the plan exits 1 at the end.
#
#   sh /opt/hns/bench-plan.sh [ROUNDS]     (default 5)
#   BENCH_PARTS="probe verbs kpath perftest nvme ceq alloc"  BENCH_PROBES=3
#   BENCH_NVME_SECONDS=10  BENCH_BW_ITERS=5000  BENCH_LAT_ITERS=200  BENCH_WARMUP=1
#   BENCH_CEQ_ITERS=1000 (ib_send_bw -e messages of part ceq)
. /opt/hns/lib.sh
ROUNDS=${1:-5}
PARTS=${BENCH_PARTS:-probe verbs kpath perftest nvme ceq alloc}
PROBES=${BENCH_PROBES:-3}
NVME_S=${BENCH_NVME_SECONDS:-10}
BW_N=${BENCH_BW_ITERS:-5000}
LAT_N=${BENCH_LAT_ITERS:-200}
CEQ_N=${BENCH_CEQ_ITERS:-1000}
X=/opt/run/extra
HNS_SERVER_DELAY=1
HNS_TIMEOUT=300
ERRORS=0

has_part() {
    case " $PARTS " in *" $1 "*) return 0 ;; esac
    return 1
}
bench_error() {
    echo "BENCH-ERROR $R $S $1 $2"
    ERRORS=$((ERRORS + 1))
}
# emit PART: the part's "metric wall cpu" lines on stdin, as BR lines.
emit() {
    while read -r m w c; do
        echo "BR $R $S $1/$m $w ${c:--}"
    done
}

part_probe() {
    out=$(python3 /opt/hns/bench_probe.py "$DRV" "$PROBES" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed -n 's/^BP //p' | emit probe
    [ $rc -eq 0 ] || bench_error probe "$(printf '%s\n' "$out" | grep -v '^BP ' | tail -n 3)"
    return $rc
}

# verbs_bench: "BENCHV <metric> n=N wall_ns=W cpu_ns=C ..." per metric.
part_verbs() {
    [ -x $X/verbs_bench ] || { bench_error verbs "no $X/verbs_bench"; return; }
    out=$($X/verbs_bench -d hns_0 -x "$GIDX" 2>&1)
    rc=$?
    printf '%s\n' "$out" | awk '$1 == "BENCHV" && $3 ~ /^n=/ {
        w = c = "-"
        for (i = 3; i <= NF; i++) {
            if ($i ~ /^wall_ns=/) w = substr($i, 9)
            if ($i ~ /^cpu_ns=/) c = substr($i, 8)
        }
        print $2, w, c
    }' | emit verbs
    [ $rc -eq 0 ] || bench_error verbs "exit $rc: $(printf '%s\n' "$out" | grep -v 'n=' | tail -n 2 | tr '\n' ' ')"
}

# hns_kbench.ko: "BENCHK <metric> n=N ns=M p10=.. p90=.." in the kernel log,
# then "BENCHK done". Time inside one kverbs call: that is CPU time of the
# caller as well (it does not sleep), so wall and cpu are the same figure.
part_kpath() {
    [ -f $X/hns_kbench.ko ] || { bench_error kpath "no $X/hns_kbench.ko"; return; }
    dmesg -c >/dev/null
    if ! insmod $X/hns_kbench.ko dev=hns_0; then
        bench_error kpath "insmod failed: $(dmesg | grep BENCHK | tail -n 1)"
        return
    fi
    rmmod hns_kbench
    log=$(dmesg | sed -n 's/.*BENCHK //p')
    printf '%s\n' "$log" | awk '$2 ~ /^n=/ {
        for (i = 3; i <= NF; i++) if ($i ~ /^ns=/) v = substr($i, 4)
        print $1, v, v
    }' | emit kpath
    printf '%s\n' "$log" | grep -q '^done' || bench_error kpath "no BENCHK done: $(printf '%s\n' "$log" | tail -n 1)"
}

# perftest on hns_0 looped back to itself, 64-byte messages: ns per message
# from the client's own figures (bw: 1000 / MsgRate[Mpps]; lat: t_typical).
# The guest clock is the TSC since ACPI (guest/clock-1ms), so perftest
# calibrates its cycle counter: no -F. No CPU figure (the driver is off the
# data path; these rows must be equal, a difference is a finding).
PORT=18700
part_perftest() {
    for t in send_bw write_bw read_bw send_lat write_lat read_lat; do
        case $t in *_bw) n=$BW_N ;; *) n=$LAT_N ;; esac
        PORT=$((PORT + 1))
        a="-d hns_0 -x $GIDX -p $PORT -s 64 -n $n --no_ddp"
        pair "bench/$t" "ib_$t $a" "ib_$t $a 127.0.0.1" >/dev/null
        row=$(printf '%s\n' "$cout" | grep -E '^ *64 +[0-9]+ ' | tail -n 1)
        v=$(echo "$row" | awk -v t=$t '{
            if (t ~ /_bw$/) { if ($5 > 0) printf "%.0f", 1000 / $5 }
            else printf "%.0f", 1000 * $5 }')
        if [ -n "$v" ]; then
            echo "$t $v -" | emit perftest
        else
            bench_error perftest "$t: no result row (server exit $src, client exit $crc): client: $(printf '%s\n' "$cout" | tail -n 2 | tr '\n' ' ') server: $(tail -n 2 /tmp/server.out | tr '\n' ' ')"
        fi
    done
}

# The completion interrupt (part ceq). The trace clock is x86-tsc (the
# ns clocks print whole microseconds), converted with the kernel's refined
# TSC calibration, read from the log before any part clears it.
TSC_MHZ=$(dmesg | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' | tail -n 1)
CEQ_EVENTS="irq/irq_handler_entry irq/irq_handler_exit workqueue/workqueue_execute_start workqueue/workqueue_execute_end sched/sched_waking"
# ceq_trace on|off: the events of ceq_trace.py, the IRQ events filtered to
# the CEQ vectors of /proc/interrupts (hns-<pci>-ceq-<n>, both devices),
# sched_waking to the perftest processes.
ceq_trace() {
    if [ "$1" = off ]; then
        echo 0 >$TR/tracing_on
        for e in $CEQ_EVENTS; do
            echo 0 >$TR/events/$e/enable
            echo 0 >$TR/events/$e/filter
        done
        echo local >$TR/trace_clock
        echo 1 >$TR/tracing_on
        return
    fi
    f=$(awk '$NF ~ /^hns-.*-ceq-[0-9]+$/ { sub(":", "", $1); printf "%sirq == %s", s, $1; s = " || " }' /proc/interrupts)
    [ -n "$f" ] || return 1
    echo 0 >$TR/tracing_on
    echo x86-tsc >$TR/trace_clock
    echo 16384 >$TR/buffer_size_kb
    echo "$f" >$TR/events/irq/irq_handler_entry/filter
    echo "$f" >$TR/events/irq/irq_handler_exit/filter
    echo 'comm ~ "ib_send_*"' >$TR/events/sched/sched_waking/filter
    for e in $CEQ_EVENTS; do echo 1 >$TR/events/$e/enable; done
    echo >$TR/trace
    echo 1 >$TR/tracing_on
}
# ceq_run TEST ITERS: ib_TEST with completion events under the trace; the
# perftest figure (ns per message or t_typical) in $v, ceq_trace.py's lines
# of the interrupts it caused in $figs.
ceq_run() {
    PORT=$((PORT + 1))
    a="-d hns_0 -x $GIDX -p $PORT -s 64 -n $2 -e --no_ddp"
    ceq_trace on || { bench_error ceq "no CEQ vector in /proc/interrupts"; return 1; }
    pair "bench/ceq_$1" "ib_$1 $a" "ib_$1 $a 127.0.0.1" >/dev/null
    echo 0 >$TR/tracing_on
    figs=$(python3 /opt/hns/ceq_trace.py "$TSC_MHZ" $TR/trace 2>&1)
    frc=$?
    ceq_trace off
    row=$(printf '%s\n' "$cout" | grep -E '^ *64 +[0-9]+ ' | tail -n 1)
    v=$(echo "$row" | awk -v t=$1 '{
        if (t ~ /_bw$/) { if ($5 > 0) printf "%.0f", 1000 / $5 }
        else printf "%.0f", 1000 * $5 }')
    if [ -z "$v" ]; then
        bench_error ceq "$1 -e: no result row (server exit $src, client exit $crc): client: $(printf '%s\n' "$cout" | tail -n 2 | tr '\n' ' ')"
        return 1
    fi
    [ $frc -eq 0 ] || { bench_error ceq "$1 -e: no CEQ interrupt in the trace: $(printf '%s\n' "$figs" | tail -n 2 | tr '\n' ' ')"; return 1; }
    echo "BENCH-CEQ $R $S $1 $(printf '%s\n' "$figs" | grep '^CEQN')"
}
# Interrupt and BH times (irq_*, bh_*, total_*) under ib_send_bw -e, a
# completion event per message or batch; the time to the ULP's handler
# (wake_*) and the latency under ib_send_lat -e, one event per message.
# BR metrics ceq/<figure>_<p50|p99|max> (the C driver alone has bh_*) and
# ceq/send_bw_ev, ceq/send_lat_ev (as part perftest's figures).
part_ceq() {
    [ -d $TR/events/irq ] || mount -t tracefs nodev $TR 2>/dev/null
    [ -d $TR/events/irq ] || { bench_error ceq "no irq trace events"; return; }
    [ -n "$TSC_MHZ" ] || { bench_error ceq "no refined TSC calibration in the kernel log"; return; }
    if ceq_run send_bw "$CEQ_N"; then
        echo "send_bw_ev $v" | emit ceq
        printf '%s\n' "$figs" | grep -E '^(irq|bh|total)_' | emit ceq
    fi
    if ceq_run send_lat "$LAT_N"; then
        echo "send_lat_ev $v" | emit ceq
        printf '%s\n' "$figs" | grep -E '^wake_' | emit ceq
    fi
}

# NVMe over RDMA (the ulp plan's setup in short): a null_blk namespace
# behind nvmet-rdma on hns_1, nvme-rdma on hns_0 with one read queue.
NQN=nqn.2026-12.io.github.hns-roce-rs:bench
nvme_up() {
    modprobe null_blk nr_devices=1 gb=1 memory_backed=1 && modprobe nvmet-rdma &&
        nvmet_export "$NQN" &&
        modprobe nvme-rdma &&
        nvme connect -t rdma -a 192.168.77.2 -s 4420 -w 192.168.77.1 -n "$NQN" -i 1 >/dev/null &&
        wait_nvme0n1
}
nvme_down() {
    nvme disconnect -n "$NQN" >/dev/null
    rmmod nvme_rdma nvme_fabrics nvme_core 2>/dev/null
    nvmet_unexport "$NQN" 2>/dev/null
    rmmod nvmet_rdma nvmet null_blk 2>/dev/null
    return 0
}
# rndread: "BENCHN iops=I ios=N seconds=S cpu_us_per_io=C ..."; per I/O:
# wall = 1e9 / IOPS, cpu = the guest's busy time per I/O.
part_nvme() {
    [ -x $X/rndread ] || { bench_error nvme "no $X/rndread"; return; }
    # Addresses once: they stay on hns_sim's netdevs across driver reloads.
    if [ -z "${N0:-}" ]; then
        N0=$(rdma_netdev hns_0)
        N1=$(rdma_netdev hns_1)
        ipv4_pair "$N0" "$N1" || { bench_error nvme "ipv4_pair $N0 $N1 failed"; return; }
    fi
    if ! nvme_up; then
        bench_error nvme "setup failed: $(dmesg | tail -n 2 | tr '\n' ' ')"
        nvme_down
        return
    fi
    out=$($X/rndread /dev/nvme0n1 "$NVME_S" 2>&1)
    rc=$?
    printf '%s\n' "$out" | awk '$1 == "BENCHN" {
        for (i = 2; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == "iops" && kv[2] > 0) w = sprintf("%.0f", 1e9 / kv[2])
            if (kv[1] == "cpu_us_per_io") c = sprintf("%.0f", 1000 * kv[2])
        }
        if (w != "") print "randread_4k", w, c
    }' | emit nvme
    [ $rc -eq 0 ] || bench_error nvme "rndread exit $rc: $(printf '%s\n' "$out" | tail -n 2 | tr '\n' ' ')"
    nvme_down
}

# Allocations per verbs op: the kmem trace events (kmalloc,
# kmem_cache_alloc, mm_page_alloc) of the verbs_bench process alone
# (set_event_pid), for a run of N + 1 ops minus a run of 1 op (device
# open, set-up and teardown cancel out), over N. A count, so one run per
# driver is enough; what varies is the user buffer's physical layout (the
# umem's scatterlist pages of the 256 MiB MR). kmem_cache counts include the
# debug kernel's own bookkeeping (kmemleak's object per allocation).
ALLOC_METRICS="open_close_device alloc_dealloc_pd create_destroy_cq_1024 create_destroy_rc_qp modify_rc_qp_chain reg_dereg_mr_4k reg_dereg_mr_2m reg_dereg_mr_256m create_destroy_srq"
TR=/sys/kernel/tracing
# alloc_run METRIC N: "kmalloc kmem_cache pages" of N ops of METRIC.
alloc_run() {
    echo >$TR/trace
    for e in kmalloc kmem_cache_alloc mm_page_alloc; do echo 1 >$TR/events/kmem/$e/enable; done
    sh -c "echo \$\$ >$TR/set_event_pid; exec $X/verbs_bench -d hns_0 -x $GIDX -w 0 -m $1 -N $1=$2" \
        >/dev/null 2>&1 || echo "alloc_run: verbs_bench $1 failed" >&2
    echo 0 >$TR/events/kmem/enable
    echo >$TR/set_event_pid
    awk '/ kmalloc:/ { a++ } / kmem_cache_alloc:/ { b++ } / mm_page_alloc:/ { c++ }
        END { print a + 0, b + 0, c + 0 }' $TR/trace
}
part_alloc() {
    [ -d $TR/events/kmem ] || mount -t tracefs nodev $TR 2>/dev/null
    [ -d $TR/events/kmem ] || { bench_error alloc "no kmem trace events"; return; }
    echo 16384 >$TR/buffer_size_kb
    for m in $ALLOC_METRICS; do
        case $m in *256m) n=2 ;; *) n=5 ;; esac
        one=$(alloc_run $m 1) more=$(alloc_run $m $((n + 1)))
        echo "$one $more" | awk -v d=$DRV -v m=$m -v n=$n '{
            printf "BA %s %s %.1f %.1f %.1f\n", d, m, ($4 - $1) / n, ($5 - $2) / n, ($6 - $3) / n }'
    done
}

# slot NAME: one driver's turn.
slot() {
    S=$1
    case $S in c2) DRV=c ;; *) DRV=$S ;; esac
    MOD=$(driver_module $DRV)
    if has_part probe; then
        part_probe || return
    else
        load_roce $DRV && wait_hns0 || { bench_error load "$(dmesg | tail -n 2 | tr '\n' ' ')"; return; }
    fi
    if ! port_state hns_0 PORT_ACTIVE >/dev/null || ! GIDX=$(roce_v2_gid hns_0); then
        bench_error port "hns_0 not active or no RoCE v2 GID"
        rmmod $MOD
        return
    fi
    has_part verbs && part_verbs
    has_part kpath && part_kpath
    has_part perftest && part_perftest
    if has_part nvme; then
        if [ "$SIM" -ge 2 ] && port_state hns_1 PORT_ACTIVE >/dev/null; then
            part_nvme
        else
            bench_error nvme "needs hns_1 (SIM=2)"
        fi
    fi
    has_part ceq && part_ceq
    rmmod $MOD || bench_error unload "rmmod $MOD failed"
}

echo "BENCH-BEGIN rounds=$ROUNDS parts=$PARTS probes=$PROBES"
# Warm-up (BENCH_WARMUP=0: none): each driver once through the parts,
# printed as round 0, which the report leaves out. The first slot of a
# boot otherwise pays for the cold page cache (modprobe, python3, the
# programs) and the first use of the kernel's RDMA modules.
if [ "${BENCH_WARMUP:-1}" = 1 ]; then
    R=0
    slot c
    slot rs
fi
R=1
while [ $R -le "$ROUNDS" ]; do
    if [ $((R % 2)) -eq 1 ]; then order="c rs c2"; else order="c2 rs c"; fi
    for s in $order; do
        t0=$(cut -d' ' -f1 /proc/uptime)
        slot "$s"
        echo "BENCH-SLOT $R $s $(cut -d' ' -f1 /proc/uptime) $t0"
    done
    R=$((R + 1))
done
if has_part alloc; then
    R=A
    for S in c rs; do
        DRV=$S
        MOD=$(driver_module $DRV)
        if load_roce $DRV && wait_hns0 && port_state hns_0 PORT_ACTIVE >/dev/null && GIDX=$(roce_v2_gid hns_0); then
            part_alloc
        else
            bench_error alloc "$DRV: hns_0 not ready"
        fi
        rmmod $MOD || bench_error unload "rmmod $MOD failed"
    done
fi
rmmod hns_sim
echo "BENCH-END errors=$ERRORS"
[ "$ERRORS" -eq 0 ]
