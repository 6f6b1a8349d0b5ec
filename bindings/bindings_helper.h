/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Headers bindgen reads to generate bindings/bindings_generated.rs at build
 * time. Only the rdma layer (rdma.rs, rdma/) may use what comes out of them.
 */
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/hns-abi.h>
#include "hnae3.h"
#include "shim.h"
#include "hnae3_shim.h"
#include "shim_trace.h"
