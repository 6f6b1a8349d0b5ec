#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the guest's extra benchmark programs into $HNS_BUILD/bench/extra/:
#
#   verbs_bench  tests/bench/verbs_bench.c, the verbs control path (libibverbs)
#   rndread      tests/bench/rndread.c, 4 KiB O_DIRECT random reads (pthread)
#
# Usage: bash scripts/bench-build.sh    (x86_64 guests only)
#
# Needs `HNS_BENCH=1 bash scripts/setup.sh` first: it unpacks trixie's
# libibverbs-dev, at the version of the guest's libibverbs1, into
# $HNS_CACHE/bench-dev. The host's gcc (bookworm) compiles against those
# headers and links dynamically against the guest userland's
# libibverbs.so.1 ($GUEST_ROOT); bookworm's glibc symbol versions are all
# present in trixie's glibc. Boot with the programs in /opt/run/extra/:
#
#   HNS_GUEST_EXTRA=build/bench/extra bash scripts/run-guest.sh --driver c \
#       --sim 1 --cmd '/opt/run/extra/verbs_bench -d hns_0'
#
# Up to date (sources, this script and bench-dev unchanged): does nothing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ "$HNS_ARCH" = x86_64 ] || die "bench-build.sh: x86_64 only (ARCH=$HNS_ARCH)"
dev=$HNS_CACHE/bench-dev
libdir=$GUEST_ROOT/usr/lib/x86_64-linux-gnu
[ -f "$dev/usr/include/infiniband/verbs.h" ] ||
    die "no libibverbs-dev headers in $dev: run 'HNS_BENCH=1 bash scripts/setup.sh'"
[ -e "$libdir/libibverbs.so.1" ] || die "no libibverbs.so.1 in $libdir: run 'make setup'"

src=$HNS_TOP/tests/bench
out=$HNS_BUILD/bench/extra
mkdir -p "$out"
CC=${CC:-gcc}
cflags=(-O2 -g -Wall -Wextra -Werror -std=gnu11)

# build OUT SRC... -- LDFLAGS...: unless OUT is newer than every input.
build() {
    local target=$1 f stale=0
    shift
    local srcs=()
    while [ "$1" != -- ]; do srcs+=("$1"); shift; done
    shift
    for f in "${srcs[@]}" "$0" "$dev/.id"; do
        [ "$target" -nt "$f" ] || stale=1
    done
    [ $stale = 1 ] || return 0
    log "bench: building ${target##*/}"
    "$CC" "${cflags[@]}" -isystem "$dev/usr/include" -o "$target.tmp" "${srcs[@]}" "$@"
    mv "$target.tmp" "$target"
}

# libibverbs.so.1's own dependencies (libnl) and trixie's libc are only
# looked up, never linked: -rpath-link for the former, and
# --allow-shlib-undefined for the trixie glibc symbols libibverbs needs.
build "$out/verbs_bench" "$src/verbs_bench.c" -- \
    -L"$libdir" -l:libibverbs.so.1 -Wl,-rpath-link="$libdir" -Wl,--allow-shlib-undefined
build "$out/rndread" "$src/rndread.c" -- -pthread
