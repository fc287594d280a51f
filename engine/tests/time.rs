//! Issue 20: `Shard::offset_for_time` against a linear scan of what `read`
//! returns, on random, non-monotonic timestamps (a clock that steps back,
//! repeats, jumps to the extremes), across segment boundaries, retention,
//! truncation and reopening.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::PathBuf;
use std::sync::Arc;

use felix_engine::io::sim::SimIo;

use felix_engine::shard::{Append, Config, Shard};
use felix_engine::Io;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

fn dir() -> PathBuf {
    PathBuf::from("/t/acme_default_orders_0-0d3aed4b998d2798")
}

fn open(io: &Arc<SimIo>, config: Config) -> Shard {
    Shard::open_dir(Arc::clone(io) as Arc<dyn Io>, &dir(), config).unwrap().0
}

#[path = "support/shard.rs"]
mod shard_support;

/// Every visible record's `(offset, timestamp)`, by `read`.
fn all(shard: &Shard) -> Vec<(u64, u64)> {
    shard_support::visible(shard, |r| (r.offset, r.timestamp_micros))
}

fn linear(records: &[(u64, u64)], target: u64) -> Option<u64> {
    records.iter().find(|(_, ts)| *ts >= target).map(|(o, _)| *o)
}

fn next_ts(rng: &mut Rng, ts: &mut u64) -> u64 {
    *ts = match rng.below(12) {
        0 => ts.saturating_sub(rng.below(5_000)),
        1 => *ts,
        2 if rng.chance(5) => u64::MAX,
        3 if rng.chance(5) => 0,
        _ => ts.saturating_add(rng.below(300)),
    };
    *ts
}

fn check(shard: &Shard, rng: &mut Rng, seed: u64) {
    let records = all(shard);
    for _ in 0..40 {
        let target = match rng.below(5) {
            0 if !records.is_empty() => records[rng.below(records.len() as u64) as usize].1,
            1 => u64::MAX,
            2 => 0,
            _ => 1_000_000 + rng.below(40_000),
        };
        assert_eq!(shard.offset_for_time(target).unwrap(), linear(&records, target), "seed {seed}, target {target}");
    }
}

#[test]
fn the_offset_for_a_time_is_what_a_linear_scan_finds() {
    for seed in 0..60 {
        let mut rng = Rng(seed);
        let io = Arc::new(SimIo::new());
        let config = Config { segment_size_bytes: 300 + rng.below(3_000), index_spacing_bytes: 1 + rng.below(400), ..Config::default() };
        let mut shard = open(&io, config.clone());
        let mut ts = 1_000_000 + rng.below(10_000);
        for step in 0..30 {
            let n = 1 + rng.below(20);
            let payloads: Vec<Vec<u8>> = (0..n).map(|i| vec![b'x'; (rng.below(90) + i) as usize]).collect();
            let batch: Vec<Append<'_>> =
                payloads.iter().map(|p| Append { payload: p, timestamp_micros: Some(next_ts(&mut rng, &mut ts)) }).collect();
            let pending = shard.write(&batch).unwrap();
            shard.commit(&pending).unwrap();
            match rng.below(10) {
                0 => {
                    // A follower's truncation: the log under the time index changes.
                    let next = shard.next_offset();
                    let keep = shard.first_offset() + rng.below(next - shard.first_offset() + 1);
                    if keep > shard.first_offset() {
                        shard.truncate_after(keep - 1).unwrap();
                    }
                }
                1 => {
                    shard.close().unwrap();
                    shard = open(&io, config.clone());
                }
                2 => {
                    // Retention by size: whole oldest segments go.
                    let retained = Config { retention_bytes: Some(1 + rng.below(4_000)), ..config.clone() };
                    shard.close().unwrap();
                    shard = open(&io, retained);
                    shard.apply_retention(u64::MAX / 2).unwrap();
                }
                _ => {}
            }
            if step % 3 == 0 {
                check(&shard, &mut rng, seed);
            }
        }
        check(&shard, &mut rng, seed);
    }
}

#[test]
fn an_empty_shard_has_no_offset_for_any_time() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, Config::default());
    assert_eq!(shard.offset_for_time(0).unwrap(), None);
    assert_eq!(shard.offset_for_time(u64::MAX).unwrap(), None);
}
