// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sizes and offsets of the C structures the rdma layer reads, as the C
 * compiler lays them out. Like the kernel's asm-offsets.c, this file is
 * only compiled to assembly: Kbuild turns each DEFINE into a Rust constant
 * (bindings/layout_generated.rs), and rdma/layout.rs asserts at compile
 * time that bindgen's layout has the same value, so a module whose
 * bindings disagree with the C compiler does not build.
 */
#include <linux/kbuild.h>
#include <rdma/ib_verbs.h>
#include "hnae3.h"
#include "shim.h"

#define SIZE(sym, str) DEFINE(SIZEOF_##sym, sizeof(struct str))

int main(void)
{
	SIZE(HNAE3_HANDLE, hnae3_handle);
	OFFSET(HNAE3_HANDLE_PDEV, hnae3_handle, pdev);
	OFFSET(HNAE3_HANDLE_RINFO, hnae3_handle, rinfo);
	OFFSET(HNAE3_HANDLE_CLIENT, hnae3_handle, client);
	SIZE(HNAE3_ROCE_INFO, hnae3_roce_private_info);
	OFFSET(HNAE3_ROCE_INFO_NETDEV, hnae3_roce_private_info, netdev);
	OFFSET(HNAE3_ROCE_INFO_IO_BASE, hnae3_roce_private_info, roce_io_base);
	OFFSET(HNAE3_ROCE_INFO_MEM_BASE, hnae3_roce_private_info,
	       roce_mem_base);
	OFFSET(HNAE3_ROCE_INFO_BASE_VECTOR, hnae3_roce_private_info,
	       base_vector);
	OFFSET(HNAE3_ROCE_INFO_NUM_VECTORS, hnae3_roce_private_info,
	       num_vectors);
	SIZE(HNAE3_CLIENT, hnae3_client);
	SIZE(IB_DEVICE, ib_device);
	OFFSET(IB_DEVICE_DEV, ib_device, dev);
	OFFSET(IB_DEVICE_OPS, ib_device, ops);
	SIZE(IB_UDATA, ib_udata);
	SIZE(IB_PD, ib_pd);
	SIZE(IB_CQ, ib_cq);
	SIZE(IB_QP, ib_qp);
	SIZE(IB_DEVICE_OPS, ib_device_ops);
	OFFSET(OPS_POST_SEND, ib_device_ops, post_send);
	OFFSET(OPS_POST_RECV, ib_device_ops, post_recv);
	OFFSET(OPS_POST_SRQ_RECV, ib_device_ops, post_srq_recv);
	OFFSET(OPS_POLL_CQ, ib_device_ops, poll_cq);
	OFFSET(OPS_DRAIN_SQ, ib_device_ops, drain_sq);
	OFFSET(OPS_DRAIN_RQ, ib_device_ops, drain_rq);
	OFFSET(OPS_CREATE_QP, ib_device_ops, create_qp);
	OFFSET(OPS_MODIFY_QP, ib_device_ops, modify_qp);
	OFFSET(OPS_QUERY_QP, ib_device_ops, query_qp);
	OFFSET(OPS_DESTROY_QP, ib_device_ops, destroy_qp);
	OFFSET(OPS_CREATE_AH, ib_device_ops, create_ah);
	OFFSET(OPS_CREATE_USER_AH, ib_device_ops, create_user_ah);
	OFFSET(OPS_QUERY_AH, ib_device_ops, query_ah);
	OFFSET(OPS_DESTROY_AH, ib_device_ops, destroy_ah);
	OFFSET(IB_CQ_DEVICE, ib_cq, device);
	OFFSET(IB_QP_DEVICE, ib_qp, device);
	OFFSET(IB_SRQ_DEVICE, ib_srq, device);
	OFFSET(SHIM_DEV_RS, rdma_shim_dev, rs);
	OFFSET(SHIM_CQ_RS_CQ, rdma_shim_cq, rs_cq);
	OFFSET(SHIM_QP_RS_QP, rdma_shim_qp, rs_qp);
	OFFSET(SHIM_SRQ_RS_SRQ, rdma_shim_srq, rs_srq);
	OFFSET(SHIM_SRQ_SRQN, rdma_shim_srq, srqn);
	OFFSET(SHIM_AH_AV, rdma_shim_ah, av);
	OFFSET(SHIM_PD_PDN, rdma_shim_pd, pdn);
	OFFSET(SHIM_XRCD_XRCDN, rdma_shim_xrcd, xrcdn);
	OFFSET(SHIM_UCTX_DB_ENTRY, rdma_shim_uctx, db_entry);
	OFFSET(SHIM_UCTX_RS_UCTX, rdma_shim_uctx, rs_uctx);
	OFFSET(SHIM_UCTX_UAR_INDEX, rdma_shim_uctx, uar_index);
	OFFSET(SHIM_UCTX_CONFIG, rdma_shim_uctx, config);
	SIZE(SHIM_MR, rdma_shim_mr);
	OFFSET(SHIM_MR_RS_MR, rdma_shim_mr, rs_mr);
	return 0;
}
