#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# More perftest variants on hns_0 (loopback, C driver), not in make check
# (about 5 minutes under TCG): read latency, UD send bw/lat (also all
# sizes), 4 QPs, all sizes of write and read bw, 4 outstanding reads, an
# SRQ, 4 KiB write latency, 64 KiB sends, fetch-and-add latency, sends not
# inlined, 8 WRs per post, write-with-immediate latency. TEST lines are in
# the group "perf-extra/...". Options as in data-plan.sh.
#
#   make guest DRIVER=c SIM=1 CMD='sh /opt/hns/perf-extra-plan.sh'
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-1}
HNS_TIMEOUT=${HNS_TIMEOUT:-90}

check perf-extra/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
GIDX=$(roce_v2_gid hns_0)
[ -n "$GIDX" ] || { report perf-extra/roce-v2-gid FAIL "no RoCE v2 GID"; plan_exit; }
OPTS="-F --no_ddp -d hns_0 -x $GIDX"

# p NAME PORT TOOL ARGS...: server and client on hns_0 (lib.sh perf_pair).
p() {
    name=$1 port=$2
    shift 2
    perf_pair "perf-extra/$name" "$* $OPTS -p $port" "$* $OPTS -p $port 127.0.0.1"
}
p read-lat 19001 ib_read_lat -n 50
p send-bw-ud 19002 ib_send_bw -c UD -n 50
p send-lat-ud 19003 ib_send_lat -c UD -n 50
p send-bw-q4 19004 ib_send_bw -q 4 -n 50
p write-bw-all 19005 ib_write_bw -a -n 5
p read-bw-o4 19006 ib_read_bw -o 4 -n 50
p send-bw-srq 19007 ib_send_bw --use-srq -n 50
p write-lat-4k 19008 ib_write_lat -s 4096 -n 50
p send-bw-64k 19009 ib_send_bw -s 65536 -n 20
p atomic-lat-fa 19010 ib_atomic_lat -n 50
p read-bw-all 19011 ib_read_bw -a -n 5
p send-lat-no-inline 19012 ib_send_lat -I 0 -n 50
p write-bw-post8 19013 ib_write_bw -l 8 -n 64
p send-bw-ud-all 19014 ib_send_bw -c UD -a -n 5
p write-lat-imm 19015 ib_write_lat --write_with_imm -n 50
plan_exit
