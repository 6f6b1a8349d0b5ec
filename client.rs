// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The hnae3 RoCE client (C's `hns_roce_hw_v2_client`): which functions
//! are RoCE functions, the bring-up of one (the engine, then the ib_device
//! `hns_N`: [`Driver::init_instance`]), its teardown, and the link, reset
//! and bonding events the HNS3 NIC driver forwards. [`Driver`] is the
//! module's state, which the client's registration keeps and hands to
//! every callback; [`HnsRoceDev`] is the state of one function, torn down
//! by dropping it.

use crate::device::IbDev;
use crate::hns_roce_hw_v2::consts::cap_flag;
use crate::hw_rev::HwRev;
use crate::rdma::{
    self, ClientRef, Clients, Hnae3Handle, IbParams, IbRegistration, RoceClient, Uninit,
};
use crate::{bond, debugfs, hns_roce_hw_v2};
use kernel::{prelude::*, sync::Arc};

// No PCI aliases: the C driver carries them and udev loads it for every
// RoCE function. This module is loaded on purpose (docs/deploy.md), since
// hnae3 serves one RoCE client and two would fight over the functions.

/// The C driver of the same functions, which this module refuses to let
/// start while it is the hnae3 RoCE client (hnae3 would accept its client
/// as a no-op, and its unload would then tear down this module's
/// instances).
const C_DRIVER: &CStr = c"hns_roce_hw_v2";

/// PCI vendor ID of HiSilicon.
const PCI_VENDOR_ID_HUAWEI: u16 = 0x19e5;

/// RoCE-capable HNS3 functions, as in the C driver's PCI table. The flag
/// (C's `driver_data`) marks the DCB/PFC VF, which has RoCE only from
/// HIP09 on.
const HNS_ROCE_PCI_IDS: &[(u16, bool)] = &[
    (0xa222, false),
    (0xa223, false),
    (0xa224, false),
    (0xa225, false),
    (0xa226, false),
    (0xa228, false),
    (0xa22f, true),
];

/// Whether this driver handles the function: a RoCE ID, and not a HIP09-only
/// ID on a HIP08 revision.
fn is_roce_function(id: rdma::PciIdent) -> bool {
    id.vendor == PCI_VENDOR_ID_HUAWEI
        && HNS_ROCE_PCI_IDS.iter().any(|&(dev, hip09_only)| {
            dev == id.device && !(hip09_only && HwRev::from_pci(id.revision).is_hip08())
        })
}

/// Whether the function is a VF (C's `is_vf`, the PCI table's flag).
fn is_vf(id: rdma::PciIdent) -> bool {
    HNS_ROCE_PCI_IDS
        .iter()
        .any(|&(dev, vf)| vf && dev == id.device)
}

/// The driver's state for one RoCE function, torn down by dropping it:
/// fields drop in declaration order, so debugfs goes first, then the
/// ib_device, then the engine state it uses (`HwV2`'s `Drop`).
pub(crate) struct HnsRoceDev {
    // Held for its `Drop` (removes the directory).
    _dbgfs: Option<debugfs::DevDebugfs>,
    /// The registered ib_device (the bond groups set its netdev).
    pub(crate) ib: IbRegistration<IbDev>,
    // Held for its `Drop` (`hns_roce_v2_exit`).
    _engine: Engine,
    /// The engine: command queue, caps, CQ/QP tables (the bond groups
    /// send through its queue).
    pub(crate) hw: KBox<hns_roce_hw_v2::HwV2>,
}

/// What `hw_init` built, torn down in C's `hw_exit` order: the free-MR
/// objects, then the function clear and the link table.
struct Engine {
    _free_mr: FreeMrGuard,
    _init: hns_roce_hw_v2::HwInit,
}

/// Destroys HIP08's free-MR objects when dropped (none on HIP09).
struct FreeMrGuard(Arc<IbDev>);

impl Drop for FreeMrGuard {
    fn drop(&mut self) {
        self.0.exit_free_mr();
    }
}

/// The module's state: what the C driver keeps in globals (the bond
/// groups of every die, the debugfs root). Fields drop in declaration
/// order, so the (by then empty) bond registry goes before the debugfs
/// directory, as C's module exit cleans up.
#[pin_data]
pub(crate) struct Driver {
    /// Every die's bond groups.
    #[pin]
    pub(crate) bonds: bond::groups::Registry,
    /// `<debugfs>/hns_roce`.
    pub(crate) debugfs: debugfs::Root,
}

/// The driver's state as the client's registration keeps it, with the
/// client's locks.
pub(crate) type HnsClient = rdma::Client<Driver>;

impl Driver {
    /// The module's state at load: the debugfs root first, then an empty
    /// bond registry.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Driver {
            debugfs: debugfs::Root::create(),
            bonds <- bond::groups::Registry::new(),
        }? Error)
    }
}

impl RoceClient for Driver {
    type Instance = HnsRoceDev;

    fn init_instance(
        this: ClientRef<'_, Self>,
        handle: &Hnae3Handle,
        reset: bool,
    ) -> Result<Option<KBox<HnsRoceDev>>> {
        let id = handle.pci_ident();
        if !is_roce_function(id) {
            return Ok(None);
        }
        // C's two lines: the first once the engine's init failed and undid
        // what it built, the second once the instance is freed.
        let engine_failed = || hdev_err!(handle.device(), "RoCE Engine init failed!\n");
        let instance_failed = |e: Error| {
            hdev_err!(
                handle.device(),
                "RoCE instance init failed! ret = {}\n",
                e.to_errno()
            );
            e
        };
        let hw = KBox::try_init(
            hns_roce_hw_v2::HwV2::new(handle, HwRev::from_pci(id.revision), is_vf(id)),
            GFP_KERNEL,
        )
        .map_err(|e| {
            engine_failed();
            instance_failed(e)
        })?;
        let mut records = None;
        let reg = IbDev::new(handle, &hw, this.into()).and_then(|ib| {
            records = Some(ib.dbs.records());
            // The rest of C's `hw_init`: the free-MR objects first, then
            // the engine's own steps.
            ib.init_free_mr()
                .inspect_err(|_| hdev_err!(handle.device(), "hw_init failed!\n"))?;
            let free_mr = FreeMrGuard(ib.clone());
            let engine = Engine {
                _init: hns_roce_hw_v2::HwInit::new(handle, &hw)?,
                _free_mr: free_mr,
            };
            // The registration takes `ib`; its MAC is written after.
            let for_mac = ib.clone();
            let c = &hw.profile.caps;
            let mut p = IbParams {
                name: c"hns_%d",
                node_type: rdma::NODE_IB_CA,
                node_guid: rdma::eui48_guid(&handle.netdev_mac()),
                num_comp_vectors: c.num_comp_vectors,
                local_dma_lkey: c.reserved_lkey,
                // RoCE, and RoCE v2 (UDP encapsulation) if the engine
                // does both versions.
                core_cap_flags: rdma::CORE_PORT_IBA_ROCE
                    | if c.flags & cap_flag::ROCE_V1_V2 != 0 {
                        rdma::CORE_PORT_IBA_ROCE_UDP_ENCAP
                    } else {
                        0
                    },
                max_mad_size: rdma::MGMT_MAD_SIZE,
                pkey: crate::device::PKEY_ID,
                xrc: c.flags & cap_flag::XRC != 0,
                srq: c.flags & cap_flag::SRQ != 0,
                // No hardware counters on HIP08 or on a VF.
                hw_stats: (hw.profile.rev.is_hip09() && !hw.profile.is_vf)
                    .then(|| crate::device::HW_STATS.table()),
                frmr: c.flags & cap_flag::FRMR != 0,
                rereg: c.flags & cap_flag::REREG_MR != 0,
                bond_cap: c.flags & cap_flag::BOND != 0,
                vf: hw.profile.is_vf,
                bond: if c.flags & cap_flag::BOND != 0 {
                    bond::groups::alloc_groups(this, handle, &hw.cmd).inspect_err(|e| {
                        hdev_err!(
                            handle.device(),
                            "failed to alloc bond_grp for bus {}, ret = {}\n",
                            handle.bus_func().0,
                            e.to_errno()
                        );
                    })?;
                    bond::groups::reg_params(&this.bonds, handle, reset.then_some(&*hw.cmd))
                        .inspect_err(|e| {
                            hdev_err!(
                                handle.device(),
                                "failed to recover RoCE bond",
                                ret = e.to_errno()
                            );
                            hdev_err!(handle.device(), "failed to init bond!\n");
                        })?
                } else {
                    None
                },
            };
            if p.bond.is_some() {
                p.name = c"hns_bond_%d";
            }
            let reg = IbRegistration::register(handle, ib, &p)?;
            // HIP08 keeps the port's MAC in its SMAC table, written once
            // the device is registered (`hns_roce_setup_mtu_mac`) and again
            // when the netdev's address changes (the notifier); a failure
            // of either unregisters the device again.
            for_mac.set_mac(&handle.netdev_mac()).inspect_err(|_| {
                hdev_err!(handle.device(), "setup_mtu_mac failed!\n");
            })?;
            reg.watch_netdev().inspect_err(|_| {
                hdev_err!(handle.device(), "register_netdevice_notifier failed!\n");
            })?;
            Ok((reg, engine))
        });
        let (reg, engine) = match reg {
            Ok(r) => r,
            Err(e) => {
                // `hw` unwinds through its `Drop` first: C prints after
                // `hns_roce_init` undid what it built.
                drop(hw);
                engine_failed();
                return Err(instance_failed(e));
            }
        };
        hw.cmd.state().set_active();
        let dbgfs = debugfs::DevDebugfs::register(
            &this.debugfs,
            handle,
            &hw.cmd,
            &hw.profile.caps,
            records,
        );
        // The instance is up (C's `HNS_ROCE_STATE_INITED`, set after the
        // debugfs parameters are read): a timeout no longer kills the queue.
        hw.cmd.ring().with_cmq(|q| q.init_done());
        Ok(Some(KBox::new(
            HnsRoceDev {
                _dbgfs: dbgfs,
                ib: reg,
                _engine: engine,
                hw,
            },
            GFP_KERNEL,
        )?))
    }

    fn uninit_instance(
        &self,
        cl: &mut Clients<'_, Self>,
        handle: &Hnae3Handle,
        inst: KBox<HnsRoceDev>,
        how: Uninit,
    ) {
        // The hnae3 core removing a bonded device: the other members come
        // back first (`hns_roce_unregister_bond_cleanup`).
        if matches!(how, Uninit::Remove { .. }) && inst.hw.profile.caps.flags & cap_flag::BOND != 0
        {
            bond::groups::unregister_cleanup(cl, handle, &inst);
        }
        // C's UNINIT state and `hns_roce_handle_device_err`: kernel users
        // with outstanding WRs get their completion handlers run, and
        // polls answer flush completions from the WR-id rings, before the
        // ib_device goes (its clients destroy their QPs then).
        let objs = &inst.hw.objs;
        inst.hw.cmd.state().set_uninit();
        objs.cqs.handle_device_err(&objs.qps);
        drop(inst);
    }

    fn link_status_change(&self, handle: &Hnae3Handle, inst: Option<&HnsRoceDev>, up: bool) {
        // Only a link going down is reported; the RDMA core's netdev
        // notifier reports it as well and drops the duplicate.
        if up {
            return;
        }
        // A bonded port's state is the upper's, not this link's.
        let bonded = inst.is_some_and(|i| i.hw.profile.caps.flags & cap_flag::BOND != 0);
        if bonded && bond::groups::claims(&self.bonds, handle) {
            return;
        }
        if let Some(reg) = inst.map(|i| &i.ib) {
            reg.port_state_event(handle);
        }
    }

    fn reset_down(&self, _handle: &Hnae3Handle, inst: &HnsRoceDev) {
        inst.hw.cmd.state().set_reset_down();
        inst.ib.disassociate_mmaps();
    }

    fn suspend(&self, handle: &Hnae3Handle) {
        bond::groups::suspend(&self.bonds, handle);
    }

    fn resume(&self, handle: &Hnae3Handle) {
        bond::groups::resume(&self.bonds, handle);
    }

    fn removed(&self, handle: &Hnae3Handle) {
        bond::groups::forget(&self.bonds, handle);
    }

    fn unregistered(&self) {
        self.bonds.teardown();
    }

    fn module_coming(&self, name: &CStr) -> Result {
        if name != C_DRIVER {
            return Ok(());
        }
        pr_err!("refusing to load hns_roce_hw_v2: hns_roce_rs is the hnae3 RoCE client (unload it first)\n");
        Err(EBUSY)
    }
}
