/* SPDX-License-Identifier: GPL-2.0+ */
/*
 * The calls the Rust side makes to emit the hns_roce trace events
 * (hns_roce_trace.h), implemented in trace.c. Shared by trace.c and bindgen.
 */
#ifndef HNS_RS_SHIM_TRACE_H
#define HNS_RS_SHIM_TRACE_H

#include <linux/types.h>

/* Words a WQE event records at most: 64 SGEs of 16 bytes. */
#define HNS_SHIM_TRACE_WQE_WORDS 256

/* hns_rs_trace_mr.type: the C driver's MR type numbers. */
#define HNS_SHIM_TRACE_MR_MR 0
#define HNS_SHIM_TRACE_MR_FRMR 1
#define HNS_SHIM_TRACE_MR_DMA 3

/* What the hns_mr event records of an MR being enabled. */
struct hns_rs_trace_mr {
	u64 iova;
	u64 size;
	u32 key;
	u32 pd;
	u32 pbl_hop_num;
	u32 npages;
	/* HNS_SHIM_TRACE_MR_* */
	int type;
	int enabled;
};

/* What the hns_buf_attr event records of a buffer being created. */
struct hns_rs_trace_buf_attr {
	u32 size[3];
	int hopnum[3];
	u32 region_count;
	u32 page_shift;
	bool mtt_only;
};

/*
 * Whether an event is on, for callers that would otherwise gather its
 * arguments for nothing: @ev as enum hns_shim_trace_ev.
 */
enum hns_shim_trace_ev {
	HNS_SHIM_TRACE_SQ_WQE,
	HNS_SHIM_TRACE_RQ_WQE,
	HNS_SHIM_TRACE_SRQ_WQE,
	HNS_SHIM_TRACE_AE_INFO,
};

bool hns_shim_trace_enabled(u32 ev);
/* @queue: 0 SQ, 1 RQ, 2 SRQ; @wqe: @len bytes as CPU-order words. */
void hns_shim_trace_wqe(u32 queue, u32 qpn, u32 idx, const u32 *wqe,
			u32 len, u64 id);
/* @queue: 0 SQ, 1 RQ. */
void hns_shim_trace_flush(u32 queue, u32 qpn, u32 pi);
void hns_shim_trace_ae(int event_type, const u32 *aeqe, u32 len);
void hns_shim_trace_mr(const struct hns_rs_trace_mr *mr);
void hns_shim_trace_buf_attr(const struct hns_rs_trace_buf_attr *attr);
/* @resp: the answer (else the request); @data: six CPU-order words. */
void hns_shim_trace_cmdq(bool resp, const char *name, u16 opcode, u16 flag,
			 u16 retval, const u32 *data);

#endif /* HNS_RS_SHIM_TRACE_H */
