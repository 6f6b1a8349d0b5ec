// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! HIP08/HIP09 backend: bring-up and teardown of one function's engine.
//!
//! [`HwV2`] sets up the command queue, runs the PF or VF profile
//! (`hns_roce_v2_profile`: the capability queries, derived caps and HEM
//! page sizes, ALLOC_VF_RES, CFG_BT_ATTR, CFG_ENTRY_SIZE, in the C
//! driver's order and with its payloads), creates the event queues,
//! switches mailboxes to event mode and builds the HEM tables; [`HwInit`]
//! is the rest of `hns_roce_v2_init` (extended doorbell state, GMV and
//! timer chunks, the link table) and the function clear that leaves the
//! engine clean when it is dropped. The context encoders and decoders of
//! the data path live in the submodules (`ctx`, `qpc`, `wqe`, `srqwqe`,
//! `cqe`, `gid`, `scc`), the register window in `regs`, the constants in
//! `consts`.

pub mod caps;
pub mod cmq_fields;
pub mod consts;
pub mod cqe;
pub mod ctx;
// Stays at the top level: hns-sim (`sim/src/lib.rs`) compiles it by path too.
#[path = "hw_v2_fields.rs"]
pub mod fields;
pub mod gid;
pub mod qpc;
pub mod regs;
pub mod scc;
pub mod srqwqe;
pub mod wqe;

use crate::cmdq::desc::{chain, flag, CmqData, Desc};
use crate::cmdq::{Cmd, Cmq};
use crate::eq::{EqTable, Objects};
use crate::field::Field;
use crate::hem::table::HemTables;
use crate::hem::HemType;
use crate::hns_roce_hw_v2::caps::{
    alloc_vf_res_cmd, apply_func_caps, apply_pf_res, apply_timer_res, apply_vf_res, entry_size_cmd,
    parse_pf_caps, set_bt_cmd, Caps, CapsError, EntrySize,
};
use crate::hns_roce_hw_v2::cmq_fields::{
    cmq_req, func_clear, query_fw_info, query_version, vf_switch,
};
use crate::hns_roce_hw_v2::consts::{cap_flag, cmq_op};
use crate::hw_rev::HwRev;
use crate::rdma::Hnae3Handle;
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::{io_write, poll::read_poll_timeout},
    prelude::*,
    sync::Arc,
    time::{delay::fsleep, Delta}, //
};

/// Cycles per microsecond programmed on HIP09 (`HNS_ROCE_1US_CFG`).
const CYCLES_1US_HIP09: u32 = 999;
/// RoCEv2 UDP destination port.
const ROCE_V2_UDP_DPORT: u32 = 4791;
/// Wait after the FUNC_CLEAR write before polling, in ms.
const FUNC_CLEAR_FIRST_WAIT_MS: u64 = 40;
/// Interval between FUNC_CLEAR polls, in ms.
const FUNC_CLEAR_POLL_MS: u32 = 20;
/// Give up on FUNC_CLEAR after this many ms.
const FUNC_CLEAR_TIMEOUT_MS: u32 = 249 * 2 * 100;

/// SWITCH_PARAMETER_CFG: select the RoCE engine.
const VF_SWITCH_ROCEE_SEL: Field<CmqData> = Field::new(0, 0);

/// Bytes per link-table entry and the hardware's depth limit.
const EXT_LLM_ENTRY_SZ: u32 = 8;
const EXT_LLM_MAX_DEPTH: usize = 4096;

/// QUERY_FUNC_INFO: functions of this PF.
const FUNC_INFO_OWN_FUNC_NUM: Field<CmqData> = Field::new(31, 0);
/// QUERY_FUNC_INFO: the MAC id, first congestion template of the function.
const FUNC_INFO_OWN_MAC_ID: Field<CmqData> = Field::new(63, 32);

/// What the profile queries returned.
pub(crate) struct Profile {
    /// ROCEE hardware version.
    pub(crate) hw_rev: u16,
    /// Firmware version word.
    pub(crate) fw_ver: u32,
    /// Functions sharing the engine.
    pub(crate) func_num: u32,
    /// First congestion control template of this function
    /// (`cong_algo_tmpl_id`; 0 on HIP08).
    pub(crate) cong_tmpl_id: u32,
    /// The decoded capabilities.
    pub(crate) caps: Caps,
    /// Revision of the engine.
    pub(crate) rev: HwRev,
    /// A virtual function (C's `is_vf`: the DCB/PFC VF's PCI ID).
    pub(crate) is_vf: bool,
}

/// The profile queries of bring-up.
fn profile(h: &Hnae3Handle, cmd: &Cmd, rev: HwRev, is_vf: bool) -> Result<Profile> {
    let failed = |what: &'static str| failed(h, what);
    let mut d = [Desc::new(cmq_op::QUERY_HW_VER, true)];
    cmd.send(&mut d)
        .inspect_err(failed("failed to query hardware info"))?;
    // CAST: a 16-bit field.
    let hw_rev = d[0].get(query_version::ROCEE_HW_VERSION) as u16;

    let mut d = [Desc::new(cmq_op::QUERY_FW_VER, true)];
    cmd.send(&mut d)
        .inspect_err(failed("failed to query firmware info"))?;
    let fw_ver = d[0].get(query_fw_info::FW_VER);

    let (func_num, cong_tmpl_id, caps) = if is_vf {
        vf_profile(h, cmd, rev)?
    } else {
        pf_profile(h, cmd, rev)?
    };
    Ok(Profile {
        rev,
        is_vf,
        hw_rev,
        fw_ver,
        func_num,
        cong_tmpl_id,
        caps,
    })
}

/// C's message for a failed step, `"<what>, ret = <errno>."`, printed by
/// the crate's one formatter of that form ([`crate::rdma::dev_log_ret`],
/// the `ret =` form of `hdev_err!`, which takes a literal).
fn failed<'a>(h: &'a Hnae3Handle, what: &'static str) -> impl Fn(&Error) + 'a {
    move |e: &Error| {
        crate::rdma::dev_log_ret(crate::rdma::LogLevel::Err, h.device(), what, e.to_errno())
    }
}

/// The capability query (`hns_roce_query_caps`): QUERY_PF_CAPS_NUM, or
/// QUERY_VF_CAPS_NUM on a VF; five descriptors on HIP08, six later.
fn query_caps(h: &Hnae3Handle, cmd: &Cmd, rev: HwRev, is_vf: bool) -> Result<Caps> {
    let op = if is_vf {
        cmq_op::QUERY_VF_CAPS_NUM
    } else {
        cmq_op::QUERY_PF_CAPS_NUM
    };
    let (mut d5, mut d6);
    let d: &mut [Desc] = if rev.is_hip08() {
        d5 = chain::<5>(op, true);
        &mut d5
    } else {
        d6 = chain::<6>(op, true);
        &mut d6
    };
    cmd.send(d)?;
    // CAST: PAGE_SIZE is 4 KiB or 64 KiB.
    let mut caps = parse_pf_caps(d, kernel::page::PAGE_SIZE as u32).map_err(|e| bad_caps(h, e))?;
    // A VF never bonds.
    if is_vf {
        caps.flags &= !cap_flag::BOND;
    }
    Ok(caps)
}

/// A capability answer that does not decode.
#[inline(never)]
fn bad_caps(h: &Hnae3Handle, e: CapsError) -> Error {
    hdev_err!(h.device(), "cannot decode the capabilities: {:?}\n", e);
    EINVAL
}

/// CFG_BT_ATTR (`hns_roce_v2_set_bt`).
fn set_bt(cmd: &Cmd, caps: &Caps) -> Result {
    // CAST: PAGE_SHIFT is 12..16.
    let mut d = [set_bt_cmd(caps, kernel::page::PAGE_SHIFT as u32 - 12)];
    cmd.send(&mut d)
}

/// A VF's profile (`hns_roce_v2_vf_profile`): one function, its caps and
/// resources, the BT attributes; nothing the PF configures for the
/// engine. Returns the function count, the congestion template base and
/// the caps.
fn vf_profile(h: &Hnae3Handle, cmd: &Cmd, rev: HwRev) -> Result<(u32, u32, Caps)> {
    let mut caps =
        query_caps(h, cmd, rev, true).inspect_err(failed(h, "failed to query VF caps"))?;
    let mut d = chain::<2>(cmq_op::QUERY_VF_RES, true);
    cmd.send(&mut d)
        .inspect_err(failed(h, "failed to load vf res caps"))
        .inspect_err(failed(h, "failed to query VF resource"))?;
    apply_vf_res(&mut caps, &d).map_err(|e| bad_caps(h, e))?;
    // CAST: PAGE_SIZE is small.
    apply_func_caps(
        &mut caps,
        rev,
        1,
        h.num_vectors(),
        kernel::page::PAGE_SIZE as u32,
    );
    set_bt(cmd, &caps).inspect_err(failed(h, "failed to config VF BA table"))?;
    Ok((1, 0, caps))
}

/// A PF's profile (`hns_roce_v2_pf_profile`): the functions, the global
/// parameters, the switch parameters and resources of every function,
/// the caps, the BT attributes and entry sizes.
fn pf_profile(h: &Hnae3Handle, cmd: &Cmd, rev: HwRev) -> Result<(u32, u32, Caps)> {
    let failed = |what: &'static str| failed(h, what);
    let (func_num, cong_tmpl_id) = if rev.is_hip08() {
        (1, 0)
    } else {
        let mut d = [Desc::new(cmq_op::QUERY_FUNC_INFO, true)];
        cmd.send(&mut d)
            .inspect_err(failed("failed to query func info"))?;
        (
            d[0].get(FUNC_INFO_OWN_FUNC_NUM),
            d[0].get(FUNC_INFO_OWN_MAC_ID),
        )
    };
    if func_num == 0 {
        hdev_err!(h.device(), "firmware reports no functions\n");
        return Err(EINVAL);
    }

    let mut d = [Desc::new(cmq_op::CFG_GLOBAL_PARAM, false)];
    d[0].data.write(
        cmq_req::CFG_GLOBAL_PARAM_1US_CYCLES,
        if rev.is_hip08() { 0 } else { CYCLES_1US_HIP09 },
    );
    d[0].data
        .write(cmq_req::CFG_GLOBAL_PARAM_UDP_PORT, ROCE_V2_UDP_DPORT);
    cmd.send(&mut d)
        .inspect_err(failed("failed to config global param"))?;

    for vf in 0..func_num {
        let mut d = [Desc::new(cmq_op::SWITCH_PARAMETER_CFG, true)];
        d[0].data.enable(VF_SWITCH_ROCEE_SEL);
        d[0].data.write(vf_switch::VF_SWITCH_VF_ID, vf);
        cmd.send(&mut d)
            .inspect_err(failed("failed to set switch param"))?;
        // Write back what the firmware returned, with loopback allowed.
        d[0].flag = flag::IN;
        d[0].data.enable(vf_switch::VF_SWITCH_ALW_LPBK);
        d[0].data.clear(vf_switch::VF_SWITCH_ALW_LCL_LPBK);
        d[0].data.enable(vf_switch::VF_SWITCH_ALW_DST_OVRD);
        cmd.send(&mut d)
            .inspect_err(failed("failed to set switch param"))?;
    }

    let bad = |e: CapsError| bad_caps(h, e);
    let mut caps = query_caps(h, cmd, rev, false).inspect_err(failed("failed to query PF caps"))?;
    let mut d = chain::<2>(cmq_op::QUERY_PF_RES, true);
    cmd.send(&mut d)
        .inspect_err(failed("failed to load pf res caps"))
        .inspect_err(failed("failed to query pf resource"))?;
    apply_pf_res(&mut caps, &d, func_num).map_err(bad)?;
    let mut d = [Desc::new(cmq_op::QUERY_PF_TIMER_RES, true)];
    cmd.send(&mut d)
        .inspect_err(failed("failed to load pf timer resource"))
        .inspect_err(failed("failed to query pf resource"))?;
    apply_timer_res(&mut caps, &d[0]);

    // CAST: PAGE_SIZE and PAGE_SHIFT are small.
    let page_size = kernel::page::PAGE_SIZE as u32;
    apply_func_caps(&mut caps, rev, func_num, h.num_vectors(), page_size);
    for vf in 0..func_num {
        let mut d = alloc_vf_res_cmd(&caps, vf, rev);
        cmd.send(&mut d)
            .inspect_err(|e| {
                hdev_err!(
                    h.device(),
                    "failed to config vf-{} hem res, ret = {}.\n",
                    vf,
                    e.to_errno()
                )
            })
            .inspect_err(failed("failed to alloc vf resource"))?;
    }
    set_bt(cmd, &caps).inspect_err(failed("failed to config BA table"))?;
    if rev.is_hip09() {
        let mut d = [entry_size_cmd(EntrySize::Qpc, caps.qpc_sz)];
        cmd.send(&mut d)
            .inspect_err(|e| hdev_err!(h.device(), "failed to cfg qpc sz", ret = e.to_errno()))?;
        let mut d = [entry_size_cmd(EntrySize::Sccc, caps.sccc_sz)];
        cmd.send(&mut d)
            .inspect_err(|e| hdev_err!(h.device(), "failed to cfg sccc sz", ret = e.to_errno()))?;
    }

    Ok((func_num, cong_tmpl_id, caps))
}

/// How long a function clear waits for a reset to finish, and how often
/// it looks, in ms (`HNS_ROCE_V2_HW_RST_TIMEOUT`,
/// `HNS_ROCE_V2_HW_RST_COMPLETION_WAIT`).
const FUNC_CLEAR_RST_TIMEOUT_MS: u32 = 1000;
const FUNC_CLEAR_RST_POLL_MS: u32 = 20;

/// Whether the NIC reports a reset, finished since the instance started or
/// under way (`check_device_is_in_reset`).
fn in_reset(cmd: &Cmd) -> bool {
    cmd.state().reset_since_init() || cmd.state().hw_resetting() || cmd.state().sw_resetting()
}

/// FUNC_CLEAR for function `vf` (0: this one): write, wait, then poll
/// until the firmware reports it done (`__hns_roce_function_clear`). Once
/// function 0 is, the queue sends nothing more (the C driver's
/// `is_reset`). A reset the NIC reports stops it: the reset clears the
/// function instead (see [`function_clear_failed`]).
fn function_clear(cmd: &Cmd, vf: u32) {
    // The last command's error, and whether it was the write.
    let mut last_err = None;
    let mut write_failed = false;
    'clear: {
        if in_reset(cmd) {
            break 'clear;
        }
        let mut d = [Desc::new(cmq_op::FUNC_CLEAR, false)];
        d[0].data.write(func_clear::RST_FUNCID_EN, vf);
        if let Err(e) = cmd.send(&mut d) {
            hdev_err!(
                cmd.state().device(),
                "func clear write failed",
                ret = e.to_errno()
            );
            last_err = Some(e);
            write_failed = true;
            break 'clear;
        }
        // CAST: 40 ms fits `i64`.
        fsleep(Delta::from_millis(FUNC_CLEAR_FIRST_WAIT_MS as i64));
        let mut left = FUNC_CLEAR_TIMEOUT_MS;
        while left > 0 {
            if in_reset(cmd) {
                break 'clear;
            }
            fsleep(Delta::from_millis(i64::from(FUNC_CLEAR_POLL_MS)));
            left = left.saturating_sub(FUNC_CLEAR_POLL_MS);
            let mut d = [Desc::new(cmq_op::FUNC_CLEAR, true)];
            d[0].data.write(func_clear::RST_FUNCID_EN, vf);
            let r = cmd.send(&mut d);
            last_err = r.err();
            if r.is_ok() && d[0].get(func_clear::FUNC_CLEAR_RST_FUN_DONE) != 0 {
                if vf == 0 {
                    cmd.ring().with_cmq(|q| q.set_cleared());
                }
                return;
            }
        }
    }
    function_clear_failed(cmd, last_err, write_failed);
}

/// A function clear that did not complete (`hns_roce_func_clr_rst_proc`):
/// a reset the NIC finished since the instance started cleared the
/// function; one under way is waited for (up to a second) and clears it
/// when it ends; otherwise the clear failed.
fn function_clear_failed(cmd: &Cmd, last_err: Option<Error>, write_failed: bool) {
    let dev = cmd.state().device();
    if cmd.state().reset_since_init() {
        cmd.state().disable_doorbells();
        cmd.ring().with_cmq(|q| q.set_cleared());
        hdev_info!(dev, "func clear success after reset.\n");
        return;
    }
    // Waits for `ended`, which clears the function; `what` says how.
    let wait_for = |ended: &dyn Fn() -> bool, done: &str, failed: &str| {
        cmd.state().disable_doorbells();
        hdev_warn!(dev, "func clear is pending, device in resetting state.\n");
        let r = read_poll_timeout(
            || Ok(ended()),
            |e| *e,
            Delta::from_millis(i64::from(FUNC_CLEAR_RST_POLL_MS)),
            Delta::from_millis(i64::from(FUNC_CLEAR_RST_TIMEOUT_MS)),
        );
        if r.is_ok() {
            cmd.ring().with_cmq(|q| q.set_cleared());
            hdev_info!(dev, "{}", done);
        } else {
            hdev_warn!(dev, "{}", failed);
        }
    };
    if cmd.state().hw_resetting() {
        wait_for(
            &|| !cmd.state().hw_resetting(),
            "func clear success after reset.\n",
            "func clear failed.\n",
        );
        return;
    }
    if cmd.state().sw_resetting() && cmd.state().instance_initializing() {
        wait_for(
            &|| cmd.state().reset_since_init(),
            "func clear success after sw reset\n",
            "func clear failed because of unfinished sw reset\n",
        );
        return;
    }
    if let (Some(e), false) = (last_err, write_failed) {
        hdev_warn!(dev, "func clear read failed", ret = e.to_errno());
    }
    hdev_warn!(dev, "func clear failed.\n");
}

/// The extended link-list memory the engine queues work in
/// (`hns_roce_init_link_table`): data pages plus a config page chaining
/// them.
struct LinkTable {
    _pages: KVec<Coherent<[u8]>>,
    _table: Coherent<[u64]>,
}

impl LinkTable {
    /// Allocates the table and programs it with CFG_EXT_LLM.
    fn new(dev: &Device<Bound>, cmd: &Cmd, caps: &Caps, func_num: u32) -> Result<Self> {
        // CAST: PAGE_SHIFT is 12..16; sizes are small u32 products.
        let pg_shift = kernel::page::PAGE_SHIFT as u32;
        let total_sl = caps.sl_num * func_num;
        let size = caps.num_qps * func_num * EXT_LLM_ENTRY_SZ;
        let min_size = (total_sl * 4 + 2) << pg_shift;
        let size = size.max(min_size) as usize;
        let page = 1usize << pg_shift;
        let npages = size.div_ceil(page);
        if npages == 0 || npages > EXT_LLM_MAX_DEPTH {
            return Err(EINVAL);
        }
        let table = Coherent::<u64>::zeroed_slice(dev, npages, GFP_KERNEL)?;
        let mut pages = KVec::with_capacity(npages, GFP_KERNEL)?;
        for i in 0..npages {
            let p = Coherent::<u8>::zeroed_slice(dev, page, GFP_KERNEL)?;
            let next = if i + 1 == npages { 0 } else { i as u64 + 1 };
            let entry = (next << (64 - 12)) | (p.dma_address() >> 12);
            io_write!(&table, [try: i], entry.to_le());
            // Within the capacity reserved for the loop: no growth path.
            pages.push_within_capacity(p)?;
        }
        let head = pages.first().map_or(0, |p| p.dma_address() >> 12);
        let tail = pages.last().map_or(0, |p| p.dma_address() >> 12);
        let ba = table.dma_address();
        let mut d = chain::<2>(cmq_op::CFG_EXT_LLM, false);
        // CAST: halves of 64-bit addresses; npages <= 4096.
        d[0].data.write(cmq_req::CFG_LLM_A_BA_L, ba as u32);
        d[0].data.write(cmq_req::CFG_LLM_A_BA_H, (ba >> 32) as u32);
        d[0].data.write(cmq_req::CFG_LLM_A_DEPTH, npages as u32);
        d[0].data.write(cmq_req::CFG_LLM_A_PGSZ, pg_shift - 12);
        d[0].data.enable(cmq_req::CFG_LLM_A_INIT_EN);
        d[0].data.write(cmq_req::CFG_LLM_A_HEAD_BA_L, head as u32);
        d[0].data
            .write(cmq_req::CFG_LLM_A_HEAD_BA_H, (head >> 32) as u32);
        d[0].data.write(cmq_req::CFG_LLM_A_HEAD_NXTPTR, 1);
        d[0].data.write(cmq_req::CFG_LLM_A_HEAD_PTR, 0);
        d[1].data.write(cmq_req::CFG_LLM_B_TAIL_BA_L, tail as u32);
        d[1].data
            .write(cmq_req::CFG_LLM_B_TAIL_BA_H, (tail >> 32) as u32);
        d[1].data
            .write(cmq_req::CFG_LLM_B_TAIL_PTR, npages as u32 - 1);
        cmd.send(&mut d)?;
        Ok(Self {
            _pages: pages,
            _table: table,
        })
    }
}

/// Writes the MAC of physical port `port` into HIP08's SMAC table
/// (`hns_roce_v2_set_mac`).
///
/// # Errors
///
/// The command's errno.
pub(crate) fn set_mac(cmd: &Cmd, port: u32, mac: &[u8; 6]) -> Result {
    let mut d = [Desc::new(cmq_op::CFG_SMAC_TB, false)];
    gid::write_smac_tb(&mut d[0].data, port, mac);
    cmd.send(&mut d)
}

/// The first step of `hns_roce_v2_init`: the engine's extended doorbell
/// state is cleared before use. A failure here does not clear the
/// function (C's `hns_roce_v2_init` skips its function clear on this path).
fn clear_extdb(cmd: &Cmd) -> Result {
    let mut d = [Desc::new(cmq_op::CLEAR_EXTDB_LIST_INFO, false)];
    cmd.send(&mut d).inspect_err(|e| {
        ibdev_err!(
            cmd,
            "failed to clear extended doorbell info",
            ret = e.to_errno()
        )
    })
}

/// The rest of `hns_roce_v2_init` of a PF, after [`clear_extdb`]: take the
/// GMV and timer chunks, program the link table.
fn hw_init(
    h: &Hnae3Handle,
    cmd: &Cmd,
    hem: &HemTables,
    caps: &Caps,
    func_num: u32,
    is_vf: bool,
) -> Result<Option<LinkTable>> {
    let dev = h.bound_device();
    // A VF takes the GMV chunks only: the timers and the link table are
    // the PF's.
    let gets = [
        (HemType::Gmv, caps.gmv_entry_num, ""),
        (
            HemType::QpcTimer,
            caps.qpc_timer_bt_num,
            "QPC Timer get failed\n",
        ),
        (
            HemType::CqcTimer,
            caps.cqc_timer_bt_num,
            "CQC Timer get failed\n",
        ),
    ];
    let gets = if is_vf { &gets[..1] } else { &gets[..] };
    // HIP08 has no GMV table (no chunk to take: C's loop does not run).
    for &(ty, n, msg) in gets.iter().filter(|g| g.1 > 0) {
        let t = hem.table(ty)?;
        for i in 0..n {
            if let Err(e) = t.get(dev, i) {
                if !msg.is_empty() {
                    hdev_err!(h.device(), "{}", msg);
                }
                return Err(e);
            }
        }
    }
    if is_vf {
        return Ok(None);
    }
    LinkTable::new(dev, cmd, caps, func_num)
        .map(Some)
        .inspect_err(|e| hdev_err!(h.device(), "failed to init llm", ret = e.to_errno()))
}

/// Clears the function when dropped (`hns_roce_function_clear`): a PF its
/// functions, `func_num - 1` down to 0 (each VF's resources freed after
/// its clear), a VF itself. Once function 0 is cleared, later commands and
/// mailboxes are answered without reaching the engine.
struct FunctionClear {
    cmd: Arc<Cmd>,
    func_num: u32,
}

impl Drop for FunctionClear {
    fn drop(&mut self) {
        if self.cmd.ring().with_cmq(|q| q.is_fatal()) {
            return;
        }
        for vf in (0..self.func_num).rev() {
            function_clear(&self.cmd, vf);
            if vf == 0 {
                continue;
            }
            if let Err(e) = free_vf_resource(&self.cmd, vf) {
                ibdev_err!(
                    self.cmd.state(),
                    "failed to free vf resource, vf_id = {}, ret = {}.\n",
                    vf,
                    e.to_errno()
                );
            }
        }
    }
}

/// Gives a VF's context resources back (`hns_roce_free_vf_resource`):
/// ALLOC_VF_RES naming the VF and nothing else.
fn free_vf_resource(cmd: &Cmd, vf: u32) -> Result {
    let mut d = chain::<2>(cmq_op::ALLOC_VF_RES, false);
    d[0].data.write(cmq_req::FUNC_RES_A_VF_ID, vf);
    cmd.send(&mut d)
}

/// Mailboxes in event mode while this exists (`hns_roce_cmd_use_events`);
/// dropping it goes back to polling (`hns_roce_cmd_use_polling`).
struct EventMode(Arc<Cmd>);

impl EventMode {
    fn new(cmd: &Arc<Cmd>) -> Self {
        cmd.mailbox().use_events();
        Self(cmd.clone())
    }
}

impl Drop for EventMode {
    fn drop(&mut self) {
        self.0.mailbox().use_polling();
    }
}

/// What `hw_init` sets up once the HEM tables exist and HIP08's free-MR
/// objects were made (`hns_roce_v2_init` after `free_mr_init`): the
/// extended doorbell state cleared, the GMV and timer chunks, the link
/// table.
///
/// Torn down by dropping it, before [`HwV2`]: the function is cleared
/// first, then the link table goes (`hns_roce_v2_exit`). A failure part-way
/// unwinds the same way; as in C, the function is cleared on the way back
/// only once the extended doorbell state was.
pub(crate) struct HwInit {
    _cleared: FunctionClear,
    _link: Option<LinkTable>,
}

impl HwInit {
    /// Runs the rest of `hw_init` on `hw`.
    ///
    /// # Errors
    ///
    /// The errno of the failed command or allocation.
    pub(crate) fn new(h: &Hnae3Handle, hw: &HwV2) -> Result<Self> {
        let failed = |_: &Error| hdev_err!(h.device(), "hw_init failed!\n");
        clear_extdb(&hw.cmd).inspect_err(failed)?;
        let p = &hw.profile;
        let cleared = FunctionClear {
            cmd: hw.cmd.clone(),
            func_num: p.func_num,
        };
        let link =
            hw_init(h, &hw.cmd, &hw.hem, &p.caps, p.func_num, p.is_vf).inspect_err(failed)?;
        Ok(Self {
            _cleared: cleared,
            _link: link,
        })
    }
}

/// The HIP08/HIP09 engine of one function up to its HEM tables.
///
/// Built in dependency order by [`HwV2::new`]; torn down by dropping it
/// (after [`HwInit`]), fields in declaration order: the HEM tables go,
/// mailboxes go back to polling and the EQs are removed. A bring-up that
/// fails part-way unwinds the fields built so far in reverse order, which
/// is the same sequence.
#[pin_data]
pub(crate) struct HwV2 {
    /// The context tables.
    pub(crate) hem: Arc<HemTables>,
    _events: EventMode,
    _eqs: EqTable,
    /// CQs and QPs by number, for the event handlers and the verbs.
    pub(crate) objs: Arc<Objects>,
    /// What the firmware reported.
    pub(crate) profile: Profile,
    /// The command queue and mailbox, shared with the interrupt handlers.
    pub(crate) cmd: Arc<Cmd>,
}

impl HwV2 {
    /// Sets up the command queue, runs the PF or VF profile, creates the event
    /// queues, switches mailboxes to event mode, then builds the HEM tables
    /// (`hns_roce_init` up to `hw_init`, which is [`HwInit`]).
    pub(crate) fn new(h: &Hnae3Handle, rev: HwRev, is_vf: bool) -> impl Init<Self, Error> + '_ {
        try_init!(HwV2 {
            cmd: {
                let regs = h.reg_window()?;
                let cmq = Cmq::new(h.bound_device(), regs.io())?;
                Arc::pin_init(
                    Cmd::new(regs, h.device().into(), cmq, h.reset_info()),
                    GFP_KERNEL,
                )?
            },
            profile: profile(h, cmd, rev, is_vf)
                .inspect_err(|_| hdev_err!(h.device(), "get RoCE engine profile failed!\n"))?,
            // The C driver prints nothing here; the summary is for dynamic
            // debug.
            _: {
                dev_dbg!(
                    h.device(),
                    "hw_rev {:#x}, fw {:#x}, {} function(s), {} QPs, {} CQs, {} MRs, cap flags {:#x}\n",
                    profile.hw_rev,
                    profile.fw_ver,
                    profile.func_num,
                    profile.caps.num_qps,
                    profile.caps.num_cqs,
                    profile.caps.num_mtpts,
                    profile.caps.flags
                );
            },
            objs: Objects::new(&profile.caps)?,
            _eqs: EqTable::new(h, cmd, objs, &profile.caps, profile.rev.is_hip09())
                .inspect_err(|_| hdev_err!(h.device(), "eq init failed!\n"))?,
            _events: EventMode::new(cmd),
            hem: HemTables::new(h.bound_device(), cmd, &profile.caps)
                .and_then(|hem| Ok(Arc::new(hem, GFP_KERNEL)?))
                .inspect_err(|_| {
                    hdev_err!(h.device(), "init HEM(Hardware Entry Memory) failed!\n")
                })?,
        }? Error)
    }
}
