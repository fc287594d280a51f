//! Retention: deletes whole oldest segments beyond the limits, never the
//! active one, and bounds the epochs history to what is still stored.

use std::path::PathBuf;

use felix_codec::epochs::bound_epochs;

use super::replication::write_epochs;
use super::Shard;
use crate::error::EngineError;

impl Shard {
    /// Deletes whole oldest segments beyond the retention limits, never the
    /// active one; drops epochs older than the oldest retained record.
    /// Returns the segment files deleted.
    ///
    /// # Errors
    /// `ReadOnly`, `FailStopped`, IO failures (which stop the shard).
    pub fn apply_retention(&self, now_micros: u64) -> Result<Vec<PathBuf>, EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        shared.dir.io.mutation(|| self.retain(now_micros))
    }

    fn retain(&self, now_micros: u64) -> Result<Vec<PathBuf>, EngineError> {
        let shared = &*self.shared;
        let mut g = shared.lock();
        let mut removed = Vec::new();
        while g.segments.len() > 1 {
            let total: u64 = g.segments.iter().map(|s| s.len).sum();
            let Some(oldest) = g.segments.first() else { break };
            let over_bytes = shared.config.retention_bytes.is_some_and(|limit| total > limit);
            let too_old = shared.config.retention_age_micros.is_some_and(|age| now_micros.saturating_sub(oldest.last_timestamp) > age);
            if !over_bytes && !too_old {
                break;
            }
            let id = oldest.id;
            shared.dir.io.remove_if_exists(&shared.dir.index(id))?;
            shared.dir.io.remove_if_exists(&shared.dir.log(id))?;
            g.segments.remove(0);
            removed.push(shared.dir.log(id));
        }
        if !removed.is_empty() {
            shared.dir.io.sync_dir(&shared.dir.path)?;
            let first = g.segments.first().map_or(g.next_offset, |s| s.base);
            let bounded = bound_epochs(&g.epochs, first);
            if bounded != g.epochs {
                write_epochs(shared, &bounded)?;
                g.epochs = bounded;
            }
        }
        Ok(removed)
    }
}
