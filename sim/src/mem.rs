// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Memory the device sees: the BAR2 register window it owns and the guest
//! RAM it reaches by DMA (guest physical address = RAM base + offset in the
//! RAM file; the base is 0 on x86_64 `pc`, 0x4000_0000 on arm64 `virt`).

use crate::sys::Mapping;
use std::fmt;
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// A DMA access outside guest RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadDma {
    /// The DMA address.
    pub addr: u64,
    /// The access length.
    pub len: usize,
}

impl fmt::Display for BadDma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DMA access of {} bytes at {:#x} outside guest RAM",
            self.len, self.addr
        )
    }
}

/// Device-side view of memory addressed by DMA address.
pub trait Dma {
    /// Copies `buf.len()` bytes from `addr`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), BadDma>;
    /// Copies `data` to `addr`.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadDma>;

    /// Reads a little-endian u64.
    fn read_u64(&self, addr: u64) -> Result<u64, BadDma> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Reads a little-endian u32.
    fn read_u32(&self, addr: u64) -> Result<u32, BadDma> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
}

/// Guest RAM mapped from the QEMU memory-backend file.
pub struct GuestRam {
    map: Mapping,
    /// Guest physical (= DMA, no IOMMU) address of the file's first byte.
    base: u64,
}

/// The offset of `[addr, addr + len)` in a RAM window of `size` bytes at
/// guest physical address `base`, or `None` when any byte lies outside.
pub fn ram_offset(base: u64, size: u64, addr: u64, len: usize) -> Option<usize> {
    let off = addr.checked_sub(base)?;
    let end = off.checked_add(len as u64)?;
    if end > size {
        return None;
    }
    usize::try_from(off).ok()
}

impl GuestRam {
    /// Maps the guest RAM file, whose first byte the guest sees at
    /// physical address `base`.
    pub fn open(path: &str, base: u64) -> std::io::Result<Self> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        let len = f.metadata()?.len() as usize;
        use std::os::fd::AsRawFd;
        Ok(GuestRam {
            map: Mapping::new(f.as_raw_fd(), len)?,
            base,
        })
    }

    fn check(&self, addr: u64, len: usize) -> Result<usize, BadDma> {
        ram_offset(self.base, self.map.len() as u64, addr, len).ok_or(BadDma { addr, len })
    }
}

impl Dma for GuestRam {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), BadDma> {
        let off = self.check(addr, buf.len())?;
        fence(Ordering::Acquire);
        // SAFETY: bounds checked above; the source is shared memory that the
        // guest may write concurrently, which a byte copy tolerates.
        unsafe {
            std::ptr::copy_nonoverlapping(self.map.ptr().add(off), buf.as_mut_ptr(), buf.len())
        };
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadDma> {
        let off = self.check(addr, data.len())?;
        // SAFETY: bounds checked above.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.map.ptr().add(off), data.len())
        };
        fence(Ordering::Release);
        Ok(())
    }
}

/// The BAR2 window: registers at offset 0, the HIP09 `mem_base` window at
/// [`MEM_BASE_OFFSET`].
pub struct Bar {
    map: Mapping,
}

/// Size of BAR2 (a power of two, as PCI requires).
pub const BAR_SIZE: u64 = 32 << 20;
/// Offset of the `roce_mem_base` window (64 KiB per QPN) inside BAR2.
pub const MEM_BASE_OFFSET: u64 = 16 << 20;

impl Bar {
    /// Creates the BAR2 memory file and maps it.
    pub fn new(name: &str) -> std::io::Result<(Self, std::fs::File)> {
        let f = crate::sys::new_memfd(name, BAR_SIZE)?;
        use std::os::fd::AsRawFd;
        let map = Mapping::new(f.as_raw_fd(), BAR_SIZE as usize)?;
        Ok((Bar { map }, f))
    }

    /// Reads the 32-bit register at `off`.
    pub fn read32(&self, off: u64) -> u32 {
        if off + 4 > self.map.len() as u64 {
            return 0;
        }
        // SAFETY: in bounds and 4-byte aligned for register offsets; volatile
        // because the guest writes it.
        u32::from_le(unsafe {
            std::ptr::read_volatile(self.map.ptr().add(off as usize).cast::<u32>())
        })
    }

    /// Writes the 32-bit register at `off`.
    pub fn write32(&self, off: u64, v: u32) {
        if off + 4 > self.map.len() as u64 {
            return;
        }
        // SAFETY: as in `read32`.
        unsafe {
            std::ptr::write_volatile(self.map.ptr().add(off as usize).cast::<u32>(), v.to_le())
        };
    }

    /// Takes the 64-bit doorbell word at `off`: returns it and leaves 0
    /// in its place in one atomic exchange, so a store of the guest lands
    /// either before (and is returned now) or after (and is returned by
    /// the next call); two rings of the same value are two doorbells.
    /// Unaligned or out-of-range offsets read as 0.
    pub fn take64(&self, off: u64) -> u64 {
        if off + 8 > self.map.len() as u64 || !off.is_multiple_of(8) {
            return 0;
        }
        // SAFETY: in bounds and 8-byte aligned (the mapping is page
        // aligned); the guest stores to this word through QEMU's mapping of
        // the same file, and every access on our side is atomic.
        let word = unsafe { &*self.map.ptr().add(off as usize).cast::<AtomicU64>() };
        u64::from_le(word.swap(0, Ordering::SeqCst))
    }

    /// Takes the 32-bit register at `off` as [`Bar::take64`] takes its
    /// word: returns it and leaves 0 in one atomic exchange (a doorbell
    /// that carries a count). Unaligned or out-of-range offsets read as 0.
    pub fn take32(&self, off: u64) -> u32 {
        if off + 4 > self.map.len() as u64 || !off.is_multiple_of(4) {
            return 0;
        }
        // SAFETY: in bounds and 4-byte aligned (the mapping is page
        // aligned); every access on our side of this word is atomic.
        let word = unsafe {
            &*self
                .map
                .ptr()
                .add(off as usize)
                .cast::<std::sync::atomic::AtomicU32>()
        };
        u32::from_le(word.swap(0, Ordering::SeqCst))
    }

    /// Reads the 64-bit word at `off` without taking it (the rest of a
    /// direct WQE in a QP's page). Unaligned or out-of-range offsets read
    /// as 0.
    pub fn peek64(&self, off: u64) -> u64 {
        if off + 8 > self.map.len() as u64 || !off.is_multiple_of(8) {
            return 0;
        }
        // SAFETY: as in `take64`.
        let word = unsafe { &*self.map.ptr().add(off as usize).cast::<AtomicU64>() };
        u64::from_le(word.load(Ordering::SeqCst))
    }
}

/// Plain memory for tests, addressed from 0.
#[cfg(test)]
pub struct VecMem(pub std::cell::RefCell<Vec<u8>>);

#[cfg(test)]
impl VecMem {
    /// `len` zero bytes.
    pub fn new(len: usize) -> Self {
        VecMem(std::cell::RefCell::new(vec![0; len]))
    }
}

#[cfg(test)]
impl Dma for VecMem {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), BadDma> {
        let m = self.0.borrow();
        let a = addr as usize;
        let src = m.get(a..a + buf.len()).ok_or(BadDma {
            addr,
            len: buf.len(),
        })?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadDma> {
        let mut m = self.0.borrow_mut();
        let a = addr as usize;
        let dst = m.get_mut(a..a + data.len()).ok_or(BadDma {
            addr,
            len: data.len(),
        })?;
        dst.copy_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ram_offset;

    #[test]
    fn ram_offset_with_and_without_base() {
        // x86_64 `pc`: RAM from 0.
        assert_eq!(ram_offset(0, 0x1000, 0, 0x1000), Some(0));
        assert_eq!(ram_offset(0, 0x1000, 0xff8, 8), Some(0xff8));
        assert_eq!(ram_offset(0, 0x1000, 0xff9, 8), None);
        // arm64 `virt`: RAM from 0x4000_0000.
        let base = 0x4000_0000;
        assert_eq!(ram_offset(base, 0x1000, base, 8), Some(0));
        assert_eq!(ram_offset(base, 0x1000, base + 0x10, 4), Some(0x10));
        assert_eq!(ram_offset(base, 0x1000, base - 8, 8), None);
        assert_eq!(ram_offset(base, 0x1000, base + 0xffc, 8), None);
        assert_eq!(ram_offset(base, 0x1000, u64::MAX - 2, 8), None);
    }
}
