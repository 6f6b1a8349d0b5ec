// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! What several host test files share: hns-sim answering the driver's
//! capability queries.

use hns_host_tests::cmdq::desc::Desc;
use hns_sim::caps::Caps as SimCaps;
use hns_sim::cmq::{flag, Desc as SimDesc};
use hns_sim::fw::Firmware;
use hns_sim::mem::{BadDma, Dma};
use hns_sim::trace::Trace;

/// The capability queries touch no memory.
struct NoMem;

impl Dma for NoMem {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), BadDma> {
        Err(BadDma {
            addr,
            len: buf.len(),
        })
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadDma> {
        Err(BadDma {
            addr,
            len: data.len(),
        })
    }
}

/// hns-sim's answer to a capability query, as the driver's descriptors.
pub fn query(c: &SimCaps, opcode: u16, n: usize) -> Vec<Desc> {
    let mut fw = Firmware::new(c.clone(), vec![], Trace::discard());
    let mut d: Vec<SimDesc> = (0..n)
        .map(|i| SimDesc {
            opcode,
            flag: flag::IN | flag::WR | if i + 1 < n { flag::NEXT } else { 0 },
            ..Default::default()
        })
        .collect();
    fw.execute(&NoMem, &mut d);
    d.iter()
        .map(|x| {
            let b = x.to_bytes();
            let mut w = [0u32; 8];
            for (i, v) in w.iter_mut().enumerate() {
                *v = u32::from_ne_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
            }
            Desc::from_le_words(&w)
        })
        .collect()
}
