// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The few Linux system calls std does not wrap: mmap, eventfd, memfd and
//! sendmsg with SCM_RIGHTS. Declared by hand against the C library std
//! already links, so the simulator needs no crates.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

#[allow(non_camel_case_types)]
type c_int = i32;
#[allow(non_camel_case_types)]
type size_t = usize;

const PROT_READ: c_int = 1;
const PROT_WRITE: c_int = 2;
const MAP_SHARED: c_int = 1;
const EFD_CLOEXEC: c_int = 0o2000000;
const MFD_CLOEXEC: u32 = 1;
const SOL_SOCKET: c_int = 1;
const SCM_RIGHTS: c_int = 1;

#[repr(C)]
struct IoVec {
    base: *const u8,
    len: size_t,
}

#[repr(C)]
struct MsgHdr {
    name: *mut u8,
    namelen: u32,
    iov: *const IoVec,
    iovlen: size_t,
    control: *mut u8,
    controllen: size_t,
    flags: c_int,
}

#[repr(C)]
struct CmsgHdr {
    len: size_t,
    level: c_int,
    kind: c_int,
}

extern "C" {
    fn mmap(addr: *mut u8, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: i64) -> *mut u8;
    fn munmap(addr: *mut u8, len: size_t) -> c_int;
    fn eventfd(initval: u32, flags: c_int) -> c_int;
    fn memfd_create(name: *const u8, flags: u32) -> c_int;
    fn sendmsg(fd: c_int, msg: *const MsgHdr, flags: c_int) -> isize;
}

/// A shared, writable mapping of a file; unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; all accesses go through
// volatile/atomic-free raw pointer operations that tolerate concurrent
// writers (the guest), and the pointer itself is never reassigned.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` from offset 0, shared and read/write.
    pub fn new(fd: RawFd, len: usize) -> io::Result<Self> {
        // SAFETY: a fresh mapping chosen by the kernel; arguments are valid.
        let p = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                PROT_READ | PROT_WRITE,
                MAP_SHARED,
                fd,
                0,
            )
        };
        if p as isize == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr: p, len })
    }

    /// Start of the mapping.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length of the mapping in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never, for a successful `new`).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe a mapping created by `new`.
        unsafe { munmap(self.ptr, self.len) };
    }
}

/// A new eventfd.
pub fn new_eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain system call.
    let fd = unsafe { eventfd(0, EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A new anonymous memory file of `len` bytes.
pub fn new_memfd(name: &str, len: u64) -> io::Result<std::fs::File> {
    let mut n = name.as_bytes().to_vec();
    n.push(0);
    // SAFETY: `n` is NUL-terminated.
    let fd = unsafe { memfd_create(n.as_ptr(), MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor we own.
    let f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.set_len(len)?;
    Ok(f)
}

/// Sends one little-endian 64-bit number, with `fd` attached if given
/// (the ivshmem server protocol message).
pub fn send_msg(sock: &impl AsRawFd, value: i64, fd: Option<RawFd>) -> io::Result<()> {
    let bytes = value.to_le_bytes();
    let iov = IoVec {
        base: bytes.as_ptr(),
        len: bytes.len(),
    };
    // Control buffer: header + one int, aligned to 8.
    let mut cbuf = [0u64; 4];
    let mut msg = MsgHdr {
        name: std::ptr::null_mut(),
        namelen: 0,
        iov: &iov,
        iovlen: 1,
        control: std::ptr::null_mut(),
        controllen: 0,
        flags: 0,
    };
    if let Some(fd) = fd {
        let hdr = std::mem::size_of::<CmsgHdr>();
        let cmsg = CmsgHdr {
            len: hdr + 4,
            level: SOL_SOCKET,
            kind: SCM_RIGHTS,
        };
        let base = cbuf.as_mut_ptr().cast::<u8>();
        // SAFETY: `cbuf` has 32 bytes, enough for the 16-byte header and a
        // 4-byte descriptor; both writes are in bounds.
        unsafe {
            std::ptr::write_unaligned(base.cast::<CmsgHdr>(), cmsg);
            std::ptr::write_unaligned(base.add(hdr).cast::<i32>(), fd);
        }
        msg.control = base;
        // CMSG_SPACE(sizeof(int)) on LP64 Linux.
        msg.controllen = hdr + 8;
    }
    // SAFETY: `msg` points at live buffers for the duration of the call.
    let r = unsafe { sendmsg(sock.as_raw_fd(), &msg, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes 1 to an eventfd (raises the MSI-X vector QEMU attached to it).
pub fn signal(fd: &OwnedFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: 8-byte write from a valid buffer to a valid descriptor.
    let _ = unsafe { write(fd.as_raw_fd(), one.as_ptr(), 8) };
}

extern "C" {
    fn write(fd: c_int, buf: *const u8, n: size_t) -> isize;
}
