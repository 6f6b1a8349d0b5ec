// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The device and port verbs the RDMA core calls directly: `query_device`,
//! `query_port`, `get_port_immutable`, `query_pkey`, `modify_device` and
//! `get_dev_fw_str`, an `ib_device_ops` table of their own
//! ([`IbAdapter::DEV`](super::IbAdapter)) that the shim's registration
//! sets. (`get_link_layer` stays the shim's: its return type is an enum,
//! which no Rust function can have under kCFI.)
//!
//! C: `hns_roce_query_device`, `hns_roce_query_port`,
//! `hns_roce_port_immutable`, `hns_roce_query_pkey`,
//! `hns_roce_modify_device`, `hns_roce_get_fw_ver` in
//! `drivers/infiniband/hw/hns/hns_roce_main.c`.

use super::verbs::dev_drv;
use super::Driver;
use crate::rdma::{raw, UData};
use core::fmt::{self, Write};
use kernel::{
    ffi::{c_char, c_int, c_ulong, c_void},
    prelude::*,
};

/// What `query_device` reports, filled by the driver.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DevAttr {
    /// The firmware version word.
    pub(crate) fw_ver: u64,
    /// The largest MR in bytes.
    pub(crate) max_mr_size: u64,
    /// The page sizes the device maps (a bit per size).
    pub(crate) page_size_cap: u64,
    /// `IB_DEVICE_*` capabilities.
    pub(crate) device_cap_flags: u64,
    /// The PCI vendor id.
    pub(crate) vendor_id: u32,
    /// The PCI device id.
    pub(crate) vendor_part_id: u32,
    /// The hardware revision.
    pub(crate) hw_ver: u32,
    /// QPs.
    pub(crate) max_qp: u32,
    /// Work requests per QP.
    pub(crate) max_qp_wr: u32,
    /// SGEs per send request.
    pub(crate) max_send_sge: u32,
    /// SGEs per receive request.
    pub(crate) max_recv_sge: u32,
    /// SGEs per RDMA read.
    pub(crate) max_sge_rd: u32,
    /// CQs.
    pub(crate) max_cq: u32,
    /// Entries per CQ.
    pub(crate) max_cqe: u32,
    /// MRs.
    pub(crate) max_mr: u32,
    /// PDs.
    pub(crate) max_pd: u32,
    /// RDMA reads and atomics a QP takes in.
    pub(crate) max_qp_rd_atom: u32,
    /// RDMA reads and atomics a QP sends out.
    pub(crate) max_qp_init_rd_atom: u32,
    /// Non-zero: atomics are atomic for the HCA (`IB_ATOMIC_HCA`), else
    /// none (`IB_ATOMIC_NONE`).
    pub(crate) atomic_hca: u32,
    /// P_Keys (16 bits reach the core).
    pub(crate) max_pkeys: u32,
    /// The local CA ACK delay (8 bits reach the core).
    pub(crate) local_ca_ack_delay: u32,
    /// AHs.
    pub(crate) max_ah: u32,
    /// The largest CQ moderation period (16 bits reach the core).
    pub(crate) max_cq_moderation_period: u32,
    /// The largest CQ moderation count (16 bits reach the core).
    pub(crate) max_cq_moderation_count: u32,
    /// SRQs.
    pub(crate) max_srq: u32,
    /// Work requests per SRQ.
    pub(crate) max_srq_wr: u32,
    /// SGEs per SRQ request.
    pub(crate) max_srq_sge: u32,
    /// Pages a fast-register WR maps.
    pub(crate) max_fast_reg_page_list_len: u32,
}

/// What `query_port` answers: `ndev_mtu` (an `enum ib_mtu`, 0 if none
/// fits) and `ndev_state` (`enum ib_port_state`) are the netdev's, the
/// driver fills the rest.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PortAttr {
    /// `iboe_get_mtu` of the netdev's MTU.
    pub(crate) ndev_mtu: u32,
    /// The state of the netdev, or of the bond upper the port follows.
    pub(crate) ndev_state: u32,
    /// The largest MTU (`enum ib_mtu`).
    pub(crate) max_mtu: u32,
    /// The MTU in use (`enum ib_mtu`).
    pub(crate) active_mtu: u32,
    /// The port's state (`enum ib_port_state`).
    pub(crate) state: u32,
    /// The physical state (`enum ib_port_phys_state`, 8 bits reach the
    /// core).
    pub(crate) phys_state: u32,
    /// GID table entries.
    pub(crate) gid_tbl_len: u32,
    /// The largest message.
    pub(crate) max_msg_sz: u32,
    /// `IB_PORT_*` capabilities.
    pub(crate) port_cap_flags: u32,
    /// P_Key table entries (16 bits reach the core).
    pub(crate) pkey_tbl_len: u32,
}

/// The shim's container of a registered device.
///
/// # Safety
///
/// `ibdev` is this driver's registered device.
pub(super) unsafe fn sdev<'a>(ibdev: *mut raw::ib_device) -> &'a raw::rdma_shim_dev {
    // SAFETY: this driver's devices are the `ibdev` of a `rdma_shim_dev`
    // (the function's contract), whose registration fields are not written
    // after registration.
    unsafe { &*kernel::container_of!(ibdev, raw::rdma_shim_dev, ibdev) }
}

/// Prints against a registered device (`ibdev_warn`, `ibdev_err`).
///
/// # Safety
///
/// `ibdev` is a registered device.
unsafe fn ibdev_print(
    f: unsafe extern "C" fn(*const raw::ib_device, *const c_char, ...),
    ibdev: *mut raw::ib_device,
    args: fmt::Arguments<'_>,
) {
    // SAFETY: a registered device (the function's contract); "%pA" takes
    // a pointer to `fmt::Arguments`.
    unsafe {
        f(
            ibdev,
            c"%pA".as_char_ptr(),
            core::ptr::from_ref(&args).cast::<c_void>(),
        )
    };
}

/// The RDMA core's `query_device`. A user query (`udata`) must carry no
/// request and gets an empty answer (`ib_no_udata_io`), before anything is
/// queried.
///
/// # Safety
///
/// `ibdev` is this driver's registered device; `props` is valid for
/// writing; `udata` is null or the command's.
pub(super) unsafe extern "C" fn query_device<D: Driver>(
    ibdev: *mut raw::ib_device,
    props: *mut raw::ib_device_attr,
    udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: null or the command's udata (the function's contract).
    if let Some(u) = unsafe { UData::from_raw(udata) } {
        if let Err(e) = u.no_io() {
            return e.to_errno();
        }
    }
    let mut a = DevAttr::default();
    // SAFETY: per the function's contract.
    unsafe { dev_drv::<D>(ibdev) }.query_device(&mut a);
    // SAFETY: per the function's contract.
    let p = unsafe { &mut *props };
    p.fw_ver = a.fw_ver;
    // SAFETY: per the function's contract.
    p.sys_image_guid = unsafe { (*ibdev).node_guid };
    p.max_mr_size = a.max_mr_size;
    p.page_size_cap = a.page_size_cap;
    p.vendor_id = a.vendor_id;
    p.vendor_part_id = a.vendor_part_id;
    p.hw_ver = a.hw_ver;
    p.max_qp = a.max_qp;
    p.max_qp_wr = a.max_qp_wr;
    p.device_cap_flags = a.device_cap_flags;
    p.max_send_sge = a.max_send_sge;
    p.max_recv_sge = a.max_recv_sge;
    p.max_sge_rd = a.max_sge_rd;
    p.max_cq = a.max_cq;
    p.max_cqe = a.max_cqe;
    p.max_mr = a.max_mr;
    p.max_pd = a.max_pd;
    p.max_qp_rd_atom = a.max_qp_rd_atom;
    p.max_qp_init_rd_atom = a.max_qp_init_rd_atom;
    p.atomic_cap = if a.atomic_hca != 0 {
        raw::ib_atomic_cap_IB_ATOMIC_HCA
    } else {
        raw::ib_atomic_cap_IB_ATOMIC_NONE
    };
    // CAST: the core's field is 16 bits, as C's assignment keeps.
    p.max_pkeys = a.max_pkeys as u16;
    // CAST: the core's field is 8 bits, as C's assignment keeps.
    p.local_ca_ack_delay = a.local_ca_ack_delay as u8;
    p.max_ah = a.max_ah;
    // CAST: the core's fields are 16 bits, as C's assignment keeps.
    p.cq_caps.max_cq_moderation_period = a.max_cq_moderation_period as u16;
    // CAST: as above.
    p.cq_caps.max_cq_moderation_count = a.max_cq_moderation_count as u16;
    p.max_srq = a.max_srq;
    p.max_srq_wr = a.max_srq_wr;
    p.max_srq_sge = a.max_srq_sge;
    p.max_fast_reg_page_list_len = a.max_fast_reg_page_list_len;
    0
}

/// The RDMA core's `query_port`: the link's speed and width, the netdev's
/// MTU and state (or the state of the bond upper the port follows), and
/// what the driver answers.
///
/// # Safety
///
/// `ibdev` is this driver's registered device; `props` is valid for
/// writing.
pub(super) unsafe extern "C" fn query_port<D: Driver>(
    ibdev: *mut raw::ib_device,
    port: u32,
    props: *mut raw::ib_port_attr,
) -> c_int {
    // SAFETY: per the function's contract.
    let p = unsafe { &mut *props };
    // SAFETY: a registered device; the speed and width are the core's
    // fields.
    let ret =
        unsafe { raw::ib_get_eth_speed(ibdev, port, &mut p.active_speed, &mut p.active_width) };
    if ret != 0 {
        // SAFETY: a registered device.
        unsafe {
            ibdev_print(
                raw::ibdev_warn,
                ibdev,
                format_args!("failed to get speed, ret = {}.\n", ret),
            )
        };
    }
    let mut a = PortAttr::default();
    // SAFETY: a registered device of this driver.
    match unsafe { super::netdev::port_netdev::<D>(ibdev, port, true) } {
        Ok(n) => (a.ndev_mtu, a.ndev_state) = (n.mtu, n.state),
        Err(_) => {
            // SAFETY: a registered device.
            unsafe {
                ibdev_print(
                    raw::ibdev_err,
                    ibdev,
                    format_args!("find netdev {} failed!\n", port.wrapping_sub(1)),
                )
            };
            return EINVAL.to_errno();
        }
    }
    // SAFETY: per the function's contract.
    unsafe { dev_drv::<D>(ibdev) }.query_port(port, &mut a);
    p.max_mtu = a.max_mtu;
    p.active_mtu = a.active_mtu;
    p.state = a.state;
    // CAST: the core's field is 8 bits, as C's assignment keeps.
    p.phys_state = a.phys_state as u8;
    // CAST: a table of at most a few hundred entries.
    p.gid_tbl_len = a.gid_tbl_len as c_int;
    p.port_cap_flags = a.port_cap_flags;
    p.max_msg_sz = a.max_msg_sz;
    // CAST: the core's field is 16 bits, as C's assignment keeps.
    p.pkey_tbl_len = a.pkey_tbl_len as u16;
    0
}

/// The RDMA core's `get_port_immutable`: the table sizes `query_port`
/// answers and the port's fixed capabilities of the registration.
///
/// # Safety
///
/// `ibdev` is this driver's registered device (the core calls this
/// during registration, once its ops are set); `immutable` is valid for
/// writing.
pub(super) unsafe extern "C" fn port_immutable(
    ibdev: *mut raw::ib_device,
    port: u32,
    immutable: *mut raw::ib_port_immutable,
) -> c_int {
    // SAFETY: `ib_port_attr` is C plain data, all zeroes a valid value.
    let mut attr: raw::ib_port_attr = unsafe { core::mem::zeroed() };
    // SAFETY: per the function's contract.
    let ret = unsafe { raw::ib_query_port(ibdev, port, &mut attr) };
    if ret != 0 {
        return ret;
    }
    // SAFETY: per the function's contract.
    let (s, im) = unsafe { (sdev(ibdev), &mut *immutable) };
    im.pkey_tbl_len = c_int::from(attr.pkey_tbl_len);
    im.gid_tbl_len = attr.gid_tbl_len;
    im.max_mad_size = s.max_mad_size;
    im.core_cap_flags = s.core_cap_flags;
    0
}

/// The RDMA core's `query_pkey`: the port's one P_Key, at index 0.
///
/// # Safety
///
/// `ibdev` is this driver's registered device; `pkey` is valid for
/// writing.
pub(super) unsafe extern "C" fn query_pkey(
    ibdev: *mut raw::ib_device,
    _port: u32,
    index: u16,
    pkey: *mut u16,
) -> c_int {
    if index > 0 {
        return EINVAL.to_errno();
    }
    // SAFETY: per the function's contract.
    unsafe { *pkey = sdev(ibdev).pkey };
    0
}

/// The RDMA core's `modify_device`: only the node description can be
/// changed (`EOPNOTSUPP` for any other bit of `mask`), as C.
///
/// # Safety
///
/// `ibdev` is this driver's registered device; `props` is valid for the
/// call.
pub(super) unsafe extern "C" fn modify_device(
    ibdev: *mut raw::ib_device,
    mask: c_int,
    props: *mut raw::ib_device_modify,
) -> c_int {
    // CAST: `IB_DEVICE_MODIFY_*` flag bits.
    let node_desc = raw::ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC as c_int;
    if mask & !node_desc != 0 {
        return EOPNOTSUPP.to_errno();
    }
    if mask & node_desc != 0 {
        // SAFETY: per the function's contract.
        unsafe { raw::rdma_shim_set_node_desc(ibdev, (*props).node_desc.as_ptr()) };
    }
    0
}

/// A formatter into a byte buffer that keeps the last byte for the NUL
/// and drops what does not fit, as `snprintf`.
struct Truncating<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for Truncating<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buf.len().saturating_sub(1).saturating_sub(self.len);
        let n = s.len().min(room);
        if let Some(dst) = self.buf.get_mut(self.len..self.len + n) {
            dst.copy_from_slice(&s.as_bytes()[..n]);
            self.len += n;
        }
        Ok(())
    }
}

/// The RDMA core's `get_dev_fw_str`: the firmware version word as
/// `major.minor.sub` (`%u.%u.%04u` of its top 32 bits, next 16, last 16).
///
/// # Safety
///
/// `ibdev` is this driver's registered device; `out` has
/// `IB_FW_VERSION_NAME_MAX` writable bytes.
pub(super) unsafe extern "C" fn fw_str<D: Driver>(ibdev: *mut raw::ib_device, out: *mut c_char) {
    // SAFETY: per the function's contract.
    let v = unsafe { dev_drv::<D>(ibdev) }.fw_ver();
    // SAFETY: `IB_FW_VERSION_NAME_MAX` writable bytes (the function's
    // contract).
    let buf = unsafe {
        core::slice::from_raw_parts_mut(out.cast::<u8>(), raw::IB_FW_VERSION_NAME_MAX as usize)
    };
    let mut w = Truncating { buf, len: 0 };
    let _ = write!(w, "{}.{}.{:04}", v >> 32, (v >> 16) & 0xffff, v & 0xffff);
    let end = w.len;
    if let Some(b) = w.buf.get_mut(end) {
        *b = 0;
    }
}

/// The RDMA core's `alloc_hw_port_stats`: the counters registered with the
/// device (only port 1 has them; another port is refused with a message,
/// as C).
///
/// # Safety
///
/// `ibdev` is this driver's registered device, registered with counters.
pub(super) unsafe extern "C" fn alloc_port_stats(
    ibdev: *mut raw::ib_device,
    port: u32,
) -> *mut raw::rdma_hw_stats {
    if port > 1 {
        // SAFETY: a registered device (the function's contract).
        unsafe { ibdev_print(raw::ibdev_err, ibdev, format_args!("invalid port num.\n")) };
        return core::ptr::null_mut();
    }
    // SAFETY: a registered device (the function's contract).
    let s = unsafe { sdev(ibdev) };
    // SAFETY: the registration's descriptor table is static and holds
    // `num_stats` entries.
    unsafe {
        raw::rdma_alloc_hw_stats_struct(
            s.stats,
            // CAST: a table of a few dozen counters.
            s.num_stats as c_int,
            // CAST: 10 (jiffies), widened.
            raw::RDMA_HW_STATS_DEFAULT_LIFESPAN as c_ulong,
        )
    }
}

/// The RDMA core's `get_hw_stats`: the driver's counters of port 1 into
/// `stats`; nothing for the device-wide set (port 0), `EINVAL` for another
/// port.
///
/// # Safety
///
/// `ibdev` is this driver's registered device; `stats` the set
/// [`alloc_port_stats`] allocated, live for the call.
pub(super) unsafe extern "C" fn get_hw_stats<D: Driver>(
    ibdev: *mut raw::ib_device,
    stats: *mut raw::rdma_hw_stats,
    port: u32,
    _index: c_int,
) -> c_int {
    if port == 0 {
        return 0;
    }
    if port > 1 {
        return EINVAL.to_errno();
    }
    // SAFETY: the set holds `num_counters` values after its header (the
    // function's contract).
    let vals = unsafe {
        core::slice::from_raw_parts_mut(
            (*stats).value.as_mut_ptr(),
            // CAST: a table of a few dozen counters.
            (*stats).num_counters as usize,
        )
    };
    // SAFETY: per the function's contract.
    match unsafe { dev_drv::<D>(ibdev) }.query_counters(vals) {
        // CAST: at most `num_counters` counters.
        Ok(k) => k as c_int,
        Err(e) => {
            // SAFETY: a registered device.
            unsafe {
                ibdev_print(
                    raw::ibdev_err,
                    ibdev,
                    format_args!("failed to query hw counter, ret = {}\n", e.to_errno()),
                )
            };
            e.to_errno()
        }
    }
}
