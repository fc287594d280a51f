//! The built-in sample shard, made with the codec's own encoders in the same
//! shapes as `felix-storage demo`: clean records across three segments, rot
//! in the middle of an older segment, a stale index, a torn tail on the
//! newest segment, and an epochs file with three generations.
//!
//! [`tar`] offers the same files as a download (a POSIX ustar archive any
//! `tar -x` reads), so the CLI and the share-and-check round trip can be
//! tried on the very bytes the page shows.

use felix_codec::format::epochs::{self, Epoch};
use felix_codec::format::file_name::{index_file_name, segment_file_name};
use felix_codec::format::index::build_index;
use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;
use felix_codec::format::shard_name::ShardKey;

/// Microseconds of 2026-11-01T09:00:00Z, the sample's first publish time.
const START_MICROS: u64 = 1_793_523_600_000_000;

fn segment(base: u64, count: u64) -> (Vec<u8>, Vec<(u64, u64)>) {
    let mut out = SegmentHeader::new(base, START_MICROS + base * 1_000).encode().to_vec();
    let mut at = Vec::new();
    for o in base..base + count {
        at.push((o, out.len() as u64));
        let payload = format!(r#"{{"order_id":{o},"customer":"c-{:04}","amount_cents":{}}}"#, (o * 7919) % 10_000, 100 + (o * 37) % 9_000);
        let ok = encode_record(o, START_MICROS + o * 250_000, payload.as_bytes(), &mut out);
        debug_assert!(ok.is_ok());
    }
    (out, at)
}

/// The sample's files as `(path, bytes)`, in a folder named like a real shard.
#[must_use]
pub fn files() -> Vec<(String, Vec<u8>)> {
    let dir = ShardKey { tenant: "acme", namespace: "default", stream: "orders", shard: 0 }.dir_name();
    let (s0, p0) = segment(0, 40);
    let (mut s1, p1) = segment(40, 40);
    let (mut s2, p2) = segment(80, 25);
    let mut i0 = build_index(0, p0.iter().copied(), 512);
    // A stale index: its last entry points 5 bytes past its record.
    if let Some(last) = i0.last_mut() {
        *last = last.wrapping_add(5);
    }
    let i1 = build_index(40, p1.iter().copied(), 512);
    let i2 = build_index(80, p2.iter().copied(), 512);
    // Rot: one payload byte in the middle of segment 1.
    if let Some((_, at)) = p1.get(20) {
        if let Some(b) = usize::try_from(*at + 40).ok().and_then(|i| s1.get_mut(i)) {
            *b ^= 0x20;
        }
    }
    // A torn tail: the newest segment's last record lost its last 9 bytes.
    s2.truncate(s2.len().saturating_sub(9));
    let ep = epochs::encode(&[
        Epoch { generation: 1, start_offset: 0 },
        Epoch { generation: 2, start_offset: 33 },
        Epoch { generation: 5, start_offset: 71 },
    ])
    .unwrap_or_default();
    let at = |name: String| format!("{dir}/{name}");
    vec![
        (at(segment_file_name(0)), s0),
        (at(index_file_name(0)), i0),
        (at(segment_file_name(1)), s1),
        (at(index_file_name(1)), i1),
        (at(segment_file_name(2)), s2),
        (at(index_file_name(2)), i2),
        (at("epochs".into()), ep),
    ]
}

/// Name of the sample's archive as the page offers it.
pub const TAR_NAME: &str = "felix-sample.tar";

/// One ustar block.
const BLOCK: usize = 512;

/// `value` as `width - 1` octal digits and a NUL, into `field`.
fn octal(field: &mut [u8], value: u64) {
    let width = field.len();
    let digits = format!("{value:0w$o}", w = width - 1);
    for (dst, src) in field.iter_mut().zip(digits.bytes().chain([0])) {
        *dst = src;
    }
}

/// A ustar header block for `name` (a file of `size` bytes, or a folder), or
/// `None` when the name does not fit the 100-byte field.
fn header(name: &str, size: u64, folder: bool) -> Option<[u8; BLOCK]> {
    let mut h = [0u8; BLOCK];
    let bytes = name.as_bytes();
    h.get_mut(..bytes.len()).filter(|_| bytes.len() < 100)?.copy_from_slice(bytes);
    octal(&mut h[100..108], if folder { 0o755 } else { 0o644 }); // mode
    octal(&mut h[108..116], 0); // uid
    octal(&mut h[116..124], 0); // gid
    octal(&mut h[124..136], size); // size
    octal(&mut h[136..148], START_MICROS / 1_000_000); // mtime: the sample's first publish time
    h[156] = if folder { b'5' } else { b'0' }; // typeflag
    h[257..263].copy_from_slice(b"ustar\0"); // magic
    h[263..265].copy_from_slice(b"00"); // version
                                        // The checksum: the sum of the header's bytes, its own field counted as spaces.
    h[148..156].fill(b' ');
    let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
    octal(&mut h[148..155], u64::from(sum));
    Some(h)
}

/// `files` as a ustar archive: each folder once, then its files, in order.
/// `None` when a path does not fit a ustar name (the sample's all do).
#[must_use]
pub fn tar(files: &[(String, Vec<u8>)]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut folders: Vec<&str> = Vec::new();
    for (path, bytes) in files {
        if let Some((folder, _)) = path.rsplit_once('/') {
            if !folders.contains(&folder) {
                folders.push(folder);
                out.extend_from_slice(&header(&format!("{folder}/"), 0, true)?);
            }
        }
        out.extend_from_slice(&header(path, bytes.len() as u64, false)?);
        out.extend_from_slice(bytes);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
    }
    // The end: two zero blocks.
    out.resize(out.len() + 2 * BLOCK, 0);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    #[test]
    fn the_sample_archive_holds_exactly_the_sample_files() {
        let files = files();
        let archive = tar(&files).unwrap();
        assert_eq!(archive.len() % BLOCK, 0);
        let mut read = tar::Archive::new(archive.as_slice());
        let mut seen = Vec::new();
        for entry in read.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            if entry.header().entry_type().is_dir() {
                assert_eq!(path.trim_end_matches('/'), files[0].0.rsplit_once('/').unwrap().0);
                continue;
            }
            assert!(entry.header().as_ustar().is_some(), "a ustar header");
            assert_eq!(entry.header().mode().unwrap(), 0o644);
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            seen.push((path, bytes));
        }
        assert_eq!(seen, files);
    }

    #[test]
    fn a_name_too_long_for_ustar_is_not_archived() {
        assert!(tar(&[("x".repeat(100), vec![1])]).is_none());
        assert!(tar(&[("x".repeat(99), vec![1])]).is_some());
    }
}
