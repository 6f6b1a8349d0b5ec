// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_bench - the verbs control path of one RDMA device, op by op.
 *
 * Usage (guest, built by scripts/bench-build.sh):
 *
 *   verbs_bench -d hns_0 [-n N] [-N METRIC=N]... [-m METRIC]... [-x GIDX]
 *               [-w WARMUP]
 *
 * Without -m every metric runs, in the order of the table below. -n sets
 * the count of every metric, -N the count of one (after -n, whatever the
 * order); -w the untimed warm-up ops per metric (default 3); -x the GID
 * index for modify_rc_qp_chain (default: the first RoCE v2 GID, an
 * IPv4-mapped one preferred, as perftest picks it; waits up to 20 s for the
 * port to be ACTIVE and the GID to appear).
 *
 * What one op is, per metric (default count):
 *
 *   open_close_device       ibv_open_device + ibv_close_device (200)
 *   alloc_dealloc_pd        ibv_alloc_pd + ibv_dealloc_pd (200)
 *   create_destroy_cq_1024  ibv_create_cq(1024 CQEs) + ibv_destroy_cq (200)
 *   create_destroy_rc_qp    ibv_create_qp(RC, 64 send/64 recv WRs, 1 SGE,
 *                           on a PD and CQ made once) + ibv_destroy_qp (200)
 *   modify_rc_qp_chain      RESET->INIT->RTR->RTS, three ibv_modify_qp, the
 *                           QP connected to itself over RoCE v2; created
 *                           before and destroyed after, untimed (200)
 *   reg_dereg_mr_4k         ibv_reg_mr + ibv_dereg_mr of a 4 KiB buffer (200)
 *   reg_dereg_mr_2m         the same, 2 MiB (50)
 *   reg_dereg_mr_256m       the same, 256 MiB (10)
 *   create_destroy_srq      ibv_create_srq(64 WRs, 1 SGE) + ibv_destroy_srq
 *                           (200)
 *
 * MR buffers are allocated (page-aligned) and touched once before the
 * metric, access LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE.
 *
 * Each op is timed alone: wall time from CLOCK_MONOTONIC and the calling
 * thread's CPU time (user + system, i.e. the kernel's work done for the
 * system calls too) from CLOCK_THREAD_CPUTIME_ID, read right around it.
 * Output, one line per metric (medians and the 10th/90th percentiles, ns):
 *
 *   BENCHV <metric> n=<N> wall_ns=<median> cpu_ns=<median> wall_p10=<>
 *          wall_p90=<> cpu_p10=<> cpu_p90=<>            (one line)
 *
 * On stderr, per metric, the wall time of the whole metric (set-up,
 * warm-up, the untimed parts, teardown): "verbs_bench: <metric>: <s> s in
 * all", and modify_rc_qp_chain's GID index, GID and path MTU.
 *
 * Cost on hns-sim under TCG (2 busy host cores): one op is
 * 1-5 ms (PD, device), 3-150 ms (CQ, QP, SRQ, MR, modify chain; the CMQ is
 * polled by the guest CPU while hns-sim answers, so host load shows up as
 * guest CPU time), 60-135 ms for 256 MiB; the whole program 35-90 s.
 *
 * On a verbs failure the metric prints "BENCHV <metric> error <errno>
 * <what>" instead, destroys what it made, and the program goes on with
 * the next metric; it exits 1 if any metric failed, 2 on a usage error or
 * when the device cannot be opened, 0 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct bench {
	struct ibv_device *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;		/* for QPs, SRQs, MRs */
	struct ibv_cq *cq;		/* for QPs */
	struct ibv_qp *qp;		/* modify_rc_qp_chain's current QP */
	struct ibv_mr *mr;
	void *buf;
	size_t buf_len;
	int gid_index;			/* -1: find one */
	union ibv_gid gid;
	enum ibv_mtu mtu;
	const char *what;		/* the failing call */
};

struct metric {
	const char *name;
	unsigned int def_n;
	size_t mr_len;			/* reg_dereg_mr_*: buffer size */
	int (*init)(struct bench *b, const struct metric *m);
	int (*pre)(struct bench *b);	/* untimed, before each op */
	int (*op)(struct bench *b);	/* timed */
	int (*post)(struct bench *b);	/* untimed, after each op */
};

/*
 * Failure convention: an op returns 0 or a positive errno and sets
 * b->what to the call that failed.
 */
static int fail(struct bench *b, const char *what, int err)
{
	b->what = what;
	return err > 0 ? err : (errno ? errno : EIO);
}

/* ---- open_close_device ---- */

static int op_open_close(struct bench *b)
{
	struct ibv_context *c = ibv_open_device(b->dev);

	if (!c)
		return fail(b, "ibv_open_device", errno);
	if (ibv_close_device(c))
		return fail(b, "ibv_close_device", errno);
	return 0;
}

/* ---- alloc_dealloc_pd ---- */

static int op_pd(struct bench *b)
{
	struct ibv_pd *pd = ibv_alloc_pd(b->ctx);
	int ret;

	if (!pd)
		return fail(b, "ibv_alloc_pd", errno);
	ret = ibv_dealloc_pd(pd);
	if (ret)
		return fail(b, "ibv_dealloc_pd", ret);
	return 0;
}

/* ---- create_destroy_cq_1024 ---- */

static int op_cq(struct bench *b)
{
	struct ibv_cq *cq = ibv_create_cq(b->ctx, 1024, NULL, NULL, 0);
	int ret;

	if (!cq)
		return fail(b, "ibv_create_cq", errno);
	ret = ibv_destroy_cq(cq);
	if (ret)
		return fail(b, "ibv_destroy_cq", ret);
	return 0;
}

/* ---- PD and CQ shared by the QP, SRQ and MR metrics ---- */

static int init_pd(struct bench *b, const struct metric *m)
{
	(void)m;
	b->pd = ibv_alloc_pd(b->ctx);
	if (!b->pd)
		return fail(b, "ibv_alloc_pd", errno);
	return 0;
}

static int init_pd_cq(struct bench *b, const struct metric *m)
{
	int ret = init_pd(b, m);

	if (ret)
		return ret;
	b->cq = ibv_create_cq(b->ctx, 128, NULL, NULL, 0);
	if (!b->cq)
		return fail(b, "ibv_create_cq", errno);
	return 0;
}

/* Also undoes a half-done init; the first error wins b->what. */
static int fini_objs(struct bench *b)
{
	int ret, err = 0;

	if (b->qp) {
		ret = ibv_destroy_qp(b->qp);
		if (ret && !err)
			err = fail(b, "ibv_destroy_qp", ret);
		b->qp = NULL;
	}
	if (b->mr) {
		ret = ibv_dereg_mr(b->mr);
		if (ret && !err)
			err = fail(b, "ibv_dereg_mr", ret);
		b->mr = NULL;
	}
	if (b->cq) {
		ret = ibv_destroy_cq(b->cq);
		if (ret && !err)
			err = fail(b, "ibv_destroy_cq", ret);
		b->cq = NULL;
	}
	if (b->pd) {
		ret = ibv_dealloc_pd(b->pd);
		if (ret && !err)
			err = fail(b, "ibv_dealloc_pd", ret);
		b->pd = NULL;
	}
	if (b->buf) {
		munmap(b->buf, b->buf_len);
		b->buf = NULL;
	}
	return err;
}

/* ---- create_destroy_rc_qp ---- */

static struct ibv_qp *create_rc_qp(struct bench *b)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = b->cq,
		.recv_cq = b->cq,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(b->pd, &attr);
}

static int op_qp(struct bench *b)
{
	struct ibv_qp *qp = create_rc_qp(b);
	int ret;

	if (!qp)
		return fail(b, "ibv_create_qp", errno);
	ret = ibv_destroy_qp(qp);
	if (ret)
		return fail(b, "ibv_destroy_qp", ret);
	return 0;
}

/* ---- modify_rc_qp_chain ---- */

static int is_ipv4_mapped(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

static int is_zero_gid(const union ibv_gid *g)
{
	static const union ibv_gid zero;

	return !memcmp(g->raw, zero.raw, sizeof(zero.raw));
}

/* The first RoCE v2 GID of port 1, an IPv4-mapped one preferred. */
static int find_gid(struct bench *b, int *idx)
{
	struct ibv_gid_entry ent[256];
	ssize_t n, i;
	int best = -1;

	n = ibv_query_gid_table(b->ctx, ent, ARRAY_SIZE(ent), 0);
	if (n < 0)
		return fail(b, "ibv_query_gid_table", (int)-n);
	for (i = 0; i < n; i++) {
		if (ent[i].port_num != 1 || ent[i].gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    is_zero_gid(&ent[i].gid))
			continue;
		if (is_ipv4_mapped(&ent[i].gid)) {
			best = ent[i].gid_index;
			break;
		}
		if (best < 0)
			best = ent[i].gid_index;
	}
	*idx = best;
	return 0;
}

static int init_chain(struct bench *b, const struct metric *m)
{
	char gs[INET6_ADDRSTRLEN];
	struct ibv_port_attr pa;
	int ret, tries, idx = b->gid_index;

	ret = init_pd_cq(b, m);
	if (ret)
		return ret;
	for (tries = 0; tries < 200; tries++) {
		ret = ibv_query_port(b->ctx, 1, &pa);
		if (ret)
			return fail(b, "ibv_query_port", ret);
		if (pa.state == IBV_PORT_ACTIVE) {
			if (b->gid_index >= 0)
				break;
			ret = find_gid(b, &idx);
			if (ret)
				return ret;
			if (idx >= 0)
				break;
		}
		usleep(100000);
	}
	if (pa.state != IBV_PORT_ACTIVE)
		return fail(b, "port 1 not ACTIVE", ENETDOWN);
	if (idx < 0)
		return fail(b, "no RoCE v2 GID (give -x)", ENOENT);
	b->gid_index = idx;
	b->mtu = pa.active_mtu;
	ret = ibv_query_gid(b->ctx, 1, idx, &b->gid);
	if (ret)
		return fail(b, "ibv_query_gid", ret);
	inet_ntop(AF_INET6, b->gid.raw, gs, sizeof(gs));
	fprintf(stderr, "verbs_bench: GID index %d (%s), MTU %d\n", idx, gs,
		128 << b->mtu);
	return 0;
}

static int pre_chain(struct bench *b)
{
	b->qp = create_rc_qp(b);
	if (!b->qp)
		return fail(b, "ibv_create_qp", errno);
	return 0;
}

static int op_chain(struct bench *b)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ibv_modify_qp(b->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return fail(b, "ibv_modify_qp(INIT)", ret);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = b->mtu;
	a.dest_qp_num = b->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = b->gid;
	a.ah_attr.grh.sgid_index = b->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(b->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return fail(b, "ibv_modify_qp(RTR)", ret);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(b->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return fail(b, "ibv_modify_qp(RTS)", ret);
	return 0;
}

static int post_chain(struct bench *b)
{
	int ret = ibv_destroy_qp(b->qp);

	b->qp = NULL;
	if (ret)
		return fail(b, "ibv_destroy_qp", ret);
	return 0;
}

/* ---- reg_dereg_mr_* ---- */

static int init_mr(struct bench *b, const struct metric *m)
{
	size_t off;
	long pg = sysconf(_SC_PAGESIZE);
	int ret = init_pd(b, m);

	if (ret)
		return ret;
	b->buf = mmap(NULL, m->mr_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->buf == MAP_FAILED) {
		b->buf = NULL;
		return fail(b, "mmap", errno);
	}
	b->buf_len = m->mr_len;
	for (off = 0; off < m->mr_len; off += pg)
		((volatile char *)b->buf)[off] = 1;
	return 0;
}

static int op_mr(struct bench *b)
{
	struct ibv_mr *mr;
	int ret;

	mr = ibv_reg_mr(b->pd, b->buf, b->buf_len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		return fail(b, "ibv_reg_mr", errno);
	ret = ibv_dereg_mr(mr);
	if (ret)
		return fail(b, "ibv_dereg_mr", ret);
	return 0;
}

/* ---- create_destroy_srq ---- */

static int op_srq(struct bench *b)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = 64, .max_sge = 1 },
	};
	struct ibv_srq *srq = ibv_create_srq(b->pd, &attr);
	int ret;

	if (!srq)
		return fail(b, "ibv_create_srq", errno);
	ret = ibv_destroy_srq(srq);
	if (ret)
		return fail(b, "ibv_destroy_srq", ret);
	return 0;
}

static struct metric metrics[] = {
	{ "open_close_device", 200, 0, NULL, NULL, op_open_close, NULL },
	{ "alloc_dealloc_pd", 200, 0, NULL, NULL, op_pd, NULL },
	{ "create_destroy_cq_1024", 200, 0, NULL, NULL, op_cq, NULL },
	{ "create_destroy_rc_qp", 200, 0, init_pd_cq, NULL, op_qp, NULL },
	{ "modify_rc_qp_chain", 200, 0, init_chain, pre_chain, op_chain, post_chain },
	{ "reg_dereg_mr_4k", 200, 4096, init_mr, NULL, op_mr, NULL },
	{ "reg_dereg_mr_2m", 50, 2 << 20, init_mr, NULL, op_mr, NULL },
	{ "reg_dereg_mr_256m", 10, 256 << 20, init_mr, NULL, op_mr, NULL },
	{ "create_destroy_srq", 200, 0, init_pd, NULL, op_srq, NULL },
};

/* ---- timing and statistics ---- */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t pct(const uint64_t *v, unsigned int n, unsigned int p)
{
	unsigned int r = (p * n + 99) / 100;

	return v[r ? r - 1 : 0];
}

static uint64_t median(const uint64_t *v, unsigned int n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int one(struct bench *b, const struct metric *m, uint64_t *wall,
	       uint64_t *cpu)
{
	uint64_t w0, c0;
	int ret;

	if (m->pre) {
		ret = m->pre(b);
		if (ret)
			return ret;
	}
	w0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	ret = m->op(b);
	*cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	*wall = now_ns(CLOCK_MONOTONIC) - w0;
	if (m->post) {
		int r2 = m->post(b);

		if (!ret)
			ret = r2;
	}
	return ret;
}

static int run_metric(struct bench *b, const struct metric *m, unsigned int n,
		      unsigned int warmup)
{
	uint64_t *wall, *cpu, w, c, start = now_ns(CLOCK_MONOTONIC);
	unsigned int i;
	int ret = 0, r2;

	wall = calloc(n ? n : 1, sizeof(*wall));
	cpu = calloc(n ? n : 1, sizeof(*cpu));
	if (!wall || !cpu) {
		ret = fail(b, "calloc", ENOMEM);
		goto out;
	}
	b->what = NULL;
	if (m->init) {
		ret = m->init(b, m);
		if (ret)
			goto fini;
	}
	for (i = 0; i < warmup && !ret; i++)
		ret = one(b, m, &w, &c);
	for (i = 0; i < n && !ret; i++)
		ret = one(b, m, &wall[i], &cpu[i]);
fini:
	/* the metric's PD, CQ, buffer (and a QP left by a failure) */
	r2 = fini_objs(b);
	if (!ret)
		ret = r2;
	if (ret)
		goto out;
	qsort(wall, n, sizeof(*wall), cmp_u64);
	qsort(cpu, n, sizeof(*cpu), cmp_u64);
	printf("BENCHV %s n=%u wall_ns=%llu cpu_ns=%llu wall_p10=%llu wall_p90=%llu cpu_p10=%llu cpu_p90=%llu\n",
	       m->name, n,
	       (unsigned long long)median(wall, n), (unsigned long long)median(cpu, n),
	       (unsigned long long)pct(wall, n, 10), (unsigned long long)pct(wall, n, 90),
	       (unsigned long long)pct(cpu, n, 10), (unsigned long long)pct(cpu, n, 90));
out:
	if (ret)
		printf("BENCHV %s error %d %s\n", m->name, ret,
		       b->what ? b->what : "?");
	fflush(stdout);
	fprintf(stderr, "verbs_bench: %s: %.3f s in all\n", m->name,
		(now_ns(CLOCK_MONOTONIC) - start) / 1e9);
	free(wall);
	free(cpu);
	return ret;
}

static const struct metric *find_metric(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(metrics); i++)
		if (strlen(metrics[i].name) == len &&
		    !strncmp(metrics[i].name, name, len))
			return &metrics[i];
	return NULL;
}

static void usage(void)
{
	size_t i;

	fprintf(stderr,
		"usage: verbs_bench -d DEV [-n N] [-N METRIC=N]... [-m METRIC]... [-x GIDX] [-w WARMUP]\nmetrics:");
	for (i = 0; i < ARRAY_SIZE(metrics); i++)
		fprintf(stderr, " %s", metrics[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

static unsigned int parse_uint(const char *s, unsigned long min)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > 10000000)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	struct bench b = { .gid_index = -1 };
	unsigned int count[ARRAY_SIZE(metrics)], want[ARRAY_SIZE(metrics)];
	unsigned int over[ARRAY_SIZE(metrics)] = { 0 };
	unsigned int all_n = 0, warmup = 3, nwant = 0;
	struct ibv_device **list;
	const char *devname = NULL;
	int opt, i, num, failed = 0;
	size_t k;

	while ((opt = getopt(argc, argv, "d:n:N:m:x:w:h")) != -1) {
		const struct metric *m;
		const char *eq;

		switch (opt) {
		case 'd':
			devname = optarg;
			break;
		case 'n':
			all_n = parse_uint(optarg, 1);
			break;
		case 'N':
			eq = strchr(optarg, '=');
			if (!eq)
				usage();
			m = find_metric(optarg, eq - optarg);
			if (!m)
				usage();
			over[m - metrics] = parse_uint(eq + 1, 1);
			break;
		case 'm':
			m = find_metric(optarg, strlen(optarg));
			if (!m || nwant >= ARRAY_SIZE(want))
				usage();
			want[nwant++] = m - metrics;
			break;
		case 'x':
			b.gid_index = parse_uint(optarg, 0);
			break;
		case 'w':
			warmup = parse_uint(optarg, 0);
			break;
		default:
			usage();
		}
	}
	if (!devname || optind != argc)
		usage();
	for (k = 0; k < ARRAY_SIZE(metrics); k++)
		count[k] = over[k] ? over[k] : all_n ? all_n : metrics[k].def_n;
	if (!nwant)
		for (k = 0; k < ARRAY_SIZE(metrics); k++)
			want[nwant++] = k;

	list = ibv_get_device_list(&num);
	if (!list) {
		fprintf(stderr, "verbs_bench: ibv_get_device_list: %s\n",
			strerror(errno));
		return 2;
	}
	for (i = 0; i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			b.dev = list[i];
	if (!b.dev) {
		fprintf(stderr, "verbs_bench: no device %s\n", devname);
		ibv_free_device_list(list);
		return 2;
	}
	b.ctx = ibv_open_device(b.dev);
	if (!b.ctx) {
		fprintf(stderr, "verbs_bench: ibv_open_device(%s): %s\n",
			devname, strerror(errno));
		ibv_free_device_list(list);
		return 2;
	}
	for (k = 0; k < nwant; k++)
		if (run_metric(&b, &metrics[want[k]], count[want[k]], warmup))
			failed = 1;
	if (ibv_close_device(b.ctx)) {
		fprintf(stderr, "verbs_bench: ibv_close_device failed\n");
		failed = 1;
	}
	ibv_free_device_list(list);
	return failed;
}
