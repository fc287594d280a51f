//! The engine's promises on a real filesystem, where the simulator cannot
//! say what the kernel does: roots reached through symbolic links, shard
//! directories that are links, two writers creating one root at once,
//! special files where a Felix file belongs, and a provider that lets go.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use felix_codec::format::shard_name::ShardKey as Key;
use felix_engine::broker::{AppendOnlyLog, AppendRecord, DiskLogProvider, LogConfig, LogProvider, ReadRange, ShardKey};
use felix_engine::{EngineError, Io, OsIo, Shard};

fn os() -> Arc<dyn Io> {
    Arc::new(OsIo::new())
}

fn key(shard: u32) -> Key<'static> {
    Key { tenant: "acme", namespace: "default", stream: "orders", shard }
}

fn mkfifo(path: &Path) {
    assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success(), "mkfifo {}", path.display());
}

#[test]
fn a_root_reached_through_a_symlink_is_followed_and_a_linked_shard_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let disk = tmp.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let root = tmp.path().join("data");
    std::os::unix::fs::symlink(&disk, &root).unwrap();
    let (shard, _) = Shard::open(os(), &root, &key(0), felix_engine::Config::default()).unwrap();
    shard.append(&[b"one".as_slice()]).unwrap();
    drop(shard);
    let dir = Shard::dir_of(&root, &key(0));
    assert!(disk.join(dir.file_name().unwrap()).join("00000000000000000000.log").is_file(), "written through the linked root");

    // A shard directory that is itself a link is never followed.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let linked = Shard::dir_of(&root, &key(1));
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    let e = Shard::open(os(), &root, &key(1), felix_engine::Config::default()).map(drop).unwrap_err();
    assert!(matches!(&e, EngineError::NotRegular { path, what: "a symbolic link" } if *path == linked), "{e}");
    assert!(e.to_string().contains("shard directory"), "{e}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing written where the link points");
}

#[test]
fn writers_of_different_shards_creating_one_new_root_at_once_all_succeed() {
    for round in 0..20 {
        let tmp = tempfile::tempdir().unwrap();
        let root = Arc::new(tmp.path().join(format!("a/b/root-{round}")));
        let threads: Vec<_> = (0..4)
            .map(|n| {
                let root = Arc::clone(&root);
                std::thread::spawn(move || {
                    let (shard, _) = Shard::open(os(), &root, &key(n), felix_engine::Config::default())?;
                    shard.append(&[b"x".as_slice()]).map(drop)
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        assert_eq!(std::fs::read_dir(root.as_ref()).unwrap().count(), 4);
    }
}

#[test]
fn dump_refuses_a_fifo_named_like_a_segment_instead_of_hanging() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("00000000000000000000.log");
    mkfifo(&fifo);
    let started = Instant::now();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_felix-storage"))
        .arg("dump")
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("dump hung on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("00000000000000000000.log") && err.contains("FIFO"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_shuts_down_lets_go_of_its_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let provider = DiskLogProvider::new(tmp.path(), LogConfig::default()).unwrap();
    let k = ShardKey { tenant: "acme".into(), namespace: "default".into(), stream: "orders".into(), shard: 0 };
    let log = provider.open(&k).await.unwrap();
    log.append(&[AppendRecord { payload: Bytes::from_static(b"kept"), timestamp_micros: 1 }]).await.unwrap();
    drop(log);
    provider.shutdown().await.unwrap();
    // The lock is gone: another provider (another broker process) opens it.
    let other = DiskLogProvider::new(tmp.path(), LogConfig::default()).unwrap();
    let log = other.open(&k).await.unwrap();
    let got = log.read_range(ReadRange { start: 0, max_bytes: 1 << 20 }).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(&got[0].payload[..], b"kept");
}

#[test]
fn a_newline_in_a_path_cannot_forge_a_line_of_inspect_or_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root\nfelix-storage: 0 files, 0 findings\u{202e}");
    std::fs::create_dir(&root).unwrap();
    let bin = env!("CARGO_BIN_EXE_felix-storage");
    let mut produce = std::process::Command::new(bin)
        .args(["produce", "--shard", "a/b/c/0"])
        .arg(&root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(produce.stdin.as_mut().unwrap(), b"hi\n").unwrap();
    drop(produce.stdin.take());
    assert!(produce.wait().unwrap().success());
    let out = std::process::Command::new(bin).arg("inspect").arg(&root).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let escaped = "root\\nfelix-storage: 0 files, 0 findings\\u{202e}/";
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"3 files, 0 findings"), "{text}");
    for line in &lines[..lines.len() - 1] {
        assert!(line.contains(escaped), "a line that does not carry the escaped root: {line:?}");
    }
    // An error naming the path says it on one line too.
    let out = std::process::Command::new(bin).arg("inspect").arg(root.join("missing\nfelix-storage: ok")).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing\\nfelix-storage: ok"), "{err}");
}

/// A shard of two records whose newest segment ends 10 bytes into a third
/// (what a reader sees while a writer is mid-append).
fn torn_shard(root: &Path) -> std::path::PathBuf {
    let (shard, _) = Shard::open(os(), root, &key(0), felix_engine::Config::default()).unwrap();
    shard.append(&[b"one".as_slice(), b"two".as_slice()]).unwrap();
    drop(shard);
    let dir = Shard::dir_of(root, &key(0));
    let log = dir.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&[0, 0, 0, 5, 0, 0, 0, 0, 0, 0]);
    std::fs::write(&log, bytes).unwrap();
    dir
}

/// Takes the shard's writer lock the first time the scan reports progress:
/// a writer that starts while `inspect` reads.
struct WriterStarts {
    lock: std::path::PathBuf,
    held: Option<felix_engine::io::LockGuard>,
}

impl felix_engine::tools::inspect::Progress for WriterStarts {
    fn update(&mut self, _path: &Path, _done: u64, _total: u64) {
        if self.held.is_none() {
            self.held = Some(OsIo::new().lock(&self.lock, false).unwrap());
        }
    }
}

#[test]
fn a_writer_that_starts_while_inspect_reads_makes_the_torn_tail_a_record_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = torn_shard(tmp.path());
    let os = OsIo::new();
    let paths = felix_engine::tools::inspect::shard_files(&os, &dir).unwrap();
    let flagged = |reports: &[felix_codec::doc::report::FileReport]| -> Vec<String> {
        reports.iter().flat_map(|r| r.findings.iter().map(|f| f.kind.clone())).collect()
    };
    // No writer: the torn tail is damage.
    let (reports, _) = felix_engine::tools::inspect::inspect_shard(
        &os,
        (&dir, &paths),
        felix_engine::tools::inspect::Writer::Probe,
        false,
        &mut felix_engine::tools::inspect::NoProgress,
        &mut 0,
        0,
    )
    .unwrap();
    assert_eq!(flagged(&reports), ["Truncated"]);
    // A writer starts during the scan: the probe after reading sees it.
    let mut progress = WriterStarts { lock: dir.clone(), held: None };
    let (reports, facts) = felix_engine::tools::inspect::inspect_shard(
        &os,
        (&dir, &paths),
        felix_engine::tools::inspect::Writer::Probe,
        false,
        &mut progress,
        &mut 0,
        0,
    )
    .unwrap();
    assert!(progress.held.is_some(), "the scan reported progress");
    assert!(flagged(&reports).is_empty(), "{:?}", flagged(&reports));
    let notes: Vec<&String> = reports.iter().flat_map(|r| &r.notes).collect();
    assert!(notes.iter().any(|n| n.contains("tail may be in flight")), "{notes:?}");
    assert!(facts.segments.iter().all(|s| s.findings.is_empty()));
}

/// The simulated filesystem, with a writer taking the shard's lock the
/// first time a reader reads the newest segment past its header.
#[derive(Debug)]
struct LockOnRead {
    inner: Arc<felix_engine::io::sim::SimIo>,
    log: std::path::PathBuf,
    lock: std::path::PathBuf,
    held: std::sync::Mutex<Option<felix_engine::io::LockGuard>>,
}

impl Io for LockOnRead {
    fn stat(&self, path: &Path, links: felix_engine::io::Links) -> std::io::Result<felix_engine::io::Stat> {
        self.inner.stat(path, links)
    }
    fn canonical(&self, path: &Path) -> std::io::Result<std::path::PathBuf> {
        self.inner.canonical(path)
    }
    fn open_read(&self, path: &Path, links: felix_engine::io::Links) -> std::io::Result<Box<dyn felix_engine::io::ReadHandle + '_>> {
        self.inner.open_read(path, links)
    }
    fn list(&self, dir: &Path) -> std::io::Result<Vec<felix_engine::io::DirEntry>> {
        self.inner.list(dir)
    }
    fn kind(&self, path: &Path) -> std::io::Result<Option<felix_engine::io::EntryType>> {
        self.inner.kind(path)
    }
    fn create_dir(&self, dir: &Path) -> std::io::Result<()> {
        self.inner.create_dir(dir)
    }
    fn len(&self, path: &Path) -> std::io::Result<u64> {
        self.inner.len(path)
    }
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read_at(path, pos, buf)?;
        let mut held = self.held.lock().unwrap();
        if path == self.log && pos + buf.len() as u64 > 32 && held.is_none() {
            *held = Some(self.inner.lock(&self.lock, false)?);
        }
        Ok(n)
    }
    fn create(&self, path: &Path) -> std::io::Result<()> {
        self.inner.create(path)
    }
    fn write_at(&self, path: &Path, pos: u64, data: &[u8]) -> std::io::Result<()> {
        self.inner.write_at(path, pos, data)
    }
    fn set_len(&self, path: &Path, len: u64) -> std::io::Result<()> {
        self.inner.set_len(path, len)
    }
    fn sync_data(&self, path: &Path) -> std::io::Result<()> {
        self.inner.sync_data(path)
    }
    fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn link(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.inner.link(from, to)
    }
    fn remove(&self, path: &Path) -> std::io::Result<()> {
        self.inner.remove(path)
    }
    fn lock(&self, path: &Path, wait: bool) -> std::io::Result<felix_engine::io::LockGuard> {
        self.inner.lock(path, wait)
    }
    fn lock_holder(&self, path: &Path) -> std::io::Result<Option<felix_engine::io::LockHolder>> {
        self.inner.lock_holder(path)
    }
}

#[test]
fn a_reader_opening_as_a_writer_starts_calls_the_torn_tail_in_flight() {
    let sim = Arc::new(felix_engine::io::sim::SimIo::new());
    let dir = std::path::PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798");
    let (shard, _) = Shard::open_dir(Arc::clone(&sim) as Arc<dyn Io>, &dir, felix_engine::Config::default()).unwrap();
    shard.append(&[b"one".as_slice(), b"two".as_slice()]).unwrap();
    drop(shard);
    let log = dir.join("00000000000000000000.log");
    let mut bytes = sim.contents(&log).unwrap();
    bytes.extend_from_slice(&[0, 0, 0, 5, 0, 0, 0, 0, 0, 0]);
    sim.put(&log, &bytes);
    let io = Arc::new(LockOnRead { inner: Arc::clone(&sim), log, lock: dir.clone(), held: std::sync::Mutex::new(None) });
    let (reader, recovery) = Shard::open_read_only(io as Arc<dyn Io>, &dir, felix_engine::Config::default()).unwrap();
    assert!(recovery.writer_live, "the probe after the scan saw the writer");
    assert!(recovery.warnings.iter().any(|w| w.contains("in flight")), "{:?}", recovery.warnings);
    assert_eq!(reader.read(0, 1 << 20).unwrap().len(), 2);
}
