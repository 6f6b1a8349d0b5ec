// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The ivshmem server side of QEMU's `ivshmem-doorbell` device: hands QEMU
//! the BAR2 memory file and one eventfd per MSI-X vector. Writing to the
//! eventfd of vector v raises MSI-X vector v in the guest.

use crate::sys;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};

/// A connected ivshmem peer (one QEMU device) and its interrupt eventfds.
pub struct Peer {
    _sock: UnixStream,
    vectors: Vec<OwnedFd>,
}

impl Peer {
    /// Waits for QEMU on `listener` and runs the server handshake:
    /// version 0, the peer's id, -1 with the BAR memory file, then the
    /// peer's own id once per vector with that vector's eventfd.
    pub fn accept(listener: &UnixListener, bar_fd: &impl AsRawFd, nvec: usize) -> io::Result<Self> {
        let (sock, _) = listener.accept()?;
        let id: i64 = 0;
        sys::send_msg(&sock, 0, None)?;
        sys::send_msg(&sock, id, None)?;
        sys::send_msg(&sock, -1, Some(bar_fd.as_raw_fd()))?;
        let mut vectors = Vec::with_capacity(nvec);
        for _ in 0..nvec {
            let fd = sys::new_eventfd()?;
            sys::send_msg(&sock, id, Some(fd.as_raw_fd()))?;
            vectors.push(fd);
        }
        Ok(Peer {
            _sock: sock,
            vectors,
        })
    }

    /// Raises MSI-X vector `v`; out-of-range vectors are ignored.
    pub fn raise(&self, v: usize) {
        if let Some(fd) = self.vectors.get(v) {
            sys::signal(fd);
        }
    }

    /// Whether QEMU has gone (the socket reached end of file).
    pub fn closed(&self) -> bool {
        let _ = self._sock.set_nonblocking(true);
        let mut b = [0u8; 8];
        match std::io::Read::read(&mut &self._sock, &mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
        }
    }

    /// Number of vectors handed to QEMU.
    pub fn vectors(&self) -> usize {
        self.vectors.len()
    }
}
