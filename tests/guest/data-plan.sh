#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# hns-sim data engine plan, on the C reference driver and on hns_roce_rs
# (SIM=1, DRIVER=c or rs):
# rdma-core's ibv_rc_pingpong on one device, loopback to itself (server and
# client both on hns_0, their TCP exchange over 127.0.0.1), polling and with
# completion events (-e), ibv_ud_pingpong, ibv_srq_pingpong, ibv_xsrq_pingpong,
# SRQ attributes and restrack (srq_errors.py)
# and perftest (send/write/read/atomic bw, write/send/atomic lat), rdma_cm
# (rping, ucmatose, udaddy) over an IPv4 address on eth0, a WR-API producer
# paused inside a WQE, flush on ERR, CQ overflow, RNR retries, function
# resets under traffic (RESET_CYCLES, default 5), rmmod under traffic.
# TEST lines are in the group "data/...".
#
#   [RESET_CYCLES=N] sh /opt/hns/data-plan.sh
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-1}
HNS_TIMEOUT=${HNS_TIMEOUT:-120}

check data/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit

need_roce_v2_gid data

# pingpong TOOL NAME PORT EXTRA: server and client on hns_0; both print
# their summary lines ("... bytes in ... seconds = ...", "... iters in ...").
pingpong() {
    tool=$1 tname=$2 port=$3
    shift 3
    pair "data/$tname" \
        "$tool -d hns_0 -g $GIDX -p $port -n 10 $*" \
        "$tool -d hns_0 -g $GIDX -p $port -n 10 $* 127.0.0.1"
    echo "    server: $(grep -E 'bytes in|iters in' /tmp/server.out | tr '\n' ' ')"
    echo "    client: $(printf '%s\n' "$cout" | grep -E 'bytes in|iters in' | tr '\n' ' ')"
}
pingpong ibv_rc_pingpong rc-pingpong 18515
pingpong ibv_rc_pingpong rc-pingpong-events 18516 -e
pingpong ibv_rc_pingpong rc-pingpong-small 18517 -s 64
# UD: the message must fit the port MTU (1024 with the netdev's 1500).
pingpong ibv_ud_pingpong ud-pingpong 18518 -s 512
# SRQ: 16 RC QPs on one SRQ (index queue, record doorbell).
pingpong ibv_srq_pingpong srq-pingpong 18519
# XRC: XRC_INI send QPs into XRC SRQs behind XRC_TGT QPs (prints
# "success" on each side).
pair data/xsrq-pingpong \
    "ibv_xsrq_pingpong -d hns_0 -g $GIDX -p 18526 -n 10" \
    "ibv_xsrq_pingpong -d hns_0 -g $GIDX -p 18526 -n 10 127.0.0.1"
echo "    server: $(grep -c '^success' /tmp/server.out) success, client: $(printf '%s\n' "$cout" | grep -c '^success') success"

# srq_errors.py: SRQ attributes refused or rounded up, resize refused, the
# limit set and read back, `rdma res show srq`; the lines must be the C
# driver's (the script holds them).
check data/srq-attrs timeout 60 python3 /opt/hns/srq_errors.py
printf '%s\n' "$out" | sed 's/^/    /'

# perftest (25.01), server and client on hns_0. Options every run needs:
# --no_ddp: this perftest calls mlx5dv_query_device() while creating every
#   RC QP unless told not to use out-of-order receive WRs; on a non-mlx5
#   device that fails with EOPNOTSUPP ("Failed to query device capabilities,
#   ret=95") - real HIP09 alike; later perftest skips it for non-Mellanox
#   vendor IDs.
# -F: perftest calibrates its cycle counter against gettimeofday and gives
#   up ("Correlation coefficient r^2 < 0.9", "Can't produce a report", exit
#   1) when the two do not agree, as often in a TCG guest; -F reports anyway
#   (the numbers are meaningless here).
PERF_OPTS="-n 50 -F --no_ddp"
perf() {
    tool=$1 tname=$2 port=$3
    shift 3
    perf_pair "data/$tname" \
        "$tool -d hns_0 -x $GIDX -p $port $PERF_OPTS $*" \
        "$tool -d hns_0 -x $GIDX -p $port $PERF_OPTS $* 127.0.0.1"
}
perf ib_send_bw send-bw 18520
perf ib_write_bw write-bw 18521
perf ib_read_bw read-bw 18522
perf ib_write_lat write-lat 18523
perf ib_send_lat send-lat 18524
# Completion events on separate send and receive CQs, armed back to back.
perf ib_send_bw send-bw-events 18525 -e
# Atomics: FETCH_AND_ADD (ib_atomic_bw's default) and CMP_AND_SWAP.
perf ib_atomic_bw atomic-bw 18527
perf ib_atomic_lat atomic-lat-cas 18528 -A CMP_AND_SWAP

# pyverbs checks on RC QP pairs of hns_0 (tests/guest/rc_*.py, shared setup
# in rcpair.py; each script's docstring says what it checks):
# rc_wr_api.py: a producer paused inside an ibv_wr_* WQE (owner bit already
#   valid, no doorbell yet) gets its final data written, every time;
# rc_flush.py: flush of SQ and RQ on the move to ERR, also for a send
#   posted in ERR;
# rc_cq_overflow.py: CQ_OVERFLOW -> IBV_EVENT_CQ_ERR, the held CQEs come
#   after polling;
# rc_rnr.py: rnr_retry 0 and 1 run out, a late receive taken by the retry.
pycheck() {
    check "data/$1" timeout 60 python3 "/opt/hns/$2" "$GIDX"
    echo "    $(printf '%s\n' "$out" | tail -n 1)"
}
pycheck wr-api-preempted rc_wr_api.py
pycheck flush-on-err rc_flush.py
pycheck cq-overflow rc_cq_overflow.py
pycheck rnr-retry rc_rnr.py
# rc_access.py (a wrong rkey: REM_ACCESS_ERR and IBV_EVENT_QP_ACCESS_ERR)
# runs in tests/guest/event-plan.sh, a boot that does not unload the driver
# (the C driver's lockdep report at rmmod after that event, see there).

# rdma_cm over hns_0 with an IPv4 address on its netdev: the CM MADs go
# through the kernel's GSI QP (QPN 1, UD, GRH) looped back by the engine;
# the destination address is local, so address resolution needs no frames.
# rping (RC SEND + RDMA READ/WRITE), ucmatose (RC), udaddy (UD).
/usr/bin/ip addr add 192.168.77.1/24 dev eth0 && /usr/bin/ip link set eth0 up
# cm NAME SERVER CLIENT: as pair, then the last line of each side.
cm() {
    pair "data/$1" "$2" "$3"
    echo "    server: $(tail -n 1 /tmp/server.out)"
    echo "    client: $(printf '%s\n' "$cout" | tail -n 1)"
}
cm rping "rping -s -a 192.168.77.1 -C 5 -v" "rping -c -a 192.168.77.1 -C 5 -v"
cm ucmatose "ucmatose -b 192.168.77.1" "ucmatose -s 192.168.77.1"
cm udaddy "udaddy -b 192.168.77.1" "udaddy -s 192.168.77.1"

# pyverbs (test_qp, test_srq, test_qpex, test_cq, test_cq_events and the
# rest of rdma-core's suite, three runs each) is tests/guest/pyverbs-plan.sh.

# arm_sn: the CQs' completion events so far (rdma res show cq -dd).
arm_sn() {
    rdma -dd res show cq dev hns_0 2>/dev/null |
        awk '{for (i = 1; i < NF; i++) if ($i == "drv_arm_sn") s += $(i + 1)} END {print s + 0}'
}

# ulwait PID [SECS]: 0 once PID has ended (its status in $ulrc), 1 after
# SECS (default 60) seconds.
ulwait() {
    for _ in $(seq "${2:-60}"); do
        if ! kill -0 "$1" 2>/dev/null; then
            wait "$1"
            ulrc=$?
            return 0
        fi
        sleep 1
    done
    return 1
}

# Function resets under traffic, RESET_CYCLES times (default 5;
# e.g. RESET_CYCLES=50 for a longer run outside make check). Each cycle: a
# pair on hns_0 waiting on completion events, odd cycles
# `ibv_rc_pingpong -e -n 100000`, even ones `ib_send_bw -e -n 1000000`
# (perftest), seen passing traffic (the CQs' drv_arm_sn grows), then a function reset through hns_sim (DOWN,
# UNINIT, INIT, UP, as hclge_reset walks the RoCE client; done when the
# kernel log has one more "hns-sim: function reset done"). Both processes
# must end with an error exit within 60 s (the reset unregisters the
# ib_device, which disassociates their contexts: ibv_get_cq_event fails),
# hns_0 must be PORT_ACTIVE again with a RoCE v2 GID, a fresh
# `ibv_rc_pingpong -e -n 20` pair must pass and `rdma res show` for hns_0
# must count what it counted before the cycle (no object left behind; the
# boot's kmemleak scan looks for the rest). One TEST line: cycles passed,
# how the applications ended (exit status: last line, counted); a failing
# cycle prints its detail. Bounded: every wait has a timeout.
RESET_CYCLES=${RESET_CYCLES:-5}
RESET=/sys/module/hns_sim/parameters/reset
# res_count: hns_0's line of `rdma res show` (pd, cq, qp, cm_id, mr, ctx,
# srq counts).
res_count() {
    rdma res show 2>/dev/null | grep -w hns_0 | sed 's/^[0-9]*: //'
}
# rst_end FILE STATUS: how an application ended, as "exit STATUS: MESSAGE",
# MESSAGE its last error line (stderr; buffered stdout lands after it),
# else its last line.
rst_end() {
    rmsg=$(grep -iE 'fail|error|couldn|unable' "$1" | tail -n 1)
    [ -n "$rmsg" ] || rmsg=$(tail -n 1 "$1")
    printf 'exit %s: %s' "$2" "$(printf '%s' "$rmsg" | cut -c1-60)"
}
rst_cycle() {
    rport=$((18540 + rc_i % 40))
    if [ $((rc_i % 2)) -eq 1 ]; then
        rtool=rc_pingpong
        rcmd="ibv_rc_pingpong -e -d hns_0 -g $GIDX -p $rport -n 100000"
    else
        rtool=send_bw
        rcmd="ib_send_bw -e -d hns_0 -x $GIDX -p $rport -F --no_ddp -n 1000000"
    fi
    rres0=$(res_count) rinfo=""
    timeout 300 $rcmd >/tmp/rst-server.out 2>&1 &
    rsp=$!
    sleep "$HNS_SERVER_DELAY"
    timeout 300 $rcmd 127.0.0.1 >/tmp/rst-client.out 2>&1 &
    rcp=$!
    # Traffic: completion events grow within 15 s.
    rs1=$(arm_sn) rs2=$rs1 rw=0
    while [ "$rs2" -le "$rs1" ] && [ $rw -lt 15 ]; do
        sleep 1
        rs2=$(arm_sn)
        rw=$((rw + 1))
    done
    rerr=""
    if ! kill -0 $rsp 2>/dev/null || ! kill -0 $rcp 2>/dev/null || [ "$rs2" -le "$rs1" ]; then
        rerr="no traffic before the reset (completion events $rs1 -> $rs2)"
    fi
    rn0=$(dmesg | grep -c 'hns-sim: function reset done')
    rt0=$(date +%s)
    if ! timeout 60 sh -c "echo 1 >$RESET"; then
        rerr="$rerr; reset write failed"
    fi
    rn1=$(dmesg | grep -c 'hns-sim: function reset done')
    [ "$rn1" -eq $((rn0 + 1)) ] || rerr="$rerr; no 'function reset done' ($rn0 -> $rn1)"
    for rp in $rsp:server $rcp:client; do
        if ! ulwait "${rp%%:*}" 60; then
            kill -9 "${rp%%:*}" 2>/dev/null
            rerr="$rerr; ${rp#*:} still running 60 s after the reset"
            rend="hang"
        else
            rend=$(rst_end "/tmp/rst-${rp#*:}.out" $ulrc)
            if [ "$ulrc" -eq 0 ] || [ "$ulrc" -eq 124 ]; then
                rerr="$rerr; ${rp#*:} exit $ulrc"
            fi
        fi
        echo "$rtool ${rp#*:} $rend" >>/tmp/rst-ends
    done
    rinfo="$rtool, events $rs1 -> $rs2, apps done $(($(date +%s) - rt0)) s after the reset write"
    if ! out=$(port_state hns_0 PORT_ACTIVE); then
        rerr="$rerr; $(printf '%s' "$out" | head -n 1)"
        return 1
    fi
    if ! GIDX=$(roce_v2_gid hns_0); then
        rerr="$rerr; no RoCE v2 GID after the reset"
        return 1
    fi
    rport=$((rport + 40))
    timeout 60 ibv_rc_pingpong -e -d hns_0 -g $GIDX -p $rport -n 20 >/tmp/rst-server.out 2>&1 &
    rsp=$!
    sleep "$HNS_SERVER_DELAY"
    out=$(timeout 60 ibv_rc_pingpong -e -d hns_0 -g $GIDX -p $rport -n 20 127.0.0.1 2>&1)
    rcrc=$?
    wait $rsp
    rsrc=$?
    [ $rcrc -eq 0 ] && [ $rsrc -eq 0 ] ||
        rerr="$rerr; fresh pingpong: server exit $rsrc ($(tail -n 1 /tmp/rst-server.out)), client exit $rcrc ($(printf '%s\n' "$out" | tail -n 1))"
    rres1=$(res_count)
    [ "$rres1" = "$rres0" ] || rerr="$rerr; rdma res before '$rres0', after '$rres1'"
    [ -z "$rerr" ]
}
rc_i=0 rc_ok=0
rst_t0=$(date +%s)
: >/tmp/rst-ends
while [ $rc_i -lt "$RESET_CYCLES" ]; do
    rc_i=$((rc_i + 1))
    if rst_cycle; then
        rc_ok=$((rc_ok + 1))
        echo "    cycle $rc_i: $rinfo"
    else
        echo "    cycle $rc_i: $rinfo; FAIL$rerr"
        tail -n 3 /tmp/rst-server.out /tmp/rst-client.out 2>/dev/null | sed 's/^/      /'
        # Without hns_0 the later cycles cannot run.
        port_state hns_0 PORT_ACTIVE >/dev/null || break
    fi
done
rst_ends=$(sort /tmp/rst-ends | uniq -c | awk '{$1 = $1 "x"; s = s (NR > 1 ? "; " : "") $0} END {print s}')
rst_sum="$rc_ok of $RESET_CYCLES cycles in $(($(date +%s) - rst_t0)) s; apps ended: $rst_ends"
if [ "$rc_ok" -eq "$RESET_CYCLES" ] && [ "$RESET_CYCLES" -gt 0 ]; then
    report data/reset-under-traffic PASS "$rst_sum"
else
    report data/reset-under-traffic FAIL "$rst_sum"
fi

# rmmod with traffic running. An RC pingpong of 100000 iterations waiting
# on completion events (-e: ibv_get_cq_event, which ends with an error once
# the core has disassociated the process's context); while it runs, the
# driver is removed. rmmod must complete, both processes must end with an
# error within 60 s, and the boot's kernel log must stay free of WARN and
# kmemleak reports (run-guest.sh). Without -e a pingpong spins on its CQ in
# its own memory, which no driver can end: libhns of this kernel has no
# reset page to look at.
ulcmd="ibv_rc_pingpong -e -d hns_0 -g $GIDX -p 18530 -n 100000"
timeout 300 $ulcmd >/tmp/ul-server.out 2>&1 &
ulsp=$!
sleep "$HNS_SERVER_DELAY"
timeout 300 $ulcmd 127.0.0.1 >/tmp/ul-client.out 2>&1 &
ulcp=$!
sleep 5
a1=$(arm_sn)
sleep 2
a2=$(arm_sn)
if kill -0 $ulsp 2>/dev/null && kill -0 $ulcp 2>/dev/null && [ "$a2" -gt "$a1" ]; then
    report data/unload-traffic-running PASS "completion events $a1 -> $a2 in 2 s"
else
    report data/unload-traffic-running FAIL "completion events $a1 -> $a2 in 2 s"
    tail -n 5 /tmp/ul-server.out /tmp/ul-client.out | sed 's/^/    /'
fi
ult0=$(date +%s)
check data/unload-under-traffic timeout 120 rmmod $DRV_MODULE
ulerr="" ulrcs=""
for ulp in $ulsp $ulcp; do
    if ! ulwait $ulp; then
        ulerr="$ulerr $ulp:hang"
        kill -9 $ulp 2>/dev/null
    elif [ "$ulrc" -eq 0 ] || [ "$ulrc" -eq 124 ]; then
        ulerr="$ulerr $ulp:exit-$ulrc"
    fi
    ulrcs="$ulrcs $ulrc"
done
if [ -z "$ulerr" ]; then
    report data/unload-app-error PASS "rmmod and both ends done in $(($(date +%s) - ult0)) s, exit statuses$ulrcs"
else
    report data/unload-app-error FAIL "want an error exit from both ends:$ulerr"
fi
echo "    server: $(tail -n 2 /tmp/ul-server.out | tr "\n" " ")"
echo "    client: $(tail -n 2 /tmp/ul-client.out | tr "\n" " ")"
check data/final-unload rmmod hns_sim
plan_exit
