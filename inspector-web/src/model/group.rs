//! Grouping dropped files into shards, the way the CLI does: files that came
//! in a folder are the shard of that folder; loose files stand alone.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::ui::message::quote;

/// A file as the page received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// The page's id for it.
    pub id: u32,
    /// Path relative to what was dropped (`shard-dir/000….log`), or the bare name.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// Files inspected together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The shard directory's name, or `None` for a loose file (inspected alone).
    pub shard: Option<String>,
    /// Indexes into the dropped list.
    pub files: Vec<usize>,
}

/// The bare file name of a path.
#[must_use]
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The shard a dropped file is judged in: the name of the folder it came
/// in (as the CLI names a shard by its directory), or `None` for a loose file.
#[must_use]
pub fn shard_of(path: &str) -> Option<&str> {
    match path.rsplit_once('/') {
        Some((dir, _)) if !dir.is_empty() => Some(file_name(dir)),
        _ => None,
    }
}

/// A path split where its shard's folder ends: the folders up to and
/// including the shard's (`"root/shard/"`), and the file's name — the
/// overview shows the shard in a column of its own. `("", path)` when the
/// file's folder is not named `shard`.
#[must_use]
pub fn within_shard<'a>(path: &'a str, shard: Option<&str>) -> (&'a str, &'a str) {
    match (path.rsplit_once('/'), shard) {
        (Some((dir, name)), Some(shard)) if file_name(dir) == shard => path.split_at(path.len() - name.len()),
        _ => ("", path),
    }
}

/// The shards dropped from more than one folder (a replica's copy beside
/// another's, under two roots), given each file's `(path, shard)`: the
/// overview draws those rows' folders, or the two would read the same.
#[must_use]
pub fn shards_in_two_folders<'a>(files: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> std::collections::BTreeSet<String> {
    let mut first: BTreeMap<&str, &str> = BTreeMap::new();
    let mut twice = std::collections::BTreeSet::new();
    for (path, shard) in files {
        let Some(shard) = shard else { continue };
        let (folders, _) = within_shard(path, Some(shard));
        if *first.entry(shard).or_insert(folders) != folders {
            twice.insert(shard.to_string());
        }
    }
    twice
}

/// The order the CLI inspects what it finds in a folder — folder by folder,
/// each folder's own files first by name, then its subfolders by name — so
/// files dropped or picked in any order give `inspect --json`'s report.
#[must_use]
pub fn cli_order(a: &str, b: &str) -> Ordering {
    fn split(p: &str) -> (&str, &str) {
        p.rsplit_once('/').unwrap_or(("", p))
    }
    let ((da, na), (db, nb)) = (split(a), split(b));
    da.split('/').cmp(db.split('/')).then(na.cmp(nb))
}

/// Puts dropped or picked files (`(relative path, file)`) in [`cli_order`]:
/// the one order for the drop target and both pickers.
pub fn sort_in_cli_order<T>(files: &mut [(String, T)]) {
    files.sort_by(|a, b| cli_order(&a.0, &b.0));
}

/// A path two dropped files share (two folders or files of one name dropped
/// from different places), if any: its report would list the path twice,
/// which a report never does (the page itself refuses such a link).
#[must_use]
pub fn path_given_twice<T>(files: &[(String, T)]) -> Option<&str> {
    let mut seen = std::collections::HashSet::with_capacity(files.len());
    files.iter().map(|(p, _)| p.as_str()).find(|p| !seen.insert(*p))
}

/// A drop's files: its one JSON document (a report, a diff or a plan), if
/// any, and the files to inspect.
#[derive(Debug, PartialEq, Eq)]
pub struct DropSplit<T> {
    /// The JSON document, opened before the files are scanned against it.
    pub document: Option<(String, T)>,
    /// The files to inspect, in the drop's order.
    pub files: Vec<(String, T)>,
}

/// A drop holding more than one JSON document (their paths): the page opens
/// one at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentsDropped(pub Vec<String>);

impl core::fmt::Display for DocumentsDropped {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let names: Vec<String> = self.0.iter().map(|p| quote(p)).collect();
        write!(f, "drop one report at a time, not {}", names.join(", "))
    }
}

/// A drop's files split into its one JSON document (by the `.json` file
/// name, in any case) and the files to inspect.
///
/// # Errors
/// [`DocumentsDropped`] when it holds more than one document.
pub fn document_first<T>(files: Vec<(String, T)>) -> Result<DropSplit<T>, DocumentsDropped> {
    let (mut documents, files): (Vec<_>, Vec<_>) =
        files.into_iter().partition(|(p, _)| file_name(p).to_ascii_lowercase().ends_with(".json"));
    if documents.len() > 1 {
        return Err(DocumentsDropped(documents.into_iter().map(|(p, _)| p).collect()));
    }
    Ok(DropSplit { document: documents.pop(), files })
}

/// Groups by parent directory; loose files each form a group of their own.
/// Groups keep the order in which their first file was dropped.
#[must_use]
pub fn group(files: &[Dropped]) -> Vec<Group> {
    let mut by_dir: BTreeMap<String, (usize, Vec<usize>)> = BTreeMap::new();
    let mut loose = Vec::new();
    for (i, f) in files.iter().enumerate() {
        match f.path.rsplit_once('/') {
            Some((dir, _)) if !dir.is_empty() => by_dir.entry(dir.to_string()).or_insert_with(|| (i, Vec::new())).1.push(i),
            _ => loose.push(Group { shard: None, files: vec![i] }),
        }
    }
    let mut groups: Vec<(usize, Group)> =
        by_dir.into_iter().map(|(dir, (first, files))| (first, Group { shard: Some(file_name(&dir).to_string()), files })).collect();
    groups.extend(loose.into_iter().map(|g| (g.files[0], g)));
    groups.sort_by_key(|(first, _)| *first);
    groups.into_iter().map(|(_, g)| g).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(path: &str) -> Dropped {
        Dropped { id: 0, path: path.into(), size: 1 }
    }

    #[test]
    fn a_path_dropped_twice_is_named() {
        let files = |paths: &[&str]| paths.iter().map(|p| ((*p).to_string(), ())).collect::<Vec<_>>();
        assert_eq!(path_given_twice(&files(&["s/0.log", "t/0.log", "0.log"])), None);
        assert_eq!(path_given_twice(&files(&["s/0.log", "s/1.log", "s/0.log"])), Some("s/0.log"));
        assert_eq!(path_given_twice(&files(&["0.log", "0.log"])), Some("0.log"));
        assert_eq!(path_given_twice::<()>(&[]), None);
    }

    #[test]
    fn one_json_document_comes_first_and_two_are_named() {
        let files = |paths: &[&str]| paths.iter().map(|p| ((*p).to_string(), ())).collect::<Vec<_>>();
        let paths = |v: Vec<(String, ())>| v.into_iter().map(|(p, _)| p).collect::<Vec<_>>();
        let split = document_first(files(&["s/0.log", "r/Report.JSON", "s/epochs"])).unwrap();
        assert_eq!(
            (split.document.map(|(p, _)| p), paths(split.files)),
            (Some("r/Report.JSON".into()), vec!["s/0.log".to_string(), "s/epochs".into()])
        );
        let split = document_first(files(&["s/0.log", "json/0.index"])).unwrap();
        assert_eq!(
            (split.document, paths(split.files)),
            (None, vec!["s/0.log".to_string(), "json/0.index".into()]),
            "a folder's name is not the file's"
        );
        let two = document_first(files(&["a.json", "x.log", "b\u{202e}.json"])).unwrap_err();
        assert_eq!(two, DocumentsDropped(vec!["a.json".to_string(), "b\u{202e}.json".into()]));
        assert_eq!(two.to_string(), format!("drop one report at a time, not {}, {}", quote("a.json"), quote("b\u{202e}.json")));
        assert!(!two.to_string().contains('\u{202e}'), "a hostile name is quoted, never raw");
        assert_eq!(document_first::<()>(Vec::new()), Ok(DropSplit { document: None, files: Vec::new() }));
    }

    #[test]
    fn a_shard_under_two_roots_is_told_apart() {
        let files = [
            ("a/s-1/00000000000000000000.log", Some("s-1")),
            ("a/s-1/epochs", Some("s-1")),
            ("b/s-1/00000000000000000000.log", Some("s-1")),
            ("a/t-2/00000000000000000000.log", Some("t-2")),
            ("x.log", None),
        ];
        assert_eq!(shards_in_two_folders(files).into_iter().collect::<Vec<_>>(), ["s-1"]);
        assert!(shards_in_two_folders(files[..2].iter().copied()).is_empty());
    }

    #[test]
    fn folders_are_shards_and_loose_files_stand_alone() {
        let files = [d("root/a-1/00000000000000000000.log"), d("x.log"), d("root/a-1/epochs"), d("root/b-2/00000000000000000000.log")];
        let g = group(&files);
        assert_eq!(
            g,
            vec![
                Group { shard: Some("a-1".into()), files: vec![0, 2] },
                Group { shard: None, files: vec![1] },
                Group { shard: Some("b-2".into()), files: vec![3] },
            ]
        );
        for (i, f) in files.iter().enumerate() {
            let by_group = g.iter().find(|g| g.files.contains(&i)).and_then(|g| g.shard.as_deref());
            assert_eq!(shard_of(&f.path), by_group, "{}", f.path);
        }
    }

    #[test]
    fn picked_files_are_put_in_the_clis_order() {
        // As a folder picker may list them (issue 18: 270, 73, 78, 130 …).
        let mut files: Vec<(String, ())> = [
            "root/s-1/00000000000000000270.log",
            "root/s/00000000000000000001.log",
            "root/s-1/00000000000000000073.log",
            "root/loose.log",
            "root/s-1/00000000000000000078.index",
            "root/s-1/00000000000000000130.log",
            "root/s-1/epochs",
            "root/s/00000000000000000000.log",
        ]
        .into_iter()
        .map(|p| (p.to_string(), ()))
        .collect();
        sort_in_cli_order(&mut files);
        let order: Vec<&str> = files.iter().map(|(p, ())| p.as_str()).collect();
        // The CLI: a folder's own files, then its folders by name ("s" before "s-1", though '/' sorts after '-').
        assert_eq!(
            order,
            [
                "root/loose.log",
                "root/s/00000000000000000000.log",
                "root/s/00000000000000000001.log",
                "root/s-1/00000000000000000073.log",
                "root/s-1/00000000000000000078.index",
                "root/s-1/00000000000000000130.log",
                "root/s-1/00000000000000000270.log",
                "root/s-1/epochs",
            ]
        );
    }

    #[test]
    fn a_path_splits_where_its_shards_folder_ends() {
        assert_eq!(super::within_shard("root/s-1/00.log", Some("s-1")), ("root/s-1/", "00.log"));
        assert_eq!(super::within_shard("s-1/00.log", Some("s-1")), ("s-1/", "00.log"));
        assert_eq!(super::within_shard("00.log", None), ("", "00.log"));
        assert_eq!(super::within_shard("other/00.log", Some("s-1")), ("", "other/00.log"));
        assert_eq!(super::within_shard("s-1/x/00.log", Some("s-1")), ("", "s-1/x/00.log"));
    }
}
