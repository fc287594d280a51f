//! The built-in sample shard, made with the codec's own encoders in the same
//! shapes as `felix-storage demo`: clean records across three segments, rot
//! in the middle of an older segment, a stale index, a torn tail on the
//! newest segment, and an epochs file with three generations.

use felix_codec::epochs::{self, Epoch};
use felix_codec::file_name::{index_file_name, segment_file_name};
use felix_codec::index::build_index;
use felix_codec::record::encode_record;
use felix_codec::segment_header::SegmentHeader;
use felix_codec::shard_name::ShardKey;

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
