# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=sh
#
# Helpers for guest test plans: every check prints exactly one line
# "TEST <group>/<name> PASS|FAIL|SKIP [detail]"; failures are followed by the
# tail of the check's output, indented. Source it, then call plan_exit last.

HNS_FAILS=0

# The driver the run loaded (run-guest.sh --driver: c, rs or none) and the
# module to unload at the end of a plan.
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
case "$DRIVER" in
rs) DRV_MODULE=hns_roce_rs ;;
*) DRV_MODULE=hns_roce_hw_v2 ;;
esac

# load_roce D: load the RoCE driver D (c: hns-roce-hw-v2, rs: hns_roce_rs).
load_roce() {
    case "$1" in
    c) modprobe hns-roce-hw-v2 ;;
    rs) insmod /opt/run/modules/hns_roce_rs.ko ;;
    *)
        echo "load_roce: driver must be c or rs (got '$1')"
        return 2
        ;;
    esac
}

# driver_module D: prints the module name of RoCE driver D (c or rs); for a
# plan taking the driver as its argument: MOD=$(driver_module "$D") || ...
driver_module() {
    case "$1" in
    c) echo hns_roce_hw_v2 ;;
    rs) echo hns_roce_rs ;;
    *)
        echo "driver must be c or rs (got '$1')"
        return 2
        ;;
    esac
}

# plan_driver PLAN ARG: the driver a NIC plan runs for (c, rs, or none for
# the NIC alone), ARG or the boot's $DRIVER; prints it, or an error naming
# PLAN and returns 2.
plan_driver() {
    case "$2" in
    c | rs | none) echo "$2" ;;
    *)
        echo "$1: driver must be c, rs or none (got '$2')"
        return 2
        ;;
    esac
}

# hns3_function [EXCEPT]: the first PCI function hns3 is bound to (other
# than EXCEPT); nothing when there is none.
hns3_function() {
    for p in /sys/bus/pci/drivers/hns3/0000:*; do
        [ -e "$p" ] && [ "${p##*/}" != "${1:-}" ] && echo "${p##*/}" && return 0
    done
}

# netdev_of FN: the netdev of PCI function FN; nothing when it has none.
netdev_of() {
    [ -n "$1" ] || return 0
    for n in /sys/bus/pci/devices/"$1"/net/*; do
        [ -e "$n" ] && echo "${n##*/}" && return 0
    done
}

# wait_hns0: hns_0 is listed by libibverbs within 10 s.
wait_hns0() {
    lw=0
    while [ $lw -lt 100 ]; do
        ibv_devices 2>/dev/null | grep -qw hns_0 && return 0
        sleep 0.1
        lw=$((lw + 1))
    done
    echo "no hns_0 after 10 s"
    return 1
}

report() {
    echo "TEST $1 $2${3:+ $3}"
    [ "$2" = FAIL ] && HNS_FAILS=$((HNS_FAILS + 1))
    return 0
}

# check NAME CMD... : run CMD (with a timeout unless it is a shell
# function), PASS on exit status 0.
check() {
    name=$1
    shift
    case $(type "$1" 2>/dev/null) in
    *function*) out=$("$@" 2>&1) ;;
    *) out=$(timeout "${HNS_TIMEOUT:-120}" "$@" 2>&1) ;;
    esac
    rc=$?
    if [ $rc -eq 0 ]; then
        report "$name" PASS
    else
        report "$name" FAIL "exit $rc"
        printf '%s\n' "$out" | tail -n 25 | sed 's/^/    /'
    fi
    return $rc
}

# listening NAME PORT: within 10 s, a server listens on PORT: a TCP
# socket (pingpong and perftest open theirs once their device side is
# ready), or for rping (NAME) an rdma_cm ID in state LISTEN.
listening() {
    lh=$(printf '%04X' "$2")
    lw=0
    while [ $lw -lt 200 ]; do
        if [ "$1" = rping ]; then
            rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [0-9.]*:$2 " && return 0
        else
            grep -qE ":$lh [0-9A-F]+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
        fi
        sleep 0.05
        lw=$((lw + 1))
    done
    return 1
}

# pair NAME "SERVER CMD" "CLIENT CMD": start the server in the background,
# then the client; PASS when both exit 0. The client starts after
# HNS_SERVER_DELAY seconds (2), or with PAIR_LISTEN="KIND PORT" (pair_on)
# once the server listens (listening KIND PORT).
pair() {
    name=$1
    timeout "${HNS_TIMEOUT:-120}" sh -c "$2" >/tmp/server.out 2>&1 &
    spid=$!
    if [ -n "${PAIR_LISTEN:-}" ]; then
        # shellcheck disable=SC2086 # KIND and PORT, two words
        listening $PAIR_LISTEN || echo "pair $name: no server listening ($PAIR_LISTEN) after 10 s"
    else
        sleep "${HNS_SERVER_DELAY:-2}"
    fi
    cout=$(timeout "${HNS_TIMEOUT:-120}" sh -c "$3" 2>&1)
    crc=$?
    wait $spid
    src=$?
    if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
        report "$name" PASS
    else
        report "$name" FAIL "server exit $src, client exit $crc"
        # 40 lines: a program's stderr (unbuffered) comes before its
        # buffered stdout, so an error message sits above a long header.
        echo "    --- server:"
        tail -n 40 /tmp/server.out | sed 's/^/    /'
        echo "    --- client:"
        printf '%s\n' "$cout" | tail -n 40 | sed 's/^/    /'
    fi
}

# pair_on NAME KIND PORT "SERVER CMD" "CLIENT CMD": pair, the client
# started as soon as the server listens on PORT (listening KIND PORT: a
# TCP port, or rping's rdma_cm port for KIND rping) instead of after a
# fixed delay.
pair_on() {
    PAIR_LISTEN="$2 $3"
    pair "$1" "$4" "$5"
    PAIR_LISTEN=
}

# perf_pair NAME "SERVER CMD" "CLIENT CMD": pair for perftest, then each
# side's result rows (the lines of numbers) on one line.
perf_pair() {
    pair "$1" "$2" "$3"
    echo "    server: $(perf_rows </tmp/server.out)"
    echo "    client: $(printf '%s\n' "$cout" | perf_rows)"
}

# perf_rows: perftest's result rows on stdin, joined (at most 300 characters:
# -a prints a row per size).
perf_rows() {
    grep -E '^ *[0-9]+ +[0-9]+ ' | tr '\n' ' ' | cut -c1-300
}

# port_state DEV STATE: port 1 of RDMA device DEV in STATE (PORT_ACTIVE,
# PORT_DOWN, ...) within 10 s; else what ibv_devinfo says.
port_state() {
    lw=0
    while [ $lw -lt 100 ]; do
        ibv_devinfo -d "$1" 2>/dev/null | grep -q "state:.*$2" && return 0
        sleep 0.1
        lw=$((lw + 1))
    done
    echo "$1 port not $2 after 10 s:"
    ibv_devinfo -d "$1" 2>&1 | tail -n 20
    return 1
}

# roce_v2_gid DEV: prints the index of DEV's first non-zero RoCE v2 GID
# (the link-local one appears a little after the port comes up), waiting up
# to 10 s; fails without output if there is none.
roce_v2_gid() {
    lw=0
    lp=/sys/class/infiniband/$1/ports/1
    while [ $lw -lt 100 ]; do
        for lt in "$lp"/gid_attrs/types/*; do
            li=${lt##*/}
            [ "$(cat "$lt" 2>/dev/null)" = "RoCE v2" ] || continue
            case $(cat "$lp/gids/$li" 2>/dev/null) in
            "" | 0000:0000:0000:0000:0000:0000:0000:0000) continue ;;
            esac
            echo "$li"
            return 0
        done
        sleep 0.1
        lw=$((lw + 1))
    done
    return 1
}

# ipv4_pair NDEV0 NDEV1: 192.168.77.1/24 on NDEV0, .2/24 on NDEV1, both up,
# with static ARP entries both ways (a client bound to .1 routes out of
# NDEV0, whose frames hns_sim drops, so ARP would never be answered). For
# rdma_cm between two functions (data2-plan.sh, ulp-plan.sh). /usr/bin/ip:
# busybox's ip applet cannot add neighbours.
ipv4_pair() {
    /usr/bin/ip addr add 192.168.77.1/24 dev "$1" && /usr/bin/ip link set "$1" up &&
        /usr/bin/ip addr add 192.168.77.2/24 dev "$2" && /usr/bin/ip link set "$2" up &&
        /usr/bin/ip neigh replace 192.168.77.2 lladdr "$(cat "/sys/class/net/$2/address")" \
            dev "$1" nud permanent &&
        /usr/bin/ip neigh replace 192.168.77.1 lladdr "$(cat "/sys/class/net/$1/address")" \
            dev "$2" nud permanent
}

# rdma_netdev DEV: the netdev of RDMA device DEV's port 1 (rdma link:
# "... netdev ethN").
rdma_netdev() {
    rdma link show "$1/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p'
}

# wait_nvme0n1: /dev/nvme0n1 (an NVMe over RDMA namespace just connected)
# appears within 10 s; else says so and fails.
wait_nvme0n1() {
    lw=0
    while [ ! -b /dev/nvme0n1 ] && [ $lw -lt 100 ]; do
        sleep 0.1
        lw=$((lw + 1))
    done
    [ -b /dev/nvme0n1 ] || { echo "no /dev/nvme0n1 after 10 s"; return 1; }
}

# nvmet_export NQN: the in-kernel NVMe target (nvmet-rdma and null_blk
# loaded) exports /dev/nullb0 as namespace 1 of subsystem NQN to any host,
# on port 1 = RDMA at 192.168.77.2:4420 (hns_1's address, ipv4_pair).
nvmet_export() {
    nc=/sys/kernel/config/nvmet
    { grep -q " /sys/kernel/config " /proc/mounts ||
        mount -t configfs configfs /sys/kernel/config; } &&
        mkdir "$nc/subsystems/$1" &&
        echo 1 >"$nc/subsystems/$1/attr_allow_any_host" &&
        mkdir "$nc/subsystems/$1/namespaces/1" &&
        echo /dev/nullb0 >"$nc/subsystems/$1/namespaces/1/device_path" &&
        echo 1 >"$nc/subsystems/$1/namespaces/1/enable" &&
        mkdir "$nc/ports/1" &&
        echo rdma >"$nc/ports/1/addr_trtype" &&
        echo ipv4 >"$nc/ports/1/addr_adrfam" &&
        echo 192.168.77.2 >"$nc/ports/1/addr_traddr" &&
        echo 4420 >"$nc/ports/1/addr_trsvcid" &&
        ln -s "$nc/subsystems/$1" "$nc/ports/1/subsystems/$1"
}

# nvmet_unexport NQN: undoes nvmet_export, stopping at the first failure.
nvmet_unexport() {
    nc=/sys/kernel/config/nvmet
    rm "$nc/ports/1/subsystems/$1" &&
        rmdir "$nc/ports/1" &&
        echo 0 >"$nc/subsystems/$1/namespaces/1/enable" &&
        rmdir "$nc/subsystems/$1/namespaces/1" &&
        rmdir "$nc/subsystems/$1"
}

# reload_cycles D N [WAIT]: N unload/load cycles of RoCE driver D, hns_0
# gone after each rmmod and back after each load (WAIT, default
# wait_hns0) and usable (ibv_devinfo). The kernel log (WARN, lockdep,
# kmemleak at the end of the run) is checked by run-guest.sh on the host.
reload_cycles() {
    rmod=$(driver_module "$1") || return 2
    rcn=0
    while [ $rcn -lt "$2" ]; do
        rmmod "$rmod" || { echo "cycle $rcn: rmmod $rmod failed"; return 1; }
        if [ -e /sys/class/infiniband/hns_0 ] || ibv_devices 2>/dev/null | grep -qw hns_0; then
            echo "cycle $rcn: hns_0 still listed after rmmod"
            return 1
        fi
        load_roce "$1" || { echo "cycle $rcn: loading $rmod failed"; return 1; }
        "${3:-wait_hns0}" || { echo "cycle $rcn: no hns_0 after reload"; return 1; }
        timeout 60 ibv_devinfo -d hns_0 >/dev/null 2>&1 ||
            { echo "cycle $rcn: ibv_devinfo -d hns_0 failed"; return 1; }
        rcn=$((rcn + 1))
    done
}

# need_roce_v2_gid GROUP: GIDX becomes the index of hns_0's first RoCE v2
# GID (reported as GROUP/roce-v2-gid); without one the check fails and the
# plan ends.
need_roce_v2_gid() {
    GIDX=$(roce_v2_gid hns_0)
    if [ -n "$GIDX" ]; then
        report "$1/roce-v2-gid" PASS "index $GIDX: $(cat /sys/class/infiniband/hns_0/ports/1/gids/$GIDX)"
    else
        report "$1/roce-v2-gid" FAIL "no RoCE v2 GID on hns_0 after 10 s"
        plan_exit
    fi
}

# user_pingpongs GROUP: ibv_rc_pingpong, ibv_ud_pingpong (512 bytes: the
# port MTU is 1024 with the netdev's 1500) and ibv_xsrq_pingpong (XRC_INI
# QPs sending into XRC SRQs behind XRC_TGT QPs, which the RDMA core creates
# as kernel QPs of the XRC domain), each looped back on hns_0 with GID
# index $GIDX, 10 iterations.
user_pingpongs() {
    pair "$1/rc-pingpong" \
        "ibv_rc_pingpong -d hns_0 -g $GIDX -p 18515 -n 10" \
        "ibv_rc_pingpong -d hns_0 -g $GIDX -p 18515 -n 10 127.0.0.1"
    pair "$1/ud-pingpong" \
        "ibv_ud_pingpong -d hns_0 -g $GIDX -p 18518 -n 10 -s 512" \
        "ibv_ud_pingpong -d hns_0 -g $GIDX -p 18518 -n 10 -s 512 127.0.0.1"
    pair "$1/xsrq-pingpong" \
        "ibv_xsrq_pingpong -d hns_0 -g $GIDX -p 18526 -n 10" \
        "ibv_xsrq_pingpong -d hns_0 -g $GIDX -p 18526 -n 10 127.0.0.1"
}

# send_bw_and_qpex GROUP D: an ib_send_bw pair on hns_0 ($GIDX), then one
# run of pyverbs' test_qpex through pyverbs-plan.sh (which unloads the
# driver D and hns_sim itself), then GROUP/unload-again: whatever is still
# loaded goes.
send_bw_and_qpex() {
    perf_pair "$1/send-bw" \
        "ib_send_bw -d hns_0 -x $GIDX -p 18520 -n 50 -F --no_ddp" \
        "ib_send_bw -d hns_0 -x $GIDX -p 18520 -n 50 -F --no_ddp 127.0.0.1"
    PYV_MODULES=test_qpex PYV_RUNS=1 PYV_REREG_SLOW=0 sh /opt/hns/pyverbs-plan.sh "$2"
    check "$1/unload-again" unload_left "$(driver_module "$2")" hns_sim
}

# unload_left MODULE...: rmmod each module still loaded, in order.
unload_left() {
    for m in "$@"; do
        if lsmod | grep -q "^$m "; then
            rmmod "$m" || return 1
        fi
    done
}

# The hns_roce trace events (the C driver's ten, hns_roce_trace.h), for
# plans whose events the host compares between the drivers
# (scripts/trace-events-diff.py).
HNS_TR=/sys/kernel/tracing
HNS_TE=$HNS_TR/events/hns_roce
# hns_events_on: tracefs mounted, room for a window's events (each WQE
# event holds 1 KiB of words), the buffer emptied, the events on.
hns_events_on() {
    { grep -q " $HNS_TR " /proc/mounts || mount -t tracefs tracefs $HNS_TR; } || return 1
    echo 8192 >$HNS_TR/buffer_size_kb && echo >$HNS_TR/trace && echo 1 >$HNS_TE/enable
}
# hns_events KIND...: the events off, the window's events without task,
# CPU, flags and time stamp into /tmp/hns-events.txt as TRACEEV lines; at
# least one event of each KIND (hns_mr, ...).
hns_events() {
    echo 0 >$HNS_TE/enable || return 1
    sed -n 's/^.*: \(hns_[a-z_]*\): /TRACEEV \1: /p' $HNS_TR/trace >/tmp/hns-events.txt
    echo "$(wc -l </tmp/hns-events.txt) events"
    for e in "$@"; do
        grep -q "^TRACEEV $e: " /tmp/hns-events.txt || { echo "no $e event"; return 1; }
    done
}

plan_exit() {
    [ "$HNS_FAILS" -eq 0 ] && exit 0
    exit 1
}

# The NIC plans' (nic-plan.sh, nicvf-plan.sh) common steps; they read the
# plan's $fn (the PCI function) and $dev (its netdev).
# roce_vector: the MSI-X index of the RoCE abnormal-event interrupt
# ("hns-<function>-abn-0"), from /proc/interrupts' "<index>-edge" column;
# base_matches: it is hns-sim's roce_base_vector (caps.txt), hns_0 up.
roce_vector() {
    awk -v n="hns-$fn-abn-0" '$NF == n { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+-edge$/) { sub(/-edge/, "", $i); print $i } }' /proc/interrupts
}
base_matches() {
    wait_hns0 || return 1
    want=$(sed -n 's/^roce_base_vector = //p' /opt/run/caps.txt)
    want=$((${want:-0}))
    got=$(roce_vector)
    echo "roce_base_vector $want, abn-0 on MSI-X $got"
    [ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ]
}
# link_up: the netdev gets carrier within 3 s of `ip link set up`; set
# down again at once.
link_up() {
    [ -n "$dev" ] || return 1
    ip link set "$dev" up || return 1
    lw=0
    while [ $lw -lt 30 ]; do
        if [ "$(cat /sys/class/net/"$dev"/carrier 2>/dev/null)" = 1 ]; then
            ip link set "$dev" down
            echo "$dev carrier after $lw tenths of a second"
            return 0
        fi
        sleep 0.1
        lw=$((lw + 1))
    done
    ip link set "$dev" down
    echo "$dev: no carrier after 3 s"
    return 1
}

# The NIC reset plans' (nic-reset-plan.sh, nicvf-plan.sh, nicpfvf-plan.sh)
# common steps.
# ethtool_reset DEV FLAGS: the ETHTOOL_RESET ioctl on netdev DEV, as
# `ethtool --reset DEV ...` sends it (struct ethtool_value: cmd 0x34, the
# ETH_RESET_* flags; 0xffff, DEDICATED, is hns3's function reset). The
# guest has no ethtool.
ethtool_reset() {
    python3 -c '
import array, fcntl, socket, struct, sys
dev, flags = sys.argv[1], int(sys.argv[2], 0)
val = array.array("B", struct.pack("II", 0x34, flags))
ifr = struct.pack("16sP16x", dev.encode(), val.buffer_info()[0])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
fcntl.ioctl(s.fileno(), 0x8946, ifr)
' "$1" "$2"
}
# log_count TEXT: how many kernel log lines hold TEXT.
log_count() {
    dmesg | grep -c "$1"
}
# wait_log TEXT N SECS: the kernel log has more than N lines with TEXT
# within SECS seconds.
wait_log() {
    wl=0
    while [ "$(log_count "$1")" -le "$2" ]; do
        [ $wl -ge $(($3 * 10)) ] && return 1
        sleep 0.1
        wl=$((wl + 1))
    done
}
# cq_events DEV: the completion events of RDMA device DEV's CQs so far
# (drv_arm_sn of `rdma -dd res show cq`).
cq_events() {
    rdma -dd res show cq dev "$1" 2>/dev/null |
        awk '{for (i = 1; i < NF; i++) if ($i == "drv_arm_sn") s += $(i + 1)} END {print s + 0}'
}
# res_line DEV: DEV's line of `rdma res show`, without its index.
res_line() {
    rdma res show 2>/dev/null | grep -w "$1" | sed 's/^[0-9]*: //'
}
# bg_start NAME CMD: CMD in the background (at most 300 s), its output in
# /tmp/bg-NAME.out and, once it ended, its exit status in /tmp/bg-NAME.rc;
# the background shell's PID in $bgpid.
bg_start() {
    rm -f /tmp/bg-"$1".rc
    sh -c "timeout 300 $2 >/tmp/bg-$1.out 2>&1; echo \$? >/tmp/bg-$1.rc" &
    bgpid=$!
}
# bg_end NAME PATTERN: waits up to 60 s for NAME to end; prints "exit
# STATUS: MESSAGE" (its last error line, else its last line), or "hang"
# after killing what `pkill -f PATTERN` matches.
bg_end() {
    for _ in $(seq 60); do
        if [ -s /tmp/bg-"$1".rc ]; then
            amsg=$(grep -iE 'fail|error|couldn|unable' /tmp/bg-"$1".out | tail -n 1)
            [ -n "$amsg" ] || amsg=$(tail -n 1 /tmp/bg-"$1".out)
            printf 'exit %s: %s' "$(cat /tmp/bg-"$1".rc)" "$(printf '%s' "$amsg" | cut -c1-60)"
            return 0
        fi
        sleep 1
    done
    pkill -9 -f "$2" 2>/dev/null
    echo hang
}
