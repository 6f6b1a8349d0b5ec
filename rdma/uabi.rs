// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The length rules of the RDMA core's udata helpers, and the traits a
//! driver's request and answer types implement, in plain Rust (`core`
//! only, so the host tests build it too). The types themselves are the
//! driver's (its user ABI); the layer names none of them.
//!
//! The rules are those of `_ib_copy_validate_udata_in` (with
//! `copy_struct_from_user`) and `_ib_respond_udata` in
//! drivers/infiniband/core/ib_core_uverbs.c: [`in_plan`] and [`out_plan`]
//! say which bytes move; the copying itself is `rdma/udata.rs`'s.

/// A request a user verb reads from its udata (`ib_copy_validate_udata_in`).
pub(crate) trait UdataIn: Copy + Default {
    /// The offset of the end of the member that ended the struct in the
    /// first kernel that had it (the macro's `end_member`): a shorter
    /// request is refused.
    const MIN: usize;

    /// Whether the request's `comp_mask` (if it has one) has only known
    /// bits, the check `ib_copy_validate_udata_in_cm` adds (see
    /// [`cm_ok`]); a request refused for it keeps its members, as C's copy
    /// has filled them.
    fn comp_mask_ok(&self) -> bool {
        true
    }
}

/// A response a user verb writes to its udata (`ib_respond_udata`).
pub(crate) trait UdataOut: Copy + Default {}

/// The request and answer of a verb that has none: a request must be all
/// zeros (`ib_is_udata_in_empty`), the answer buffer is only zeroed
/// (`ib_respond_empty_udata`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Empty;

impl UdataIn for Empty {
    const MIN: usize = 0;
}

impl UdataOut for Empty {}

/// Why a request is refused before any byte of it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InError {
    /// Shorter than the first version (C: `-EINVAL`).
    TooShort,
}

/// What reading a request of `inlen` bytes into a struct of `ksize` bytes,
/// first version `min` bytes long, does: `tail` bytes from `ksize` on must
/// be zero (checked first: C's `copy_struct_from_user` looks at them before
/// copying; a non-zero byte is `-EOPNOTSUPP`), then `head` bytes are
/// copied and the rest of the struct is zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InPlan {
    /// Bytes copied into the struct.
    pub(crate) head: usize,
    /// Bytes past the struct that must be zero.
    pub(crate) tail: usize,
}

/// The plan of `_ib_copy_validate_udata_in` for a request of `inlen` bytes
/// into a struct of `ksize` bytes whose first version was `min` bytes.
pub(crate) fn in_plan(inlen: usize, ksize: usize, min: usize) -> Result<InPlan, InError> {
    if inlen < min {
        return Err(InError::TooShort);
    }
    Ok(InPlan {
        head: inlen.min(ksize),
        tail: inlen.saturating_sub(ksize),
    })
}

/// Whether a `comp_mask` has only bits of `valid`.
pub(crate) fn cm_ok(comp_mask: u64, valid: u64) -> bool {
    comp_mask & !valid == 0
}

/// What `_ib_respond_udata` writes for a `len`-byte response into an
/// `outlen`-byte buffer: the first `copy` bytes of the response, then
/// `clear` zero bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OutPlan {
    /// Response bytes copied.
    pub(crate) copy: usize,
    /// Zero bytes after them.
    pub(crate) clear: usize,
}

/// The plan of `_ib_respond_udata`: longer responses are cut, shorter ones
/// padded with zeros to the buffer's length.
pub(crate) fn out_plan(len: usize, outlen: usize) -> OutPlan {
    let copy = len.min(outlen);
    OutPlan {
        copy,
        clear: outlen - copy,
    }
}
