//! The per-turn change set: every file changed during a turn, once, with what it was before the
//! turn's first change. Most real agents edit files themselves instead of calling
//! `fs/write_text_file` (shared/notes/real-agents.md), so entries come from both our writes and
//! the folder watcher.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::write::{ContentHash, WriteRecord, is_temp_file_name};

/// Who changed the file first this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeSource {
    /// Through our `fs/write_text_file`.
    FsWrite,
    /// Seen by the folder watcher (the agent, or anything else, changed it directly).
    Watcher,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    /// Text before the turn's first change. `None` when the file was created, when it was too
    /// large or not UTF-8 (see `before_hash`), or when the watcher saw the change first (we
    /// never saw the file before it).
    pub before: Option<String>,
    /// Hash of the bytes before the turn's first change; `None` as for `before`, except that a
    /// too-large or binary file still has it.
    pub before_hash: Option<ContentHash>,
    /// Hash of the latest text *we* wrote; `None` for a watcher-only entry (the disk is the
    /// latest).
    pub after_hash: Option<ContentHash>,
    /// Created by this turn's first change (known only for our writes).
    pub created: bool,
    pub source: ChangeSource,
    /// The watcher reported the file after (or besides) our writes. Our own writes come back
    /// from the watcher too: hash the file and compare with `after_hash` to tell such an echo
    /// from a change made outside `fs/write_text_file`.
    pub seen_by_watcher: bool,
}

/// Ordered by first change; one entry per path.
#[derive(Debug, Clone, Default)]
pub struct ChangeSet {
    entries: Vec<Change>,
    index: HashMap<PathBuf, usize>,
}

impl ChangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one of our writes: a new entry keeps its `before`; a later write to the same
    /// path only moves `after_hash` on.
    pub fn record_write(&mut self, rec: &WriteRecord) {
        match self.index.get(&rec.path) {
            Some(&i) => self.entries[i].after_hash = Some(rec.after_hash),
            None => self.push(Change {
                path: rec.path.clone(),
                before: rec.before.clone(),
                before_hash: rec.before_hash,
                after_hash: Some(rec.after_hash),
                created: rec.created,
                source: ChangeSource::FsWrite,
                seen_by_watcher: false,
            }),
        }
    }

    /// Records a change the watcher saw. Our temp files (`.{name}.acpdesk-tmp-…`) are ignored:
    /// they are a step of our own writes, or leftovers of a crash, never the agent's work.
    pub fn record_external(&mut self, path: impl Into<PathBuf>) {
        let path = path.into();
        if path.file_name().is_some_and(is_temp_file_name) {
            return;
        }
        match self.index.get(&path) {
            Some(&i) => self.entries[i].seen_by_watcher = true,
            None => self.push(Change {
                path,
                before: None,
                before_hash: None,
                after_hash: None,
                created: false,
                source: ChangeSource::Watcher,
                seen_by_watcher: true,
            }),
        }
    }

    pub fn entries(&self) -> &[Change] {
        &self.entries
    }

    pub fn get(&self, path: &Path) -> Option<&Change> {
        self.index.get(path).map(|&i| &self.entries[i])
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Hands the turn's changes over and starts an empty set for the next turn.
    pub fn take(&mut self) -> Vec<Change> {
        self.index.clear();
        std::mem::take(&mut self.entries)
    }

    fn push(&mut self, change: Change) {
        self.index.insert(change.path.clone(), self.entries.len());
        self.entries.push(change);
    }
}
