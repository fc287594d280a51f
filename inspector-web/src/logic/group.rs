//! Grouping dropped files into shards, the way the CLI does: files that came
//! in a folder are the shard of that folder; loose files stand alone.

use std::collections::BTreeMap;

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
    }
}
