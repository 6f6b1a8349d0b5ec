#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make check-kcfi: the Rust driver's indirect-call paths on the hardened
# test kernel (shared with make check-kasan): configs/qemu-x86_64.config +
# configs/kasan-x86_64.config + configs/kcfi-x86_64.config (CONFIG_CFI,
# permissive), built with clang in $HNS_CACHE/kbuild-x86_64-hard under its
# own lock; hns_roce_rs.ko (with
# its KUnit suites), hns_sim.ko and the kernel test modules (tests/ktest/)
# are built against it into build/kcfi/,
# guest runs go to build/kcfi/guest/. Every function pointer the RDMA core,
# the hnae3 core, the netdev notifier chain, the workqueue and the IRQ core
# call into the Rust module is reached by one of the boots below; a type
# hash mismatch is a "CFI failure" WARN, which fails the boot that shows
# it (scripts/run-guest.sh), and is counted apart here.
#
#   kpath  the kernel data path (post_send, post_recv, poll_cq,
#          req_notify_cq from the CM's MAD QPs), a function reset
#          (reset_notify), the unload
#   data   user verbs through uverbs (the shim's ib_device ops, the
#          driver's rdma_shim_ib_ops), restrack queries
#   ulp    NVMe over RDMA (fast-register MRs: map_mr_sg's set_page
#          callback; SRQs: post_srq_recv)
#   bond   the bond notifier and work (scripts/bond-run.sh)
#
# Prints the TEST lines of the boots and `TEST kcfi/summary PASS|FAIL ...`;
# exit status 1 on any failure. Not part of `make check` (the kernel is a
# full clang build of its own).
set -uo pipefail
export HNS_KCFI=1
. "$(dirname "$0")/common.sh"
[ "$HNS_ARCH" = x86_64 ] || die "check-kcfi is x86_64 only"
bash "$HNS_TOP/scripts/setup.sh" >&2 || die "setup failed"
command -v "$HNS_KCC" >/dev/null ||
    die "$HNS_KCC missing: the kCFI kernel needs clang (scripts/setup.sh installs clang-19 with HNS_KCFI=1; HNS_HARD_CC=clang-N for another)"

L=$HNS_RUNS/logs
mkdir -p "$L"
t0=$(date +%s)
bash "$HNS_TOP/scripts/build-kernel.sh" 2>&1 | tee "$L/kernel.log" | grep -v '^  ' >&2
[ "${PIPESTATUS[0]}" -eq 0 ] || die "kCFI kernel build failed (log: $L/kernel.log)"
grep -qx 'CONFIG_CFI=y' "$KOBJ/.config" && grep -qx 'CONFIG_RUST=y' "$KOBJ/.config" ||
    die "the kCFI tree has no CONFIG_CFI=y or no CONFIG_RUST=y ($KOBJ/.config)"
t1=$(date +%s)
make -s -C "$HNS_TOP" modules-kunit sim ktest-kmod KDIR="$KOBJ" KLOCKFILE="$KBUILD_LOCK" \
    BUILD="$HNS_ABUILD" KCC="$HNS_KCC" >"$L/modules.log" 2>&1 || {
    tail -n 40 "$L/modules.log" >&2
    die "module build against the kCFI kernel failed (log: $L/modules.log)"
}
t2=$(date +%s)
echo "check-kcfi: kernel $((t1 - t0)) s, modules $((t2 - t1)) s"

rc=0
# boot NAME CMD [run-guest.sh options...]
boot() {
    local name=$1 cmd=$2
    shift 2
    bash "$HNS_TOP/scripts/run-guest.sh" --driver rs --name "kcfi-$name" --cmd "$cmd" "$@" \
        >"$L/$name.log" 2>&1 || rc=1
    grep -h '^TEST ' "$L/$name.log"
}
boot kpath "sh /opt/hns/kpath-plan.sh hns_roce_rs" --sim 1
boot data "sh /opt/hns/data-plan.sh" --sim 1
# The NVMe target's own lockdep report at the port's removal (known fault
# nvmet-rdma-port-lockdep, docs/c-driver-findings.md) is counted, as in
# make check's ulp boots.
HNS_GUEST_KNOWN="nvmet-rdma-port-lockdep" boot ulp "ULP_SRQ=1 sh /opt/hns/ulp-plan.sh hns_roce_rs" --sim 2 --timeout 600
bash "$HNS_TOP/scripts/bond-run.sh" rs kcfi-bond >"$L/bond.log" 2>&1 || rc=1
grep -h '^TEST ' "$L/bond.log"
t3=$(date +%s)

nc=$(cat "$HNS_RUNS"/guest/kcfi-*/console.log 2>/dev/null | grep -ac 'CFI failure' || true)
nbad=$(cat "$L"/{kpath,data,ulp,bond}.log 2>/dev/null | grep -c '^TEST .* FAIL' || true)
[ "$nc" -eq 0 ] && [ "$nbad" -eq 0 ] || rc=1
summary="boots $((t3 - t2)) s, whole $((t3 - t0)) s; $nc CFI failure(s), $nbad failed TEST line(s)"
if [ "$rc" -eq 0 ]; then
    echo "TEST kcfi/summary PASS ($summary)"
else
    echo "TEST kcfi/summary FAIL ($summary; logs: $L)"
    cat "$HNS_RUNS"/guest/kcfi-*/console.log 2>/dev/null | grep -a -A3 'CFI failure' | head -n 40
fi
exit $rc
