//! The space checkpoints take: measured, kept within the settings' budget and age (oldest steps
//! dropped first, then `git gc`), and a session's dropped with it.

use std::path::Path;

use super::repo::Checkpoints;
use super::{CheckpointError, Storage};

/// Pruning drops at most this share of the steps a round before measuring again.
const DROP_PER_ROUND: usize = 4;

impl Checkpoints {
    /// The space used, and what is kept.
    pub fn storage(&self) -> Result<Storage, CheckpointError> {
        let all = self.refs("refs/acpdesk/")?;
        Ok(Storage {
            bytes: dir_size(&self.git.git_dir),
            budget_bytes: self.settings.budget_bytes,
            max_age_days: self.settings.max_age_days,
            steps: u32::try_from(all.values().map(Vec::len).sum::<usize>()).unwrap_or(u32::MAX),
            sessions: u32::try_from(all.len()).unwrap_or(u32::MAX),
        })
    }

    /// Drops steps older than the age limit, then the oldest until the space used is within
    /// the budget (each session's last step is kept), and lets git free the space.
    pub fn prune(&self) -> Result<Storage, CheckpointError> {
        let _lock = self.lock()?;
        let cutoff = super::unix_now() - i64::from(self.settings.max_age_days) * 24 * 60 * 60;
        let mut dropped = 0;
        for (session, steps) in self.refs("refs/acpdesk/")? {
            let last = steps.last().map(|s| s.turn);
            for s in steps {
                if s.before_meta.at < cutoff && Some(s.turn) != last {
                    self.drop_ref_step(&session, s.turn)?;
                    dropped += 1;
                }
            }
        }
        if dropped > 0 {
            self.gc()?;
        }
        loop {
            if dir_size(&self.git.git_dir) <= self.settings.budget_bytes {
                break;
            }
            let mut candidates: Vec<(i64, String, u32)> = Vec::new();
            for (session, steps) in self.refs("refs/acpdesk/")? {
                let n = steps.len();
                candidates.extend(
                    steps
                        .into_iter()
                        .take(n.saturating_sub(1))
                        .map(|s| (s.before_meta.at, session.clone(), s.turn)),
                );
            }
            if candidates.is_empty() {
                break;
            }
            candidates.sort();
            let n = candidates.len().div_ceil(DROP_PER_ROUND);
            for (_, session, turn) in candidates.into_iter().take(n) {
                self.drop_ref_step(&session, turn)?;
            }
            self.gc()?;
        }
        drop(_lock);
        self.storage()
    }

    /// Drops every checkpoint of a deleted session.
    pub fn delete_session(&self, session: &str) -> Result<(), CheckpointError> {
        let _lock = self.lock()?;
        let prefix = Self::session_prefix(session);
        let steps = self.load_steps(session)?;
        if steps.is_empty() {
            return Ok(());
        }
        let out = self.git.run(
            ["for-each-ref", "--format=delete %(refname)", &prefix],
            None,
        )?;
        self.git.run(["update-ref", "--stdin"], Some(&out))?;
        self.gc()
    }

    /// Drops a step given by the session component of its refs (as [`Checkpoints::refs`] keys
    /// them).
    fn drop_ref_step(&self, component: &str, turn: u32) -> Result<(), CheckpointError> {
        let input = format!(
            "delete refs/acpdesk/{component}/{turn:06}/before\ndelete refs/acpdesk/{component}/{turn:06}/after\n"
        );
        let out = self
            .git
            .output(["update-ref", "--stdin"], Some(input.as_bytes()), &[])?;
        if !out.status.success() {
            // A step without an `after` fails the second line: drop the first alone.
            self.git.run(
                [
                    "update-ref",
                    "-d",
                    &format!("refs/acpdesk/{component}/{turn:06}/before"),
                ],
                None,
            )?;
        }
        Ok(())
    }

    fn gc(&self) -> Result<(), CheckpointError> {
        self.git
            .run(["gc", "--prune=now", "--quiet", "--no-cruft"], None)
            .map(|_| ())
    }
}

/// Bytes under a folder (files only, links not followed).
pub(super) fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map(|m| m.len()).unwrap_or(0),
                _ => {}
            }
        }
    }
    total
}
