#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Check the in-tree route (x86_64): apply the patch of scripts/intree-patch.sh
# to a copy of the cached 7.3 source and build hns_roce_rs.ko through the
# kernel's own Kbuild with CONFIG_INFINIBAND_HNS_RS=m, in a kernel output
# tree of its own. The shared source and kbuild-x86_64 are never touched.
#
#   $HNS_CACHE/intree/linux   hard-linked copy of the source (cp -al); the two
#                             files the patch edits are real copies, so the
#                             originals keep their content
#   $HNS_CACHE/kbuild-intree  output tree: the test kernel's .config plus
#                             INFINIBAND_HNS_RS=m, `modules_prepare`, then
#                             `make drivers/infiniband/hw/` (through the
#                             patched hw/Makefile: hns_rs/ must be built, the
#                             C hns/ beside it too), then the single target
#                             drivers/infiniband/hw/hns_rs/hns_roce_rs.ko
#
# No vmlinux is built here (that would be a second full kernel build), and
# Kbuild's in-tree modpost wants vmlinux.o: the .ko target runs with
# KBUILD_MODPOST_WARN=1, then modpost runs again, strict (-E, no -w), with
# the symbols of the test kernel (kbuild-x86_64/Module.symvers, same config
# but for our =m): an unresolved symbol fails the check there.
#
# Prints the path of the built module. Cold: modules_prepare builds the Rust
# core/kernel crates once (≈ 3 minutes); later runs rebuild only the driver.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kbuild_env

[ "$HNS_ARCH" = x86_64 ] || die "the in-tree check builds for x86_64 only"
KSRC=$(kernel_src)
XOBJ=$HNS_CACHE/kbuild-x86_64
[ -f "$XOBJ/.config" ] || die "$XOBJ/.config missing: run 'make kernel'"
COPY=$HNS_CACHE/intree/linux
IOBJ=$HNS_CACHE/kbuild-intree
PATCH=$HNS_BUILD/intree/hns_rs.patch
KO=drivers/infiniband/hw/hns_rs/hns_roce_rs.ko
JOBS=${JOBS:-$(nproc)}

unset MAKEFLAGS MFLAGS MAKELEVEL CLIPPY KRUSTFLAGS ARCH CROSS_COMPILE
exec 7>"$HNS_CACHE/kbuild-intree.lock"
flock 7

bash "$HNS_TOP/scripts/intree-patch.sh" "$KSRC" "$PATCH"

# A fresh copy each time: the patch must apply to clean 7.3 source.
rm -rf "$COPY"
mkdir -p "$(dirname "$COPY")"
cp -al "$KSRC" "$COPY"
for f in drivers/infiniband/Kconfig drivers/infiniband/hw/Makefile; do
    rm "$COPY/$f"
    cp -p "$KSRC/$f" "$COPY/$f"
done
(cd "$COPY" && patch -p1 -s --no-backup-if-mismatch <"$PATCH") || die "the in-tree patch does not apply"

# HNS_INTREE_RUST_OFF=1: the same route on a .config with CONFIG_RUST off
# (a tree of its own), which must stop at the config check saying so.
RUST_OFF=${HNS_INTREE_RUST_OFF:-0}
[ "$RUST_OFF" = 1 ] && IOBJ=$HNS_CACHE/kbuild-intree-norust
mkdir -p "$IOBJ"
kmake() { make -C "$COPY" O="$IOBJ" ARCH=x86_64 -j"$JOBS" "$@"; }
cp "$XOBJ/.config" "$IOBJ/.config.new"
if ! cmp -s "$IOBJ/.config.new" "$IOBJ/.config.base" 2>/dev/null || [ ! -f "$IOBJ/.config" ]; then
    cp "$IOBJ/.config.new" "$IOBJ/.config"
    "$COPY/scripts/config" --file "$IOBJ/.config" -m INFINIBAND_HNS_RS
    [ "$RUST_OFF" = 1 ] && "$COPY/scripts/config" --file "$IOBJ/.config" -d RUST
    kmake -s olddefconfig >/dev/null
    mv "$IOBJ/.config.new" "$IOBJ/.config.base"
fi
rm -f "$IOBJ/.config.new"
if ! grep -qx 'CONFIG_INFINIBAND_HNS_RS=m' "$IOBJ/.config"; then
    grep -qx 'CONFIG_RUST=y' "$IOBJ/.config" ||
        die "CONFIG_RUST is off, so olddefconfig dropped INFINIBAND_HNS_RS (it depends on RUST): enable RUST first"
    die "CONFIG_INFINIBAND_HNS_RS=m did not survive olddefconfig: $(grep -E 'INFINIBAND_HNS_RS' "$IOBJ/.config" || echo absent)"
fi

log "in-tree build in $IOBJ"
if ! kmake modules_prepare >"$IOBJ/prepare.log" 2>&1; then
    tail -n 40 "$IOBJ/prepare.log" >&2
    die "modules_prepare failed (log: $IOBJ/prepare.log)"
fi
rm -f "$IOBJ/${KO%.ko}.o" "$IOBJ/$KO"
if ! kmake drivers/infiniband/hw/ >"$IOBJ/build.log" 2>&1; then
    tail -n 40 "$IOBJ/build.log" >&2
    die "building drivers/infiniband/hw/ failed (log: $IOBJ/build.log)"
fi
# Compiler and rustc warnings (modpost has its own pass below).
if grep -E '^(warning|.*: warning:)' "$IOBJ/build.log" >&2; then
    die "warnings in the in-tree build (log: $IOBJ/build.log)"
fi
[ -f "$IOBJ/${KO%.ko}.o" ] ||
    die "drivers/infiniband/hw/ did not build hns_rs/ (is the obj- line in hw/Makefile?)"
if ! kmake KBUILD_MODPOST_WARN=1 "$KO" >"$IOBJ/ko.log" 2>&1; then
    tail -n 40 "$IOBJ/ko.log" >&2
    die "building $KO failed (log: $IOBJ/ko.log)"
fi
[ -f "$IOBJ/$KO" ] || die "$IOBJ/$KO was not produced"
if ! "$IOBJ/scripts/mod/modpost" -M -E -i "$XOBJ/Module.symvers" -o "$IOBJ/strict.symvers" \
    "$IOBJ/${KO%.ko}.o" >"$IOBJ/modpost.log" 2>&1; then
    cat "$IOBJ/modpost.log" >&2
    die "modpost against the test kernel's symbols failed (log: $IOBJ/modpost.log)"
fi
name=$(modinfo -F name "$IOBJ/$KO" 2>/dev/null || true)
[ "$name" = hns_roce_rs ] || die "$IOBJ/$KO: module name '$name', expected hns_roce_rs"
echo "$IOBJ/$KO"
