//! `felix-storage demo DIR`: a realistic sample root, written by the engine
//! itself and then damaged the ways real shards get damaged. The README and
//! the browser inspector's sample use it.
//!
//! | shard                       | what is in it |
//! |-----------------------------|---------------|
//! | `acme/default/orders/0`     | clean, many segments, an epochs file with three generations |
//! | `acme/default/payments/0`   | a torn tail: the newest segment ends mid-record (repairable) |
//! | `acme/default/audit/0`      | rot in the middle of an older segment (found by `inspect` and by reads) |
//! | `acme/default/clicks/0`     | a stale index: an entry points into the middle of a record (rebuilt) |

use std::path::{Path, PathBuf};
use std::sync::Arc;

use felix_codec::format::shard_name::ShardKey;

use crate::error::EngineError;
use crate::io::Io;
use crate::shard::{Config, Shard};

fn io_err(path: &Path, op: &'static str, e: &std::io::Error) -> EngineError {
    EngineError::io(path, op, e)
}

fn fill(io: &Arc<dyn Io>, root: &Path, stream: &str, records: u64, generations: &[(u64, u64)]) -> Result<PathBuf, EngineError> {
    let key = ShardKey { tenant: "acme", namespace: "default", stream, shard: 0 };
    let config = Config { segment_size_bytes: 4096, index_spacing_bytes: 512, ..Config::default() };
    let (shard, _) = Shard::open(Arc::clone(io), root, &key, config)?;
    for i in 0..records {
        if let Some((g, _)) = generations.iter().find(|(_, at)| *at == i) {
            shard.begin_generation(*g)?;
        }
        let payload =
            format!(r#"{{"{stream}_id":{i},"customer":"c-{:04}","amount_cents":{}}}"#, (i * 7919) % 10_000, 100 + (i * 37) % 9_000);
        shard.append(&[payload.as_bytes()])?;
    }
    Ok(shard.dir().to_path_buf())
}

/// The files of `dir` with extension `ext`, sorted (the shard's own names
/// sort by id).
fn segment_files(io: &dyn Io, dir: &Path, ext: &str) -> Result<Vec<PathBuf>, EngineError> {
    let mut v: Vec<PathBuf> = io
        .list(dir)
        .map_err(|e| io_err(dir, "list", &e))?
        .into_iter()
        .map(|e| dir.join(e.name))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some(ext))
        .collect();
    v.sort();
    Ok(v)
}

/// The largest file the sample damages: its own segments and indexes are a
/// few KiB; a file over this was not written by the sample, and is not read.
const DAMAGED_FILE_MAX_BYTES: u64 = 1 << 20;

/// Rewrites the sample's own file `path` as `f` changes its bytes, through
/// the engine's `Io` (in place, then synced).
fn damage(io: &dyn Io, path: &Path, f: impl FnOnce(&mut Vec<u8>)) -> Result<(), EngineError> {
    let len = io.len(path).map_err(|e| io_err(path, "read", &e))?;
    if len > DAMAGED_FILE_MAX_BYTES {
        let e = std::io::Error::other(format!("over {DAMAGED_FILE_MAX_BYTES} bytes: not a file the sample wrote"));
        return Err(io_err(path, "read", &e));
    }
    let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(0)];
    crate::io::read_exact_at(io, path, 0, &mut bytes).map_err(|e| io_err(path, "read", &e))?;
    f(&mut bytes);
    io.write_at(path, 0, &bytes)
        .and_then(|()| io.set_len(path, bytes.len() as u64))
        .and_then(|()| io.sync_data(path))
        .map_err(|e| io_err(path, "write", &e))
}

/// Writes the sample root under `root` through `io` (`OsIo` for the
/// command line); returns the shard directories.
///
/// # Errors
/// IO failures.
pub fn write_demo(io: &Arc<dyn Io>, root: &Path) -> Result<Vec<PathBuf>, EngineError> {
    let orders = fill(io, root, "orders", 400, &[(1, 0), (2, 150), (5, 320)])?;
    let payments = fill(io, root, "payments", 60, &[(1, 0)])?;
    let audit = fill(io, root, "audit", 120, &[])?;
    let clicks = fill(io, root, "clicks", 90, &[])?;
    let io = &**io;
    // A torn tail: the last record of the newest segment lost its final 9 bytes.
    if let Some(newest) = segment_files(io, &payments, "log")?.last() {
        damage(io, newest, |b| b.truncate(b.len().saturating_sub(9)))?;
    }
    // Rot: one payload byte in the middle of the oldest segment.
    if let Some(oldest) = segment_files(io, &audit, "log")?.first() {
        damage(io, oldest, |b| {
            let at = b.len() / 2;
            if let Some(x) = b.get_mut(at) {
                *x ^= 0x20;
            }
        })?;
    }
    // A stale index: the last entry of the oldest index points 5 bytes too far.
    if let Some(index) = segment_files(io, &clicks, "index")?.first() {
        damage(io, index, |b| {
            if let Some(x) = b.last_mut() {
                *x = x.wrapping_add(5);
            }
        })?;
    }
    Ok(vec![orders, payments, audit, clicks])
}
