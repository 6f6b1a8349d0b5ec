// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the loopback provider's queues (`tests/loopback/queue.rs`):
//! the FIFO, a WR's scatter list, and the scatter of a SEND's bytes over
//! the receive WR it lands in, checked byte for byte against a plain copy.

use hns_host_tests::loopback_queue::{scatter, Ring, Segs, Step, MAX_SGE};

fn ring(n: usize) -> Ring<u32, Vec<Option<u32>>> {
    Ring::new(vec![Some(7); n])
}

#[test]
fn ring_is_fifo_and_bounded() {
    let mut r = ring(3);
    assert!(r.is_empty() && r.pop().is_none(), "stale slots are dropped");
    assert_eq!(r.capacity(), 3);
    for v in 1..=3 {
        assert_eq!(r.push(v), Ok(()));
    }
    assert_eq!(r.push(4), Err(4), "full");
    assert_eq!(r.pop(), Some(1));
    assert_eq!(r.push(4), Ok(()), "wraps");
    assert_eq!(
        core::iter::from_fn(|| r.pop()).collect::<Vec<_>>(),
        [2, 3, 4]
    );
    assert!(r.is_empty());
}

#[test]
fn ring_of_no_slots_takes_nothing() {
    let mut r = ring(0);
    assert_eq!(r.push(1), Err(1));
    assert_eq!(r.pop(), None);
}

#[test]
fn ring_retain_keeps_order() {
    let mut r = ring(5);
    r.pop();
    for v in [1, 2, 3, 4, 5] {
        r.push(v).unwrap();
    }
    r.retain(|&v| v % 2 == 1);
    assert_eq!(
        core::iter::from_fn(|| r.pop()).collect::<Vec<_>>(),
        [1, 3, 5]
    );
    for v in [6, 7] {
        r.push(v).unwrap();
    }
    r.retain(|_| false);
    assert!(r.is_empty());
}

#[test]
fn segs_hold_at_most_max_sge() {
    let s = Segs::new([10u32, 20]).unwrap();
    assert_eq!(s.iter().copied().collect::<Vec<_>>(), [10, 20]);
    assert_eq!(s.get(1), Some(&20));
    assert_eq!(s.get(2), None);
    assert!(Segs::new(0..MAX_SGE as u32).is_some());
    assert!(Segs::new(0..MAX_SGE as u32 + 1).is_none());
    assert_eq!(
        Segs::new(core::iter::empty::<u32>())
            .unwrap()
            .iter()
            .count(),
        0
    );
}

/// Scatters a message of `src` segment lengths into `dst`, by the steps,
/// and checks the bytes against the message copied flat.
fn scatter_bytes(src: &[usize], dst: &[usize]) -> Option<usize> {
    let msg: Vec<Vec<u8>> = src
        .iter()
        .enumerate()
        .map(|(i, &l)| (0..l).map(|k| (i * 50 + k) as u8 ^ 0x5a).collect())
        .collect();
    let mut out: Vec<Vec<u8>> = dst.iter().map(|&l| vec![0; l]).collect();
    let mut steps = Vec::<Step>::new();
    let n = scatter(src, dst, |st| {
        out[st.dst][st.dst_off..st.dst_off + st.len]
            .copy_from_slice(&msg[st.src][st.src_off..st.src_off + st.len]);
        steps.push(st);
    });
    let flat_in: Vec<u8> = msg.concat();
    let flat_out: Vec<u8> = out.concat();
    match n {
        Some(n) => {
            assert_eq!(n, flat_in.len());
            assert_eq!(&flat_out[..n], &flat_in[..], "{src:?} -> {dst:?}");
            assert!(
                flat_out[n..].iter().all(|&b| b == 0),
                "nothing past the message"
            );
            assert!(steps.iter().all(|s| s.len > 0), "no empty step");
        }
        None => {
            assert!(steps.is_empty(), "a message too long copies nothing");
            assert!(flat_out.iter().all(|&b| b == 0));
        }
    }
    n
}

#[test]
fn scatter_fits_and_splits() {
    assert_eq!(scatter_bytes(&[10], &[10]), Some(10));
    assert_eq!(scatter_bytes(&[3, 7], &[4096]), Some(10));
    assert_eq!(scatter_bytes(&[10], &[4, 4, 2]), Some(10));
    assert_eq!(scatter_bytes(&[5, 5, 5], &[7, 1, 100]), Some(15));
    assert_eq!(scatter_bytes(&[0, 6, 0], &[0, 3, 0, 3]), Some(6));
    assert_eq!(scatter_bytes(&[], &[8]), Some(0));
    assert_eq!(scatter_bytes(&[], &[]), Some(0));
}

#[test]
fn scatter_refuses_too_long() {
    assert_eq!(scatter_bytes(&[11], &[10]), None);
    assert_eq!(scatter_bytes(&[4, 4], &[3, 4]), None);
    assert_eq!(scatter_bytes(&[1], &[]), None);
}

#[test]
fn scatter_steps_are_in_order() {
    let mut steps = Vec::new();
    scatter(&[6, 2], &[4, 4], |s| steps.push(s));
    let st = |src, src_off, dst, dst_off, len| Step {
        src,
        src_off,
        dst,
        dst_off,
        len,
    };
    assert_eq!(
        steps,
        [st(0, 0, 0, 0, 4), st(0, 4, 1, 0, 2), st(1, 0, 1, 2, 2)]
    );
}

#[test]
fn scatter_every_small_split() {
    // Every split of up to 12 bytes into up to three source segments,
    // against a few receive layouts.
    let dsts: [&[usize]; 4] = [&[12], &[5, 7], &[1, 1, 10], &[4, 0, 4, 4]];
    for a in 0..=12usize {
        for b in 0..=12 - a {
            for c in 0..=12 - a - b {
                for d in dsts {
                    let got = scatter_bytes(&[a, b, c], d);
                    let room: usize = d.iter().sum();
                    assert_eq!(got.is_some(), a + b + c <= room);
                }
            }
        }
    }
}
