// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The trace calls of the rdma layer, as nothing: rdma_lo has no trace
 * events (the layer's events are hns_roce_rs's, system "hns_roce", which
 * one module defines).
 */
#include <linux/types.h>
#include "shim_trace.h"

bool hns_shim_trace_enabled(u32 ev)
{
	return false;
}

void hns_shim_trace_wqe(u32 queue, u32 qpn, u32 idx, const u32 *wqe,
			u32 len, u64 id)
{
}

void hns_shim_trace_flush(u32 queue, u32 qpn, u32 pi)
{
}

void hns_shim_trace_ae(int event_type, const u32 *aeqe, u32 len)
{
}

void hns_shim_trace_mr(const struct hns_rs_trace_mr *mr)
{
}

void hns_shim_trace_buf_attr(const struct hns_rs_trace_buf_attr *attr)
{
}

void hns_shim_trace_cmdq(bool resp, const char *name, u16 opcode, u16 flag,
			 u16 retval, const u32 *data)
{
}
