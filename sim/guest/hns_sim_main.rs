// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! hns_sim: guest glue for the hns-sim device model.
//!
//! Binds QEMU's ivshmem-doorbell function (1af4:1110), enables it with
//! 64-bit DMA and MSI-X, and hands it to the C half (`hns_sim_glue.c`),
//! which presents it to the hnae3 framework as a HIP09 RoCE function. All
//! device behaviour lives in the host-side `hns-sim`.

use kernel::{
    device::Core,
    dma::{Device as _, DmaMask},
    ffi::{c_int, c_uint, c_void},
    pci,
    prelude::*,
    types::Opaque, //
};

mod glue {
    use super::*;

    extern "C" {
        pub(super) fn hns_sim_glue_init() -> c_int;
        pub(super) fn hns_sim_glue_exit();
        pub(super) fn hns_sim_glue_attach(
            pdev: *mut c_void,
            ae_dev: *mut c_void,
            num_vectors: c_uint,
        ) -> c_int;
        pub(super) fn hns_sim_glue_detach(pdev: *mut c_void);
    }
}

/// PCI device ID of ivshmem.
const PCI_DEVICE_ID_IVSHMEM: u32 = 0x1110;
/// MSI-X vectors the RoCE function needs at least (abnormal, AEQ, CEQ).
const MIN_VECTORS: u32 = 3;
/// MSI-X vectors we take at most.
const MAX_VECTORS: u32 = 32;

/// Bytes reserved for the C `struct hnae3_ae_dev` (`HNS_SIM_AE_DEV_SPACE`
/// in `hns_sim_glue.h`; the C side checks it is enough at build time).
const AE_DEV_SPACE: usize = 2048;

/// Storage for the C `struct hnae3_ae_dev`, initialised by the C half.
#[repr(C, align(64))]
struct AeDevSpace(Opaque<[u8; AE_DEV_SPACE]>);

/// Per-device state. The PCI core's drvdata points at this struct, and the
/// hnae3 contract wants `pci_get_drvdata()` to be the ae_dev: so the ae_dev
/// is the first field of a `repr(C)` struct. The MSI-X vectors stay
/// allocated while bound.
#[repr(C)]
#[pin_data]
struct HnsSimData<'bound> {
    #[pin]
    ae_dev: AeDevSpace,
    _vectors: pci::IrqVectorRegistration<'bound>,
}

/// The PCI driver.
struct HnsSimDriver;

kernel::pci_device_table!(
    PCI_TABLE,
    <HnsSimDriver as pci::Driver>::IdInfo,
    [(
        pci::DeviceId::from_id(pci::Vendor::REDHAT_QUMRANET, PCI_DEVICE_ID_IVSHMEM),
        ()
    )]
);

/// The raw `struct pci_dev` behind a Rust PCI device, as the C half takes it.
fn raw_pdev<Ctx: kernel::device::DeviceContext>(pdev: &pci::Device<Ctx>) -> *mut c_void {
    // CAST: `pci::Device` is a transparent wrapper around `struct pci_dev`.
    core::ptr::from_ref(pdev).cast_mut().cast()
}

impl pci::Driver for HnsSimDriver {
    type IdInfo = ();
    type Data<'bound> = HnsSimData<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &PCI_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        _info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pin_init::pin_init_scope(move || {
            pdev.enable_device_mem()?;
            pdev.set_master();
            // SAFETY: no DMA mappings exist yet for this device.
            unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
            let msix = pci::IrqTypes::default().with(pci::IrqType::MsiX);
            let vectors = pdev
                .alloc_irq_vectors(MIN_VECTORS, MAX_VECTORS, msix)
                .inspect_err(|e| {
                    dev_err!(
                        pdev,
                        "need at least {} MSI-X vectors: {:?}\n",
                        MIN_VECTORS,
                        e
                    )
                })?;
            // CAST: at most `MAX_VECTORS`.
            let n = vectors.len() as c_uint;
            let raw = raw_pdev(pdev);
            // SAFETY: the closure initialises the slot completely on success
            // (the C half zeroes and fills the ae_dev) and leaves nothing to
            // drop on failure. The device is bound and has MSI-X for as long as
            // the data (and so `vectors`) lives; `unbind` detaches first.
            let ae_dev = unsafe {
                pin_init::pin_init_from_closure(move |slot: *mut AeDevSpace| {
                    kernel::error::to_result(glue::hns_sim_glue_attach(raw, slot.cast(), n))
                })
            };
            Ok(try_pin_init!(HnsSimData {
                ae_dev <- ae_dev,
                _vectors: vectors,
            }))
        })
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, _this: Pin<&Self::Data<'bound>>) {
        // SAFETY: attached in `probe`; the vectors are still allocated.
        unsafe { glue::hns_sim_glue_detach(raw_pdev(pdev)) };
    }
}

/// The module: the hnae3 ae_algo plus the PCI driver.
#[pin_data(PinnedDrop)]
struct HnsSimModule {
    #[pin]
    _driver: kernel::driver::Registration<pci::Adapter<HnsSimDriver>>,
}

impl kernel::InPlaceModule for HnsSimModule {
    fn init(module: &'static kernel::ThisModule) -> impl PinInit<Self, Error> {
        // SAFETY: called once at module load; undone in `drop`.
        let r = kernel::error::to_result(unsafe { glue::hns_sim_glue_init() });
        pin_init::pin_init_scope(move || {
            r?;
            Ok(try_pin_init!(HnsSimModule {
                _driver <- kernel::driver::Registration::new(c"hns_sim", module),
            }))
        })
    }
}

#[pinned_drop]
impl PinnedDrop for HnsSimModule {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered in `init`. The PCI driver is unregistered after
        // this (field drop), which is fine: with the ae_algo gone the hnae3
        // core no longer calls into our ae_devs.
        unsafe { glue::hns_sim_glue_exit() };
    }
}

module! {
    type: HnsSimModule,
    name: "hns_sim",
    authors: ["hns-roce-rs developers"],
    description: "Guest glue for the hns-sim HIP09 RoCE device model",
    license: "Dual BSD/GPL",
}
