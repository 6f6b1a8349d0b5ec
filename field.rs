// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Bit fields inside little-endian hardware contexts.
//!
//! Every HNS hardware context (QPC, CQC, SRQC, MPT, EQC, WQEs and CQEs) is an
//! array of little-endian 32-bit words, and each field is addressed by its
//! high and low bit index over the whole array. A field never crosses a word
//! boundary. This module is `core`-only so `tests/host` can compile it.

use core::marker::PhantomData;

/// A context layout: a marker type naming one hardware context format.
pub trait Layout {
    /// Number of 32-bit words in the context.
    const DWORDS: usize;
}

/// The location of one field, bits `h..=l` of a context with layout `L`.
///
/// # Invariants
///
/// `l <= h`, both bits lie in the same 32-bit word, and that word is inside
/// the layout (`h < L::DWORDS * 32`).
pub struct Field<L> {
    h: u16,
    l: u16,
    _layout: PhantomData<L>,
}

impl<L> Clone for Field<L> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<L> Copy for Field<L> {}

impl<L> PartialEq for Field<L> {
    fn eq(&self, other: &Self) -> bool {
        self.h == other.h && self.l == other.l
    }
}

impl<L> Eq for Field<L> {}

impl<L> core::fmt::Debug for Field<L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Field({}, {})", self.h, self.l)
    }
}

impl<L: Layout> Field<L> {
    /// Creates the location of bits `h..=l`.
    ///
    /// Meant for `const` items: a location that breaks the invariants is
    /// rejected when the constant is evaluated, at compile time.
    pub const fn new(h: u32, l: u32) -> Self {
        // PANIC: only reachable during const evaluation of a malformed table,
        // where it is a compile error.
        assert!(l <= h, "field: low bit above high bit");
        assert!(h / 32 == l / 32, "field: crosses a 32-bit word");
        assert!((h as usize) < L::DWORDS * 32, "field: outside the context");
        // INVARIANT: checked by the assertions above.
        Field {
            // CAST: bounded by `L::DWORDS * 32`, far below `u16::MAX` for
            // every context (the largest is 512 bytes).
            h: h as u16,
            l: l as u16,
            _layout: PhantomData,
        }
    }

    /// High bit index over the whole context.
    pub const fn high(self) -> u32 {
        self.h as u32
    }

    /// Low bit index over the whole context.
    pub const fn low(self) -> u32 {
        self.l as u32
    }

    /// Index of the 32-bit word that holds the field.
    pub const fn word(self) -> usize {
        (self.h / 32) as usize
    }

    /// Number of bits in the field (1..=32).
    pub const fn width(self) -> u32 {
        (self.h - self.l) as u32 + 1
    }

    /// Position of the field's lowest bit inside its word.
    pub const fn shift(self) -> u32 {
        (self.l % 32) as u32
    }

    /// Mask of the field inside its word (`GENMASK(h % 32, l % 32)`).
    pub const fn mask(self) -> u32 {
        (u32::MAX >> (32 - self.width())) << self.shift()
    }

    /// The field's value in `word` (the CPU value of the field's word).
    pub const fn extract(self, word: u32) -> u32 {
        (word & self.mask()) >> self.shift()
    }

    /// `word` (the CPU value of the field's word) with the field replaced
    /// by `v`; bits of `v` above the field width are dropped.
    pub const fn insert(self, word: u32, v: u32) -> u32 {
        (word & !self.mask()) | ((v << self.shift()) & self.mask())
    }
}

/// The first words of an entry of layout `L`, already in CPU order, read
/// field by field in place: for a decoder that needs only the entry's head
/// (a CQE's first eight words, say) and should not copy it into a whole
/// [`Ctx`].
pub struct Head<'a, L> {
    words: &'a [u32],
    _layout: PhantomData<L>,
}

impl<'a, L: Layout> Head<'a, L> {
    /// A view of `words`, the entry's first words (CPU values).
    pub const fn new(words: &'a [u32]) -> Self {
        Head {
            words,
            _layout: PhantomData,
        }
    }

    /// Reads `f`; 0 for a field past the words given.
    pub fn read(&self, f: Field<L>) -> u32 {
        self.words.get(f.word()).map_or(0, |w| f.extract(*w))
    }

    /// Reads a one-bit field as a boolean.
    pub fn read_bool(&self, f: Field<L>) -> bool {
        self.read(f) != 0
    }
}

/// A context image in CPU memory: `N` little-endian words.
#[repr(transparent)]
pub struct Ctx<L, const N: usize> {
    words: [u32; N],
    _layout: PhantomData<L>,
}

impl<L, const N: usize> Clone for Ctx<L, N> {
    fn clone(&self) -> Self {
        Ctx {
            words: self.words,
            _layout: PhantomData,
        }
    }
}

impl<L, const N: usize> PartialEq for Ctx<L, N> {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words
    }
}

impl<L, const N: usize> Eq for Ctx<L, N> {}

impl<L, const N: usize> core::fmt::Debug for Ctx<L, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Ctx{:08x?}", self.words)
    }
}

impl<L: Layout, const N: usize> Default for Ctx<L, N> {
    fn default() -> Self {
        Self::zeroed()
    }
}

impl<L: Layout, const N: usize> Ctx<L, N> {
    /// An all-zero context.
    pub const fn zeroed() -> Self {
        // Tie the array length to the layout at compile time.
        const { assert!(N == L::DWORDS, "Ctx: length differs from the layout") };
        Ctx {
            words: [0; N],
            _layout: PhantomData,
        }
    }

    /// An all-ones context, the starting point of a modify mask.
    pub const fn ones() -> Self {
        let mut c = Self::zeroed();
        c.words = [u32::MAX; N];
        c
    }

    /// Builds a context from words already in little-endian byte order.
    pub const fn from_le_words(words: [u32; N]) -> Self {
        let mut c = Self::zeroed();
        c.words = words;
        c
    }

    /// Builds a context from its bytes as they sit in memory (little-endian
    /// words); bytes missing at the end read as 0.
    pub fn from_bytes(b: &[u8]) -> Self {
        let mut words = [0u32; N];
        for (i, w) in words.iter_mut().enumerate() {
            if let Some(s) = b.get(4 * i..4 * i + 4) {
                *w = u32::from_ne_bytes([s[0], s[1], s[2], s[3]]);
            }
        }
        Self::from_le_words(words)
    }

    /// The words in little-endian byte order, as the hardware reads them.
    pub const fn as_le_words(&self) -> &[u32; N] {
        &self.words
    }

    /// The CPU value of word `i`, or 0 past the end.
    pub fn word(&self, i: usize) -> u32 {
        self.words.get(i).map_or(0, |w| u32::from_le(*w))
    }

    /// Reads `f` (`hr_reg_read`).
    pub fn read(&self, f: Field<L>) -> u32 {
        f.extract(self.word(f.word()))
    }

    /// Reads a one-bit field as a boolean.
    pub fn read_bool(&self, f: Field<L>) -> bool {
        self.read(f) != 0
    }

    /// Replaces `f` with `v`; bits of `v` above the field width are dropped
    /// (`hr_reg_write`).
    pub fn write(&mut self, f: Field<L>, v: u32) {
        // The invariant of `Field<L>` and `N == L::DWORDS` keep the index in
        // range, so the `None` arm is never taken.
        if let Some(w) = self.words.get_mut(f.word()) {
            *w = f.insert(u32::from_le(*w), v).to_le();
        }
    }

    /// Clears `f` to zero (`hr_reg_clear`); used on modify masks, where a
    /// zero bit means "change this field".
    pub fn clear(&mut self, f: Field<L>) {
        self.write(f, 0);
    }

    /// Sets every bit of `f`.
    pub fn enable(&mut self, f: Field<L>) {
        self.write(f, u32::MAX);
    }

    /// Copies `src` into the context bytes `at` (a multi-word location such
    /// as a GID, stored as the bytes lie in memory); the shorter of the two
    /// lengths is copied, bytes past the context are dropped.
    pub fn copy_bytes(&mut self, at: core::ops::Range<usize>, src: &[u8]) {
        for (i, b) in at.zip(src.iter()) {
            if let Some(w) = self.words.get_mut(i / 4) {
                let mut bytes = w.to_ne_bytes();
                bytes[i % 4] = *b;
                *w = u32::from_ne_bytes(bytes);
            }
        }
    }

    /// Sets the context bytes `at` to `v` (a mask over a multi-word
    /// location: 0 to change it).
    pub fn fill_bytes(&mut self, at: core::ops::Range<usize>, v: u8) {
        for i in at {
            if let Some(w) = self.words.get_mut(i / 4) {
                let mut bytes = w.to_ne_bytes();
                bytes[i % 4] = v;
                *w = u32::from_ne_bytes(bytes);
            }
        }
    }

    /// Writes a boolean (`hr_reg_write_bool`): all ones or all zeros.
    pub fn write_bool(&mut self, f: Field<L>, v: bool) {
        self.write(f, if v { u32::MAX } else { 0 });
    }

    /// Replaces word `i` (CPU order) whole, for the parts the C driver
    /// stores as plain `__le32` members rather than through `hr_reg_*`
    /// (the halves of a 64-bit address); nothing past the end.
    pub fn set_word(&mut self, i: usize, v: u32) {
        if let Some(w) = self.words.get_mut(i) {
            *w = v.to_le();
        }
    }
}
