// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors shared by the host tests and the KUnit suites (`core` only).

pub mod cmq;
pub mod field;
pub mod hem;
