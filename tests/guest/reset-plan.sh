#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Link and reset plan (SIM=1), run once per driver so that the host can
# compare the two hns-sim traces (scripts/trace-diff.py):
#
#   sh /opt/hns/reset-plan.sh [c|rs]
#
# With hns_0 registered: the port goes down and up (hns_sim tells the RoCE
# client, as hclge does: link_status_change), ibv_devinfo follows; then a
# function reset (hns_sim walks the client through DOWN, UNINIT, INIT, UP as
# hclge_reset does): hns_0 comes back and works; the driver under the
# reset states hclge reports (init refused, mailboxes refused or skipped);
# a reset retried after a rebuild that stopped after the UNINIT step;
# a fault armed at run time fails the next probe; then both modules go.
# TEST lines are in the group "reset-c/..." or "reset-rs/...".
. /opt/hns/lib.sh
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
D=${1:-$DRIVER}
MOD=$(driver_module "$D") || {
    echo "reset-plan.sh: $MOD"
    exit 2
}
G=reset-$D
RESET=/sys/module/hns_sim/parameters/reset

check "$G/registered" port_state hns_0 PORT_ACTIVE || plan_exit
check "$G/link-down" sh -c "ip link set eth0 down && sleep 0.5"
check "$G/port-down" port_state hns_0 PORT_DOWN
check "$G/link-up" sh -c "ip link set eth0 up && sleep 0.5"
check "$G/port-active" port_state hns_0 PORT_ACTIVE

reset() {
    echo 1 >$RESET || return 1
    dmesg | grep -q 'hns-sim: function reset done' || {
        echo "no 'function reset done' in the kernel log"
        return 1
    }
}
check "$G/reset" reset
check "$G/registered-after-reset" port_state hns_0 PORT_ACTIVE
check "$G/context-after-reset" python3 -c '
import pyverbs.device as d, pyverbs.pd as p
ctx = d.Context(name="hns_0")
pd = p.PD(ctx)
pd.close()
ctx.close()'
if [ "$D" = rs ]; then
    check "$G/reset-log" sh -c "dmesg | grep -q 'reset done, RoCE client reinit finished.'"
fi

# A reset in two halves (hns_sim's "down", then "up"): between hclge's
# DOWN step and the UNINIT after the hardware reset, hns_0 is still
# registered but takes no user context: GET_CONTEXT fails with EAGAIN
# (C's `active` check in alloc_ucontext), and works again after the reset.
# Through the legacy write command: the ioctl method's error path leaks
# the caller's task reference in this kernel's RDMA core (restrack), on
# either driver.
context_while_down() {
    echo down >$RESET || return 1
    got=$(python3 -c '
import ctypes, errno, glob, os, struct
node = glob.glob("/sys/class/infiniband/hns_0/device/infiniband_verbs/uverbs*")
fd = os.open("/dev/infiniband/" + os.path.basename(node[0]), os.O_RDWR)
# GET_CONTEXT (0): the response pointer, hns_roce_ib_alloc_ucontext;
# answer: core 8 + hns 32 bytes.
resp = ctypes.create_string_buffer(40)
body = struct.pack("<QII", ctypes.addressof(resp), 0, 0)
try:
    os.write(fd, struct.pack("<IHH", 0, (8 + len(body)) // 4, 40 // 4) + body)
    print("context opened")
except OSError as x:
    print("context refused:", errno.errorcode.get(x.errno, x.errno))
os.close(fd)' 2>&1)
    echo "while down: $got"
    echo up >$RESET || return 1
    [ "$got" = "context refused: EAGAIN" ]
}
check "$G/context-while-down" context_while_down
echo "    $(printf '%s\n' "$out" | grep 'while down')"
check "$G/registered-after-split-reset" port_state hns_0 PORT_ACTIVE

# What hclge answers about resets (hns_sim's reset_cnt, hw_reset_stat,
# cmdq_stat and sw_resetting parameters) and what the driver does with it.
# Loaded while the NIC's reset task runs, the driver refuses the function
# (init_instance: EBUSY, "Device is busy in resetting state"): no hns_0,
# no command in the trace; loaded again once it ended, hns_0 is back.
P=/sys/module/hns_sim/parameters
init_while_resetting() {
    rmmod $MOD || return 1
    echo 1 >$P/sw_resetting || return 1
    load_roce "$D"
    sleep 1
    reg=no
    ibv_devices 2>/dev/null | grep -qw hns_0 && reg=yes
    busy=no
    dmesg | grep -q 'Device is busy in resetting state' && busy=yes
    echo 0 >$P/sw_resetting
    rmmod $MOD
    load_roce "$D" || return 1
    wait_hns0 || return 1
    echo "loaded while resetting: hns_0 registered $reg, busy message $busy"
    [ $reg = no ] && [ $busy = yes ]
}
check "$G/init-while-resetting" init_while_resetting
echo "    $(printf '%s\n' "$out" | grep 'while resetting')"

# With hns_0 up and a user context open, a CQ (one CREATE_CQC mailbox)
# while: a hardware reset runs (hw_reset_stat: mailboxes still go, only
# doorbells stop), the NIC's command queue is stopped by a reset (cmdq_stat:
# refused with EBUSY after a second's wait for the reset to end), after
# that (created; doorbells stay disabled, so a new user context cannot map
# its doorbell page and is refused), and after a finished hardware reset (reset_cnt one up:
# created without a mailbox, nothing is sent any more, so that the unload
# clears the function by "func clear success after reset."; the model is
# told of that reset by its `hw-reset` control command, which clears the
# function as the hardware reset would). Then the
# driver is loaded again and hns_0 works.
mbox_in_reset() {
    got=$(python3 -c '
import pyverbs.device as d, pyverbs.pd as p, pyverbs.cq as c
P = "/sys/module/hns_sim/parameters/"
def put(k, v):
    with open(P + k, "w") as f:
        f.write(str(v))
def cq(what):
    try:
        q = c.CQ(ctx, 8)
        print(what + ": created")
        return q
    except Exception as e:
        print(what + ": refused", getattr(e, "error_code", e))
ctx = d.Context(name="hns_0")
pd = p.PD(ctx)
put("hw_reset_stat", 1)
q1 = cq("hw_reset_stat")
put("hw_reset_stat", 0)
put("cmdq_stat", 1)
q2 = cq("cmdq_stat")
put("cmdq_stat", 0)
q3 = cq("after cmdq_stat")
try:
    d.Context(name="hns_0").close()
    print("new context after cmdq_stat: opened")
except Exception as e:
    print("new context after cmdq_stat: refused", getattr(e, "error_code", e))
n = int(open(P + "reset_cnt").read())
put("reset_cnt", n + 1)
put("fault", "hw-reset")
q4 = cq("reset_cnt")
for q in (q1, q2, q3, q4):
    if q:
        q.close()
pd.close()
ctx.close()' 2>&1)
    printf '%s\n' "$got"
    rmmod $MOD || return 1
    cleared=no
    dmesg | grep -q 'func clear success after reset' && cleared=yes
    echo "unload after the reset: func clear success after reset $cleared"
    load_roce "$D" || return 1
    wait_hns0 || return 1
    [ "$got" = "hw_reset_stat: created
cmdq_stat: refused 16
after cmdq_stat: created
new context after cmdq_stat: refused 1
reset_cnt: created" ] && [ $cleared = yes ]
}
# context_works: a user context on hns_0 makes a PD and a CQ.
context_works() {
    timeout "${HNS_TIMEOUT:-120}" python3 -c '
import pyverbs.device as d, pyverbs.pd as p, pyverbs.cq as c
ctx = d.Context(name="hns_0")
pd = p.PD(ctx)
c.CQ(ctx, 8).close()
pd.close()
ctx.close()'
}
check "$G/mbox-in-reset" mbox_in_reset
printf '%s\n' "$out" | sed 's/^/    /'
check "$G/context-after-reset-state" context_works

# A reset whose re-init runs while the NIC still reports the hardware
# reset (hw_reset_stat set between hns_sim's "uninit" and "init" steps):
# the re-init succeeds (commands and mailboxes still go) but rings none of
# its doorbells (ib_mad arming its CQs): make check compares the doorbells
# hns-sim counted in the C and Rust runs (equivalence/reset-state).
reinit_in_hw_reset() {
    echo down >$RESET || return 1
    echo uninit >$RESET || return 1
    echo 1 >$P/hw_reset_stat || return 1
    echo init >$RESET
    r=$?
    echo 0 >$P/hw_reset_stat
    [ $r -eq 0 ]
}
check "$G/reinit-in-hw-reset" reinit_in_hw_reset
check "$G/context-after-hw-reset" context_works

# A reset whose rebuild stopped after the RoCE UNINIT step (as hclge's
# does when the NIC client's INIT fails: it then schedules the reset
# again), then that second reset: the client's rinfo.instance_state still
# says attached, so its DOWN is not a "direct return", UNINIT and INIT
# run, and hns_0 comes back.
reset_after_failed_rebuild() {
    echo down >$RESET || return 1
    echo uninit >$RESET || return 1
    echo down >$RESET || return 1
    echo up >$RESET || return 1
    wait_hns0
}
check "$G/reset-after-failed-rebuild" reset_after_failed_rebuild
check "$G/context-after-failed-rebuild" context_works

# A fault armed while the guest runs (hns_sim's control channel, which the
# fault sweeps build on): the next probe fails at
# QUERY_PF_CAPS_NUM (0x8408) and registers nothing, the one after it works;
# a malformed fault is refused.
FAULT=/sys/module/hns_sim/parameters/fault
runtime_fault() {
    rmmod $MOD || return 1
    echo 0x8408:2:once >$FAULT || return 1
    load_roce "$D" || return 1
    if ibv_devices 2>/dev/null | grep -qw hns_0; then
        echo "hns_0 registered despite the armed fault"
        return 1
    fi
    rmmod $MOD || return 1
    load_roce "$D" || return 1
    wait_hns0
}
check "$G/runtime-fault" runtime_fault
check "$G/runtime-fault-refused" sh -c "! echo bogus 2>/dev/null >$FAULT"
# The last unload with FUNC_CLEAR's write failing (0x8508, CMQ return 6,
# EINVAL): the function is not cleared, so the context BTs the driver
# still holds (QPC chunks, never put while the device lives) are destroyed
# by mailbox at the HEM cleanup, and the EQs too; make check compares the
# DESTROY_*_BT mailboxes after that FUNC_CLEAR in the two traces
# (equivalence/hem-cleanup-after-failed-clear) besides the whole trace.
unload_clear_failed() {
    echo 0x8508:6:once >$FAULT || return 1
    rmmod $MOD || return 1
    dmesg | tail -n 40 | grep -q "func clear failed" || {
        echo "no 'func clear failed' line after the unload"
        return 1
    }
}
check "$G/unload-clear-failed" unload_clear_failed
check "$G/unload" rmmod hns_sim
plan_exit
