//! # felix-engine
//!
//! The native side of Felix storage: [`shard::Shard`], the durable writer and
//! reader a broker embeds (recovery, rollover, indexes, retention, epochs,
//! divergence truncation), all IO behind [`io::Io`] and through one fail-stop
//! latch ([`io::checked::CheckedIo`]); and the [`tools`] over it
//! ([`tools::inspect`], [`tools::diff`], [`tools::recover`], …), which read
//! files and shard directories through the same [`io::Io`] and stream them
//! through the codec's scanners in bounded memory. The `felix-storage`
//! binary's own modules (`src/cli/`) are the command line over the tools.
//!
//! **Architecture invariant:** every on-disk byte is interpreted by
//! `felix-codec`, and every verdict (damage, repair, index trust, recovery
//! plan) is the codec's; this crate only moves bytes between the disk and the codec.

#[cfg(feature = "async")]
pub mod broker;
pub mod error;
pub mod io;
pub mod metrics_names;
pub mod shard;
pub mod tools;

pub use error::EngineError;
pub use io::{Io, OsIo};
pub use shard::reader::{walk_segment_file, FileWalk, WalkFrom};
pub use shard::{Config, Durability, Recovery, Shard, StoredRecord};
