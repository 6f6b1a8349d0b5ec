/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the kernel test modules share: the counters their guest plans read
 * as read-only module parameters (/sys/module/NAME/parameters/COUNTER).
 */
#ifndef HNS_KTEST_H
#define HNS_KTEST_H

#include <linux/atomic.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

static int ktest_get_atomic(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops ktest_atomic_ops = {
	.get = ktest_get_atomic,
};

/* The atomic_t var as the read-only parameter name. */
#define KTEST_COUNTER(name, var) \
	module_param_cb(name, &ktest_atomic_ops, &(var), 0444)

#endif
