# shellcheck shell=bash
#
# Shared definitions for the hns-roce-rs harness scripts: cache layout, pinned
# versions and small helpers. Sourced, never executed.

HNS_CACHE=${HNS_CACHE:-$HOME/.cache/hns-roce-rs}
HNS_TOP=${HNS_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
HNS_BUILD=${HNS_BUILD:-$HNS_TOP/build}

# Pinned pieces of the toolchain (see docs/toolchain.md).
KERNEL_SERIES=7.3
BINDGEN_VERSION=0.73.2
LIBCLANG_VERSION=18.1.1
# Guest userland comes from this Debian release.
GUEST_SUITE=trixie

APT_PRIV=$HNS_CACHE/apt
TOOLS=$HNS_CACHE/tools
KSRC_ROOT=$HNS_CACHE/src
KOBJ=${KOBJ:-$HNS_CACHE/kbuild-x86_64}
GUEST_DEBS=$HNS_CACHE/guest-debs
GUEST_ROOT=$HNS_CACHE/guest-root

log() { printf '[hns] %s\n' "$*" >&2; }
die() { printf '[hns] error: %s\n' "$*" >&2; exit 1; }

# The Debian mirror the system is configured with: we reuse its URI for the
# private apt configuration rather than naming one here.
debian_mirror() {
    local uri
    uri=$(grep -hE '^[[:space:]]*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '{print $2}' | grep -E '/debian/?$' | head -n1)
    if [ -z "$uri" ]; then
        uri=$(grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -E 's/\[[^]]*\]//' | awk '{print $2}' | grep -E '/debian/?$' | head -n1)
    fi
    [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list*; cannot fetch ${GUEST_SUITE} packages"
    printf '%s\n' "${uri%/}"
}

# apt-get/apt-cache with the private configuration (own sources and lists,
# empty dpkg status), so nothing from other suites touches the system.
papt_opts() {
    printf '%s\n' \
        -o "Dir::Etc::SourceList=$APT_PRIV/sources.list" \
        -o "Dir::Etc::SourceParts=$APT_PRIV/sources.list.d" \
        -o "Dir::Etc::Preferences=$APT_PRIV/preferences" \
        -o "Dir::Etc::PreferencesParts=$APT_PRIV/preferences.d" \
        -o "Dir::State::Lists=$APT_PRIV/lists" \
        -o "Dir::State::status=$APT_PRIV/status" \
        -o "Dir::Cache=$APT_PRIV/cache" \
        -o "APT::Architecture=amd64" \
        -o "APT::Architectures::=amd64" \
        -o "Debug::NoLocking=1" \
        -o "APT::Sandbox::User=root"
}
papt_get() { local o; mapfile -t o < <(papt_opts); apt-get "${o[@]}" "$@"; }
papt_cache() { local o; mapfile -t o < <(papt_opts); apt-cache "${o[@]}" "$@"; }

# Newest version of package $1 in the private lists whose version matches the
# extended regex $2 (empty: any).
papt_newest() {
    local pkg=$1 re=${2:-.} best="" v
    while read -r v; do
        [ -n "$v" ] || continue
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
    done < <(papt_cache madison "$pkg" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -E "$re" || true)
    printf '%s\n' "$best"
}

# Where the unpacked kernel source lives (set by setup.sh).
kernel_src() {
    local f=$HNS_CACHE/kernel-src.path
    [ -f "$f" ] || die "kernel source not set up; run 'make setup'"
    cat "$f"
}

# Environment for kernel and module builds: tools from the cache.
kbuild_env() {
    export PATH="$TOOLS/bin:$PATH"
    LIBCLANG_PATH=$(cat "$HNS_CACHE/libclang.path" 2>/dev/null || true)
    RUST_LIB_SRC=$(cat "$HNS_CACHE/rust-lib-src.path" 2>/dev/null || true)
    export LIBCLANG_PATH RUST_LIB_SRC
}
