// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The driver's capability decoder against hns-sim's encoder: the model
//! answers QUERY_PF_CAPS_NUM / QUERY_PF_RES / QUERY_PF_TIMER_RES from its
//! caps table, the driver decodes them, and every value must come back as
//! the C driver would derive it from that table.

use hns_host_tests::hns_roce_hw_v2::caps::{
    apply_pf_res, apply_timer_res, parse_pf_caps, CapsError, PAGE_SIZE_SUPPORTED,
};
use hns_sim::caps::Caps as SimCaps;

mod common;
use common::query;

fn check(c: &SimCaps) {
    let caps = query(c, 0x8408, 6);
    let mut p = parse_pf_caps(&caps, 4096).expect("decodes");
    apply_pf_res(&mut p, &query(c, 0x8400, 2), c.func_num).expect("decodes");
    apply_timer_res(&mut p, &query(c, 0x8406, 1)[0]);
    let pow = |x: u32| 1u32 << x;
    let r2 = |x: u32| if x == 0 { 0 } else { x.next_power_of_two() };
    assert_eq!(p.max_sq_sg, u32::from(c.max_sq_sg));
    assert_eq!(p.max_sq_inline, u32::from(c.max_sq_inline));
    assert_eq!(p.max_rq_sg, r2(u32::from(c.max_rq_sg)));
    assert_eq!(p.max_srq_sges, r2(u32::from(c.max_srq_sges)));
    assert_eq!(p.num_aeq_vectors, u32::from(c.num_aeq_vectors));
    assert_eq!(p.num_other_vectors, u32::from(c.num_other_vectors));
    assert_eq!(p.max_sq_desc_sz, u32::from(c.max_sq_desc_sz));
    assert_eq!(p.max_rq_desc_sz, u32::from(c.max_rq_desc_sz));
    assert_eq!(p.cqe_sz, u32::from(c.cqe_sz));
    assert_eq!(p.mtpt_entry_sz, u32::from(c.mtpt_entry_sz));
    assert_eq!(p.irrl_entry_sz, u32::from(c.irrl_entry_sz));
    assert_eq!(p.trrl_entry_sz, u32::from(c.trrl_entry_sz));
    assert_eq!(p.cqc_entry_sz, u32::from(c.cqc_entry_sz));
    assert_eq!(p.srqc_entry_sz, u32::from(c.srqc_entry_sz));
    assert_eq!(p.idx_entry_sz, u32::from(c.idx_entry_sz));
    assert_eq!(p.sccc_sz, u32::from(c.sccc_sz));
    assert_eq!(p.max_mtu, u32::from(c.max_mtu));
    assert_eq!(p.qpc_sz, u32::from(c.qpc_sz));
    assert_eq!(p.min_cqes, u32::from(c.min_cqes));
    assert_eq!(p.min_wqes, u32::from(c.min_wqes));
    let psc = if c.page_size_cap & 4096 == 0 {
        PAGE_SIZE_SUPPORTED
    } else {
        c.page_size_cap
    };
    assert_eq!(p.page_size_cap, psc);
    assert_eq!(p.pkey_table_len, u32::from(c.pkey_table_len));
    assert_eq!(p.phy_num_uars, u32::from(c.phy_num_uars));
    assert_eq!(p.ctx_hop_num, u32::from(c.ctx_hop_num));
    assert_eq!(p.pbl_hop_num, u32::from(c.pbl_hop_num));
    assert_eq!(p.flags, c.cap_flags);
    assert_eq!(p.num_pds, pow(c.num_pds_log));
    assert_eq!(p.num_cqs, pow(c.num_cqs_log));
    assert_eq!(p.gid_table_len, c.max_gid);
    assert_eq!(p.max_cqes, pow(c.cq_depth_log));
    assert_eq!(p.num_xrcds, pow(c.num_xrcds_log));
    assert_eq!(p.num_mtpts, pow(c.num_mrws_log));
    assert_eq!(p.num_qps, pow(c.num_qps_log));
    assert_eq!(
        (p.max_qp_init_rdma, p.max_qp_dest_rdma),
        (c.max_ord, c.max_ord)
    );
    assert_eq!(p.max_wqes, pow(u32::from(c.sq_depth_log)));
    assert_eq!(p.num_srqs, pow(c.num_srqs_log));
    assert_eq!(
        (p.wqe_rq_hop_num, p.wqe_sge_hop_num, p.wqe_sq_hop_num),
        (c.rqwqe_hop_num, c.ex_sge_hop_num, c.sqwqe_hop_num)
    );
    assert_eq!(p.cong_cap, c.cong_cap);
    assert_eq!(p.max_srq_wrs, pow(u32::from(c.srq_depth_log)));
    assert_eq!(p.ceqe_depth, pow(c.ceq_depth_log));
    assert_eq!(p.num_comp_vectors, c.num_ceqs);
    assert_eq!(p.aeqe_depth, pow(c.aeq_depth_log));
    assert_eq!(p.default_cong_type, c.default_alg);
    assert_eq!(p.reserved_pds, c.rsv_pds);
    assert_eq!(p.num_uars, pow(c.num_uars_log));
    assert_eq!(p.reserved_qps, c.rsv_qps);
    assert_eq!(p.reserved_uars, c.rsv_uars);
    assert_eq!(p.reserved_mrws, c.rsv_mrws);
    assert_eq!(p.chunk_sz, pow(c.chunk_size_shift));
    assert_eq!(p.reserved_cqs, c.rsv_cqs);
    assert_eq!(p.reserved_xrcds, c.rsv_xrcds);
    assert_eq!(p.reserved_srqs, c.rsv_srqs);
    assert_eq!(p.reserved_lkey, c.rsv_lkeys);
    assert_eq!(p.max_ack_req_msg_len, c.max_ack_req_msg_len);
    let n = c.func_num;
    assert_eq!(p.qpc_bt_num, c.qpc_bt_num / n);
    assert_eq!(p.srqc_bt_num, c.srqc_bt_num / n);
    assert_eq!(p.cqc_bt_num, c.cqc_bt_num / n);
    assert_eq!(p.mpt_bt_num, c.mpt_bt_num / n);
    assert_eq!(p.eqc_bt_num, c.eqc_bt_num / n);
    assert_eq!(p.sl_num, c.qid_num / n);
    assert_eq!(p.sccc_bt_num, c.sccc_bt_num / n);
    assert_eq!(p.gmv_bt_num, c.gmv_bt_num / n);
    assert_eq!(
        (p.qpc_timer_bt_num, p.cqc_timer_bt_num),
        (c.qpc_timer_num, c.cqc_timer_num)
    );
}

#[test]
fn hand_written_answer() {
    assert_eq!(hns_host_tests::vectors::caps::check_decode(), Ok(()));
}

#[test]
fn hand_written_derived_and_commands() {
    assert_eq!(
        hns_host_tests::vectors::caps::check_derived_and_commands(),
        Ok(())
    );
}

#[test]
fn default_caps_decode_like_the_c_driver() {
    check(&SimCaps::default());
}

#[test]
fn unusual_caps_decode_like_the_c_driver() {
    // Every field different from the defaults, odd SGE counts that get
    // rounded up, two functions sharing the BTs, a page-size mask
    // without 4 KiB.
    let c = SimCaps {
        func_num: 2,
        max_sq_sg: 33,
        max_rq_sg: 5,
        max_srq_sges: 17,
        max_sq_inline: 1024,
        num_aeq_vectors: 2,
        num_other_vectors: 3,
        cqe_sz: 32,
        qpc_sz: 256,
        page_size_cap: 0xffff_0000,
        ctx_hop_num: 2,
        pbl_hop_num: 0xff,
        cap_flags: 0xfff | 1 << 12 | 1 << 23,
        num_pds_log: 19,
        num_cqs_log: 17,
        max_gid: 511,
        cq_depth_log: 22,
        num_xrcds_log: 31,
        num_mrws_log: 20,
        num_qps_log: 19,
        max_ord: 255,
        sq_depth_log: 15,
        num_srqs_log: 18,
        rqwqe_hop_num: 3,
        ex_sge_hop_num: 0,
        sqwqe_hop_num: 1,
        cong_cap: 15,
        srq_depth_log: 13,
        ceq_depth_log: 21,
        num_ceqs: 1023,
        aeq_depth_log: 20,
        default_alg: 63,
        rsv_pds: 0xf_ffff,
        num_uars_log: 31,
        rsv_qps: 0xf_fffe,
        rsv_uars: 255,
        rsv_mrws: 0xf_fffd,
        chunk_size_shift: 31,
        rsv_cqs: 0xf_fffc,
        rsv_xrcds: 0xfff,
        rsv_srqs: 0xf_fffb,
        rsv_lkeys: 0xf_fffa,
        max_ack_req_msg_len: 0xdead_beef,
        qpc_bt_num: 0xfff,
        srqc_bt_num: 0x3ff,
        cqc_bt_num: 0x3fe,
        mpt_bt_num: 0x3fd,
        eqc_bt_num: 0x3fc,
        qid_num: 0x7ff,
        sccc_bt_num: 0x1ff,
        gmv_bt_num: 0x1fe,
        qpc_timer_num: 0x1fff,
        cqc_timer_num: 0xfff,
        ..SimCaps::default()
    };
    check(&c);
}

#[test]
fn short_answers_are_rejected() {
    let caps = query(&SimCaps::default(), 0x8408, 6);
    assert_eq!(
        parse_pf_caps(&caps[..4], 4096),
        Err(CapsError::TooFewDescriptors)
    );
    let mut p = parse_pf_caps(&caps, 4096).unwrap();
    let res = query(&SimCaps::default(), 0x8400, 2);
    assert_eq!(
        apply_pf_res(&mut p, &res, 0),
        Err(CapsError::BadValue("func_num"))
    );
    assert_eq!(
        apply_pf_res(&mut p, &res[..1], 1),
        Err(CapsError::TooFewDescriptors)
    );
}

#[test]
fn hip08_has_no_sixth_descriptor() {
    let caps = query(&SimCaps::default(), 0x8408, 5);
    assert_eq!(parse_pf_caps(&caps, 4096).unwrap().max_ack_req_msg_len, 0);
}
