// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The udata length rules (`rdma/uabi.rs`) and the driver's user ABI
//! (`uabi.rs`) against the RDMA core's:
//! `_ib_copy_validate_udata_in` with `copy_struct_from_user`
//! (drivers/infiniband/core/ib_core_uverbs.c, include/linux/uaccess.h) and
//! `_ib_respond_udata`, and the first-version ends the driver names in its
//! `ib_copy_validate_udata_in` calls (hns_roce_cq.c: `db_addr`,
//! hns_roce_srq.c: `que_addr`, hns_roce_qp.c: `reserved` with the
//! congestion type `comp_mask` bit, hns_roce_main.c: `reserved`), with the
//! offsets of include/uapi/rdma/hns-abi.h.

use super::{expect, Check};
use crate::rdma::uabi::{
    cm_ok, in_plan, out_plan, Empty, InError, InPlan, OutPlan, UdataIn, UdataOut,
};
use crate::uabi::{
    self, AllocUcontext, CreateCq, CreateCqResp, CreateQp, CreateQpResp, CreateSrq, CreateSrqResp,
};
use core::mem::size_of;

/// The length of a response, as `ib_respond_udata` takes it.
fn resp_len<T: UdataOut>() -> usize {
    size_of::<T>()
}

/// The uapi sizes and first-version ends, as `sizeof` and `offsetofend`
/// give them for hns-abi.h.
pub fn check_abi_lengths() -> Check {
    expect(size_of::<CreateCq>() == 24, "sizeof create_cq")?;
    expect(CreateCq::MIN == 16, "create_cq up to db_addr")?;
    expect(CreateCq::CQE_SIZE_END == 20, "create_cq up to cqe_size")?;
    expect(size_of::<CreateCqResp>() == 16, "sizeof create_cq_resp")?;
    expect(
        CreateCqResp::CAP_FLAGS_END == 16,
        "create_cq_resp up to cap_flags",
    )?;
    expect(size_of::<CreateSrq>() == 32, "sizeof create_srq")?;
    expect(CreateSrq::MIN == 24, "create_srq up to que_addr")?;
    expect(resp_len::<CreateSrqResp>() == 8, "sizeof create_srq_resp")?;
    expect(size_of::<CreateQp>() == 56, "sizeof create_qp")?;
    expect(CreateQp::MIN == 24, "create_qp up to reserved")?;
    expect(CreateQp::SDB_END == 32, "create_qp up to sdb_addr")?;
    expect(size_of::<CreateQpResp>() == 16, "sizeof create_qp_resp")?;
    expect(
        CreateQpResp::CAP_FLAGS_END == 8,
        "create_qp_resp up to cap_flags",
    )?;
    expect(size_of::<AllocUcontext>() == 8, "sizeof alloc_ucontext")?;
    expect(AllocUcontext::MIN == 8, "alloc_ucontext up to reserved")?;
    expect(
        size_of::<uabi::AllocUcontextResp>() == 32,
        "sizeof ucontext_resp",
    )?;
    expect(
        size_of::<uabi::ModifyQpResp>() == 8,
        "sizeof modify_qp_resp",
    )?;
    expect(size_of::<uabi::AllocPdResp>() == 4, "sizeof alloc_pd_resp")?;
    expect(
        size_of::<uabi::CreateAhResp>() == 8,
        "sizeof create_ah_resp",
    )
}

/// `_ib_copy_validate_udata_in`: below the first version `-EINVAL`; up to
/// the struct copied and the rest zero; past it the tail checked.
pub fn check_in_rules() -> Check {
    // (inlen, ksize, min, plan): create_cq's 24 bytes, first version 16.
    expect(
        in_plan(0, 24, 16) == Err(InError::TooShort),
        "empty create_cq",
    )?;
    expect(in_plan(15, 24, 16) == Err(InError::TooShort), "one short")?;
    let p = |head, tail| Ok(InPlan { head, tail });
    expect(in_plan(16, 24, 16) == p(16, 0), "first version")?;
    expect(in_plan(20, 24, 16) == p(20, 0), "up to cqe_size")?;
    expect(in_plan(24, 24, 16) == p(24, 0), "whole struct")?;
    expect(in_plan(32, 24, 16) == p(24, 8), "a newer libhns: tail")?;
    expect(in_plan(4096, 56, 24) == p(56, 4040), "create_qp, a page")?;
    // No request struct: nothing copied, all of it must be zero
    // (`ib_is_udata_in_empty`).
    expect(in_plan(0, 0, 0) == p(0, 0), "empty, nothing")?;
    expect(in_plan(8, 0, 0) == p(0, 8), "empty, all tail")?;
    // A verb whose driver takes no request (`Empty`): nothing is too
    // short, the whole request is tail.
    expect(
        in_plan(0, core::mem::size_of::<Empty>(), Empty::MIN) == p(0, 0),
        "Empty request, none sent",
    )?;
    expect(
        in_plan(8, core::mem::size_of::<Empty>(), Empty::MIN) == p(0, 8),
        "Empty request, all tail",
    )?;
    // `ib_copy_validate_udata_in_cm`: only the known bits.
    let cm = uabi::CREATE_QP_MASK_CONGEST_TYPE;
    expect(cm == 1, "congest type bit")?;
    let req = CreateQp {
        comp_mask: 3,
        ..Default::default()
    };
    expect(!req.comp_mask_ok(), "create_qp refuses an unknown bit")?;
    let known = CreateQp {
        comp_mask: cm,
        ..Default::default()
    };
    expect(known.comp_mask_ok(), "create_qp takes the congest type bit")?;
    expect(
        CreateQp::default().comp_mask_ok(),
        "create_qp takes no bits",
    )?;
    // The requests without a `comp_mask` (`ib_copy_validate_udata_in`).
    expect(CreateCq::default().comp_mask_ok(), "create_cq: no check")?;
    expect(cm_ok(0, cm), "no bits")?;
    expect(cm_ok(1, cm), "the known bit")?;
    expect(!cm_ok(2, cm), "an unknown bit")?;
    expect(!cm_ok(u64::MAX, cm), "every bit")
}

/// `_ib_respond_udata`: cut to the buffer, padded with zeros to its end.
pub fn check_out_rules() -> Check {
    let p = |copy, clear| OutPlan { copy, clear };
    expect(out_plan(16, 0) == p(0, 0), "no buffer")?;
    expect(out_plan(16, 8) == p(8, 0), "cut")?;
    expect(out_plan(16, 16) == p(16, 0), "exact")?;
    expect(out_plan(16, 40) == p(16, 24), "padded")?;
    // `ib_respond_empty_udata`: no answer, the buffer zeroed.
    expect(resp_len::<Empty>() == 0, "no answer")?;
    expect(out_plan(0, 8) == p(0, 8), "empty response")
}
