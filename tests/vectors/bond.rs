// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! RoCE bonding command payloads as the C driver sent them.
//!
//! The words are the `cmq > op=860x` descriptors of `hns-roce-hw-v2.ko` in
//! the hns-sim traces of `scripts/bond-run.sh c`: an
//! active-backup bond of functions 0 and 1, its failover to function 1, an
//! 802.3ad layer 2 bond, a balance-xor layer 3+4 bond, its failover, a
//! third slave (function 2), and the clear. The driver's bookkeeping must give the same words for
//! the same bond.

use super::{expect, Check};
use crate::bond::{Cmd, Group, HashType, TxType};
use crate::cmdq::desc::Payload;

/// `(command, tx, hash, slave mask, active mask, payload words)`.
type Vector = (Cmd, TxType, HashType, u32, u32, [u32; 6]);

/// The C driver's descriptors.
const C_BOND: [Vector; 8] = [
    (
        Cmd::Set,
        TxType::ActiveBackup,
        HashType::None,
        0x3,
        0x1,
        [0, 0, 1, 1, 3, 0],
    ),
    (
        Cmd::Set,
        TxType::ActiveBackup,
        HashType::None,
        0x3,
        0x2,
        [0, 0, 1, 2, 3, 0],
    ),
    (
        Cmd::Change,
        TxType::ActiveBackup,
        HashType::None,
        0x3,
        0x2,
        [0, 0, 1, 2, 3, 0],
    ),
    (
        Cmd::Set,
        TxType::Hash,
        HashType::L2,
        0x3,
        0x3,
        [0, 1, 2, 3, 3, 0],
    ),
    (
        Cmd::Set,
        TxType::Hash,
        HashType::L34,
        0x3,
        0x3,
        [0, 1, 2, 3, 3, 1],
    ),
    (
        Cmd::Change,
        TxType::Hash,
        HashType::L34,
        0x3,
        0x2,
        [0, 1, 1, 2, 3, 1],
    ),
    (
        Cmd::Change,
        TxType::Hash,
        HashType::L34,
        0x7,
        0x7,
        [0, 1, 3, 7, 7, 1],
    ),
    (
        Cmd::Clear,
        TxType::Hash,
        HashType::L34,
        0x3,
        0x3,
        [0, 0, 0, 0, 0, 0],
    ),
];

/// The payloads of SET_BOND_INFO, CHANGE_ACTIVE_PORT and CLEAR_BOND_INFO.
pub fn check_payloads() -> Check {
    for (cmd, tx, hash, slaves, active, words) in C_BOND {
        let mut g = Group::<u32, u32>::new(0, 0);
        g.tx = tx;
        g.hash = hash;
        g.slave_map = slaves;
        g.active_map = active;
        g.active_num = active.count_ones();
        let mut p = Payload::zeroed();
        g.write_cmd(cmd, &mut p);
        expect(*p.as_le_words() == words, "bond payload as C sent it")?;
    }
    expect(
        Cmd::Set.opcode() == 0x8601
            && Cmd::Clear.opcode() == 0x8602
            && Cmd::Change.opcode() == 0x8603,
        "bond opcodes",
    )
}
