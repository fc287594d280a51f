//! Which paths are shards, roots and stray files: what `inspect` (and
//! `recover`, which finds its shards the same way) makes of the paths a
//! user gave, read through [`Io`] (directories listed, links looked
//! through, never followed into).
//!
//! Which directories are shards: one holding a file with the format's own
//! segment or index name (`NNNNNNNNNNNNNNNNNNNN.log` / `.index`, 20 digits);
//! or one holding any other Felix name (`epochs`, the engine's lock,
//! temporaries, evidence) that is named as a shard directory
//! (`…-0123456789abcdef`) or holds no directory — so a folder holding only
//! an `epochs` file is judged as a shard, with a note that no segment names
//! it. A Felix name on a FIFO or a dangling link counts as a Felix file here
//! too. Any other directory is searched (to [`MAX_ROOT_DEPTH`] levels); a
//! Felix file found loose in it (a root's `epochs`) is judged on its own,
//! as when it is given alone, with a note; its other files are reported as
//! not part of any shard and never read. Every Felix name wherever found is
//! judged or refused, never shown clean unread. The directories inside a
//! shard directory are searched too (shards below it are not hidden by it);
//! links to directories are named in a note, never followed. A Felix name
//! on something that is not a regular file is reported as refused, never
//! read. Reads create and change nothing.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use felix_codec::format::file_name::{classify, EntryName};
use felix_codec::format::shard_name::parse_dir_name;

use crate::io::{EntryType, Io, Links};
use crate::tools::{io_error, name_of, ToolError};

/// How deep below a root to look for shard directories.
pub const MAX_ROOT_DEPTH: usize = 4;

/// One unit of inspection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file given on its own.
    File(PathBuf),
    /// A shard directory and its entries (regular files and links to them), sorted by name.
    Shard(PathBuf, Vec<PathBuf>),
    /// A file found loose in a directory that is not a shard: reported, never read.
    Stray(PathBuf),
    /// An entry of a shard directory with one of the format's names that is
    /// not a regular file (a directory, a FIFO, a link to anything but a
    /// regular file, a dangling link): the engine refuses to open the shard
    /// holding it. Reported (inspect exits 1), never read.
    Refused(PathBuf, &'static str),
}

/// The targets a user's paths resolve to, and what a person should know about the search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolution {
    /// What to inspect, in order.
    pub targets: Vec<Target>,
    /// Directories not searched, and the like.
    pub notes: Vec<String>,
}

impl Resolution {
    /// Whether a shard holds an entry that makes the engine refuse it.
    #[must_use]
    pub fn refuses_a_shard(&self) -> bool {
        self.targets.iter().any(|t| matches!(t, Target::Refused(..)))
    }
}

/// One entry of a directory as the walk sees it: its kind (links not
/// followed), and for a link what it points to (`None`: nothing, dangling).
struct Entry {
    path: PathBuf,
    name: OsString,
    kind: EntryType,
    target: Option<EntryType>,
}

impl Entry {
    /// A regular file, or a link to one (shown, and read through).
    fn is_file(&self) -> bool {
        self.kind == EntryType::File || (self.kind == EntryType::Symlink && self.target == Some(EntryType::File))
    }

    fn is_dir(&self) -> bool {
        self.kind == EntryType::Dir
    }

    fn is_link_to_dir(&self) -> bool {
        self.kind == EntryType::Symlink && self.target == Some(EntryType::Dir)
    }

    /// A Felix name (one `classify` does not call foreign).
    fn is_felix(&self) -> bool {
        self.name.to_str().is_some_and(|n| classify(n) != EntryName::Foreign)
    }
}

/// `dir`'s entries, sorted by name, each link looked through.
fn sorted_entries(io: &dyn Io, dir: &Path) -> Result<Vec<Entry>, ToolError> {
    let listed = io.list(dir).map_err(|e| io_error(dir, &e))?;
    Ok(listed
        .into_iter()
        .map(|e| {
            let path = dir.join(&e.name);
            let target = match e.kind {
                EntryType::Symlink => io.stat(&path, Links::Follow).ok().map(|s| s.kind),
                kind => Some(kind),
            };
            Entry { path, name: e.name, kind: e.kind, target }
        })
        .collect())
}

/// The name a shard's findings carry: its folder's real name (`.` is the
/// folder it stands for).
pub(crate) fn shard_name(io: &dyn Io, dir: &Path) -> String {
    io.canonical(dir).ok().as_deref().map(name_of).unwrap_or_else(|| name_of(dir))
}

/// Whether the directory `dir`, holding the regular files `names` (and
/// directories too when `has_subdirs`), is a shard directory (see the module doc).
#[must_use]
pub fn is_shard_dir(dir: &Path, names: &[String], has_subdirs: bool) -> bool {
    let segment_files = names.iter().any(|n| matches!(classify(n), EntryName::Segment(_) | EntryName::Index(_)));
    let felix_files = names.iter().any(|n| classify(n) != EntryName::Foreign);
    segment_files || (felix_files && (!has_subdirs || parse_dir_name(&name_of(dir)).is_some()))
}

/// Whether any of `names` is a segment file's: without one, no segment
/// names the shard (its other Felix files are judged all the same).
fn has_segment(names: &[String]) -> bool {
    names.iter().any(|n| matches!(classify(n), EntryName::Segment(_)))
}

/// Resolves the paths a user gave: files stay files; shard directories are
/// shards; any other directory is searched.
///
/// # Errors
/// A path that cannot be read, one that is neither a file nor a directory (a
/// FIFO, a socket, a device), or a directory with no shard and no file below it.
pub fn resolve(io: &dyn Io, paths: &[PathBuf]) -> Result<Resolution, ToolError> {
    let mut out = Resolution::default();
    for path in paths {
        let kind = io.stat(path, Links::Follow).map_err(|e| io_error(path, &e))?.kind;
        if kind == EntryType::File {
            out.targets.push(Target::File(path.clone()));
            continue;
        }
        if kind != EntryType::Dir {
            return Err(ToolError {
                path: path.clone(),
                what: "not a regular file or a directory (a FIFO, a socket or a device): nothing here to inspect; \
                       give segment, index or epochs files, shard directories or roots of them"
                    .into(),
            });
        }
        let shards = |out: &Resolution| {
            out.targets.iter().filter(|t| matches!(t, Target::File(_) | Target::Shard(..) | Target::Refused(..))).count()
        };
        let before = shards(&out);
        collect_dir(io, path, 0, &mut out)?;
        if shards(&out) == before {
            return Err(ToolError {
                path: path.clone(),
                what: "no shard directory (no segment, index, epochs or other Felix file) found here".into(),
            });
        }
    }
    inspect_once(io, &mut out);
    Ok(out)
}

/// Each file and shard is inspected once, however many times and however
/// it was named (`d d`, `d ./d`, a link and its target, a root and a shard
/// inside it, a shard and one of its files): the first naming is kept — a
/// shard before a file it holds, which it judges in context — and a note
/// says what was given again. A report never lists one file twice.
fn inspect_once(io: &dyn Io, out: &mut Resolution) {
    let real = |p: &Path| io.canonical(p).unwrap_or_else(|_| p.to_path_buf());
    let mut in_shards: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for t in &out.targets {
        if let Target::Shard(dir, files) = t {
            for f in files {
                in_shards.entry(real(f)).or_insert_with(|| dir.clone());
            }
        }
    }
    let mut seen: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut kept = Vec::with_capacity(out.targets.len());
    for t in std::mem::take(&mut out.targets) {
        let (shown, key) = match &t {
            Target::Shard(dir, _) => (dir.clone(), real(dir)),
            Target::File(p) | Target::Stray(p) | Target::Refused(p, _) => (p.clone(), real(p)),
        };
        // Every shard's first naming is kept, so a file one holds is inspected there.
        if let Some(dir) = in_shards.get(&key).filter(|_| !matches!(t, Target::Shard(..))) {
            out.notes.push(format!("{}: also in the shard {}, and inspected there, once", shown.display(), dir.display()));
            continue;
        }
        if let Some(first) = seen.get(&key) {
            out.notes.push(format!("{}: given more than once (first as {}); inspected once", shown.display(), first.display()));
            continue;
        }
        seen.insert(key, shown);
        kept.push(t);
    }
    out.targets = kept;
}

/// A shard directory's files as one target (with a note when no segment
/// names it a shard).
fn add_shard(dir: &Path, files: Vec<PathBuf>, names: &[String], out: &mut Resolution) {
    if !has_segment(names) {
        out.notes.push(format!(
            "{}: no segment (NNNNNNNNNNNNNNNNNNNN.log) names this shard: the Felix files it holds are judged as a shard's all the same",
            dir.display()
        ));
    }
    out.targets.push(Target::Shard(dir.to_path_buf(), files));
}

/// The files of a folder that is not a shard: a Felix file loose in a
/// folder of folders (a root of shards) is judged on its own, as when it is
/// given alone; other files are strays.
fn add_loose(files: Vec<PathBuf>, out: &mut Resolution) {
    for file in files {
        if classify(&name_of(&file)) == EntryName::Foreign {
            out.targets.push(Target::Stray(file));
        } else {
            out.notes.push(format!(
                "{}: a Felix file loose in a folder that holds folders and is not named as a shard directory: inspect judges it on its own; recover leaves it alone",
                file.display()
            ));
            out.targets.push(Target::File(file));
        }
    }
}

fn collect_dir(io: &dyn Io, dir: &Path, depth: usize, out: &mut Resolution) -> Result<(), ToolError> {
    let entries = sorted_entries(io, dir)?;
    // Regular files and links (a link is shown, and read through, never followed by the engine).
    let files: Vec<PathBuf> = entries.iter().filter(|e| e.is_file()).map(|e| e.path.clone()).collect();
    let names: Vec<String> = files.iter().map(|p| name_of(p)).collect();
    let has_subdirs = entries.iter().any(Entry::is_dir);
    // A Felix name on what is not a regular file or a directory (a FIFO, a
    // dangling link) counts as a Felix file too: refused below, never hidden.
    let mut felix_names = names.clone();
    felix_names.extend(
        entries
            .iter()
            .filter(|e| !e.is_dir() && e.kind != EntryType::File && !files.contains(&e.path))
            .filter_map(|e| e.name.to_str().map(str::to_string))
            .filter(|n| classify(n) != EntryName::Foreign),
    );
    let shard = is_shard_dir(dir, &felix_names, has_subdirs);
    if shard {
        add_shard(dir, files, &names, out);
    } else {
        add_loose(files, out);
    }
    refuse_irregular(&entries, shard, out);
    // Directories (a shard directory may hold shards below it too; hiding them
    // would hide data), never one a Felix name claims (refused above).
    let subdirs: Vec<PathBuf> = entries.iter().filter(|e| e.is_dir() && (!shard || !e.is_felix())).map(|e| e.path.clone()).collect();
    // Links to directories are not followed (a loop, or a shard counted twice): say so.
    for e in &entries {
        if e.is_link_to_dir() && !out.targets.iter().any(|t| matches!(t, Target::Refused(p, _) if *p == e.path)) {
            out.notes.push(format!(
                "{}: a symbolic link to a directory, not followed; give its target to inspect what it holds",
                e.path.display()
            ));
        }
    }
    if depth >= MAX_ROOT_DEPTH {
        if !subdirs.is_empty() {
            out.notes.push(format!(
                "{}: not searched deeper than {MAX_ROOT_DEPTH} levels; give a directory below it to inspect what it holds",
                dir.display()
            ));
        }
        return Ok(());
    }
    for sub in subdirs {
        collect_dir(io, &sub, depth + 1, out)?;
    }
    Ok(())
}

/// Each entry of `entries` with a Felix name that is not a regular file
/// (nor a link to one), and what it is instead, in the words every refusal
/// uses: in a shard directory (`in_shard`) a directory too — the engine
/// refuses the shard holding it; elsewhere a FIFO, socket, device or
/// dangling link (directories are searched there). Never read.
fn irregular(entries: &[Entry], in_shard: bool) -> impl Iterator<Item = (&Path, &'static str)> {
    entries.iter().filter(move |e| e.is_felix() && !e.is_file() && (in_shard || !(e.is_dir() || e.is_link_to_dir()))).map(|e| {
        let what = match (e.kind, e.target) {
            (EntryType::Dir, _) => "a directory",
            (EntryType::Symlink, Some(_)) => "a symbolic link to something other than a regular file",
            (EntryType::Symlink, None) => "a symbolic link to nothing (dangling)",
            _ => "not a regular file (a FIFO, socket or device)",
        };
        (e.path.as_path(), what)
    })
}

/// A target refusing each of [`irregular`]'s entries.
fn refuse_irregular(entries: &[Entry], in_shard: bool, out: &mut Resolution) {
    out.targets.extend(irregular(entries, in_shard).map(|(path, what)| Target::Refused(path.to_path_buf(), what)));
}

/// The first entry of the shard directory `dir` with a Felix name on what
/// is not a regular file (see [`irregular`]): what makes the engine refuse
/// the shard, `diff` refuse to compare it, and `inspect` name it.
///
/// # Errors
/// The directory cannot be listed.
pub(crate) fn first_refused(io: &dyn Io, dir: &Path) -> Result<Option<(PathBuf, &'static str)>, ToolError> {
    Ok(irregular(&sorted_entries(io, dir)?, true).next().map(|(path, what)| (path.to_path_buf(), what)))
}

/// The files of a shard directory as `inspect` sees them (see [`resolve`]).
///
/// # Errors
/// The directory cannot be read.
pub fn shard_files(io: &dyn Io, dir: &Path) -> Result<Vec<PathBuf>, ToolError> {
    Ok(sorted_entries(io, dir)?.into_iter().filter(Entry::is_file).map(|e| e.path).collect())
}
