#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Build the guest's base initramfs from the cached trixie userland.

The image holds busybox, the rdma-core tools (ibverbs-utils, rdmacm-utils,
perftest, iproute2), python3 with pyverbs and its test suite, the ELF closure
of all of these (trixie's own glibc, nothing from the host), the test
kernel's modules and our guest scripts (tests/guest). Run-specific files (our
freshly built .ko files and the command to run) travel in a second, small
cpio archive that scripts/run-guest.sh appends at boot.

The result is cached in $HNS_CACHE/initramfs/ (arm64: initramfs-arm64/)
under a key of everything that goes into it; the path of the image is printed
on stdout. HNS_ARCH (or ARCH) selects the architecture: x86_64 (default) or
arm64, whose userland is the trixie arm64 one (guest-root-arm64) and whose
modules come from the arm64 kernel tree.
"""
import gzip
import hashlib
import os
import shutil
import subprocess
import sys

CACHE = os.environ.get("HNS_CACHE", os.path.expanduser("~/.cache/hns-roce-rs"))
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCH = os.environ.get("HNS_ARCH") or os.environ.get("ARCH") or "x86_64"
if ARCH in ("arm64", "aarch64"):
    ARCH = "arm64"
    ROOT = os.path.join(CACHE, "guest-root-arm64")
    KOBJ = os.environ.get("KOBJ", os.path.join(CACHE, "kbuild-arm64"))
    TRIPLET = "aarch64-linux-gnu"
    OUTDIR = os.path.join(CACHE, "initramfs-arm64")
else:
    ARCH = "x86_64"
    ROOT = os.path.join(CACHE, "guest-root")
    KOBJ = os.environ.get("KOBJ", os.path.join(CACHE, "kbuild-x86_64"))
    TRIPLET = "x86_64-linux-gnu"
    OUTDIR = os.path.join(CACHE, "initramfs")
# HNS_INITRAMFS_DIR: a cache of one's own (a private kernel tree, KOBJ=...,
# whose base image would otherwise replace the shared one).
OUTDIR = os.environ.get("HNS_INITRAMFS_DIR") or OUTDIR
LIBDIRS = [f"usr/lib/{TRIPLET}", "usr/lib", "usr/lib64"]
# The applet list comes from running busybox, which the host can only do
# for its own architecture: the x86_64 userland's busybox is the same trixie
# version (same Debian build configuration) as the arm64 one.
BUSYBOX_LIST = os.path.join(CACHE, "guest-root", "usr/bin/busybox")

BINARIES = [
    "busybox", "ip", "rdma", "python3.13",
    "ibv_devinfo", "ibv_devices", "ibv_rc_pingpong", "ibv_uc_pingpong", "ibv_ud_pingpong",
    "ibv_srq_pingpong", "ibv_xsrq_pingpong", "ibv_asyncwatch",
    "rping", "ucmatose", "udaddy", "mckey", "rdma_server", "rdma_client", "rstream",
    "ib_send_bw", "ib_send_lat", "ib_write_bw", "ib_write_lat", "ib_read_bw", "ib_read_lat",
    "ib_atomic_bw", "ib_atomic_lat",
]
# The hns3 NIC modules' directory in the module tree (kept out of it, see
# build()).
NIC_MODDIR = "kernel/drivers/net/ethernet/hisilicon/hns3"
# Dropped from the Python stdlib to keep the image small.
PY_DROP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data",
           "__pycache__", "venv", "sqlite3", "dbm"}


def log(msg):
    print(f"[hns] {msg}", file=sys.stderr)


def die(msg):
    log(f"error: {msg}")
    sys.exit(1)


def kernel_release():
    with open(os.path.join(KOBJ, "include/config/kernel.release")) as f:
        return f.read().strip()


def guest_files():
    """The files of tests/guest that go to /opt/hns: regular files only
    (a __pycache__ left by running a script on the host is skipped)."""
    d = os.path.join(TOP, "tests/guest")
    return sorted(n for n in os.listdir(d)
                  if not n.startswith(".") and os.path.isfile(os.path.join(d, n)))


def cache_key(krel):
    h = hashlib.sha256()
    with open(__file__, "rb") as f:
        h.update(f.read())
    for name in guest_files():
        with open(os.path.join(TOP, "tests/guest", name), "rb") as f:
            h.update(name.encode() + f.read())
    with open(os.path.join(ROOT, ".id"), "rb") as f:
        h.update(f.read())
    h.update(krel.encode() + ARCH.encode())
    moddir = os.path.join(KOBJ, "modroot/lib/modules", krel)
    for dirpath, _, files in sorted(os.walk(moddir)):
        for fn in sorted(files):
            st = os.stat(os.path.join(dirpath, fn))
            h.update(f"{fn}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


class Stage:
    def __init__(self, dest):
        self.dest = dest
        self.done = set()

    def src(self, rel):
        return os.path.join(ROOT, rel)

    def copy(self, rel):
        """Copy ROOT/rel (following symlinks inside ROOT) to the same path."""
        rel = rel.lstrip("/")
        # Merged /usr: /lib64/x is /usr/lib64/x (the links themselves come
        # from packages we do not unpack).
        if rel.split("/", 1)[0] in ("bin", "sbin", "lib", "lib64") and not os.path.lexists(self.src(rel)):
            rel = "usr/" + rel
        if rel in self.done:
            return
        self.done.add(rel)
        s = self.src(rel)
        d = os.path.join(self.dest, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if os.path.islink(s):
            target = os.readlink(s)
            os.symlink(target, d)
            if target.startswith("/"):
                self.copy(target)
            else:
                self.copy(os.path.normpath(os.path.join(os.path.dirname(rel), target)))
            return
        if not os.path.exists(s):
            die(f"{rel} missing from the guest userland")
        if os.path.isdir(s):
            shutil.copytree(s, d, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(s, d)
            self.elf_deps(rel)

    def elf_deps(self, rel):
        path = self.src(rel)
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return
        out = subprocess.run(["readelf", "-d", "-l", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if "(NEEDED)" in line:
                lib = line.split("[", 1)[1].split("]", 1)[0]
                self.copy(self.find_lib(lib, rel))
            elif "Requesting program interpreter:" in line:
                interp = line.split(":", 1)[1].strip().rstrip("]")
                self.copy(interp)

    def find_lib(self, name, who):
        for d in LIBDIRS:
            if os.path.lexists(self.src(os.path.join(d, name))):
                return os.path.join(d, name)
        die(f"{name} (needed by {who}) not in the guest userland")

    def write(self, rel, text, mode=0o644):
        d = os.path.join(self.dest, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with open(d, "w") as f:
            f.write(text)
        os.chmod(d, mode)


def build(dest, krel):
    st = Stage(dest)
    for d in ["usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "proc", "sys", "dev", "tmp", "run",
              "root", "etc", "var", "mnt", "opt/hns"]:
        os.makedirs(os.path.join(dest, d), exist_ok=True)
    # Merged /usr, as in trixie.
    for link, target in [("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"),
                         ("lib64", "usr/lib64")]:
        os.symlink(target, os.path.join(dest, link))
    for b in BINARIES:
        st.copy(f"usr/bin/{b}")
    # nvme-cli, for the NVMe over RDMA host of ulp-plan.sh.
    st.copy("usr/sbin/nvme")
    os.symlink("python3.13", os.path.join(dest, "usr/bin/python3"))
    # glibc dlopens libgcc_s for thread cancellation (rping needs it).
    st.copy(st.find_lib("libgcc_s.so.1", "glibc"))
    # Verbs providers and their driver files, plus libraries pyverbs links.
    provdir = f"usr/lib/{TRIPLET}/libibverbs"
    for p in sorted(os.listdir(st.src(provdir))):
        st.copy(f"{provdir}/{p}")
    st.copy("etc/libibverbs.d")
    for lib in ["libmlx5.so.1", "libefa.so.1"]:
        st.copy(st.find_lib(lib, "pyverbs"))
    # Python: trimmed stdlib, pyverbs and the rdma-core test suite.
    pylib = "usr/lib/python3.13"
    for dirpath, dirnames, files in os.walk(st.src(pylib)):
        dirnames[:] = [d for d in dirnames if d not in PY_DROP and not d.startswith("config-")]
        for fn in files:
            rel = os.path.relpath(os.path.join(dirpath, fn), ROOT)
            st.copy(rel)
    st.copy("usr/lib/python3/dist-packages/pyverbs")
    for dirpath, _, files in os.walk(st.src("usr/lib/python3/dist-packages/pyverbs")):
        for fn in files:
            if fn.endswith(".so"):
                st.elf_deps(os.path.relpath(os.path.join(dirpath, fn), ROOT))
    tests = "usr/share/doc/rdma-core/tests"
    st.copy(tests)
    tdir = os.path.join(dest, tests)
    for fn in os.listdir(tdir):
        if fn.endswith(".gz"):
            with gzip.open(os.path.join(tdir, fn)) as g, open(os.path.join(tdir, fn[:-3]), "wb") as o:
                o.write(g.read())
            os.unlink(os.path.join(tdir, fn))
    # iproute2 reads its tables from here.
    if os.path.isdir(st.src("usr/share/iproute2")):
        st.copy("usr/share/iproute2")
    # busybox applets for everything not provided by a real binary.
    bb = st.src("usr/bin/busybox") if ARCH == "x86_64" else BUSYBOX_LIST
    applets = subprocess.run([bb, "--list-full"], capture_output=True, text=True).stdout.split()
    if not applets:
        die(f"no busybox applet list from {bb}")
    for a in applets:
        p = os.path.join(dest, a.replace("bin/", "usr/bin/", 1) if a.startswith("bin/") else
                         a.replace("sbin/", "usr/sbin/", 1) if a.startswith("sbin/") else a)
        name = os.path.basename(a)
        real = any(os.path.lexists(os.path.join(dest, d, name)) for d in ("usr/bin", "usr/sbin"))
        if not real and "/" in a:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.symlink("/usr/bin/busybox", p)
    # Kernel modules of the test kernel (rdma_rxe, the C hns driver, ...).
    moddir = os.path.join(KOBJ, "modroot/lib/modules", krel)
    if not os.path.isdir(moddir):
        die(f"{moddir} missing: run 'make kernel'")
    shutil.copytree(moddir, os.path.join(dest, "usr/lib/modules", krel), symlinks=False,
                    ignore=shutil.ignore_patterns("build", "source"))
    # The upstream NIC drivers (hns3, hclge, hclgevf) stay out of the
    # module tree: depmod does not index them, so nothing loads them by
    # name or alias, and hclge never takes over the ae_dev of hns_sim.ko
    # (hnae3 hands every registered ae_dev of a matching PCI ID to a new
    # ae_algo). /init loads them from /opt/nic for HNS_NIC=hclge only.
    nic = os.path.join(dest, "usr/lib/modules", krel, NIC_MODDIR)
    if os.path.isdir(nic):
        os.makedirs(os.path.join(dest, "opt/nic"), exist_ok=True)
        for dirpath, _, files in os.walk(nic):
            for fn in files:
                if fn.endswith(".ko"):
                    shutil.move(os.path.join(dirpath, fn), os.path.join(dest, "opt/nic", fn))
        shutil.rmtree(nic)
    # Minimal /etc.
    st.write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n")
    st.write("etc/group", "root:x:0:\n")
    st.write("etc/hosts", "127.0.0.1 localhost\n::1 localhost\n")
    st.write("etc/nsswitch.conf", "hosts: files\n")
    for fn in guest_files():
        mode = 0o755 if fn.endswith(".sh") else 0o644
        with open(os.path.join(TOP, "tests/guest", fn)) as f:
            st.write(f"opt/hns/{fn}", f.read(), mode)
    os.symlink("opt/hns/init.sh", os.path.join(dest, "init"))


def pack(src_dir, out):
    """cpio (newc) + gzip of a directory, as the kernel wants it."""
    files = subprocess.run(["find", ".", "-mindepth", "1"], cwd=src_dir, capture_output=True,
                           text=True, check=True).stdout
    with open(out + ".tmp", "wb") as f:
        cpio = subprocess.Popen(["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"], cwd=src_dir,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        gz = subprocess.Popen(["gzip", "-1"], stdin=cpio.stdout, stdout=f)
        cpio.stdout.close()
        cpio.communicate(files.encode())
        gz.wait()
        if cpio.returncode or gz.returncode:
            die("cpio/gzip failed")
    os.replace(out + ".tmp", out)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--pack":
        pack(sys.argv[2], sys.argv[3])
        return
    if not os.path.exists(os.path.join(ROOT, ".id")):
        die("guest userland missing: run 'make setup'")
    krel = kernel_release()
    key = cache_key(krel)
    outdir = OUTDIR
    out = os.path.join(outdir, f"base-{key}.cpio.gz")
    if not os.path.exists(out):
        log(f"building base initramfs {os.path.basename(out)}")
        os.makedirs(outdir, exist_ok=True)
        for old in os.listdir(outdir):
            os.unlink(os.path.join(outdir, old)) if old.startswith("base-") else None
        stage = os.path.join(outdir, "stage")
        shutil.rmtree(stage, ignore_errors=True)
        os.makedirs(stage)
        build(stage, krel)
        subprocess.run(["depmod", "-b", stage, krel], check=True)
        pack(stage, out)
        shutil.rmtree(stage)
        log(f"base initramfs: {os.path.getsize(out) // 1024} KiB")
    print(out)


if __name__ == "__main__":
    main()
