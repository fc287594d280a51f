//! What a shard publishes for its lock-free accessors (`shard/published.rs`:
//! the segment list, the generation history, `generation_end`, the offsets)
//! attacked by a hostile review (the 35th): each answer is one the shard's
//! state held at some instant, under races with appends, rolls, retention,
//! truncations and new generations. Each test is named for the behaviour it
//! expects.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use felix_engine::io::sim::SimIo;
use felix_engine::shard::SegmentInfo;
use felix_engine::{Config, Durability, Io, Shard};

fn sim_dir() -> PathBuf {
    PathBuf::from("/sim/published")
}

fn open(sim: &Arc<SimIo>, config: Config) -> Shard {
    Shard::open_dir(Arc::clone(sim) as Arc<dyn Io>, &sim_dir(), config).unwrap().0
}

/// Whether `list` is one a shard could hold: ids rising, each segment
/// starting where the one before it ends, none ending before it starts.
fn well_formed(list: &[SegmentInfo]) -> Result<(), String> {
    for s in list {
        if s.next_offset < s.base_offset {
            return Err(format!("segment {} ends ({}) before it starts ({}): {list:?}", s.id, s.next_offset, s.base_offset));
        }
    }
    for pair in list.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.id <= a.id {
            return Err(format!("ids not rising ({} then {}): {list:?}", a.id, b.id));
        }
        if a.next_offset != b.base_offset {
            return Err(format!("segment {} ends at {}, the next starts at {}: {list:?}", a.id, a.next_offset, b.base_offset));
        }
    }
    Ok(())
}

/// A leader answers `generation_end(g)` to a follower, which truncates to
/// it: the answer must be one the history ever gave. Generation `k` here
/// begins at offset `10 (k - 1)` and holds exactly ten records, so no
/// instant ever had it end past `10 k`. `generation_end` read the published
/// history and the published next offset one after the other: a history
/// read just before `begin_generation(k + 1)` paired with a next offset
/// read after appends of generation `k + 1` made generation `k` end at
/// their end — past where the next generation starts, so a follower of
/// generation `k` keeps records the leader holds as `k + 1`'s (divergence
/// never cut).
#[test]
fn generation_end_never_answers_past_where_the_next_generation_starts() {
    let sim = Arc::new(SimIo::new());
    let shard = Arc::new(open(&sim, Config { durability: Durability::NoSync, ..Config::default() }));
    let started = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..6)
        .map(|_| {
            let (shard, started, stop) = (Arc::clone(&shard), Arc::clone(&started), Arc::clone(&stop));
            std::thread::spawn(move || -> Result<u64, String> {
                let mut asked = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let k = started.load(Ordering::SeqCst);
                    if k == 0 {
                        std::hint::spin_loop();
                        continue;
                    }
                    asked += 1;
                    if let Some(end) = shard.generation_end(k) {
                        if end > 10 * k {
                            stop.store(true, Ordering::Relaxed);
                            return Err(format!("generation {k} (offsets {}..{}) answered as ending at {end}", 10 * (k - 1), 10 * k));
                        }
                    }
                }
                Ok(asked)
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut k = 0;
    while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        k += 1;
        shard.begin_generation(k).unwrap();
        started.store(k, Ordering::SeqCst);
        for _ in 0..10 {
            shard.append(&[b"r"]).unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap().unwrap();
    }
    assert!(k > 10, "only {k} generations");
}

/// Readers of `segments()` on many threads while appends roll segments, a
/// retention pass deletes the oldest and truncations cut into sealed
/// segments: every list is well formed (no torn active entry — the old
/// active's id with the new one's offsets —, no gap, no duplicate), and
/// no reader is held.
#[test]
fn segments_read_during_rolls_retention_and_truncations_are_never_torn() {
    let sim = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 256, retention_bytes: Some(2048), durability: Durability::NoSync, ..Config::default() };
    let shard = Arc::new(open(&sim, config));
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (shard, stop) = (Arc::clone(&shard), Arc::clone(&stop));
            std::thread::spawn(move || -> Result<u64, String> {
                let mut lists = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let list = shard.segments();
                    if let Err(e) = well_formed(&list) {
                        stop.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                    lists += 1;
                }
                Ok(lists)
            })
        })
        .collect();
    let retainer = {
        let (shard, stop) = (Arc::clone(&shard), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = shard.apply_retention(u64::MAX / 2);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut round = 0u64;
    while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        round += 1;
        for _ in 0..20 {
            shard.append(&[&[b'p'; 60]]).unwrap();
        }
        // Cut into a sealed segment when one is still there, sometimes to
        // the start of the log (a restart).
        let (first, next) = (shard.first_offset(), shard.next_offset());
        let keep = if round.is_multiple_of(7) { first } else { next.saturating_sub(9).max(first) };
        shard.truncate_from(keep).unwrap();
        if round.is_multiple_of(5) {
            let _ = shard.seal().unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    retainer.join().unwrap();
    let lists: u64 = readers.into_iter().map(|r| r.join().unwrap().unwrap()).sum();
    assert!(lists > 100, "only {lists} lists read");
    assert!(round > 20, "only {round} rounds");
    shard.check_published().unwrap();
}

/// `unsynced_bytes` (now published, no longer read under the lock) never
/// claims more durable than the disk: under `Interval`, while an appender
/// writes and seals, a sampler reads the next offset, then the unsynced
/// bytes, and when they say nothing is left to sync takes the disk as a
/// power cut would leave it; the log reopened from it reaches that offset.
#[test]
fn no_unsynced_bytes_read_at_any_moment_survives_a_power_cut_taken_right_after() {
    let sim = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 1024, durability: Durability::Interval { micros: 300 }, ..Config::default() };
    let shard = Arc::new(open(&sim, config));
    let stop = Arc::new(AtomicBool::new(false));
    let appender = {
        let (shard, stop) = (Arc::clone(&shard), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                shard.append(&[&vec![b'a' + (i % 26) as u8; 40 + (i as usize % 7) * 30]]).unwrap();
                i += 1;
                if i.is_multiple_of(41) {
                    let _ = shard.seal().unwrap();
                }
            }
        })
    };
    let (mut checked, mut highest, started) = (0, 0, Instant::now());
    while checked < 60 && started.elapsed() < Duration::from_secs(10) {
        let next = shard.next_offset();
        if shard.unsynced_bytes() != 0 {
            std::thread::yield_now();
            continue;
        }
        let crashed = sim.crash();
        let (reopened, _) = Shard::open_read_only(Arc::new(crashed) as Arc<dyn Io>, &sim_dir(), Config::default()).unwrap();
        assert!(
            reopened.next_offset() >= next,
            "no unsynced bytes at next offset {next}, a power cut right after keeps up to {}",
            reopened.next_offset()
        );
        checked += 1;
        highest = next;
        std::thread::sleep(Duration::from_millis(2));
    }
    stop.store(true, Ordering::Relaxed);
    appender.join().unwrap();
    assert!(checked > 5 && highest > 100, "only {checked} samples with nothing unsynced (the last at {highest})");
}

/// After every call returns, the published segment list and history are
/// the shard's own (`check_published`) and what a reader opening the
/// directory afresh finds, through the sequences whose lists change while
/// their ends look alike: a cut into a sealed segment whose ids a roll
/// then takes again at the same base, retention, a restart below the
/// oldest record, and a history past `MAX_EPOCHS` (the oldest dropped as
/// each new one comes).
#[test]
fn the_published_lists_match_a_fresh_open_after_cuts_rolls_retention_restarts_and_a_full_history() {
    let sim = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 256, retention_bytes: Some(1500), ..Config::default() };
    let shard = open(&sim, config.clone());
    let agree = |what: &str| {
        shard.check_published().unwrap_or_else(|e| panic!("after {what}: {e}"));
        let (fresh, _) = Shard::open_read_only(Arc::clone(&sim) as Arc<dyn Io>, &sim_dir(), config.clone()).unwrap();
        assert_eq!(shard.segments(), fresh.segments(), "after {what}: segments");
        assert_eq!(shard.epochs(), fresh.epochs(), "after {what}: generations");
        well_formed(&shard.segments()).unwrap_or_else(|e| panic!("after {what}: {e}"));
    };
    let append = |n: usize, len: usize| {
        for _ in 0..n {
            shard.append(&[&vec![b'x'; len]]).unwrap();
        }
    };
    shard.begin_generation(1).unwrap();
    append(12, 40);
    agree("appends");
    shard.begin_generation(2).unwrap();
    append(12, 40);
    agree("a second generation");
    let before = shard.segments();
    assert!(before.len() >= 4, "{before:?}");
    // Cut into the second-newest segment, then refill it to the same end
    // with records of another size and roll: the same ids, the same bases.
    let sealed = before[before.len() - 2];
    shard.truncate_after(sealed.base_offset).unwrap();
    agree("a cut into a sealed segment");
    while shard.next_offset() < sealed.next_offset {
        shard.append(&[b"y"]).unwrap();
    }
    let _ = shard.seal().unwrap();
    agree("a refill and a roll");
    shard.begin_generation(3).unwrap();
    append(6, 40);
    agree("a third generation");
    shard.apply_retention(felix_engine::shard::now_micros()).unwrap();
    agree("retention");
    let first = shard.first_offset();
    assert!(first > 3, "retention removed nothing: {:?}", shard.segments());
    shard.truncate_from(first - 3).unwrap();
    assert_eq!((shard.first_offset(), shard.next_offset()), (first - 3, first - 3));
    agree("a restart below the oldest record");
    for k in 4..(4 + 1030) {
        shard.append(&[b"z"]).unwrap();
        shard.begin_generation(k).unwrap();
        if k.is_multiple_of(200) {
            agree("generations");
        }
    }
    agree("a history past MAX_EPOCHS");
    assert_eq!(shard.epochs().len(), usize::from(felix_codec::format::epochs::MAX_EPOCHS));
    let keep = shard.next_offset() - 300;
    shard.truncate_from(keep).unwrap();
    agree("a cut through the full history");
}

#[path = "support/gated.rs"]
mod gated;

/// An `Io` whose `sync_data` panics in a roll, under the shard's lock (the
/// publish runs as the lock is let go, while the panic unwinds): readers
/// of the lock-free answers on other threads are never held, and the list
/// they read is the shard's.
#[test]
fn a_sync_panicking_under_the_shards_lock_holds_no_reader_of_the_segment_list() {
    let sim = Arc::new(SimIo::new());
    let io = Arc::new(gated::Gated::new(Arc::clone(&sim)));
    let config = Config { segment_size_bytes: 256, durability: Durability::NoSync, ..Config::default() };
    let shard = Arc::new(Shard::open_dir(Arc::clone(&io) as Arc<dyn Io>, &sim_dir(), config).unwrap().0);
    for _ in 0..4 {
        shard.append(&[&[b'x'; 40]]).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (shard, stop) = (Arc::clone(&shard), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                well_formed(&shard.segments()).unwrap();
                let _ = shard.generation_end(1);
                reads += 1;
            }
            reads
        })
    };
    io.panic_next.store(true, Ordering::SeqCst);
    let roller = {
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || {
            for _ in 0..8 {
                let _ = shard.append(&[&[b'y'; 40]]);
            }
        })
    };
    assert!(roller.join().is_err(), "the roll's sync never panicked");
    let (tx, rx) = std::sync::mpsc::channel();
    let asker = {
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || tx.send((shard.segments(), shard.epochs(), shard.unsynced_bytes())).unwrap())
    };
    let answer = rx.recv_timeout(Duration::from_secs(10));
    stop.store(true, Ordering::Relaxed);
    assert!(answer.is_ok(), "segments() held after a panicking sync");
    asker.join().unwrap();
    assert!(reader.join().unwrap() > 0);
    shard.check_published().unwrap();
}
