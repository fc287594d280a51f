//! `Shard::try_commit` under `NoSync` and `Interval` answers without the
//! shard's lock, from the published truncation count (review 39 of the
//! change that made it so). Each test is named for the behaviour it expects.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use felix_engine::io::sim::SimIo;
use felix_engine::shard::{Append, Pending};
use felix_engine::{Config, Durability, EngineError, Io, Shard};

fn sim_dir() -> PathBuf {
    PathBuf::from("/sim/commit-unlocked")
}

fn one(shard: &Shard) -> Pending {
    shard.write(&[Append { payload: b"record", timestamp_micros: Some(1) }]).unwrap()
}

/// A truncation publishes what it changed as it lets the shard's lock go;
/// a thread that sees one of those answers — here the next offset falling
/// back to the cut — and then commits a batch the truncation cut must hear
/// `TruncatedAway`, never an acknowledgement. The truncation count was
/// published last, after the next offset: a commit that looked in between
/// found the count unchanged and acknowledged the cut batch. Rounds race a
/// truncation against a thread that spins on the next offset and commits
/// the moment it falls.
#[test]
fn a_commit_after_the_next_offset_shows_a_cut_reports_the_cut() {
    const ROUNDS: u64 = 5_000;
    let sim = Arc::new(SimIo::new());
    let config = Config { durability: Durability::NoSync, ..Config::default() };
    let shard = Arc::new(Shard::open_dir(Arc::clone(&sim) as Arc<dyn Io>, &sim_dir(), config).unwrap().0);
    one(&shard); // offset 0 stays: every round writes offset 1 and cuts it.
    let handed: Arc<Mutex<Option<Pending>>> = Arc::new(Mutex::new(None));
    let (round, answered) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let observer = {
        let (shard, handed, round, answered) = (Arc::clone(&shard), Arc::clone(&handed), Arc::clone(&round), Arc::clone(&answered));
        std::thread::spawn(move || -> Result<(), String> {
            for r in 1..=ROUNDS {
                while round.load(Ordering::Acquire) != r {
                    std::hint::spin_loop();
                }
                let pending = handed.lock().unwrap().take().unwrap();
                while shard.next_offset() > pending.offsets.start {
                    std::hint::spin_loop();
                }
                let answer = shard.try_commit(&pending);
                answered.store(r, Ordering::Release);
                match answer {
                    Err(EngineError::TruncatedAway { .. }) => {}
                    other => return Err(format!("round {r}: the next offset showed the cut, commit answered {other:?}")),
                }
            }
            Ok(())
        })
    };
    for r in 1..=ROUNDS {
        let pending = one(&shard);
        assert_eq!(pending.offsets, 1..2);
        *handed.lock().unwrap() = Some(pending);
        round.store(r, Ordering::Release);
        shard.truncate_after(0).unwrap();
        while answered.load(Ordering::Acquire) != r {
            if observer.is_finished() {
                break;
            }
            std::thread::yield_now();
        }
        if observer.is_finished() {
            break;
        }
    }
    observer.join().unwrap().unwrap();
}

/// Under `NoSync` and `Interval`, where `try_commit` may answer without the
/// lock: a truncation that cut a batch reports it (`TruncatedAway`, at the
/// cut) and one that cut above it does not; a batch written after the cut
/// is acknowledged; a stopped shard acknowledges nothing (`FailStopped`),
/// and a closed one answers `Closed`.
#[test]
fn commits_that_need_no_sync_still_hear_of_cuts_stops_and_closes() {
    for durability in [Durability::NoSync, Durability::Interval { micros: 3_600_000_000 }] {
        let sim = Arc::new(SimIo::new());
        let open = || Shard::open_dir(Arc::clone(&sim) as Arc<dyn Io>, &sim_dir(), Config { durability, ..Config::default() });
        let shard = open().unwrap().0;
        let (p0, p1) = (one(&shard), one(&shard));
        shard.truncate_after(1).unwrap(); // Cuts nothing: offsets 0 and 1 stay.
        assert!(shard.try_commit(&p1).unwrap(), "{durability:?}");
        let p2 = one(&shard);
        shard.truncate_after(0).unwrap();
        assert!(shard.try_commit(&p0).unwrap(), "{durability:?}: the cut was above offset 0");
        for cut in [&p1, &p2] {
            match shard.try_commit(cut) {
                Err(EngineError::TruncatedAway { cut_at: 1, .. }) => {}
                other => panic!("{durability:?}: {:?} cut at 1 answered {other:?}", cut.offsets),
            }
        }
        let after = one(&shard);
        assert_eq!(after.offsets, 1..2);
        assert!(shard.try_commit(&after).unwrap(), "{durability:?}");
        shard.commit(&after).unwrap();
        sim.fail_at(sim.mutations() + 1);
        assert!(shard.write(&[Append { payload: b"x", timestamp_micros: Some(1) }]).is_err());
        for pending in [&p0, &after] {
            match shard.try_commit(pending) {
                Err(EngineError::FailStopped { .. }) => {}
                other => panic!("{durability:?}: a stopped shard answered {other:?} for {:?}", pending.offsets),
            }
        }
        drop(shard);
        sim.clear_faults();
        let shard = open().unwrap().0;
        let last = one(&shard);
        shard.close().unwrap();
        assert!(matches!(shard.try_commit(&last), Err(EngineError::Closed { .. })), "{durability:?}");
        assert!(matches!(shard.commit(&last), Err(EngineError::Closed { .. })), "{durability:?}");
    }
}

/// A batch is acknowledged only by the opening of the shard that wrote it.
/// Another shard's durable offset says nothing of it (a broker that mixed up
/// two partitions' pending batches had the wrong one's sync acknowledge it),
/// nor does this shard's after it was closed and opened again (what the
/// batch held may have been cut, or never synced, since): both answer
/// `NotWrittenHere`, under every policy, the lock-free answer included.
#[test]
fn a_batch_is_committed_only_by_the_opening_of_the_shard_that_wrote_it() {
    for durability in [Durability::EveryBatch, Durability::NoSync, Durability::Interval { micros: 3_600_000_000 }] {
        let sim = Arc::new(SimIo::new());
        let open = |dir: &str| {
            let config = Config { durability, ..Config::default() };
            Shard::open_dir(Arc::clone(&sim) as Arc<dyn Io>, &sim_dir().join(dir), config).unwrap().0
        };
        let (a, b) = (open("a"), open("b"));
        one(&b);
        one(&b);
        b.sync_for_commit().unwrap(); // b is durable past a's batch
        let from_a = one(&a);
        for answer in [b.try_commit(&from_a).map(|_| ()), b.commit(&from_a), b.try_commit_inline(&from_a).map(|_| ())] {
            assert!(matches!(answer, Err(EngineError::NotWrittenHere { .. })), "{durability:?}: b answered {answer:?}");
        }
        a.commit(&from_a).unwrap();

        let unsynced = one(&a);
        a.close().unwrap();
        drop(a);
        let reopened = open("a");
        let answer = reopened.commit(&unsynced);
        let Err(e @ EngineError::NotWrittenHere { .. }) = answer else { panic!("{durability:?}: the reopened shard answered {answer:?}") };
        assert!(e.to_string().contains("offset 1"), "{e}");
        assert!(b.failure().is_none() && reopened.failure().is_none(), "a refused batch stops no shard");
    }
}
