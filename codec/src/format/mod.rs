//! The bytes on disk: one module per on-disk structure (the segment header,
//! the record, the index entry, the epochs file), the names the format gives
//! its files and shard folders, and the golden bytes that pin each layout.
//! Each module's doc repeats its byte diagram from `docs/storage-format.md`.

pub mod be;
pub mod epochs;
pub mod file_name;
pub mod golden;
pub mod index;
pub mod record;
pub mod segment_header;
pub mod shard_name;
pub mod time;
