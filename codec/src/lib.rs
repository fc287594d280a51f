//! # felix-codec
//!
//! Every byte of the Felix durable segment format (v2), and the verdicts on
//! damaged bytes. The layout of each on-disk structure lives in its own
//! module, whose doc repeats the byte diagram from `docs/storage-format.md`.
//!
//! **Architecture invariant:** this crate performs no IO, reads no clock and
//! spawns no thread. Bytes come in as slices, verdicts go out as values. It
//! builds for `wasm32-unknown-unknown` and never panics on any input.
//!
//! Two ways to read:
//! - the *strict* decoders ([`format::segment_header::SegmentHeader::decode`],
//!   [`format::record::decode_record`], [`read::reader::SegmentReader`], …) stop at the
//!   first problem — that is what recovery uses;
//! - the *scanners* in [`read::scan`] never fail: fed a file in chunks of any size
//!   they yield every structure and every [`Finding`], resynchronising after
//!   damage — that is what `felix-storage inspect` and the browser use.
//!
//! Both share the same field decoders.
#![no_std]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::expect_used, clippy::panic))]

extern crate alloc;

pub mod doc;
pub mod format;
pub mod read;
pub mod shard;
pub mod verdict;

pub use verdict::{CorruptionKind, CorruptionSite, Finding, Repair};

/// The README's example, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
pub use verdict::{is_repairable_tail, repair_verdict, Place, RepairOptions};

/// The one version number covering both the segment and the index layout.
pub const FORMAT_VERSION: u16 = 2;

/// The epochs file's own version (defined beside [`FORMAT_VERSION`], which
/// both the epochs codec and the corruption wording read).
pub const EPOCHS_VERSION: u16 = 1;

/// Largest payload a record may carry: 64 MiB. Bounds the allocation a
/// corrupt length field could otherwise request.
pub const MAX_PAYLOAD_BYTES: u32 = 64 * 1024 * 1024;

/// felix-wire's frame magic (`FLX1`). Never valid on disk; recognised only so a
/// misplaced network capture can be named in a note.
pub const WIRE_MAGIC: [u8; 4] = *b"FLX1";
