# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=sh
#
# Helpers for guest test plans: every check prints exactly one line
# "TEST <group>/<name> PASS|FAIL|SKIP [detail]"; failures are followed by the
# tail of the check's output, indented. Source it, then call plan_exit last.

HNS_FAILS=0

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

# pair NAME "SERVER CMD" "CLIENT CMD": start the server in the background,
# then the client; PASS when both exit 0.
pair() {
    name=$1
    timeout "${HNS_TIMEOUT:-120}" sh -c "$2" >/tmp/server.out 2>&1 &
    spid=$!
    sleep "${HNS_SERVER_DELAY:-2}"
    cout=$(timeout "${HNS_TIMEOUT:-120}" sh -c "$3" 2>&1)
    crc=$?
    wait $spid
    src=$?
    if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
        report "$name" PASS
    else
        report "$name" FAIL "server exit $src, client exit $crc"
        echo "    --- server:"
        tail -n 15 /tmp/server.out | sed 's/^/    /'
        echo "    --- client:"
        printf '%s\n' "$cout" | tail -n 15 | sed 's/^/    /'
    fi
}

plan_exit() {
    [ "$HNS_FAILS" -eq 0 ] && exit 0
    exit 1
}
