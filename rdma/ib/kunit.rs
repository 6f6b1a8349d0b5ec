// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! KUnit suite of the per-object traits: the `ib_device_ops` entries a
//! driver gets follow what it implements.
//!
//! `Mini` is the smallest driver the layer takes (device/port, user
//! contexts, PDs, CQs and QPs; every other kind an empty impl); its
//! tables must leave every op of the other kinds NULL. (That a driver
//! implementing every kind gets every op is what the boots' equal traces
//! with the C driver show.)

use kernel::prelude::*;

#[kunit_tests(rdma_ib_ops)]
mod ops {
    use crate::rdma::ib::{gid::GidTable, qp::QpAhTable, IbAdapter};
    use crate::rdma::restrack::ResTable;
    use crate::rdma::{
        eui48_guid, uabi::Empty, CqOut, DevAttr, IbCq, IbLog, IbQp, NoObject, PortAttr, PostResult,
        QpAttr, QpInit, QpQuery, RecvChain, SendChain, UctxNew, UdataReq, UserCtx, WcArray,
    };
    use kernel::{prelude::*, sync::Arc};

    /// A driver of only the kinds a small provider needs.
    struct Mini {
        log: IbLog,
    }

    #[vtable]
    impl crate::rdma::DeviceOps for Mini {
        fn ib_log(&self) -> &IbLog {
            &self.log
        }

        fn query_device(&self, _a: &mut DevAttr) {}

        fn query_port(&self, _port: u32, _a: &mut PortAttr) {}
    }

    #[vtable]
    impl crate::rdma::UcontextOps for Mini {
        type Ucontext = ();
        type UctxReq = Empty;
        type UctxResp = Empty;

        fn alloc_ucontext(&self, _req: &Empty) -> Result<UctxNew<(), Empty>> {
            Err(ENODEV)
        }

        fn dealloc_ucontext(&self, _u: Arc<()>) {}
    }

    #[vtable]
    impl crate::rdma::PdOps for Mini {
        type PdResp = Empty;

        fn alloc_pd(&self) -> Result<(u32, Empty)> {
            Err(ENODEV)
        }

        fn dealloc_pd(&self, _pdn: u32) {}
    }

    #[vtable]
    impl crate::rdma::CqOps for Mini {
        type Cq = ();
        type CqReq = Empty;
        type CqResp = Empty;

        fn create_cq(
            &self,
            _cqe: u32,
            _vector: u32,
            _ibcq: IbCq,
            _user: Option<(UserCtx<'_, ()>, &UdataReq<Empty>)>,
        ) -> Result<(KBox<()>, CqOut<Empty>)> {
            Err(ENODEV)
        }

        fn destroy_cq(&self, _cq: KBox<()>) {}

        fn poll_cq(&self, _cq: &(), _wc: &mut WcArray<'_>) -> usize {
            0
        }

        fn req_notify_cq(&self, _cq: &(), _solicited: bool, _missed: bool) -> bool {
            false
        }
    }

    #[vtable]
    impl crate::rdma::QpOps for Mini {
        type Qp = ();
        type QpReq = Empty;
        type QpResp = Empty;
        type QpModifyResp = Empty;

        fn create_qp(
            &self,
            _init: &mut QpInit,
            _send_cq: Option<&()>,
            _recv_cq: Option<&()>,
            _ibqp: IbQp,
            _user: Option<(UserCtx<'_, ()>, &UdataReq<Empty>)>,
        ) -> Result<(Pin<KBox<()>>, u32, Empty)> {
            Err(ENODEV)
        }

        fn modify_qp(&self, _qp: &(), _a: &QpAttr) -> Result<Option<Empty>> {
            Err(ENODEV)
        }

        fn destroy_qp(&self, _qp: Pin<KBox<()>>) {}

        fn query_qp(&self, _qp: &(), _q: &mut QpQuery) -> Result {
            Err(ENODEV)
        }

        fn post_recv(&self, _qp: &(), _wrs: RecvChain<'_>) -> PostResult {
            Err((0, ENODEV))
        }

        fn qp_is_ud(&self, _qp: &()) -> bool {
            false
        }

        fn post_send(&self, _qp: &(), _wrs: SendChain<'_, NoObject>) -> PostResult {
            Err((0, ENODEV))
        }
    }

    #[vtable]
    impl crate::rdma::MrOps for Mini {
        type Mr = NoObject;
    }

    #[vtable]
    impl crate::rdma::SrqOps for Mini {
        type Srq = NoObject;
        type SrqReq = Empty;
        type SrqResp = Empty;
    }

    #[vtable]
    impl crate::rdma::XrcdOps for Mini {}

    #[vtable]
    impl crate::rdma::AhOps for Mini {
        type AhResp = Empty;
    }

    #[vtable]
    impl crate::rdma::CounterOps for Mini {}

    #[vtable]
    impl crate::rdma::RestrackOps for Mini {}

    /// The kinds `Mini` has are set; the optional ops it lacks are NULL.
    #[test]
    fn small_driver_tables() {
        let dp = &IbAdapter::<Mini>::DATAPATH;
        assert!(dp.post_send.is_some() && dp.post_recv.is_some() && dp.poll_cq.is_some());
        assert!(dp.drain_sq.is_none() && dp.drain_rq.is_none());
        let cq = &IbAdapter::<Mini>::CQ;
        assert!(cq.create_cq.is_some() && cq.destroy_cq.is_some());
        assert!(cq.modify_cq.is_none());
        let mr = &IbAdapter::<Mini>::MR;
        assert!(mr.get_dma_mr.is_none() && mr.reg_user_mr.is_none() && mr.dereg_mr.is_none());
        assert!(IbAdapter::<Mini>::DEV.get_dev_fw_str.is_none());
        assert!(IbAdapter::<Mini>::DEV.query_device.is_some());
        let gid = &GidTable::<Mini>::OPS;
        assert!(gid.add_gid.is_none() && gid.del_gid.is_none());
        let qp = &QpAhTable::<Mini>::OPS;
        assert!(qp.create_qp.is_some() && qp.modify_qp.is_some());
        assert!(qp.create_ah.is_none() && qp.create_user_ah.is_none());
        assert!(qp.query_ah.is_none() && qp.destroy_ah.is_none());
        let res = &ResTable::<Mini>::OPS;
        assert!(res.fill_res_cq_entry.is_none() && res.fill_res_qp_entry_raw.is_none());
        assert!(res.fill_res_mr_entry.is_none());
    }

    /// The node GUID of a MAC (`addrconf_addr_eui48`).
    #[test]
    fn eui48() {
        assert_eq!(
            eui48_guid(&[0x00, 0x18, 0x2d, 0x01, 0x02, 0x03]),
            [0x02, 0x18, 0x2d, 0xff, 0xfe, 0x01, 0x02, 0x03]
        );
        assert_eq!(
            eui48_guid(&[0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]),
            [0x00, 0xaa, 0xbb, 0xff, 0xfe, 0xcc, 0xdd, 0xee]
        );
    }
}
