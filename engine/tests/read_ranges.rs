//! Zero-copy reads (`Shard::read_ranges`) as a broker uses them: ask for the
//! ranges, send them from the file to a socket with `std::io::copy` (which
//! Linux serves with `sendfile`/`splice`), and parse what arrives. The ranges
//! are exactly the records `Shard::read` returns, and never a byte off the
//! record chain.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use felix_codec::format::index::{IndexEntry, IndexHeader};
use felix_codec::format::record::{encode_record, ExpectedOffset};
use felix_codec::format::segment_header::SegmentHeader;
use felix_codec::read::reader::SegmentReader;
use felix_engine::io::sim::SimIo;
use felix_engine::shard::reader::RecordRange;
use felix_engine::{Config, EngineError, Io, OsIo, Shard};

/// The bytes of `ranges`, sent from their files through a socket as a broker would.
fn send(ranges: &[RecordRange]) -> Vec<Vec<u8>> {
    ranges
        .iter()
        .map(|r| {
            let (mut tx, mut rx) = UnixStream::pair().unwrap();
            let len = usize::try_from(r.len).unwrap();
            let reader = std::thread::spawn(move || {
                let mut got = vec![0u8; len];
                rx.read_exact(&mut got).unwrap();
                got
            });
            let mut file = std::fs::File::open(&r.path).unwrap();
            file.seek(SeekFrom::Start(r.position)).unwrap();
            assert_eq!(std::io::copy(&mut file.take(r.len), &mut tx).unwrap(), r.len);
            drop(tx);
            reader.join().unwrap()
        })
        .collect()
}

/// (offset, timestamp, payload) of every record in `bytes`, which must be
/// whole records from `first`, each verified by the codec's strict reader.
fn parse(bytes: &[u8], position: u64, first: u64) -> Vec<(u64, u64, Vec<u8>)> {
    SegmentReader::at_position(bytes, position, ExpectedOffset::Exactly(first))
        .map(|r| {
            let (_, r) = r.unwrap();
            (r.header.offset, r.header.timestamp_micros, r.payload.to_vec())
        })
        .collect()
}

fn payload(i: u64) -> Vec<u8> {
    format!("record {i} ").repeat(usize::try_from(i % 37).unwrap() + 1).into_bytes()
}

/// Writes `batches` batches of ten records ([`payload`] 0, 1, …) to a new shard in `dir`.
fn write_shard(dir: &Path, config: &Config, batches: u64) {
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()) as Arc<dyn Io>, dir, config.clone()).unwrap();
    for batch in 0..batches {
        let payloads: Vec<Vec<u8>> = (batch * 10..batch * 10 + 10).map(payload).collect();
        let refs: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
        shard.append(&refs).unwrap();
    }
}

#[test]
fn ranges_sent_through_a_socket_are_exactly_the_records_read_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    let config = Config { segment_size_bytes: 16 << 10, index_spacing_bytes: 512, ..Config::default() };
    write_shard(&dir, &config, 40);
    // A fresh reader: index hints are verified on the way.
    let (shard, _) = Shard::open_read_only(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, config).unwrap();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..200 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let from = seed % 410;
        let max_bytes = usize::try_from((seed >> 20) % 20_000).unwrap();
        let ranges = shard.read_ranges(from, max_bytes).unwrap();
        let records = shard.read(from, max_bytes).unwrap();
        let want: Vec<(u64, u64, Vec<u8>)> = records.iter().map(|r| (r.offset, r.timestamp_micros, r.payload.to_vec())).collect();
        let mut got = Vec::new();
        for (r, bytes) in ranges.iter().zip(send(&ranges)) {
            let these = parse(&bytes, r.position, r.first_offset);
            assert_eq!(these.len() as u64, r.records, "{r:?}");
            assert_eq!(these.last().map(|t| t.0), Some(r.last_offset), "{r:?}");
            assert_eq!(these.iter().map(|t| t.2.len() as u64).sum::<u64>(), r.payload_bytes, "{r:?}");
            assert_eq!(r.path, dir.join(format!("{:020}.log", r.segment_id)));
            got.extend(these);
        }
        assert_eq!(got, want, "from {from}, max_bytes {max_bytes}");
        // One range per segment touched.
        let mut ids: Vec<u64> = ranges.iter().map(|r| r.segment_id).collect();
        ids.dedup();
        assert_eq!(ids.len(), ranges.len(), "{ranges:?}");
    }
    assert_eq!(shard.read_ranges(410, 1 << 20).unwrap(), Vec::new(), "past the end: nothing");
}

fn sim_dir() -> PathBuf {
    PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798")
}

/// A segment whose first payload carries a whole encoded record claiming
/// offset 1, and an index entry pointing at it (as `trust.rs` forges one).
fn forged(io: &SimIo, dir: &Path) -> u64 {
    let mut fake = Vec::new();
    encode_record(1, 42, b"FORGED", &mut fake).unwrap();
    let mut seg = SegmentHeader::new(0, 1).encode().to_vec();
    let mut p0 = b"pre".to_vec();
    p0.extend_from_slice(&fake);
    encode_record(0, 1, &p0, &mut seg).unwrap();
    let real_1 = seg.len() as u64;
    encode_record(1, 2, b"the real offset 1", &mut seg).unwrap();
    encode_record(2, 3, b"the real offset 2", &mut seg).unwrap();
    let mut index = IndexHeader::new(0).encode().to_vec();
    index.extend_from_slice(&IndexEntry { offset: 0, position: 32 }.encode());
    index.extend_from_slice(&IndexEntry { offset: 1, position: 32 + 28 + 3 }.encode());
    index.extend_from_slice(&IndexEntry { offset: 2, position: seg.len() as u64 - 45 }.encode());
    io.put(&dir.join("00000000000000000000.log"), &seg);
    io.put(&dir.join("00000000000000000000.index"), &index);
    // A later segment, so this one is sealed: its entries are hints checked when a read meets them.
    let mut seg1 = SegmentHeader::new(3, 1).encode().to_vec();
    encode_record(3, 3, b"three", &mut seg1).unwrap();
    io.put(&dir.join("00000000000000000001.log"), &seg1);
    io.put(
        &dir.join("00000000000000000001.index"),
        &[IndexHeader::new(3).encode().to_vec(), IndexEntry { offset: 3, position: 32 }.encode().to_vec()].concat(),
    );
    real_1
}

#[test]
fn a_forged_index_entry_never_becomes_a_range() {
    let io = Arc::new(SimIo::new());
    let real_1 = forged(&io, &sim_dir());
    let (shard, _) = Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &sim_dir(), Config::default()).unwrap();
    let ranges = shard.read_ranges(1, 1).unwrap();
    assert_eq!(ranges.len(), 1);
    let r = &ranges[0];
    assert_eq!((r.position, r.first_offset, r.last_offset, r.records), (real_1, 1, 1, 1), "the real record, not the forged one");
    assert_eq!(r.len, 28 + b"the real offset 1".len() as u64);
    assert!(shard.warnings().iter().any(|w| w.contains("does not land on a record")), "{:?}", shard.warnings());
}

#[test]
fn damage_inside_the_asked_records_returns_the_ranges_before_it_then_the_damage() {
    let io = Arc::new(SimIo::new());
    let mut seg = SegmentHeader::new(0, 1).encode().to_vec();
    for i in 0..5 {
        encode_record(i, i, b"payload", &mut seg).unwrap();
    }
    let (_, second) = (32, 32 + 35);
    let mut rotted = seg.clone();
    rotted[second + 30] ^= 1; // payload of offset 1
    let mut seg1 = SegmentHeader::new(5, 1).encode().to_vec();
    encode_record(5, 5, b"next", &mut seg1).unwrap();
    io.put(&sim_dir().join("00000000000000000000.log"), &rotted);
    io.put(&sim_dir().join("00000000000000000001.log"), &seg1);
    let index = |base: u64, entries: &[(u64, u64)]| {
        let mut out = IndexHeader::new(base).encode().to_vec();
        for &(offset, position) in entries {
            out.extend_from_slice(&IndexEntry { offset, position }.encode());
        }
        out
    };
    io.put(&sim_dir().join("00000000000000000000.index"), &index(0, &[(0, 32), (3, 32 + 3 * 35)]));
    io.put(&sim_dir().join("00000000000000000001.index"), &index(5, &[(5, 32)]));
    // The sealed segment's rot is not met at open (its tail after the last entry reads clean) …
    let opened = Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &sim_dir(), Config::default());
    let (shard, _) = match opened {
        Ok(s) => s,
        Err(e) => panic!("open: {e}"),
    };
    // … a read across it returns the intact record before it, then is refused, with the record's site.
    let before = shard.read_ranges(0, 1 << 20).unwrap();
    assert_eq!((before.len(), before[0].first_offset, before[0].last_offset), (1, 0, 0));
    match shard.read_ranges(1, 1 << 20) {
        Err(EngineError::Corrupt { finding, .. }) => {
            assert_eq!((finding.kind.name(), finding.site.position, finding.offset), ("RecordChecksum", second as u64, Some(1)));
        }
        other => panic!("{other:?}"),
    }
    // Past it, the next segment reads.
    let r = shard.read_ranges(5, 1).unwrap();
    assert_eq!((r[0].segment_id, r[0].first_offset, r[0].records), (1, 5, 1));
}

/// `Shard::read` hands out payloads as slices of its read buffers, and the
/// process keeps those buffers to use again. A buffer must never be read
/// into while any payload cut from it is held: here every batch is held
/// while four threads (over two shards) read on, then checked byte for byte
/// — a buffer used again too early would change what an earlier read
/// returned.
#[test]
fn payloads_held_while_other_reads_go_on_never_change() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Config { segment_size_bytes: 256 << 10, index_spacing_bytes: 4096, ..Config::default() };
    let mut shards = Vec::new();
    for name in ["acme_default_orders_0-0d3aed4b998d2798", "acme_default_orders_1-7c1b7e4a1d2f0a55"] {
        let dir = tmp.path().join(name);
        write_shard(&dir, &config, 200);
        shards.push(Arc::new(Shard::open_read_only(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, config.clone()).unwrap().0));
    }
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let shard = Arc::clone(&shards[usize::try_from(t % 2).unwrap()]);
            std::thread::spawn(move || {
                for round in 0..3u64 {
                    let (mut held, mut at) = (Vec::new(), (t * 7 + round * 13) % 50);
                    loop {
                        // Small and large budgets: windows from a page to a megabyte.
                        let max_bytes = if (at + round) % 3 == 0 { 300 } else { 1 << 20 };
                        let batch = shard.read(at, max_bytes).unwrap();
                        let Some(last) = batch.last() else { break };
                        at = last.offset + 1;
                        held.push(batch);
                    }
                    for r in held.iter().flatten() {
                        assert_eq!(&r.payload[..], &payload(r.offset)[..], "thread {t} round {round}: offset {}", r.offset);
                    }
                    assert_eq!(held.iter().map(Vec::len).sum::<usize>() as u64, 2000 - (t * 7 + round * 13) % 50);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Records larger than the largest window (1 MiB) and around it,
/// every budget from 0 up, payloads held while reads fail midway (the file
/// cut short under a read-only handle: a short read into a kept buffer) and
/// while other reads reuse the pool; nothing held ever changes, a failed
/// read hands nothing out, and reads after it are still exact.
#[test]
fn held_payloads_survive_huge_records_and_failed_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    let config = Config { segment_size_bytes: 8 << 20, index_spacing_bytes: 4096, ..Config::default() };
    let sizes = [10usize, (1 << 20) - 28, 1 << 20, (1 << 20) + 1, 3 << 20, 300 << 10, 0, 5, 2 << 20, 70_000];
    let body = |i: u64| -> Vec<u8> {
        let n = sizes[usize::try_from(i).unwrap() % sizes.len()];
        (0..n).map(|k| (k as u64).wrapping_mul(31).wrapping_add(i * 7) as u8).collect()
    };
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, config.clone()).unwrap();
    for i in 0..40u64 {
        shard.append(&[&body(i)]).unwrap();
    }
    drop(shard);
    let (shard, _) = Shard::open_read_only(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, config.clone()).unwrap();
    let mut held = Vec::new();
    for budget in [0usize, 1, 4096, 70_000, 1 << 20, (1 << 20) + 1, 5 << 20, usize::MAX] {
        for from in [0u64, 1, 2, 3, 4, 9, 17, 33] {
            let got = shard.read(from, budget).unwrap();
            assert!(!got.is_empty());
            assert_eq!(got[0].offset, from);
            for (k, r) in got.iter().enumerate() {
                assert_eq!(r.offset, from + k as u64);
                assert_eq!(&r.payload[..], &body(r.offset)[..], "budget {budget} from {from}");
            }
            held.push(got);
        }
    }
    // Cut the last segment short under the read-only handle: reads into it fail midway.
    let mut logs: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "log")).collect();
    logs.sort();
    let last = logs.last().unwrap().clone();
    let len = std::fs::metadata(&last).unwrap().len();
    let bytes = std::fs::read(&last).unwrap();
    std::fs::OpenOptions::new().write(true).open(&last).unwrap().set_len(len / 2).unwrap();
    let mut failed = 0;
    for from in 0..40u64 {
        for budget in [0usize, 1 << 20, usize::MAX] {
            match shard.read(from, budget) {
                Ok(got) => {
                    for r in &got {
                        assert_eq!(&r.payload[..], &body(r.offset)[..], "after the cut: from {from}");
                    }
                    held.push(got);
                }
                Err(_) => failed += 1,
            }
        }
    }
    assert!(failed > 0, "some reads met the cut");
    // Put it back (same bytes): reads are exact again, and nothing held changed.
    std::fs::write(&last, &bytes).unwrap();
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let dir = dir.clone();
            let config = config.clone();
            std::thread::spawn(move || {
                let (shard, _) = Shard::open_read_only(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, config).unwrap();
                for round in 0..20u64 {
                    let from = (round * 7 + t) % 40;
                    let got = shard.read(from, usize::try_from(round * 100_000).unwrap()).unwrap();
                    assert_eq!(got[0].offset, from);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for r in held.iter().flatten() {
        assert_eq!(&r.payload[..], &body(r.offset)[..], "held payload of offset {} changed", r.offset);
    }
}
