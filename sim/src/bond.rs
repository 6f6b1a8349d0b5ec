// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! RoCE bonding on the model's side: the payload of the three bond
//! commands (`struct hns_roce_bond_info`), the chip-wide bond table the
//! functions of one hns-sim process share, and the rule a message between
//! two functions follows when ports are down or bonded.
//!
//! What the real firmware does with SET_BOND_INFO, CHANGE_ACTIVE_PORT and
//! CLEAR_BOND_INFO is not public: the checks and the routing here are the
//! model's own (docs/hns-sim.md, "Bonding").

use std::collections::BTreeMap;

/// Where a function sits on PCI: bus number and `devfn` (slot << 3 |
/// function). The bond masks are bits of the function number
/// (`PCI_FUNC(devfn)`); bonds are per bus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct PciLoc {
    /// Bus number.
    pub bus: u8,
    /// Slot and function, as `PCI_DEVFN`.
    pub devfn: u8,
}

impl PciLoc {
    /// The function number (`PCI_FUNC`), the bit of the bond masks.
    pub fn func(self) -> u8 {
        self.devfn & 7
    }

    /// Decodes the identity word the guest glue writes at attach
    /// (`device::IDENT_PCI`): bit 31 says it was written, bits 15..8 are
    /// the bus, 7..0 the devfn. `None` for a word never written.
    pub fn from_ident(w: u32) -> Option<Self> {
        (w & 1 << 31 != 0).then_some(PciLoc {
            bus: (w >> 8) as u8,
            devfn: w as u8,
        })
    }

    /// The location of device `index` whose glue never said: bus 0, the
    /// function number the index (slot 0; indexes past 7 wrap).
    pub fn by_index(index: usize) -> Self {
        PciLoc {
            bus: 0,
            devfn: index as u8,
        }
    }
}

impl std::fmt::Display for PciLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:02x}:{:02x}.{}",
            self.bus,
            self.devfn >> 3,
            self.devfn & 7
        )
    }
}

/// `bond_mode` of the payload: active-backup (bonding mode 1).
pub const MODE_1: u32 = 0;
/// `bond_mode` of the payload: balance-xor or 802.3ad (modes 2 and 4).
pub const MODE_2_4: u32 = 1;

/// The payload of SET_BOND_INFO, CHANGE_ACTIVE_PORT and CLEAR_BOND_INFO:
/// `struct hns_roce_bond_info`, six little-endian words in the first
/// descriptor's data (CLEAR fills `bond_id` only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BondInfo {
    /// Word 0: the group (0 or 1 per bus).
    pub bond_id: u32,
    /// Word 1: [`MODE_1`] or [`MODE_2_4`].
    pub mode: u32,
    /// Word 2: how many slaves are active.
    pub active_cnt: u32,
    /// Word 3: active slaves, one bit per function number.
    pub active_mask: u32,
    /// Word 4: all slaves, one bit per function number.
    pub slave_mask: u32,
    /// Word 5: 0 L2, 1 L3+4, 2 L2+3 (modes 2/4 only; 0 in mode 1).
    pub hash: u32,
}

impl BondInfo {
    /// Decodes the six data words.
    pub fn from_words(w: &[u32; 6]) -> Self {
        BondInfo {
            bond_id: w[0],
            mode: w[1],
            active_cnt: w[2],
            active_mask: w[3],
            slave_mask: w[4],
            hash: w[5],
        }
    }

    /// The six data words.
    pub fn to_words(&self) -> [u32; 6] {
        [
            self.bond_id,
            self.mode,
            self.active_cnt,
            self.active_mask,
            self.slave_mask,
            self.hash,
        ]
    }

    /// `mode 1 slaves 0x3 active 0x1 (1) hash -`, for trace notes.
    pub fn describe(&self) -> String {
        let mode = match self.mode {
            MODE_1 => "1".to_string(),
            MODE_2_4 => "2/4".to_string(),
            m => format!("{m:#x}?"),
        };
        let hash = match (self.mode, self.hash) {
            (MODE_1, 0) => "-",
            (_, 0) => "L2",
            (_, 1) => "L34",
            (_, 2) => "L23",
            _ => "?",
        };
        format!(
            "mode {mode} slaves {:#x} active {:#x} ({}) hash {hash}",
            self.slave_mask, self.active_mask, self.active_cnt
        )
    }
}

/// The bond commands, for counters and notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BondCmd {
    /// 0x8601 SET_BOND_INFO.
    Set,
    /// 0x8603 CHANGE_ACTIVE_PORT.
    Change,
    /// 0x8602 CLEAR_BOND_INFO.
    Clear,
}

impl BondCmd {
    /// Short name in trace notes.
    pub fn name(self) -> &'static str {
        match self {
            BondCmd::Set => "SET",
            BondCmd::Change => "CHANGE_ACTIVE_PORT",
            BondCmd::Clear => "CLEAR",
        }
    }
}

/// One bond in the table: the last payload and the function that sent it
/// (the group's main function, which may change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bond {
    /// The last SET or CHANGE_ACTIVE_PORT payload.
    pub info: BondInfo,
    /// The function that sent it.
    pub main: PciLoc,
}

impl Bond {
    /// The function whose port carries traffic of QP `qpn` leaving the
    /// bond: mode 1 the lowest active bit (the one active slave); modes
    /// 2/4 the `qpn % n`-th of the n active bits (a model choice: the hash
    /// policy is only recorded). `None`: no active slave.
    pub fn egress(&self, qpn: u32) -> Option<u8> {
        let active = self.info.active_mask & 0xff;
        let n = active.count_ones();
        if n == 0 {
            return None;
        }
        let pick = if self.info.mode == MODE_1 { 0 } else { qpn % n };
        (0..8u8).filter(|b| active & 1 << b != 0).nth(pick as usize)
    }
}

/// Bond commands seen for one (bus, bond id), for hns-sim.log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BondCounts {
    /// SET_BOND_INFO answered SUCCESS.
    pub set: u64,
    /// CHANGE_ACTIVE_PORT answered SUCCESS.
    pub change: u64,
    /// CLEAR_BOND_INFO answered SUCCESS.
    pub clear: u64,
    /// Bond commands answered PARA_ERR.
    pub refused: u64,
}

/// State shared by every function of one hns-sim process (one chip): the
/// bond table, by bus and bond id.
#[derive(Debug, Default)]
pub struct Chip {
    /// Live bonds by (bus, bond id).
    pub bonds: BTreeMap<(u8, u32), Bond>,
    /// Commands per (bus, bond id), kept after a CLEAR.
    pub counts: BTreeMap<(u8, u32), BondCounts>,
}

impl Chip {
    /// The bond `loc` is the main function of, if any.
    pub fn bond_of_main(&self, loc: PciLoc) -> Option<&Bond> {
        self.bonds.values().find(|b| b.main == loc)
    }

    /// One line per bond id that saw commands, for hns-sim.log.
    pub fn summary(&self) -> Vec<String> {
        self.counts
            .iter()
            .map(|((bus, id), c)| {
                let state = match self.bonds.get(&(*bus, *id)) {
                    Some(b) => format!(
                        "main function {}, {}",
                        b.main.func(),
                        b.info.describe()
                    ),
                    None => "cleared".to_string(),
                };
                format!(
                    "bond {id} (bus {bus:#04x}): {} SET, {} CHANGE_ACTIVE_PORT, {} CLEAR, {} refused; {state}",
                    c.set, c.change, c.clear, c.refused
                )
            })
            .collect()
    }
}

/// A function's port as the routing sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port {
    /// Where the function sits.
    pub loc: PciLoc,
    /// Its link (the `link:` control command; up by default).
    pub up: bool,
}

/// Whether a message of QP `qpn` from `from` reaches `to`, given every
/// function's port (`ports`, `from` and `to` among them or not) and the
/// bond table. The sender's egress port must be up: its own, or for a
/// bond's main function the active slave's port ([`Bond::egress`]). The
/// receiver must be reachable: its own port up, or for a bond's main
/// function any up port of its slaves. `Err` says which port is down.
/// A function the bond masks name but no device presents counts as down.
pub fn path(chip: &Chip, ports: &[Port], from: Port, to: Port, qpn: u32) -> Result<(), String> {
    // Function `func` of the bond whose main function is at `main`: the
    // device with that function number in the main's slot, else one
    // elsewhere on the bus. (The chip has one device per bus, so the
    // bus and the function number name a port; the guest may put
    // another device, a peer that is no member, at function 0 of
    // another slot of the same bus.)
    let up = |main: PciLoc, func: u8| {
        let on_bus = |p: &&Port| p.loc.bus == main.bus && p.loc.func() == func;
        let all = || ports.iter().chain([&from, &to]);
        all()
            .filter(on_bus)
            .find(|p| p.loc.devfn >> 3 == main.devfn >> 3)
            .or_else(|| all().find(on_bus))
            .is_some_and(|p| p.up)
    };
    match chip.bond_of_main(from.loc) {
        Some(b) => match b.egress(qpn) {
            None => return Err(format!("bond {} has no active port", b.info.bond_id)),
            Some(f) if !up(from.loc, f) => {
                return Err(format!(
                    "bond {} egress port (function {f}) down",
                    b.info.bond_id
                ))
            }
            Some(_) => {}
        },
        None if !from.up => return Err(format!("port of {} down", from.loc)),
        None => {}
    }
    match chip.bond_of_main(to.loc) {
        Some(b) => {
            let slaves = b.info.slave_mask & 0xff;
            if !(0..8u8).any(|f| slaves & 1 << f != 0 && up(to.loc, f)) {
                return Err(format!(
                    "every port of bond {} (peer {}) down",
                    b.info.bond_id, to.loc
                ));
            }
        }
        None if !to.up => return Err(format!("port of peer {} down", to.loc)),
        None => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(f: u8) -> PciLoc {
        PciLoc {
            bus: 0,
            devfn: 3 << 3 | f,
        }
    }

    #[test]
    fn identity_word_decodes_bus_and_devfn() {
        assert_eq!(PciLoc::from_ident(0), None, "never written");
        let l = PciLoc::from_ident(1 << 31 | 0x02 << 8 | 3 << 3 | 1).unwrap();
        assert_eq!((l.bus, l.devfn, l.func()), (2, 0x19, 1));
        assert_eq!(l.to_string(), "02:03.1");
        assert_eq!(PciLoc::by_index(2).func(), 2);
    }

    #[test]
    fn payload_words_in_c_order() {
        // hns_roce_cmd_bond for an active-backup pair of functions 0 and
        // 1, function 0 active: bond_id, bond_mode (BOND_MODE_1 = 0),
        // active_slave_cnt, active_slave_mask, slave_mask, hash_policy.
        let w = [0, 0, 1, 0x1, 0x3, 0];
        let i = BondInfo::from_words(&w);
        assert_eq!(
            (i.mode, i.active_cnt, i.active_mask, i.slave_mask),
            (MODE_1, 1, 1, 3)
        );
        assert_eq!(i.to_words(), w);
        assert_eq!(i.describe(), "mode 1 slaves 0x3 active 0x1 (1) hash -");
        let x = BondInfo::from_words(&[1, 1, 2, 0x3, 0x3, 1]);
        assert_eq!(x.describe(), "mode 2/4 slaves 0x3 active 0x3 (2) hash L34");
    }

    #[test]
    fn egress_follows_the_active_mask() {
        let mut b = Bond {
            info: BondInfo::from_words(&[0, MODE_1, 1, 0x2, 0x3, 0]),
            main: loc(0),
        };
        assert_eq!(b.egress(8), Some(1));
        b.info.mode = MODE_2_4;
        b.info.active_mask = 0x5;
        assert_eq!(b.egress(8), Some(0));
        assert_eq!(b.egress(9), Some(2));
        b.info.active_mask = 0;
        assert_eq!(b.egress(9), None);
    }

    #[test]
    fn unbonded_path_needs_both_ports() {
        let chip = Chip::default();
        let a = Port {
            loc: loc(0),
            up: true,
        };
        let b = Port {
            loc: loc(1),
            up: true,
        };
        assert_eq!(path(&chip, &[], a, b, 8), Ok(()));
        let down = Port { up: false, ..a };
        assert!(path(&chip, &[], down, b, 8)
            .unwrap_err()
            .contains("port of 00:03.0"));
        let down = Port { up: false, ..b };
        assert!(path(&chip, &[], a, down, 8)
            .unwrap_err()
            .contains("peer 00:03.1"));
    }

    /// An active-backup bond of functions 0 (main, its port down) and 1
    /// (its port up) on bus 0, `active` the active-slave mask; and the two
    /// ports.
    fn ab_bond_of_two(active: u32) -> (Chip, Port, Port) {
        let mut chip = Chip::default();
        chip.bonds.insert(
            (0, 0),
            Bond {
                info: BondInfo::from_words(&[0, MODE_1, 1, active, 0x3, 0]),
                main: loc(0),
            },
        );
        let main = Port {
            loc: loc(0),
            up: false,
        };
        let slave = Port {
            loc: loc(1),
            up: true,
        };
        (chip, main, slave)
    }

    #[test]
    fn bonded_main_sends_through_the_active_slave() {
        // Functions 0 and 1 bonded (main 0, active 1 after a failover),
        // function 2 a plain peer on the same bus.
        let (chip, main, slave) = ab_bond_of_two(0x2);
        let peer = Port {
            loc: loc(2),
            up: true,
        };
        // The main's own port is down but the active one (1) is up.
        assert_eq!(path(&chip, &[main, slave, peer], main, peer, 8), Ok(()));
        // And the peer reaches the bond through the slave's port.
        assert_eq!(path(&chip, &[main, slave, peer], peer, main, 8), Ok(()));
        let slave_down = Port { up: false, ..slave };
        let all = [main, slave_down, peer];
        assert!(path(&chip, &all, main, peer, 8)
            .unwrap_err()
            .contains("function 1"));
        assert!(path(&chip, &all, peer, main, 8)
            .unwrap_err()
            .contains("every port"));
    }

    #[test]
    fn a_peer_at_function_0_of_another_slot_is_no_member() {
        // The guest layout of bond-plan.sh: members 00:03.0 (main) and
        // 00:03.1, the peer at 00:04.0, function 0 like the main. With
        // the main's port down and still active (before the failover)
        // its egress is down, whatever the peer's port.
        let (chip, main, slave) = ab_bond_of_two(0x1);
        let peer = Port {
            loc: PciLoc {
                bus: 0,
                devfn: 4 << 3,
            },
            up: true,
        };
        // `ports` as the wire gives them: the devices other than the
        // sender, in device order.
        assert!(path(&chip, &[slave, peer], main, peer, 8)
            .unwrap_err()
            .contains("egress port (function 0) down"));
        // The peer still reaches the bond through 00:03.1.
        assert_eq!(path(&chip, &[main, slave], peer, main, 8), Ok(()));
        // With 00:03.1 down too, the peer's own up port (function 0 of
        // slot 4) does not count as one of the bond's.
        let slave_down = Port { up: false, ..slave };
        assert!(path(&chip, &[slave_down, main], peer, main, 8)
            .unwrap_err()
            .contains("every port"));
    }
}
