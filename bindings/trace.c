// SPDX-License-Identifier: GPL-2.0+
/*
 * The hns_roce trace events of hns_roce_rs (hns_roce_trace.h) and the calls
 * the Rust side makes to emit them. Each call tests the event's static key
 * before anything else, so an event that is off costs a call and a jump.
 */

#define CREATE_TRACE_POINTS
#include "hns_roce_trace.h"

bool hns_shim_trace_enabled(u32 ev)
{
	switch (ev) {
	case HNS_SHIM_TRACE_SQ_WQE:
		return trace_hns_sq_wqe_enabled();
	case HNS_SHIM_TRACE_RQ_WQE:
		return trace_hns_rq_wqe_enabled();
	case HNS_SHIM_TRACE_SRQ_WQE:
		return trace_hns_srq_wqe_enabled();
	case HNS_SHIM_TRACE_AE_INFO:
		return trace_hns_ae_info_enabled();
	default:
		return false;
	}
}

void hns_shim_trace_wqe(u32 queue, u32 qpn, u32 idx, const u32 *wqe,
			u32 len, u64 id)
{
	switch (queue) {
	case TRACE_SQ:
		trace_hns_sq_wqe(qpn, idx, wqe, len, id, TRACE_SQ);
		break;
	case TRACE_RQ:
		trace_hns_rq_wqe(qpn, idx, wqe, len, id, TRACE_RQ);
		break;
	case TRACE_SRQ:
		trace_hns_srq_wqe(qpn, idx, wqe, len, id, TRACE_SRQ);
		break;
	}
}

void hns_shim_trace_flush(u32 queue, u32 qpn, u32 pi)
{
	if (queue == TRACE_SQ)
		trace_hns_sq_flush_cqe(qpn, pi, TRACE_SQ);
	else
		trace_hns_rq_flush_cqe(qpn, pi, TRACE_RQ);
}

void hns_shim_trace_ae(int event_type, const u32 *aeqe, u32 len)
{
	trace_hns_ae_info(event_type, aeqe, len);
}

void hns_shim_trace_mr(const struct hns_rs_trace_mr *mr)
{
	trace_hns_mr(mr);
}

void hns_shim_trace_buf_attr(const struct hns_rs_trace_buf_attr *attr)
{
	trace_hns_buf_attr(attr);
}

void hns_shim_trace_cmdq(bool resp, const char *name, u16 opcode, u16 flag,
			 u16 retval, const u32 *data)
{
	if (resp)
		trace_hns_cmdq_resp(name, opcode, flag, retval, data);
	else
		trace_hns_cmdq_req(name, opcode, flag, retval, data);
}
