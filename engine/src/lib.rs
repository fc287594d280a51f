//! # felix-engine
//!
//! The native side of Felix storage: [`shard::Shard`], the durable writer and
//! reader a broker embeds (recovery, rollover, indexes, retention, epochs,
//! divergence truncation), all IO behind [`io::Io`]; and [`inspect`], which
//! walks files and shard directories and streams them through the codec's
//! scanners in bounded memory.
//!
//! **Architecture invariant:** every on-disk byte is interpreted by
//! `felix-codec`; this crate only moves bytes between the disk and the codec.

pub mod demo;
pub mod error;
pub mod inspect;
pub mod io;
pub mod shard;

pub use error::EngineError;
pub use io::{Io, OsIo};
pub use shard::{Config, Durability, RecoveryReport, Shard, StoredRecord};
