// SPDX-License-Identifier: GPL-2.0

//! debugfs of the driver (`hns_roce_debugfs.c`).
//!
//! The module owns `<debugfs>/hns_roce/` ([`Root`]). Each RoCE function gets
//! `hns_roce/<pci name>/` once its ib_device is registered ([`DevDebugfs`]).
//! On a HIP09 PF with QP flow control, registration first reads the
//! parameter blocks of the four congestion control algorithms from the
//! firmware (CFG_{DCQCN,LDCP,HC3,DIP}_PARAM, as `get_default_scc_param`
//! does), then adds one directory per algorithm present in `caps.cong_cap`
//! (`dcqcn_cc_param/`, `ldcp_cc_param/`, `hc3_cc_param/`, `dip_cc_param/`)
//! with one file (mode 0600) per parameter: a read shows the value kept by
//! the driver, a write checks the value against the parameter's range,
//! stores it and sends the whole block to the firmware, and puts the old
//! value back if the firmware refuses it.
//!
//! `db_records` (not in C) reads how many record doorbells the function has
//! handed out and not got back.
//!
//! `sw_stat/sw_stat` (mode 0400, as C's) shows the function's software
//! event and error counters ([`crate::dfx`]: EQEs, commands, mailboxes,
//! failed verbs), in C's names, order and format.
//!
//! Nothing here reaches the bindings: the directories and files are the
//! kernel crate's `debugfs` API. The parameter tables are `hns_roce_hw_v2/scc.rs`.

use crate::cmdq::desc::Desc;
use crate::cmdq::Cmd;
use crate::db::DbRecords;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::cap_flag;
use crate::hns_roce_hw_v2::scc::{kstrtou32, Algo, ParamAttr, Params};
use crate::hw_rev::HwRev;
use crate::rdma::Hnae3Handle;
use kernel::{
    debugfs::{Dir, Scope, ScopedDir},
    fmt, new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    uaccess::UserSliceReader,
};

/// PCI device ID of the DCB/PFC VF, the one VF in the driver's table
/// (`is_vf` in C).
pub(crate) const DEV_ID_RDMA_DCB_PFC_VF: u16 = 0xa22f;
/// A write must be shorter than this many bytes (the C driver's buffer).
const WRITE_BUF: usize = 16;

/// The module's directory `hns_roce` (`hns_roce_init_debugfs`), part of
/// the module's state; dropping it removes the directory
/// (`hns_roce_cleanup_debugfs`).
pub(crate) struct Root {
    /// The directory (the kernel's debugfs API gives a directory that does
    /// nothing when debugfs refuses it).
    dir: Dir,
}

impl Root {
    /// Creates `<debugfs>/hns_roce`. Like C, a debugfs failure is not an
    /// error: the functions then get no directory.
    pub(crate) fn create() -> Self {
        Root {
            dir: Dir::new(c"hns_roce"),
        }
    }
}

/// The parameter blocks of one function (`hr_dev->scc_param`) and the
/// command queue that reads and writes them.
#[pin_data]
struct Scc {
    /// The function's command interface.
    cmd: Arc<Cmd>,
    /// The driver's copy of each algorithm's block; a write holds the lock
    /// until the firmware has answered (`scc_mutex`).
    #[pin]
    dcqcn: Mutex<Params>,
    #[pin]
    ldcp: Mutex<Params>,
    #[pin]
    hc3: Mutex<Params>,
    #[pin]
    dip: Mutex<Params>,
}

impl Scc {
    /// Zeroed blocks (`hns_roce_alloc_scc_param`).
    fn new(cmd: &Arc<Cmd>) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Scc {
                cmd: cmd.clone(),
                dcqcn <- new_mutex!(Params::default()),
                ldcp <- new_mutex!(Params::default()),
                hc3 <- new_mutex!(Params::default()),
                dip <- new_mutex!(Params::default()),
            }? Error),
            GFP_KERNEL,
        )
    }

    /// The block of `algo`.
    fn block(&self, algo: Algo) -> &Mutex<Params> {
        match algo {
            Algo::Dcqcn => &self.dcqcn,
            Algo::Ldcp => &self.ldcp,
            Algo::Hc3 => &self.hc3,
            Algo::Dip => &self.dip,
        }
    }

    /// Reads the block of `algo` from the firmware into the driver's copy
    /// (`hns_roce_v2_query_scc_param`).
    fn query(&self, algo: Algo) -> Result {
        let mut d = [Desc::new(algo.opcode(), true)];
        self.cmd.send(&mut d).inspect_err(|e| {
            ibdev_err_ratelimited!(
                self.cmd.state(),
                "failed to query scc param, opcode: {:#x}, ret = {}.\n",
                algo.opcode(),
                e.to_errno()
            );
        })?;
        *self.block(algo).lock() = Params::from_payload(&d[0].data);
        Ok(())
    }

    /// Sends `p` as the block of `algo` (`hns_roce_v2_config_scc_param`);
    /// the caller holds the block's lock.
    fn config(&self, algo: Algo, p: &Params) -> Result {
        let mut d = [Desc::new(algo.opcode(), false)];
        d[0].data = p.to_payload();
        self.cmd.send(&mut d).inspect_err(|e| {
            ibdev_err_ratelimited!(
                self.cmd.state(),
                "failed to configure scc param, opcode: {:#x}, ret = {}.\n",
                algo.opcode(),
                e.to_errno()
            );
        })
    }

    /// Reads every algorithm's block (`get_default_scc_param`); the firmware
    /// may not know some algorithms (`EOPNOTSUPP`), which is no warning.
    fn query_defaults(&self) {
        for algo in Algo::ALL {
            if let Err(e) = self.query(algo) {
                if e != EOPNOTSUPP {
                    ibdev_warn_ratelimited!(
                        self.cmd.state(),
                        "failed to get default parameters of scc algo {}, ret = {}.\n",
                        algo.index(),
                        e.to_errno()
                    );
                }
            }
        }
    }
}

/// What one parameter file points to.
struct ParamFile {
    /// The blocks of the function.
    scc: Arc<Scc>,
    /// Whose block the parameter is in.
    algo: Algo,
    /// Where in the block, and its range.
    attr: &'static ParamAttr,
}

/// Read: the value and a newline (`cc_param_debugfs_show`).
fn show(p: &ParamFile, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let v = p.scc.block(p.algo).lock().get(p.attr);
    writeln!(f, "{v}")
}

/// Read of `db_records`: record doorbells handed out and not given back
/// (this driver's own file, not in C: the guest plans check that failed
/// object creations give their records back).
fn show_db_records(db: &DbRecords, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", db.in_use())
}

/// Write: a number in the parameter's range, sent to the firmware with the
/// rest of the block (`hns_debugfs_seqfile_write` + `cc_param_debugfs_store`).
fn store(p: &ParamFile, r: &mut UserSliceReader) -> Result {
    let count = r.len();
    if count >= WRITE_BUF {
        return Err(EINVAL);
    }
    let mut buf = [0u8; WRITE_BUF];
    r.read_slice(buf.get_mut(..count).ok_or(EINVAL)?)?;
    let v = kstrtou32(&buf).ok_or(EINVAL)?;
    if !p.attr.in_range(v) {
        return Err(EINVAL);
    }
    let mut block = p.scc.block(p.algo).lock();
    let old = block.get(p.attr);
    block.set(p.attr, v);
    let r = p.scc.config(p.algo, &block);
    if r.is_err() {
        block.set(p.attr, old);
    }
    r
}

/// Read of `sw_stat/sw_stat` (`sw_stat_debugfs_show`).
fn show_sw_stat(cmd: &Arc<Cmd>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    cmd.state().sw_stat().show(f)
}

/// What the files of one function's directory point to.
struct Files {
    /// The function's command interface, whose counters `sw_stat` shows.
    cmd: Arc<Cmd>,
    /// One entry per parameter file, grouped by algorithm.
    params: KVec<ParamFile>,
    /// The record doorbells of the function, for `db_records`.
    db: Option<DbRecords>,
}

/// The parameter files of the algorithms in `cong_cap`, in directory order.
fn param_files(scc: &Arc<Scc>, cong_cap: u32) -> Result<KVec<ParamFile>> {
    let mut v = KVec::new();
    for algo in Algo::ALL.into_iter().filter(|a| a.supported(cong_cap)) {
        for attr in algo.params() {
            v.push(
                ParamFile {
                    scc: scc.clone(),
                    algo,
                    attr,
                },
                GFP_KERNEL,
            )?;
        }
    }
    Ok(v)
}

/// Fills the directory of a function: `sw_stat/`, then one subdirectory
/// per algorithm that has files.
fn populate<'data>(files: &'data Files, dir: &ScopedDir<'data, '_>) {
    dir.dir(c"sw_stat")
        .read_callback_file(c"sw_stat", &files.cmd, &show_sw_stat);
    if let Some(db) = &files.db {
        dir.read_callback_file(c"db_records", db, &show_db_records);
    }
    for algo in Algo::ALL {
        let mut it = files.params.iter().filter(|p| p.algo == algo).peekable();
        if it.peek().is_none() {
            continue;
        }
        let sub = dir.dir(algo.dir_name());
        for p in it {
            sub.read_write_callback_file(p.attr.name, p, &show, &store);
        }
    }
}

/// The debugfs directory of one function; dropping it removes the
/// directory (`hns_roce_unregister_debugfs`).
pub(crate) struct DevDebugfs {
    /// The directory tree and the data its files point to.
    _scope: Pin<KBox<Scope<Files>>>,
}

impl DevDebugfs {
    /// Creates `hns_roce/<pci name>/` for the function behind `h`
    /// (`hns_roce_register_debugfs`), called once its ib_device is
    /// registered. Like C, failures only leave parts out: `None` if not even
    /// the directory could be made.
    pub(crate) fn register(
        root: &Root,
        h: &Hnae3Handle,
        cmd: &Arc<Cmd>,
        caps: &Caps,
        db: Option<DbRecords>,
    ) -> Option<Self> {
        let id = h.pci_ident();
        let cc = HwRev::from_pci(id.revision) > HwRev::HIP08
            && caps.flags & cap_flag::QP_FLOW_CTRL != 0
            && id.device != DEV_ID_RDMA_DCB_PFC_VF;
        let mut params = KVec::new();
        if cc {
            if let Ok(scc) = Scc::new(cmd) {
                scc.query_defaults();
                params = param_files(&scc, caps.cong_cap).unwrap_or_else(|_| KVec::new());
            }
        }
        let files = Files {
            cmd: cmd.clone(),
            params,
            db,
        };
        let init = root.dir.scope(files, h.pci_name(), populate);
        KBox::pin_init(init, GFP_KERNEL)
            .ok()
            .map(|s| DevDebugfs { _scope: s })
    }
}
