// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! hns-sim: a host-side model of HiSilicon HIP09 RoCE functions for QEMU.
//!
//! Each function is one QEMU `ivshmem-doorbell` device connected to one of
//! our sockets: we serve its BAR2 (registers + `mem_base` window) and its
//! MSI-X eventfds, read guest memory through the shared RAM file, and model
//! the firmware (CMQ, mailbox, HEM, EQs). See docs/hns-sim.md.

use hns_sim::{bond, caps, device, fw, ivshmem, mem, nic, trace};
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

struct Args {
    sockets: Vec<String>,
    ram: String,
    /// Guest physical address of the RAM file's first byte.
    ram_base: u64,
    out: String,
    vectors: usize,
    /// The caps table of each device (`--personality A,B,...`): device n
    /// has table n, devices past the list the last table.
    caps: Vec<caps::Caps>,
    faults: Vec<fw::Fault>,
    ready_file: Option<String>,
    /// `--dump-caps`: print device 0's table; `--dump-caps-device N`:
    /// device N's.
    dump_caps: Option<usize>,
    /// `--dump-data FILE`: SQ WQEs, SRQ index entries and WQEs, and CQEs
    /// as hex words (function 0 in FILE, function n in FILE.n).
    dump_data: Option<String>,
    /// Sleep of an idle pass (0: yield instead).
    idle: Duration,
    /// How long after the last pass that did work the loop keeps polling
    /// without sleeping.
    spin: Duration,
    /// `--trace-time`: each trace line starts with the microseconds since
    /// the model started (a diagnostic; such traces are not compared).
    trace_time: bool,
    /// `--set nic=hclge`: every device also models hclge's NIC command
    /// queue at BAR2 0x27000 (see [`nic`]); off by default.
    nic: nic::Mode,
    /// `--set nic_reset_ms=N`: how long a function reset hclge asks for
    /// runs after its SW_RST_RDY handshake ([`nic::NicCmq::reset_hold`]).
    nic_reset: Duration,
}

fn usage() -> ! {
    eprintln!(
        "usage: hns-sim --socket PATH [--socket PATH ...] --ram FILE [--ram-base ADDR] --out DIR\n\
         \x20              [--personality P[,P...]] [--vectors N] [--config FILE]\n\
         \x20              [--fault OPCODE:RETVAL|timeout[:once|always]]\n\
         \x20              [--fault mbx:CMD:STATUS[:once|always]]\n\
         \x20              [--set KEY=VALUE] [--ready FILE] [--idle-us N] [--spin-ms N]\n\
         \x20              [--dump-data FILE] [--trace-time]\n\
         \x20      hns-sim [--personality P[,P...]] [--config FILE] [--set KEY=VALUE]\n\
         \x20              --dump-caps | --dump-caps-device N\n\
         \x20      P: hip09 (default), hip08, vf (a HIP09 VF of the list's first PF); one per\n\
         \x20         device, devices past the list take its last entry\n\
         \x20      --set nic=hclge: also model hclge's NIC command queue (BAR2 0x27000)"
    );
    std::process::exit(2);
}

/// A decimal or `0x` hexadecimal number (`_` separators allowed).
fn parse_u64(s: &str) -> Option<u64> {
    let s = s.replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        sockets: vec![],
        ram: String::new(),
        ram_base: 0,
        out: ".".into(),
        vectors: 8,
        caps: vec![caps::Caps::default()],
        faults: vec![],
        ready_file: None,
        dump_caps: None,
        dump_data: None,
        idle: Duration::from_micros(100),
        spin: Duration::from_millis(20),
        trace_time: false,
        nic: nic::Mode::Off,
        nic_reset: Duration::ZERO,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{k} needs a value"));
        match k.as_str() {
            "--socket" => a.sockets.push(val()?),
            "--ram" => a.ram = val()?,
            "--ram-base" => a.ram_base = parse_u64(&val()?).ok_or("bad --ram-base")?,
            "--out" => a.out = val()?,
            "--vectors" => a.vectors = val()?.parse().map_err(|_| "bad --vectors".to_string())?,
            "--personality" => {
                // New base tables: they would silently undo earlier
                // --config/--set values, so it has to come first.
                if a.caps != [caps::Caps::default()] {
                    return Err("--personality must come before --config and --set".into());
                }
                a.caps = val()?
                    .split(',')
                    .map(|p| caps::Caps::personality(p.trim()))
                    .collect::<Result<_, _>>()?;
            }
            "--config" => {
                let path = val()?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                let mut rest = vec![];
                for c in a.caps.iter_mut() {
                    rest = c.apply_config(&text)?;
                }
                for (_, v) in rest {
                    a.faults.push(fw::Fault::parse(&v)?);
                }
            }
            "--set" => {
                let kv = val()?;
                let (key, v) = kv.split_once('=').ok_or("--set wants KEY=VALUE")?;
                if key.trim() == "nic" {
                    a.nic = nic::Mode::parse(v.trim())?;
                    continue;
                }
                if key.trim() == "nic_reset_ms" {
                    let ms = parse_u64(v.trim()).ok_or("bad nic_reset_ms")?;
                    a.nic_reset = Duration::from_millis(ms);
                    continue;
                }
                for c in a.caps.iter_mut() {
                    c.set(key.trim(), v.trim())?;
                }
            }
            "--fault" => a.faults.push(fw::Fault::parse(&val()?)?),
            "--ready" => a.ready_file = Some(val()?),
            "--idle-us" => {
                let us: u64 = val()?.parse().map_err(|_| "bad --idle-us".to_string())?;
                a.idle = Duration::from_micros(us);
            }
            "--spin-ms" => {
                let ms: u64 = val()?.parse().map_err(|_| "bad --spin-ms".to_string())?;
                a.spin = Duration::from_millis(ms);
            }
            "--dump-caps" => a.dump_caps = Some(0),
            "--dump-caps-device" => {
                a.dump_caps = Some(
                    val()?
                        .parse()
                        .map_err(|_| "bad --dump-caps-device".to_string())?,
                )
            }
            "--dump-data" => a.dump_data = Some(val()?),
            "--trace-time" => a.trace_time = true,
            _ => usage(),
        }
    }
    caps::wire_functions(&mut a.caps);
    if a.nic == nic::Mode::Hclge {
        // hclge puts the RoCE vectors after the NIC's: one value is both
        // the RoCE base and QUERY_PF_RSRC's NIC vector count.
        for c in a.caps.iter_mut() {
            c.roce_base_vector = nic::roce_base_vector(c.roce_base_vector)?;
        }
    }
    for (n, c) in a.caps.iter().enumerate() {
        // The RoCE vectors sit after the first roce_base_vector ones.
        let last = c.roce_base_vector as usize + c.vectors_needed() as usize;
        if last > a.vectors {
            return Err(format!(
                "device {n}: roce_base_vector {} + {} RoCE vectors needs {last} of --vectors {}",
                c.roce_base_vector,
                c.vectors_needed(),
                a.vectors
            ));
        }
        c.check().map_err(|e| {
            if a.caps.len() > 1 {
                format!("personality {} (device {n}): {e}", n + 1)
            } else {
                e
            }
        })?;
    }
    if let Some(n) = a.dump_caps {
        // The caps after --config/--set, in config-file syntax.
        print!("{}", a.caps_of(n).dump());
        std::process::exit(0);
    }
    if a.sockets.is_empty() || a.ram.is_empty() {
        usage();
    }
    Ok(a)
}

impl Args {
    /// The caps table of device `n`.
    fn caps_of(&self, n: usize) -> &caps::Caps {
        &self.caps[n.min(self.caps.len() - 1)]
    }
}

/// Serves every function from one thread (the engine's wire between
/// them needs all of them at hand) until QEMU disconnects.
fn serve(listeners: &[UnixListener], a: &Args) -> Result<Vec<fw::Stats>, String> {
    let mut bars = vec![];
    let mut peers = vec![];
    for (n, l) in listeners.iter().enumerate() {
        let (bar, bar_file) =
            mem::Bar::new(&format!("hns-sim-bar2-{n}")).map_err(|e| format!("BAR2: {e}"))?;
        // The revision the glue relabels the function with, in place
        // before QEMU (and so the guest) can see the BAR.
        device::write_identity(&bar, a.caps_of(n));
        let peer =
            ivshmem::Peer::accept(l, &bar_file, a.vectors).map_err(|e| format!("accept: {e}"))?;
        eprintln!("hns-sim[{n}]: QEMU connected, {} vectors", peer.vectors());
        bars.push(bar);
        peers.push(peer);
    }
    let ram = mem::GuestRam::open(&a.ram, a.ram_base).map_err(|e| format!("{}: {e}", a.ram))?;
    let mut devs = vec![];
    // One chip: the bond table every function of the process shares.
    let chip = std::rc::Rc::new(std::cell::RefCell::new(bond::Chip::default()));
    let epoch = Instant::now();
    for (n, (bar, peer)) in bars.iter().zip(&peers).enumerate() {
        let mut trace = trace::Trace::to_file(&format!("{}/trace-{n}.txt", a.out), "")
            .map_err(|e| format!("trace: {e}"))?;
        if a.trace_time {
            trace.time_from(epoch);
        }
        let mut firmware = fw::Firmware::new(a.caps_of(n).clone(), a.faults.clone(), trace);
        firmware.chip = chip.clone();
        let mut dev = device::Device::new(firmware, bar, &ram, peer);
        if let Some(f) = &a.dump_data {
            let path = if n == 0 {
                f.clone()
            } else {
                format!("{f}.{n}")
            };
            let file = std::fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?;
            dev.engine.dump = Some(Box::new(std::io::BufWriter::new(file)));
        }
        devs.push(dev);
    }
    let vectors: Vec<(u16, u16)> = (0..bars.len())
        .map(|n| {
            let c = a.caps_of(n);
            let roce = u16::try_from(c.vectors_needed()).unwrap_or(u16::MAX);
            (c.roce_base_vector.into(), roce)
        })
        .collect();
    let mut nics = nic::attach(a.nic, &a.out, &vectors)?;
    let vfs: Vec<bool> = (0..bars.len()).map(|n| a.caps_of(n).is_vf()).collect();
    nic::mark_vfs(&mut nics, &vfs);
    for q in nics.iter_mut().flatten() {
        q.reset_hold = a.nic_reset;
    }
    let mut idle_since = Instant::now();
    let mut last_check = Instant::now();
    let started = Instant::now();
    // Time in passes that did work, passes, sleeps.
    let (mut busy, mut passes, mut sleeps) = (Duration::ZERO, 0u64, 0u64);
    loop {
        let t = Instant::now();
        passes += 1;
        if device::poll_all(&mut devs)
            | nic::poll_all(&mut nics, &bars, &ram, t, &mut |n, v| {
                peers[n].raise(v as usize)
            })
        {
            // A function reset hclge had carried out clears the RoCE
            // engine of the function as well.
            for (q, dev) in nics.iter_mut().zip(devs.iter_mut()) {
                if q.as_mut().is_some_and(|q| q.take_reset_done()) {
                    dev.fw.function_reset();
                }
            }
            busy += t.elapsed();
            idle_since = Instant::now();
            continue;
        }
        // Keep polling for `spin` (20 ms by default) after a pass that did
        // work, then every `idle` (100 us by default): the driver busy-waits
        // for answers, and two doorbell rings within one sleep lose the
        // first (the shared 0x230 word), which costs the WQE the scan's
        // 100 ms (engine::STABLE). Traffic comes in bursts (a ping-pong
        // half trip is 0.5-4 ms in a TCG guest), so a spin window of a few
        // of them catches most rings.
        if idle_since.elapsed() > a.spin {
            sleeps += 1;
            if a.idle.is_zero() {
                std::thread::yield_now();
            } else {
                std::thread::sleep(a.idle);
            }
        } else {
            std::hint::spin_loop();
        }
        if last_check.elapsed() > Duration::from_millis(200) {
            last_check = Instant::now();
            if peers.iter().all(|p| p.closed()) {
                break;
            }
        }
    }
    eprintln!(
        "hns-sim: loop: {:.3} s in passes that did work of {:.1} s, {passes} passes, {sleeps} idle sleeps of {} us",
        busy.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        a.idle.as_micros()
    );
    let mut stats = vec![];
    for (n, dev) in devs.iter_mut().enumerate() {
        dev.fw.trace.flush();
        if let Some(d) = dev.engine.dump.as_mut() {
            let _ = d.flush();
        }
        let e = dev.engine.stats;
        eprintln!(
            "hns-sim[{n}]: data: {} WQEs, {} CQEs ({} errors), {} CEQEs, {} doorbells, {} WQEs found by the scan, {} messages to other devices, {} REG_MR, {} LOCAL_INV, {} SEND_WITH_INV ({} remote invalidations), {} direct WQEs ({} checked, {} superseded, {} mismatched), {} stalls by a down port, {} UD drops by a down port, {} stalls for a GID no device owns, {} UD drops for a GID no device owns, {} bad DMA",
            e.wqes,
            e.cqes,
            e.errors,
            e.ceqes,
            e.doorbells,
            e.scan_found,
            e.wire,
            e.reg_mr,
            e.local_inv,
            e.send_inv,
            e.remote_inv,
            e.direct_wqes,
            e.dwqe_checked,
            e.dwqe_superseded,
            e.dwqe_mismatched,
            e.link_stalls,
            e.link_drops,
            e.unowned_stalls,
            e.unowned_drops,
            e.bad_dma
        );
        stats.push(dev.fw.stats);
    }
    nic::finish(&mut nics);
    for line in chip.borrow().summary() {
        eprintln!("hns-sim: {line}");
    }
    Ok(stats)
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("hns-sim: {e}");
            std::process::exit(2);
        }
    };
    let mut listeners = vec![];
    for s in &a.sockets {
        let _ = std::fs::remove_file(s);
        match UnixListener::bind(s) {
            Ok(l) => listeners.push(l),
            Err(e) => {
                eprintln!("hns-sim: {s}: {e}");
                std::process::exit(1);
            }
        }
    }
    if let Some(r) = &a.ready_file {
        let _ = std::fs::write(r, "ready\n");
    }
    let mut rc = 0;
    match serve(&listeners, &a) {
        Ok(all) => {
            for (n, s) in all.iter().enumerate() {
                eprintln!(
                    "hns-sim[{n}]: done: {} commands, {} mailboxes ({} failed), {} unknown, {} function clears, {} late mailbox events, {} stale EQ contexts, {} storm events{}",
                    s.commands,
                    s.mailboxes,
                    s.mailbox_failures,
                    s.unknown,
                    s.func_clears,
                    s.late_events,
                    s.stale_eqcs,
                    s.storm_events,
                    if s.pf_clears > 0 {
                        format!(", {} clears by its PF", s.pf_clears)
                    } else {
                        String::new()
                    }
                );
            }
        }
        Err(e) => {
            eprintln!("hns-sim: {e}");
            rc = 1;
        }
    }
    let _ = std::io::stdin().read(&mut [0u8; 0]);
    std::process::exit(rc);
}
