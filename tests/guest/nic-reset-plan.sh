#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# hclge's own resets on hns-sim (run-guest.sh HNS_NIC=hclge, SIM=1,
# HNS_SIM_BRIDGE=1 for the FLR, with
# HNS_SIM_ARGS="--set nic_reset_ms=3000": each function reset the model
# carries out holds FUN_RST_ING 3 s after hclge's handshake), with a RoCE
# driver as hclge's RoCE client:
#
#   sh /opt/hns/nic-reset-plan.sh [c|rs]
#
# The reset is asked for as `ethtool --reset DEV dedicated` does (the
# ETHTOOL_RESET ioctl: hns3_set_reset, then hclge_reset_event with a
# function reset): hclge walks the RoCE client through DOWN, UNINIT,
# INIT, UP around the model's function reset (CFG_RST_TRIGGER,
# SW_RST_RDY, FUN_RST_ING; docs/hns-sim.md "Function reset"). TEST lines
# in the group "nic-reset-<driver>/":
#   registered            hns_0 PORT_ACTIVE with the interface up (IPv6
#                         off: no GID of its own in the compared trace)
#   func-reset-traffic    an `ibv_rc_pingpong -e -n 100000` pair passing
#                         traffic (its CQs' completion events grow), then
#                         the reset: hclge logs one more "Reset done", both
#                         processes end with an error exit within 60 s
#                         (the reset unregisters hns_0: their contexts are
#                         disassociated), hns_0 is PORT_ACTIVE again, a
#                         fresh 20-iteration pair passes, and `rdma res
#                         show` counts for hns_0 what it counted before
#                         (nothing left behind; the boot's kmemleak scan
#                         looks for the rest)
#   user-mapping-in-reset a process with a user context and its
#                         doorbell page mapped, started before the pair:
#                         its doorbell reaches the model before the
#                         reset; once hclge logged "prepare wait ok" (the
#                         RoCE DOWN done, FUN_RST_ING held) mapping the
#                         page again fails with EPERM and a doorbell
#                         written through the old mapping does not reach
#                         the model (the model takes the doorbell word
#                         when it reaches it; the probe reads it back)
#   init-during-reset     the RoCE driver unloaded, a reset asked for, and
#                         the driver loaded while hclge waits for
#                         FUN_RST_ING: its init_instance refuses with EBUSY
#                         ("Device is busy in resetting state") before
#                         anything else fails (no error logged), no hns_0,
#                         none after the reset either (hclge re-inits only
#                         a registered client); loaded again, hns_0 is back
#   flr                   with HNS_SIM_BRIDGE=1 only (a bus reset method):
#                         the pair of func-reset-traffic passing traffic,
#                         then an FLR through /sys/bus/pci/devices/FN/reset:
#                         one more "Reset done", and as after the function
#                         reset both ends exit with an error within 60 s,
#                         hns_0 is back, a fresh pair passes, `rdma res
#                         show` counts as before
#   traffic-after         a 100-iteration rc pingpong pair on hns_0
#   unload                the RoCE driver unloads
# Lines starting "    outcome:" are what make check compares between the
# drivers (equivalence/nic-reset-outcomes).
. /opt/hns/lib.sh
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
D=${1:-$DRIVER}
MOD=$(driver_module "$D") || {
    echo "nic-reset-plan.sh: $MOD"
    exit 2
}
G=nic-reset-$D

fn=$(hns3_function)
dev=$(netdev_of "$fn")
if [ -z "$dev" ]; then
    report "$G/registered" FAIL "no hns3 netdev"
    plan_exit
fi
echo 1 >/proc/sys/net/ipv6/conf/"$dev"/disable_ipv6
ip link set "$dev" up
check "$G/registered" port_state hns_0 PORT_ACTIVE || plan_exit
# The reset methods the PCI core found for the function: none on QEMU's
# root bus (no reset file at all), "bus" behind run-guest.sh's bridge.
echo "    pci reset methods of $fn: $(cat /sys/bus/pci/devices/"$fn"/reset_method 2>/dev/null || echo none)"

# ppair PORT N: an ibv_rc_pingpong -e pair of N iterations on hns_0, GID
# 0; 0 when both ends pass.
ppair() {
    timeout 60 ibv_rc_pingpong -e -d hns_0 -g 0 -p "$1" -n "$2" >/tmp/nr-server.out 2>&1 &
    pps=$!
    sleep "${HNS_SERVER_DELAY:-2}"
    timeout 60 ibv_rc_pingpong -e -d hns_0 -g 0 -p "$1" -n "$2" 127.0.0.1 >/tmp/nr-client.out 2>&1
    ppc=$?
    wait $pps
    pps=$?
    [ $ppc -eq 0 ] && [ $pps -eq 0 ] && return 0
    echo "pingpong: server exit $pps ($(tail -n 1 /tmp/nr-server.out)), client exit $ppc ($(tail -n 1 /tmp/nr-client.out))"
    return 1
}

# probe_start: a process with a user context on hns_0 (GET_CONTEXT
# through the uverbs write ABI, as reset-plan.sh's context_while_down) and
# its doorbell page mapped (mmap offset 0: the page libhns maps, whose
# word 0x230 is the shared doorbell, DB_CFG0). It rings a CQ doorbell for a
# CQN no CQ has (the model drops it) and reads the word back 0.5 s later:
# "taken" when the model consumed it (the write reached the function),
# "kept" when it stayed (the page is no longer the function's). Once
# /tmp/nr-probe.go exists it maps the page again and rings again. Its
# result, one line, in /tmp/nr-probe.out; /tmp/nr-probe.ready once the
# first ring is read back.
probe_start() {
    rm -f /tmp/nr-probe.go /tmp/nr-probe.ready /tmp/nr-probe.out
    timeout 300 python3 -c '
import ctypes, errno, glob, mmap, os, struct, time
node = glob.glob("/sys/class/infiniband/hns_0/device/infiniband_verbs/uverbs*")
fd = os.open("/dev/infiniband/" + os.path.basename(node[0]), os.O_RDWR)
resp = ctypes.create_string_buffer(40)
body = struct.pack("<QII", ctypes.addressof(resp), 0, 0)
os.write(fd, struct.pack("<IHH", 0, (8 + len(body)) // 4, 40 // 4) + body)
RW = mmap.PROT_READ | mmap.PROT_WRITE
def page():
    try:
        return mmap.mmap(fd, 4096, mmap.MAP_SHARED, RW, offset=0), "mapped"
    except OSError as x:
        return None, errno.errorcode.get(x.errno, str(x.errno))
WORD = 3 << 24 | 0xffffff
def ring(m):
    w = ctypes.c_uint64.from_buffer(m, 0x230)
    w.value = WORD
    time.sleep(0.5)
    v = w.value
    del w
    return "taken" if v == 0 else "kept" if v == WORD else hex(v)
m, how = page()
before = ring(m) if m else how
open("/tmp/nr-probe.ready", "w").close()
for _ in range(2400):
    if os.path.exists("/tmp/nr-probe.go"):
        break
    time.sleep(0.05)
again = page()[1]
during = ring(m) if m else "none"
print("mmap again %s, doorbell before %s, during %s" % (again, before, during))
' >/tmp/nr-probe.out 2>&1 &
    for _ in $(seq 200); do
        [ -e /tmp/nr-probe.ready ] && return 0
        sleep 0.1
    done
    return 1
}

# traffic_start: an `ibv_rc_pingpong -e -n 100000` pair on port 18600 in
# the background (the client once the server listens), its processes in
# $sp and $cp; waits up to 15 s for its CQs' completion events to grow
# by 10 (from $s1 to $s2). Adds to $err when the pair does not run.
traffic_start() {
    cmd="ibv_rc_pingpong -e -d hns_0 -g 0 -p 18600 -n 100000"
    bg_start server "$cmd"
    sp=$bgpid
    listening pingpong 18600 || err="$err; the server did not listen"
    bg_start client "$cmd 127.0.0.1"
    cp=$bgpid
    s1=$(cq_events hns_0) s2=$s1 w=0
    while [ "$s2" -lt $((s1 + 10)) ] && [ $w -lt 75 ]; do
        sleep 0.2
        s2=$(cq_events hns_0)
        w=$((w + 1))
    done
    if ! kill -0 $sp 2>/dev/null || ! kill -0 $cp 2>/dev/null || [ "$s2" -lt $((s1 + 10)) ]; then
        err="$err; no traffic before the reset (completion events $s1 -> $s2)"
    fi
    t0=$(date +%s)
}
# traffic_end KIND PORT: after the reset, the pair traffic_start started
# must end with an error exit within 60 s each, hns_0 be PORT_ACTIVE
# again, a fresh 20-iteration pair on PORT pass and `rdma res show` count
# for hns_0 what it counted in $res0 (taken before anything started).
# Prints the "outcome: KIND" lines; adds to $err what failed.
traffic_end() {
    se=$(bg_end server "$cmd")
    ce=$(bg_end client "$cmd")
    echo "    events $s1 -> $s2, apps done $(($(date +%s) - t0)) s after the reset request"
    echo "    outcome: $1 server $se"
    echo "    outcome: $1 client $ce"
    for e in "$se" "$ce"; do
        case "$e" in
        hang | "exit 0:"* | "exit 124:"*) err="$err; an application did not end with an error ($e)" ;;
        esac
    done
    if ! out=$(port_state hns_0 PORT_ACTIVE); then
        echo "$out" | head -n 3
        err="$err; hns_0 not back"
    elif ! out=$(ppair "$2" 20); then
        err="$err; fresh $out"
    fi
    res1=$(res_line hns_0)
    echo "    outcome: $1 rdma res same as before: $([ "$res1" = "$res0" ] && echo yes || echo "no ('$res0' -> '$res1')")"
}

func_reset_traffic() {
    res0=$(res_line hns_0)
    err=""
    probe_start || err="; the user mapping probe did not start ($(tail -n 1 /tmp/nr-probe.out))"
    traffic_start
    n0=$(log_count 'Reset done,')
    p0=$(log_count 'prepare wait ok')
    ethtool_reset "$dev" 0xffff || err="$err; the ETHTOOL_RESET ioctl failed"
    # Past the RoCE client's DOWN and the handshake, FUN_RST_ING held
    # (nic_reset_ms): the probe maps and rings while the function resets.
    wait_log 'prepare wait ok' "$p0" 40 || err="$err; no 'prepare wait ok' from hclge"
    : >/tmp/nr-probe.go
    # hclge defers a reset asked for within 10 s of the last (its reset
    # timer): up to 40 s for it to run and end.
    wait_log 'Reset done,' "$n0" 40 || err="$err; no 'Reset done' from hclge"
    traffic_end func-reset 18601
    echo "    outcome: func-reset user mapping $(tail -n 1 /tmp/nr-probe.out)"
    [ -z "$err" ] || {
        echo "FAIL$err"
        return 1
    }
}
check "$G/func-reset-traffic" func_reset_traffic
printf '%s\n' "$out" | grep -E '^    (outcome|events)' || true
# What the probe saw: its doorbell reached the function before the reset;
# while the function resets, a new mapping of the doorbell page is
# refused (C's dis_db in hns_roce_mmap) and its old mapping no longer
# reaches the function (the DOWN step's rdma_user_mmap_disassociate).
check "$G/user-mapping-in-reset" grep -qx 'mmap again EPERM, doorbell before taken, during kept' /tmp/nr-probe.out

init_during_reset() {
    rmmod "$MOD" || return 1
    p0=$(log_count 'prepare wait ok')
    d0=$(log_count 'Reset done,')
    b0=$(log_count 'Device is busy in resetting state')
    ethtool_reset "$dev" 0xffff || return 1
    # hclge has handshaken and waits for FUN_RST_ING, which the model
    # holds (nic_reset_ms).
    wait_log 'prepare wait ok' "$p0" 40 || {
        echo "no 'prepare wait ok' from hclge"
        return 1
    }
    dl0=$(dmesg | wc -l)
    load_roce "$D"
    lrc=$?
    # The function's errors the load logged before refusing: none on C,
    # whose init_instance asks hclge first and sends nothing.
    errs=$(dmesg | tail -n +$((dl0 + 1)) | sed '/Device is busy in resetting state/q' |
        grep -cE "hns3 $fn: .*fail")
    reg=no
    ibv_devices 2>/dev/null | grep -qw hns_0 && reg=yes
    busy=no
    [ "$(log_count 'Device is busy in resetting state')" -gt "$b0" ] && busy=yes
    wait_log 'Reset done,' "$d0" 40 || {
        echo "no 'Reset done' from hclge"
        return 1
    }
    sleep 2
    after=no
    ibv_devices 2>/dev/null | grep -qw hns_0 && after=yes
    echo "    outcome: init-during-reset load exit $lrc, hns_0 during the reset $reg, busy message $busy, errors before it $errs, hns_0 after the reset $after"
    rmmod "$MOD" || return 1
    load_roce "$D" || return 1
    port_state hns_0 PORT_ACTIVE || return 1
    [ $reg = no ] && [ $busy = yes ] && [ "$errs" = 0 ] && [ $after = no ]
}
check "$G/init-during-reset" init_during_reset
printf '%s\n' "$out" | grep -E '^    outcome' || true

# flr: with run-guest.sh HNS_SIM_BRIDGE=1 (the function behind a bridge,
# reset by a secondary bus reset) an FLR through sysfs under traffic (the
# pair of func-reset-traffic): the PCI core calls hns3's reset_prepare
# (hclge's FLR path: DOWN, the handshake, which the model takes as the
# FLR and resets the function, dropping the work in flight) and
# reset_done (UNINIT, INIT, UP); the write returns once it is all done.
# hclge logs one more "Reset done", and then as after the function
# reset: both ends exit with an error, hns_0 is back, a fresh pair passes,
# `rdma res show` counts as before. Without a bus reset method, nothing.
flr_traffic() {
    res0=$(res_line hns_0)
    err=""
    traffic_start
    n0=$(log_count 'Reset done,')
    echo 1 >/sys/bus/pci/devices/"$fn"/reset || err="$err; the reset write failed"
    wait_log 'Reset done,' "$n0" 40 || err="$err; no 'Reset done' from hclge"
    traffic_end flr 18604
    [ -z "$err" ] || {
        echo "FAIL$err"
        return 1
    }
}
case "$(cat /sys/bus/pci/devices/"$fn"/reset_method 2>/dev/null)" in
*bus*)
    check "$G/flr" flr_traffic
    printf '%s\n' "$out" | grep -E '^    (outcome|events)' || true
    ;;
esac
check "$G/traffic-after" ppair 18602 100
check "$G/unload" rmmod "$MOD"
plan_exit
