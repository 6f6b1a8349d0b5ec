// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rndread - 4 KiB O_DIRECT random reads from a block device.
 *
 * Usage (guest, built by scripts/bench-build.sh):
 *
 *   rndread DEV SECONDS [THREADS]
 *
 * THREADS threads (default 1), each with its own descriptor (O_RDONLY |
 * O_DIRECT), a page-aligned 4 KiB buffer and queue depth 1 (one pread()
 * at a time), read 4 KiB blocks at random 4 KiB-aligned offsets over the
 * whole device (size from ioctl BLKGETSIZE64; a regular file's st_size)
 * for SECONDS seconds of CLOCK_MONOTONIC. The offsets come from a
 * xorshift64* generator with a fixed seed per thread, so two runs read
 * the same sequence. Then one line:
 *
 *   BENCHN iops=<> ios=<> seconds=<> cpu_us_per_io=<> proc_cpu_us_per_io=<>
 *
 * cpu_us_per_io is the whole guest's busy CPU time over the run (/proc/stat
 * "cpu" line: every field but idle and iowait, ticks converted to µs with
 * sysconf(_SC_CLK_TCK)) divided by the I/Os, so the kernel's interrupt and
 * softirq work for the I/O (NVMe over RDMA: the RDMA completions) counts;
 * proc_cpu_us_per_io is this process's user + system time (getrusage)
 * divided by the I/Os. A failed or short read prints a message to stderr
 * and exits 1; a usage error exits 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BS		4096
#define MAX_THREADS	64
#define SEED		0x9e3779b97f4a7c15ull

struct worker {
	pthread_t tid;
	int fd;
	unsigned int idx;
	uint64_t ios;
};

static const char *dev;
static uint64_t nblocks;
static uint64_t deadline_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	uint64_t state = SEED + w->idx * 0x100000001b3ull, off;
	void *buf;
	ssize_t n;
	int ret;

	ret = posix_memalign(&buf, BS, BS);
	if (ret) {
		fprintf(stderr, "rndread: posix_memalign: %s\n", strerror(ret));
		exit(1);
	}
	while (now_ns() < deadline_ns) {
		off = (xorshift64s(&state) % nblocks) * BS;
		n = pread(w->fd, buf, BS, off);
		if (n != BS) {
			fprintf(stderr, "rndread: %s: read of %d bytes at %llu: %s\n",
				dev, BS, (unsigned long long)off,
				n < 0 ? strerror(errno) : "short read");
			exit(1);
		}
		w->ios++;
	}
	free(buf);
	return NULL;
}

/* Busy ticks of all CPUs: the "cpu" line without idle (4th) and iowait (5th). */
static uint64_t busy_ticks(void)
{
	unsigned long long v[10] = { 0 };
	uint64_t busy = 0;
	FILE *f = fopen("/proc/stat", "r");
	int i, n;

	if (!f) {
		perror("rndread: /proc/stat");
		exit(1);
	}
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		   &v[8], &v[9]);
	fclose(f);
	if (n < 5) {
		fprintf(stderr, "rndread: cannot parse /proc/stat\n");
		exit(1);
	}
	/*
	 * user nice system idle iowait irq softirq steal guest guest_nice;
	 * guest and guest_nice are already counted in user and nice.
	 */
	for (i = 0; i < n && i < 8; i++)
		if (i != 3 && i != 4)
			busy += v[i];
	return busy;
}

static uint64_t proc_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ull +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void usage(void)
{
	fprintf(stderr, "usage: rndread DEV SECONDS [THREADS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	uint64_t size = 0, t0, t1, b0, b1, p0, p1, ios = 0;
	unsigned int nthreads = 1, i;
	double secs, tck;
	struct stat st;
	char *end;
	long s;
	int ret;

	if (argc < 3 || argc > 4)
		usage();
	dev = argv[1];
	s = strtol(argv[2], &end, 10);
	if (*end || end == argv[2] || s < 1 || s > 86400)
		usage();
	if (argc == 4) {
		long t = strtol(argv[3], &end, 10);

		if (*end || end == argv[3] || t < 1 || t > MAX_THREADS)
			usage();
		nthreads = t;
	}
	tck = sysconf(_SC_CLK_TCK);

	for (i = 0; i < nthreads; i++) {
		w[i].idx = i;
		w[i].fd = open(dev, O_RDONLY | O_DIRECT);
		if (w[i].fd < 0) {
			fprintf(stderr, "rndread: open %s: %s\n", dev, strerror(errno));
			return 1;
		}
	}
	if (fstat(w[0].fd, &st)) {
		fprintf(stderr, "rndread: stat %s: %s\n", dev, strerror(errno));
		return 1;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(w[0].fd, BLKGETSIZE64, &size)) {
			fprintf(stderr, "rndread: BLKGETSIZE64 %s: %s\n", dev,
				strerror(errno));
			return 1;
		}
	} else {
		size = st.st_size;
	}
	nblocks = size / BS;
	if (!nblocks) {
		fprintf(stderr, "rndread: %s: smaller than %d bytes\n", dev, BS);
		return 1;
	}

	b0 = busy_ticks();
	p0 = proc_cpu_us();
	t0 = now_ns();
	deadline_ns = t0 + (uint64_t)s * 1000000000ull;
	for (i = 0; i < nthreads; i++) {
		ret = pthread_create(&w[i].tid, NULL, worker_fn, &w[i]);
		if (ret) {
			fprintf(stderr, "rndread: pthread_create: %s\n", strerror(ret));
			return 1;
		}
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].tid, NULL);
		ios += w[i].ios;
		close(w[i].fd);
	}
	t1 = now_ns();
	p1 = proc_cpu_us();
	b1 = busy_ticks();

	secs = (t1 - t0) / 1e9;
	if (!ios) {
		fprintf(stderr, "rndread: no I/O completed in %.3f s\n", secs);
		return 1;
	}
	printf("BENCHN iops=%.1f ios=%llu seconds=%.3f cpu_us_per_io=%.2f proc_cpu_us_per_io=%.2f\n",
	       ios / secs, (unsigned long long)ios, secs,
	       (b1 - b0) * 1e6 / tck / ios, (double)(p1 - p0) / ios);
	return 0;
}
