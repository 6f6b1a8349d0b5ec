/* SPDX-License-Identifier: GPL-2.0+ */
/*
 * The hns_roce trace events of hns_roce_rs: the C driver's ten events
 * (hns_roce_trace.h), same system, names, fields, field types and print
 * formats, so that a recipe written for one driver reads the other's
 * events. The field and format text is the interface and follows the C
 * driver's character for character (the format files are compared in the
 * guest); only the prototypes differ: the Rust side passes plain values
 * and words already in CPU order instead of the C driver's structures.
 * Instantiated in trace.c.
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM hns_roce

#ifndef HNS_RS_TRACE_TYPES_H
#define HNS_RS_TRACE_TYPES_H

#include <linux/types.h>
#include "shim_trace.h"

/* The queue a WQE or flush event is about (the C driver's names, which the
 * events' field types and print formats spell out).
 */
enum hns_roce_trace_type {
	TRACE_SQ,
	TRACE_RQ,
	TRACE_SRQ,
};

static inline const char *trace_type_to_str(enum hns_roce_trace_type type)
{
	switch (type) {
	case TRACE_SQ:
		return "SQ";
	case TRACE_RQ:
		return "RQ";
	case TRACE_SRQ:
		return "SRQ";
	default:
		return "UNKNOWN";
	}
}

/* Words of an AE event: the largest AEQE (64 bytes). */
#define HNS_RS_TRACE_AEQE_WORDS 16
/* Payload words of a command queue descriptor. */
#define HNS_RS_TRACE_CMDQ_WORDS 6

#endif /* HNS_RS_TRACE_TYPES_H */

#if !defined(HNS_RS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define HNS_RS_TRACE_H

#include <linux/minmax.h>
#include <linux/string_choices.h>
#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(flush_head_template,
	TP_PROTO(unsigned long qpn, u32 pi, enum hns_roce_trace_type type),
	TP_ARGS(qpn, pi, type),
	TP_STRUCT__entry(__field(unsigned long, qpn)
			 __field(u32, pi)
			 __field(enum hns_roce_trace_type, type)
	),
	TP_fast_assign(__entry->qpn = qpn;
		       __entry->pi = pi;
		       __entry->type = type;
	),
	TP_printk("%s 0x%lx flush head 0x%x.",
		  trace_type_to_str(__entry->type),
		  __entry->qpn, __entry->pi)
);

DEFINE_EVENT(flush_head_template, hns_sq_flush_cqe,
	TP_PROTO(unsigned long qpn, u32 pi, enum hns_roce_trace_type type),
	TP_ARGS(qpn, pi, type));
DEFINE_EVENT(flush_head_template, hns_rq_flush_cqe,
	TP_PROTO(unsigned long qpn, u32 pi, enum hns_roce_trace_type type),
	TP_ARGS(qpn, pi, type));

/* @wqe: the WQE's words in CPU order; @len: its size in bytes. Words past
 * the event's array are not recorded.
 */
DECLARE_EVENT_CLASS(wqe_template,
	TP_PROTO(unsigned long qpn, u32 idx, const u32 *wqe, u32 len, u64 id,
		 enum hns_roce_trace_type type),
	TP_ARGS(qpn, idx, wqe, len, id, type),
	TP_STRUCT__entry(__field(unsigned long, qpn)
			 __field(u32, idx)
			 __array(u32, wqe, HNS_SHIM_TRACE_WQE_WORDS)
			 __field(u32, len)
			 __field(u64, id)
			 __field(enum hns_roce_trace_type, type)
	),
	TP_fast_assign(__entry->qpn = qpn;
		       __entry->idx = idx;
		       __entry->id = id;
		       __entry->len = min_t(u32, len / sizeof(u32),
					    HNS_SHIM_TRACE_WQE_WORDS);
		       __entry->type = type;
		       memcpy(__entry->wqe, wqe,
			      __entry->len * sizeof(u32));
	),
	TP_printk("%s 0x%lx wqe(0x%x/0x%llx): %s",
		  trace_type_to_str(__entry->type),
		  __entry->qpn, __entry->idx, __entry->id,
		  __print_array(__entry->wqe, __entry->len,
				sizeof(__le32)))
);

DEFINE_EVENT(wqe_template, hns_sq_wqe,
	TP_PROTO(unsigned long qpn, u32 idx, const u32 *wqe, u32 len, u64 id,
		 enum hns_roce_trace_type type),
	TP_ARGS(qpn, idx, wqe, len, id, type));
DEFINE_EVENT(wqe_template, hns_rq_wqe,
	TP_PROTO(unsigned long qpn, u32 idx, const u32 *wqe, u32 len, u64 id,
		 enum hns_roce_trace_type type),
	TP_ARGS(qpn, idx, wqe, len, id, type));
DEFINE_EVENT(wqe_template, hns_srq_wqe,
	TP_PROTO(unsigned long qpn, u32 idx, const u32 *wqe, u32 len, u64 id,
		 enum hns_roce_trace_type type),
	TP_ARGS(qpn, idx, wqe, len, id, type));

/* @aeqe: the entry's words in CPU order; @len: its size in bytes. */
TRACE_EVENT(hns_ae_info,
	TP_PROTO(int event_type, const u32 *aeqe, unsigned int len),
	TP_ARGS(event_type, aeqe, len),
	TP_STRUCT__entry(__field(int, event_type)
			 __array(u32, aeqe, HNS_RS_TRACE_AEQE_WORDS)
			 __field(u32, len)
	),
	TP_fast_assign(__entry->event_type = event_type;
		       __entry->len = min_t(u32, len / sizeof(u32),
					    HNS_RS_TRACE_AEQE_WORDS);
		       memcpy(__entry->aeqe, aeqe,
			      __entry->len * sizeof(u32));
	),
	TP_printk("event %2d aeqe: %s", __entry->event_type,
		  __print_array(__entry->aeqe, __entry->len, sizeof(__le32)))
);

TRACE_EVENT(hns_mr,
	TP_PROTO(const struct hns_rs_trace_mr *mr),
	TP_ARGS(mr),
	TP_STRUCT__entry(__field(u64, iova)
			 __field(u64, size)
			 __field(u32, key)
			 __field(u32, pd)
			 __field(u32, pbl_hop_num)
			 __field(u32, npages)
			 __field(int, type)
			 __field(int, enabled)
	),
	TP_fast_assign(__entry->iova = mr->iova;
		       __entry->size = mr->size;
		       __entry->key = mr->key;
		       __entry->pd = mr->pd;
		       __entry->pbl_hop_num = mr->pbl_hop_num;
		       __entry->npages = mr->npages;
		       __entry->type = mr->type;
		       __entry->enabled = mr->enabled;
	),
	TP_printk("iova:0x%llx, size:%llu, key:%u, pd:%u, pbl_hop:%u, npages:%u, type:%d, status:%d",
		  __entry->iova, __entry->size, __entry->key,
		  __entry->pd, __entry->pbl_hop_num, __entry->npages,
		  __entry->type, __entry->enabled)
);

TRACE_EVENT(hns_buf_attr,
	TP_PROTO(const struct hns_rs_trace_buf_attr *attr),
	TP_ARGS(attr),
	TP_STRUCT__entry(__field(unsigned int, region_count)
			 __field(unsigned int, region0_size)
			 __field(int, region0_hopnum)
			 __field(unsigned int, region1_size)
			 __field(int, region1_hopnum)
			 __field(unsigned int, region2_size)
			 __field(int, region2_hopnum)
			 __field(unsigned int, page_shift)
			 __field(bool, mtt_only)
	),
	TP_fast_assign(__entry->region_count = attr->region_count;
		       __entry->region0_size = attr->size[0];
		       __entry->region0_hopnum = attr->hopnum[0];
		       __entry->region1_size = attr->size[1];
		       __entry->region1_hopnum = attr->hopnum[1];
		       __entry->region2_size = attr->size[2];
		       __entry->region2_hopnum = attr->hopnum[2];
		       __entry->page_shift = attr->page_shift;
		       __entry->mtt_only = attr->mtt_only;
	),
	TP_printk("rg cnt:%u, pg_sft:0x%x, mtt_only:%s, rg 0 (sz:%u, hop:%u), rg 1 (sz:%u, hop:%u), rg 2 (sz:%u, hop:%u)\n",
		  __entry->region_count, __entry->page_shift,
		  str_yes_no(__entry->mtt_only),
		  __entry->region0_size, __entry->region0_hopnum,
		  __entry->region1_size, __entry->region1_hopnum,
		  __entry->region2_size, __entry->region2_hopnum)
);

/* @data: the descriptor's payload words in CPU order. */
DECLARE_EVENT_CLASS(cmdq,
	TP_PROTO(const char *name, u16 opcode, u16 flag, u16 retval,
		 const u32 *data),
	TP_ARGS(name, opcode, flag, retval, data),
	TP_STRUCT__entry(__string(dev_name, name)
			 __field(u16, opcode)
			 __field(u16, flag)
			 __field(u16, retval)
			 __array(u32, data, HNS_RS_TRACE_CMDQ_WORDS)
	),
	TP_fast_assign(__assign_str(dev_name);
		       __entry->opcode = opcode;
		       __entry->flag = flag;
		       __entry->retval = retval;
		       memcpy(__entry->data, data, sizeof(__entry->data));
	),
	TP_printk("%s cmdq opcode:0x%x, flag:0x%x, retval:0x%x, data:%s\n",
		  __get_str(dev_name), __entry->opcode,
		  __entry->flag, __entry->retval,
		  __print_array(__entry->data, 6, sizeof(__le32)))
);

DEFINE_EVENT(cmdq, hns_cmdq_req,
	TP_PROTO(const char *name, u16 opcode, u16 flag, u16 retval,
		 const u32 *data),
	TP_ARGS(name, opcode, flag, retval, data));
DEFINE_EVENT(cmdq, hns_cmdq_resp,
	TP_PROTO(const char *name, u16 opcode, u16 flag, u16 retval,
		 const u32 *data),
	TP_ARGS(name, opcode, flag, retval, data));

#endif /* HNS_RS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hns_roce_trace
#include <trace/define_trace.h>
