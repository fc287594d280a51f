//! One shard directory on disk: where its files live, how they are created
//! durably, the evidence recovery keeps, which entries are the engine's own,
//! and the single writer's lock. Every call goes through the shard's
//! [`CheckedIo`], so a failure here stops the shard.
//!
//! Durability rules (each a function here, so no caller re-derives them):
//! - a directory the engine creates is fsynced in its parent before anything
//!   in it is acknowledged ([`ShardDir::create`]);
//! - a file comes to exist only by being created without replacing
//!   anything: temp → write → fsync → link → fsync directory
//!   ([`ShardDir::create_file_durably`]); a segment is never replaced;
//! - the engine's own derived files it holds under its lock (the epochs
//!   file, an index it rebuilds) are replaced atomically: temp → write →
//!   fsync → rename → fsync directory ([`ShardDir::rewrite_own_file`]);
//! - evidence is published with a hard link, which never replaces: an
//!   existing piece of evidence is never overwritten, a second cut at the
//!   same byte gets the next free name ([`ShardDir::keep_evidence`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use felix_codec::format::epochs::MAX_EPOCHS_FILE_LEN;
use felix_codec::format::file_name::{
    classify, damaged_epochs_name, evidence_note_name, index_file_name, segment_file_name, temporary_name, EntryName, EPOCHS_FILE_NAME,
    MAX_EVIDENCE_ATTEMPTS,
};

use crate::error::EngineError;
use crate::io::checked::CheckedIo;
use crate::io::{EntryType, Io, LockGuard};

/// Bytes copied per step when evidence is kept.
const COPY_CHUNK_BYTES: usize = 1 << 20;
/// The shard directory and the shard's one IO path.
#[derive(Debug)]
pub(crate) struct ShardDir {
    pub(crate) io: CheckedIo,
    pub(crate) path: PathBuf,
    /// The directory's name, for finding sites.
    pub(crate) name: String,
    /// The last segment's and index's paths asked for: every append names
    /// the active segment, and formatting its name each time is dear.
    recent: std::sync::Mutex<RecentPaths>,
}

/// The last `(id, path)` of each kind [`ShardDir`] formatted.
#[derive(Debug, Default)]
struct RecentPaths {
    log: Option<(u64, Arc<Path>)>,
    index: Option<(u64, Arc<Path>)>,
}

/// The directory's entries, sorted into what the engine may touch.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Segment ids, ascending.
    pub(crate) segments: Vec<u64>,
    /// Index ids present.
    pub(crate) indexes: Vec<u64>,
    /// Whether an epochs file is present.
    pub(crate) epochs: bool,
    /// The engine's own leftover temporaries.
    pub(crate) temporaries: Vec<String>,
    /// Evidence recovery kept (and its notes): names a new piece of evidence must not take.
    pub(crate) evidence: Vec<String>,
    /// Names that are not the engine's (never read, changed or removed).
    pub(crate) foreign: Vec<String>,
}

/// `parent` of a path, `.` for a bare relative name.
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl ShardDir {
    /// The directory `path`, reached through `io`.
    pub(crate) fn new(io: Arc<dyn Io>, path: &Path) -> Self {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Self { io: CheckedIo::new(io), path: path.to_path_buf(), name, recent: std::sync::Mutex::default() }
    }

    /// `NoShard` when nothing is at the path, `NotRegular` when something
    /// other than a directory is (a link is never followed).
    pub(crate) fn must_be_dir(&self) -> Result<(), EngineError> {
        match self.io.kind(&self.path)? {
            Some(crate::io::EntryType::Dir) => Ok(()),
            Some(other) => Err(EngineError::NotRegular { path: self.path.clone(), what: other.describe() }),
            None => Err(EngineError::NoShard { dir: self.path.clone() }),
        }
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub(crate) fn log(&self, id: u64) -> PathBuf {
        self.log_path(id).to_path_buf()
    }

    pub(crate) fn index(&self, id: u64) -> PathBuf {
        self.index_path(id).to_path_buf()
    }

    /// As [`ShardDir::log`], shared: the append path's (no allocation).
    pub(crate) fn log_path(&self, id: u64) -> Arc<Path> {
        self.recent_path(id, |r| &mut r.log, segment_file_name)
    }

    /// As [`ShardDir::index`], shared.
    pub(crate) fn index_path(&self, id: u64) -> Arc<Path> {
        self.recent_path(id, |r| &mut r.index, index_file_name)
    }

    fn recent_path(
        &self,
        id: u64,
        slot: impl FnOnce(&mut RecentPaths) -> &mut Option<(u64, Arc<Path>)>,
        name: fn(u64) -> String,
    ) -> Arc<Path> {
        let mut recent = self.recent.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let slot = slot(&mut recent);
        match slot {
            Some((known, path)) if *known == id => Arc::clone(path),
            _ => Arc::clone(&slot.insert((id, Arc::from(self.file(&name(id)).as_path()))).1),
        }
    }

    pub(crate) fn epochs(&self) -> PathBuf {
        self.file(EPOCHS_FILE_NAME)
    }

    /// Creates the directory and any missing ancestors, each fsynced in its
    /// parent; then fsyncs the shard directory's parent and grandparent even
    /// when they existed, so a directory a crashed run created but never made
    /// durable is made durable now, before anything in it is acknowledged.
    pub(crate) fn create(&self) -> Result<(), EngineError> {
        let mut missing = Vec::new();
        let mut at = Some(self.path.as_path());
        while let Some(dir) = at.filter(|d| !d.as_os_str().is_empty()) {
            match self.io.kind(dir)? {
                Some(EntryType::Dir) => break,
                // A root reached through a symbolic link is followed (data disks
                // are often linked in); the shard directory itself never is.
                Some(EntryType::Symlink) if dir != self.path => break,
                Some(other) => return Err(EngineError::NotRegular { path: dir.to_path_buf(), what: other.describe() }),
                None => missing.push(dir.to_path_buf()),
            }
            at = dir.parent();
        }
        for dir in missing.iter().rev() {
            // Another writer may create it first: then it exists, and is made durable all the same.
            self.io.create_dir_if_missing(dir)?;
            if self.io.kind(dir)? != Some(EntryType::Dir) {
                let what = self.io.kind(dir)?.map_or("missing", EntryType::describe);
                return Err(EngineError::NotRegular { path: dir.clone(), what });
            }
            self.io.sync_dir(&parent_of(dir))?;
        }
        let root = parent_of(&self.path);
        self.io.sync_dir(&root)?;
        if root.parent().is_some() {
            self.io.sync_dir(&parent_of(&root))?;
        }
        Ok(())
    }

    /// The exclusive writer lock, held for the life of the guard; fails at
    /// once with `Locked` (naming the holder's pid when known) unless `wait`.
    pub(crate) fn lock(&self, wait: bool) -> Result<LockGuard, EngineError> {
        match self.io.lock(&self.path, wait) {
            Ok(guard) => {
                // Checked once taken too: the directory may have been swapped
                // between its creation and the lock.
                guard.verify().map_err(|e| EngineError::io(&self.path, "lock", &e))?;
                Ok(guard)
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let pid = self.io.lock_holder(&self.path).ok().flatten().and_then(|h| h.pid);
                Err(EngineError::Locked { dir: self.path.clone(), pid })
            }
            Err(e) => Err(EngineError::io(&self.path, "lock", &e)),
        }
    }

    /// Whether a writer holds the shard right now.
    pub(crate) fn writer_live(&self) -> bool {
        self.io.lock_holder(&self.path).ok().flatten().is_some()
    }

    /// The entries, sorted. A Felix name on something that is not a regular
    /// file is refused (never followed, never replaced).
    pub(crate) fn listing(&self) -> Result<Listing, EngineError> {
        let mut out = Listing::default();
        for entry in self.io.list(&self.path)? {
            let Some(name) = entry.name.to_str() else {
                out.foreign.push(entry.name.to_string_lossy().into_owned());
                continue;
            };
            let class = classify(name);
            let ours = !matches!(class, EntryName::Foreign);
            if ours && entry.kind != EntryType::File {
                return Err(EngineError::NotRegular { path: self.file(name), what: entry.kind.describe() });
            }
            match class {
                EntryName::Segment(id) => out.segments.push(id),
                EntryName::Index(id) => out.indexes.push(id),
                EntryName::Epochs => out.epochs = true,
                EntryName::Temporary => out.temporaries.push(name.to_string()),
                EntryName::Evidence { .. } => out.evidence.push(name.to_string()),
                EntryName::Lock | EntryName::DamagedEpochs => {}
                EntryName::Foreign => out.foreign.push(name.to_string()),
            }
        }
        out.segments.sort_unstable();
        Ok(out)
    }

    /// Replaces the engine's own file `name` (the epochs file, an index it
    /// rebuilds, the segment a `truncate_from` empties — all held under the
    /// writer's lock) with `bytes`: temp → write → fsync → rename → fsync
    /// directory. Never used to make a file come to exist: that is
    /// [`ShardDir::create_file_durably`].
    pub(crate) fn replace_file_durably(&self, name: &str, bytes: &[u8]) -> Result<(), EngineError> {
        let tmp = self.write_temporary(name, bytes)?;
        self.io.rename(&tmp, &self.file(name))?;
        self.io.sync_dir(&self.path)
    }

    /// Writes the engine's own file `name` (the epochs file, an index): an
    /// existing one is replaced atomically, a missing one is created without
    /// replacing anything (see the module doc).
    pub(crate) fn rewrite_own_file(&self, name: &str, bytes: &[u8]) -> Result<(), EngineError> {
        if self.io.kind(&self.file(name))?.is_some() {
            self.replace_file_durably(name, bytes)
        } else {
            self.create_file_durably(name, bytes)
        }
    }

    /// Creates the file `name` holding `bytes`, never replacing anything:
    /// temp → write → fsync → link (which fails when the name exists) →
    /// remove the temporary → fsync directory. A name already taken stops
    /// the shard with `AlreadyExists` and leaves the existing file as it was.
    pub(crate) fn create_file_durably(&self, name: &str, bytes: &[u8]) -> Result<(), EngineError> {
        let tmp = self.write_temporary(name, bytes)?;
        let path = self.file(name);
        if !self.io.link_new(&tmp, &path)? {
            self.io.remove_if_exists(&tmp)?;
            let e =
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, "the name is taken; a Felix file is never replaced by a new one");
            return Err(self.io.latch(EngineError::io(&path, "create", &e)));
        }
        self.io.remove_if_exists(&tmp)?;
        self.io.sync_dir(&self.path)
    }

    /// `name`'s temporary, written and fsynced; returns its path.
    fn write_temporary(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, EngineError> {
        let tmp = self.file(&temporary_name(name));
        self.io.remove_if_exists(&tmp)?;
        self.io.create(&tmp)?;
        self.io.write_at(&tmp, 0, bytes)?;
        self.io.sync_data(&tmp)?;
        Ok(tmp)
    }

    /// Copies `len` bytes of `source` from `from` into a new evidence file
    /// named `name_for(1)` (or the first free `name_for(K)`), with a JSON note beside
    /// it, both durable before this returns. Never replaces anything:
    /// returns the name used. The evidence is published (linked under its
    /// name) only once its copy and its note are durable as temporaries, and
    /// the note right after it; on any failure the temporaries this call made
    /// (and an evidence name it published without its note) are removed
    /// again, so a failed cut leaves nothing the account does not tell — at
    /// worst a temporary whose removal failed too, which the next recovery
    /// removes (`remove-temporary`).
    pub(crate) fn keep_evidence(
        &self,
        name_for: &dyn Fn(u32) -> String,
        source: &Path,
        from: u64,
        len: u64,
        note: &serde_json::Value,
    ) -> Result<String, EngineError> {
        let tmp = self.file(&temporary_name(&name_for(1)));
        let note_tmp = self.file(&temporary_name(&evidence_note_name(&name_for(1))));
        let kept =
            self.copy_to_temporary(&tmp, source, from, len).and_then(|()| self.publish_with_note(&tmp, true, &note_tmp, name_for, note));
        if kept.is_err() {
            // Past the latch: what stays is removed by the next recovery.
            self.io.remove_own_after_failure(&tmp);
            self.io.remove_own_after_failure(&note_tmp);
        }
        kept
    }

    /// `len` bytes of `source` from `from`, copied into the new temporary `tmp` and fsynced.
    fn copy_to_temporary(&self, tmp: &Path, source: &Path, from: u64, len: u64) -> Result<(), EngineError> {
        self.io.remove_if_exists(tmp)?;
        self.io.create(tmp)?;
        let mut buf = vec![0u8; COPY_CHUNK_BYTES.min(usize::try_from(len).unwrap_or(COPY_CHUNK_BYTES))];
        let mut done = 0u64;
        while done < len {
            let n = usize::try_from(len - done).unwrap_or(usize::MAX).min(buf.len());
            let chunk = buf.get_mut(..n).unwrap_or_default();
            self.io.read_exact_at(source, from + done, chunk)?;
            self.io.write_at(tmp, done, chunk)?;
            done += n as u64;
        }
        self.io.sync_data(tmp)
    }

    /// Publishes the durable temporary `tmp` under the first `name_for(K)`
    /// free with its note's name, after its note (written to `note_tmp`) is
    /// durable: link the evidence, link the note, remove the temporaries
    /// (`tmp` only when `tmp_is_ours`), fsync the directory. A note link that fails takes the evidence's name
    /// away again (the caller removes the temporaries).
    fn publish_with_note(
        &self,
        tmp: &Path,
        tmp_is_ours: bool,
        note_tmp: &Path,
        name_for: &dyn Fn(u32) -> String,
        note: &serde_json::Value,
    ) -> Result<String, EngineError> {
        for attempt in 1..=MAX_EVIDENCE_ATTEMPTS {
            let name = name_for(attempt);
            let note_name = evidence_note_name(&name);
            if self.io.kind(&self.file(&name))?.is_some() || self.io.kind(&self.file(&note_name))?.is_some() {
                continue;
            }
            self.write_note_temporary(note_tmp, &name, note)?;
            if !self.io.link_new(tmp, &self.file(&name))? {
                continue;
            }
            match self.io.link_new(note_tmp, &self.file(&note_name)) {
                Ok(true) => {}
                linked => {
                    self.io.remove_own_after_failure(&self.file(&name));
                    let e = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "the note's name was taken meanwhile");
                    return Err(linked.err().unwrap_or_else(|| self.io.latch(EngineError::io(&self.file(&note_name), "link", &e))));
                }
            }
            if tmp_is_ours {
                self.io.remove_if_exists(tmp)?;
            }
            self.io.remove_if_exists(note_tmp)?;
            self.io.sync_dir(&self.path)?;
            return Ok(name);
        }
        Err(self.every_name_taken(name_for))
    }

    /// Every name `name_for` gives is taken: the shard stops, and the error
    /// names the evidence's own name (not a temporary).
    fn every_name_taken(&self, name_for: &dyn Fn(u32) -> String) -> EngineError {
        let e = std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "this name and its {} numbered variants are taken: move some evidence out of the shard's folder",
                MAX_EVIDENCE_ATTEMPTS - 1
            ),
        );
        self.io.latch(EngineError::io(&self.file(&name_for(1)), "keep evidence", &e))
    }

    /// The note for the evidence `name` (its name filled in), written to the
    /// new temporary `note_tmp` and fsynced.
    fn write_note_temporary(&self, note_tmp: &Path, name: &str, note: &serde_json::Value) -> Result<(), EngineError> {
        let mut note = note.clone();
        note["evidence"] = name.into();
        self.io.remove_if_exists(note_tmp)?;
        self.io.create(note_tmp)?;
        self.io.write_at(note_tmp, 0, note.to_string().as_bytes())?;
        self.io.sync_data(note_tmp)
    }

    /// Keeps the whole file `source` as evidence under the first free
    /// `name_for(K)`: a second name of the same file (a hard link: nothing is
    /// copied, a sparse file stays sparse — an orphaned index may be a file
    /// planted there, of any size), with its JSON note, both durable before
    /// this returns, so removing `source` next destroys nothing. A failure
    /// takes the evidence name away again (`source` keeps the bytes) and
    /// removes the note's temporary.
    pub(crate) fn keep_whole_as_evidence(
        &self,
        name_for: &dyn Fn(u32) -> String,
        source: &Path,
        note: &serde_json::Value,
    ) -> Result<String, EngineError> {
        let note_tmp = self.file(&temporary_name(&evidence_note_name(&name_for(1))));
        let kept = self.publish_with_note(source, false, &note_tmp, name_for, note);
        if kept.is_err() {
            self.io.remove_own_after_failure(&note_tmp);
        }
        kept
    }

    /// Keeps the (damaged) epochs file as evidence under the first free
    /// `epochs.damaged[-K]`, before a sound one replaces it, durable before
    /// this returns. Its bytes are copied through `epochs.tmp` (a name of
    /// the format's own, which recovery clears) and linked to that name: a
    /// second name of the same file would, after a crash before the rename
    /// of the new epochs file, leave `epochs` and its evidence one file, and
    /// an operator's change to `epochs` would change the evidence (the
    /// simulator's seed 212451). A file longer than any epochs file
    /// ([`MAX_EPOCHS_FILE_LEN`]) is not one the engine wrote: it gets the
    /// second name, so none of its bytes are written again. Returns the name used.
    pub(crate) fn keep_damaged_epochs(&self) -> Result<String, EngineError> {
        let epochs = self.epochs();
        let len = self.io.len(&epochs)?;
        if len > MAX_EPOCHS_FILE_LEN as u64 {
            let name = self.first_free_link(&epochs, &damaged_epochs_name)?;
            self.io.sync_dir(&self.path)?;
            return Ok(name);
        }
        let tmp = self.file(&temporary_name(EPOCHS_FILE_NAME));
        let kept = self.copy_to_temporary(&tmp, &epochs, 0, len).and_then(|()| self.first_free_link(&tmp, &damaged_epochs_name));
        match kept {
            Ok(name) => {
                self.io.remove_if_exists(&tmp)?;
                // Durable before the rename that will take the old name away.
                self.io.sync_dir(&self.path)?;
                Ok(name)
            }
            Err(e) => {
                self.io.remove_own_after_failure(&tmp);
                Err(e)
            }
        }
    }

    /// Links `source` to the first free `name_for(1)`, `name_for(2)`, …;
    /// returns the name used.
    fn first_free_link(&self, source: &Path, name_for: &dyn Fn(u32) -> String) -> Result<String, EngineError> {
        for attempt in 1..=MAX_EVIDENCE_ATTEMPTS {
            let name = name_for(attempt);
            if self.io.link_new(source, &self.file(&name))? {
                return Ok(name);
            }
        }
        Err(self.every_name_taken(name_for))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use felix_codec::format::file_name::{evidence_name, evidence_note_name, MAX_EVIDENCE_ATTEMPTS};

    use super::ShardDir;
    use crate::io::sim::SimIo;
    use crate::io::Io;

    /// The last guard, for names taken after the plan was drawn (the plan
    /// itself refuses when they were taken before): every name, or every
    /// note's name, taken — the bytes are not kept, nothing is replaced, no
    /// temporary stays, and the error names the evidence's first name.
    #[test]
    fn evidence_whose_every_name_or_note_was_taken_meanwhile_is_refused_by_its_first_name() {
        for notes in [false, true] {
            let sim = Arc::new(SimIo::new());
            let path = Path::new("/sim/acme_default_orders_0-0d3aed4b998d2798");
            sim.create_dir(Path::new("/sim")).unwrap();
            sim.create_dir(path).unwrap();
            let source = path.join("00000000000000000001.log");
            sim.create(&source).unwrap();
            sim.write_at(&source, 0, &[7u8; 109]).unwrap();
            for k in 1..=MAX_EVIDENCE_ATTEMPTS {
                let name = evidence_name(1, 100, k);
                let taken = if notes { evidence_note_name(&name) } else { name };
                sim.create(&path.join(taken)).unwrap();
            }
            let before = sim.files_in(path);
            let dir = ShardDir::new(sim.clone(), path);
            let note = serde_json::json!({ "reason": "torn" });
            let e = dir.keep_evidence(&|k| evidence_name(1, 100, k), &source, 100, 9, &note).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "{}/00000000000000000001.log.cut-100: keep evidence failed: this name and its 9999 numbered variants are taken: \
                     move some evidence out of the shard's folder",
                    path.display()
                )
            );
            assert_eq!(sim.files_in(path), before, "nothing kept, replaced or left behind (notes only: {notes})");
        }
    }
}
