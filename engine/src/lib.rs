//! # felix-engine
//!
//! The native side of Felix storage. Today: [`inspect`], which walks files,
//! shard directories and roots of shards, streams every file through the
//! codec's scanners in bounded memory, and builds the shared report.
//!
//! **Architecture invariant:** every on-disk byte is interpreted by
//! `felix-codec`; this crate only moves bytes between the disk and the codec.

pub mod inspect;
