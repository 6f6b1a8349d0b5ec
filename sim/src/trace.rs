// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The trace: one canonical line per CMQ descriptor and per mailbox, plus
//! notes. DMA addresses are printed with a leading `@` so that a diff of two
//! runs can normalise them.

use crate::cmq::{op, op_name, Desc};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

/// Where trace lines go.
pub struct Trace {
    out: Option<BufWriter<File>>,
    prefix: String,
    /// When set, each line starts with `[µs] `, the time since this
    /// instant (`--trace-time`).
    epoch: Option<Instant>,
}

/// Payload words that carry DMA addresses, per opcode and descriptor.
fn addr_words(opcode: u16, first: bool) -> &'static [usize] {
    match (opcode, first) {
        (op::POST_MB, _) => &[0, 1, 2, 3],
        (op::CFG_EXT_LLM, true) => &[0, 1, 3, 4],
        (op::CFG_EXT_LLM, false) => &[0, 1],
        (op::CFG_GMV_BT, _) => &[0, 1],
        _ => &[],
    }
}

impl Trace {
    /// A trace written to `path`, each line prefixed with `prefix`.
    pub fn to_file(path: &str, prefix: &str) -> std::io::Result<Self> {
        Ok(Trace {
            out: Some(BufWriter::new(File::create(path)?)),
            prefix: prefix.to_string(),
            epoch: None,
        })
    }

    /// A trace that goes nowhere (tests).
    pub fn discard() -> Self {
        Trace {
            out: None,
            prefix: String::new(),
            epoch: None,
        }
    }

    /// Starts every later line with the microseconds since `epoch`, in
    /// brackets: where the time between commands goes
    /// (`scripts/trace-gaps.py`). Such a trace is not one to compare.
    pub fn time_from(&mut self, epoch: Instant) {
        self.epoch = Some(epoch);
    }

    fn line(&mut self, s: &str) {
        if let Some(o) = self.out.as_mut() {
            let _ = match self.epoch {
                Some(e) => writeln!(o, "[{}] {}{}", e.elapsed().as_micros(), self.prefix, s),
                None => writeln!(o, "{}{}", self.prefix, s),
            };
        }
    }

    /// Flushes buffered lines.
    pub fn flush(&mut self) {
        if let Some(o) = self.out.as_mut() {
            let _ = o.flush();
        }
    }

    /// A descriptor (`index` in its chain): `>` as received, `<` as
    /// answered.
    pub fn cmq(&mut self, dir: char, d: &Desc, index: usize) {
        let aw = addr_words(d.opcode, index == 0);
        let mut data = String::new();
        for (i, w) in d.data.iter().enumerate() {
            if i > 0 {
                data.push(' ');
            }
            if aw.contains(&i) {
                data.push('@');
            }
            data.push_str(&format!("{w:08x}"));
        }
        let rv = if dir == '<' {
            format!(" ret={}", d.retval)
        } else {
            String::new()
        };
        self.line(&format!(
            "cmq {dir} op={:04x} {} flag={:04x}{rv} data={data}",
            d.opcode,
            op_name(d.opcode),
            d.flag
        ));
    }

    /// A mailbox as posted.
    #[allow(clippy::too_many_arguments)]
    pub fn mbx_in(
        &mut self,
        cmd: u8,
        name: &str,
        tag: u32,
        inp: u64,
        out: u64,
        event: bool,
        token: u16,
    ) {
        self.line(&format!(
            "mbx > cmd={cmd:02x} {name} tag={tag:06x} in=@{inp:x} out=@{out:x} ev={} token={token:04x}",
            event as u8
        ));
    }

    /// A mailbox's completion.
    pub fn mbx_out(&mut self, cmd: u8, tag: u32, status: u8) {
        self.line(&format!(
            "mbx < cmd={cmd:02x} tag={tag:06x} status={status}"
        ));
    }

    /// A context as stored.
    pub fn ctx(&mut self, what: &str, tag: u32, bytes: &[u8]) {
        let mut s = String::with_capacity(bytes.len() * 9 / 4 + 32);
        for c in bytes.chunks(4) {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            s.push_str(&format!(" {:08x}", u32::from_le_bytes(w)));
        }
        self.line(&format!("ctx {what} tag={tag:06x}{s}"));
    }

    /// A context as a note (`# ctx ...`): shown, never compared.
    pub fn ctx_note(&mut self, what: &str, tag: u32, bytes: &[u8]) {
        let mut s = String::with_capacity(bytes.len() * 9 / 4 + 32);
        for c in bytes.chunks(4) {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            s.push_str(&format!(" {:08x}", u32::from_le_bytes(w)));
        }
        self.note(&format!("ctx {what} tag={tag:06x}{s}"));
    }

    /// A free-form note.
    pub fn note(&mut self, s: &str) {
        self.line(&format!("# {s}"));
    }
}
