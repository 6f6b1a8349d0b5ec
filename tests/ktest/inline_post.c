// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * inline_post: kernel RC posts with IB_SEND_INLINE longer than the 32
 * bytes an RC WQE holds, whose data the driver copies into the QP's
 * extended SGE area.
 *
 * An ib_client whose add callback, for the device named by the parameter
 * "dev" (default "hns_0"), runs once, synchronously (the results are in
 * the kernel log before insmod returns), then frees everything it made:
 * a PD (with the unsafe global rkey, for the RDMA WRITE), a CQ, a receive
 * buffer, and for each case a fresh RC QP (16 send SGEs, 256 bytes of
 * inline data asked for) connected to itself. Each case posts a receive
 * (not for the RDMA WRITE) and one inline WR whose segments point at a
 * pattern that differs per WR, polls both completions and compares the
 * bytes that arrived with the pattern:
 *   send-33, send-64           one segment
 *   send-segs-200              segments of 7, 50 and 143 bytes
 *   send-max                   the QP's max_inline_data in one segment
 *   write-100                  an RDMA WRITE of 100 bytes
 *   send-wrap                  40 SENDs of 90 + 110 bytes in a row on one
 *                              QP: 13 extended SGEs each, so the data
 *                              wraps round the 256-SGE area, inside WRs too
 *
 * Output (pr_info), one line per case, then a final line:
 *   INLPOST max_inline <n>
 *   INLPOST <case> ok | post <errno> | wc <status> | len <n> | bad <offset>
 *                  | timeout
 *   INLPOST <case> skip <why>  a case whose WRs were left out (cdrv=1)
 *   INLPOST done | INLPOST error <errno> <step>
 * tests/guest/kpath-plan.sh reads them.
 *
 * cdrv=1 (the C driver hns-roce-hw-v2) leaves out the WRs of the cases
 * that driver gets wrong (docs/c-driver-findings.md 3: SGE_NUM counted
 * short, later segments misplaced; every length not a multiple of 16):
 * their QP is still made, connected and destroyed, so that both drivers
 * send the engine the same commands. With cdrv=0 the C driver's WRs of
 * those cases complete with IB_WC_LOC_LEN_ERR on hns-sim.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include "ktest.h"

static char *dev = "hns_0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the ib_device to test (default hns_0)");

static bool cdrv;
module_param(cdrv, bool, 0444);
MODULE_PARM_DESC(cdrv, "the device is the C driver's: leave out the WRs it gets wrong");

static int inl_result = -ENODEV;
module_param_named(result, inl_result, int, 0444);
MODULE_PARM_DESC(result, "outcome of the run: 0 or a negative errno (read-only)");

#define INL_PORT 1
#define INL_INLINE 256
#define INL_SGES 16
#define INL_BUF 1024
#define INL_WRAP_WRS 40

struct inl {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *src;
	u8 *dst;
	u64 dma;
	bool mapped;
	u32 max_inline;
	const struct ib_gid_attr *gattr;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	enum ib_mtu mtu;
};

/* The port's first non-zero RoCE v2 GID (waits up to 10 s for it). */
static int inl_find_gid(struct inl *ip)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int tries, i, ret;
	u16 vlan;

	for (tries = 0; tries < 100; tries++) {
		ret = ib_query_port(ip->ibdev, INL_PORT, &pattr);
		if (ret)
			return ret;
		ip->mtu = min_t(enum ib_mtu, pattr.active_mtu, IB_MTU_1024);
		for (i = 0; i < pattr.gid_tbl_len; i++) {
			attr = rdma_get_gid_attr(ip->ibdev, INL_PORT, i);
			if (IS_ERR(attr))
				continue;
			if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
			    !rdma_is_zero_gid(&attr->gid)) {
				ip->gattr = attr;
				ip->gid = attr->gid;
				return rdma_read_gid_l2_fields(attr, &vlan, ip->mac);
			}
			rdma_put_gid_attr(attr);
		}
		msleep(100);
	}
	return -ENOENT;
}

/* A fresh RC QP in RTS, connected to itself. */
static int inl_new_qp(struct inl *ip)
{
	struct ib_qp_init_attr init = {
		.send_cq = ip->cq,
		.recv_cq = ip->cq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = INL_SGES,
			.max_recv_sge = 1,
			.max_inline_data = INL_INLINE,
		},
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = INL_PORT,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	int ret;

	ip->qp = ib_create_qp(ip->pd, &init);
	if (IS_ERR(ip->qp)) {
		ret = PTR_ERR(ip->qp);
		ip->qp = NULL;
		return ret;
	}
	ip->max_inline = init.cap.max_inline_data;
	ret = ib_modify_qp(ip->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	return ktest_connect_self(ip->qp, INL_PORT, ip->mtu, &ip->gid,
				  ip->gattr->index, ip->mac);
}

static void inl_drop_qp(struct inl *ip)
{
	if (ip->qp)
		ib_destroy_qp(ip->qp);
	ip->qp = NULL;
}

/* Polls n completions; 0, or the first one's failure as an outcome. */
static int inl_poll(struct inl *ip, int n, char *out, size_t len, u32 *bytes)
{
	unsigned long deadline = jiffies + 10 * HZ;
	struct ib_wc wc;
	int got;

	while (n) {
		got = ib_poll_cq(ip->cq, 1, &wc);
		if (got < 0) {
			snprintf(out, len, "poll %d", got);
			return got;
		}
		if (!got) {
			if (time_after(jiffies, deadline)) {
				snprintf(out, len, "timeout");
				return -ETIMEDOUT;
			}
			usleep_range(2000, 5000);
			continue;
		}
		if (wc.status != IB_WC_SUCCESS) {
			snprintf(out, len, "wc %d", wc.status);
			return -EIO;
		}
		if (wc.opcode == IB_WC_RECV)
			*bytes = wc.byte_len;
		n--;
	}
	return 0;
}

/*
 * One inline WR of op over segments of lens[0..nseg) (the pattern of
 * seed), its receive unless it is a WRITE; compares what arrived.
 */
static int inl_one(struct inl *ip, enum ib_wr_opcode op, const u32 *lens,
		  int nseg, u32 seed, char *out, size_t len)
{
	struct ib_sge sges[4], rsge = {
		.addr = ip->dma,
		.length = INL_BUF,
		.lkey = ip->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 2,
			.sg_list = sges,
			.num_sge = nseg,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE,
		},
		.remote_addr = ip->dma,
		.rkey = ip->pd->unsafe_global_rkey,
	};
	bool recv = op != IB_WR_RDMA_WRITE;
	u32 total = 0, bytes = 0, i;
	u8 *p = ip->src;
	int ret, k;

	for (k = 0; k < nseg; k++) {
		/* The segments apart from each other in the source page. */
		sges[k].addr = (uintptr_t)p;
		sges[k].length = lens[k];
		sges[k].lkey = ip->pd->local_dma_lkey;
		for (i = 0; i < lens[k]; i++)
			p[i] = (u8)(seed * 31 + total + i + 1);
		total += lens[k];
		p += lens[k] + 16;
	}
	memset(ip->dst, 0, INL_BUF);
	ib_dma_sync_single_for_device(ip->ibdev, ip->dma, INL_BUF,
				      DMA_BIDIRECTIONAL);
	if (recv) {
		ret = ib_post_recv(ip->qp, &rwr, NULL);
		if (ret) {
			snprintf(out, len, "post %d", ret);
			return ret;
		}
	}
	ret = ib_post_send(ip->qp, &wr.wr, NULL);
	if (ret) {
		snprintf(out, len, "post %d", ret);
		return ret;
	}
	ret = inl_poll(ip, recv ? 2 : 1, out, len, &bytes);
	if (ret)
		return ret;
	ib_dma_sync_single_for_cpu(ip->ibdev, ip->dma, INL_BUF,
				   DMA_BIDIRECTIONAL);
	if (recv && bytes != total) {
		snprintf(out, len, "len %u", bytes);
		return -EIO;
	}
	for (i = 0; i < total; i++) {
		if (ip->dst[i] != (u8)(seed * 31 + i + 1)) {
			snprintf(out, len, "bad %u", i);
			return -EIO;
		}
	}
	snprintf(out, len, "ok");
	return 0;
}

/*
 * A case on a fresh QP: n WRs of op over lens, one after the other (none
 * with cdrv=1 for a case C gets wrong, c_wrong).
 */
static int inl_case(struct inl *ip, const char *name, enum ib_wr_opcode op,
		    const u32 *lens, int nseg, int n, bool c_wrong)
{
	char out[32] = "ok";
	int ret, i;

	ret = inl_new_qp(ip);
	if (ret) {
		inl_drop_qp(ip);
		return ret;
	}
	if (cdrv && c_wrong) {
		pr_info("INLPOST %s skip C-driver-findings-3\n", name);
		inl_drop_qp(ip);
		return 0;
	}
	for (i = 0; i < n; i++)
		if (inl_one(ip, op, lens, nseg, i + 1, out, sizeof(out)))
			break;
	if (n > 1 && i < n)
		pr_info("INLPOST %s %s (WR %d)\n", name, out, i);
	else
		pr_info("INLPOST %s %s\n", name, out);
	inl_drop_qp(ip);
	return 0;
}

static int inl_cases(struct inl *ip, const char **step)
{
	static const u32 l33[] = { 33 }, l64[] = { 64 }, l100[] = { 100 };
	static const u32 segs[] = { 7, 50, 143 }, wrap[] = { 90, 110 };
	u32 lmax[1];
	int ret;

	*step = "send-33";
	ret = inl_case(ip, "send-33", IB_WR_SEND, l33, 1, 1, true);
	if (ret)
		return ret;
	pr_info("INLPOST max_inline %u\n", ip->max_inline);
	*step = "send-64";
	ret = inl_case(ip, "send-64", IB_WR_SEND, l64, 1, 1, false);
	if (ret)
		return ret;
	*step = "send-segs-200";
	ret = inl_case(ip, "send-segs-200", IB_WR_SEND, segs, 3, 1, true);
	if (ret)
		return ret;
	*step = "send-max";
	lmax[0] = min_t(u32, ip->max_inline, INL_BUF);
	ret = inl_case(ip, "send-max", IB_WR_SEND, lmax, 1, 1, false);
	if (ret)
		return ret;
	*step = "write-100";
	ret = inl_case(ip, "write-100", IB_WR_RDMA_WRITE, l100, 1, 1, true);
	if (ret)
		return ret;
	*step = "send-wrap";
	return inl_case(ip, "send-wrap", IB_WR_SEND, wrap, 2, INL_WRAP_WRS, true);
}

static int inl_objects(struct inl *ip, const char **step)
{
	struct ib_cq_init_attr cqa = { .cqe = 64 };
	int ret;

	*step = "gid";
	ret = inl_find_gid(ip);
	if (ret)
		return ret;
	*step = "alloc_pd";
	ip->pd = ib_alloc_pd(ip->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(ip->pd))
		return PTR_ERR(ip->pd);
	*step = "create_cq";
	ip->cq = ib_create_cq(ip->ibdev, NULL, NULL, NULL, &cqa);
	if (IS_ERR(ip->cq))
		return PTR_ERR(ip->cq);
	*step = "buffers";
	ip->src = kzalloc(PAGE_SIZE, GFP_KERNEL);
	ip->dst = kzalloc(INL_BUF, GFP_KERNEL);
	if (!ip->src || !ip->dst)
		return -ENOMEM;
	ip->dma = ib_dma_map_single(ip->ibdev, ip->dst, INL_BUF,
				    DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ip->ibdev, ip->dma))
		return -ENOMEM;
	ip->mapped = true;
	return 0;
}

static void inl_free(struct inl *ip)
{
	inl_drop_qp(ip);
	if (ip->mapped)
		ib_dma_unmap_single(ip->ibdev, ip->dma, INL_BUF,
				    DMA_BIDIRECTIONAL);
	kfree(ip->dst);
	kfree(ip->src);
	if (!IS_ERR_OR_NULL(ip->cq))
		ib_destroy_cq(ip->cq);
	if (!IS_ERR_OR_NULL(ip->pd))
		ib_dealloc_pd(ip->pd);
	if (ip->gattr)
		rdma_put_gid_attr(ip->gattr);
}

static int inl_run(struct ib_device *ibdev)
{
	const char *step = "alloc";
	struct inl *ip;
	int ret;

	ip = kzalloc_obj(*ip);
	if (ip) {
		ip->ibdev = ibdev;
		ret = inl_objects(ip, &step);
		if (!ret)
			ret = inl_cases(ip, &step);
		inl_free(ip);
		kfree(ip);
	} else {
		ret = -ENOMEM;
	}
	if (ret)
		pr_info("INLPOST error %d %s\n", ret, step);
	else
		pr_info("INLPOST done\n");
	return ret;
}

static int inl_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev))
		return -EOPNOTSUPP;
	inl_result = inl_run(ibdev);
	/* No client data: nothing to do at remove. */
	return -EOPNOTSUPP;
}

static struct ib_client inl_client = {
	.name = "inline_post",
	.add = inl_add,
};

static int __init inl_init(void)
{
	int ret;

	ret = ib_register_client(&inl_client);
	if (ret)
		return ret;
	if (inl_result == -ENODEV)
		pr_info("INLPOST error %d no_device\n", -ENODEV);
	return 0;
}

static void __exit inl_exit(void)
{
	ib_unregister_client(&inl_client);
}

module_init(inl_init);
module_exit(inl_exit);

MODULE_DESCRIPTION("Kernel RC posts of inline data in the extended SGE area (hns-roce-rs test)");
MODULE_AUTHOR("hns-roce-rs");
MODULE_LICENSE("Dual BSD/GPL");
