//! A session's rows: its events merged the way the compactor merges a live stream, with what a
//! commit must write.
//!
//! The rules are the compactor's own ([`acp_desk_core::compact::Place`] and its merge
//! functions; `Compactor::apply` is written with the same calls), so the rows of a session, in
//! `seq` order, are the compactor's snapshot of its events: consecutive text deltas of one
//! message are one row, a tool call's updates fold into its row (`ToolCallEvent::merge`), a
//! terminal's output into its row, and an event of which only the latest matters (plan,
//! usage, status, ...) replaces its previous row. A 200,000-chunk turn is a few rows.
//!
//! Only what may still change is kept in memory (the last row, which the next chunk may grow;
//! tool calls and terminals still running; the session info) plus what is not written yet. A
//! row that changes after it left memory (a late update of a finished tool call) is read back
//! from the file through the loader the caller passes.

use std::borrow::Cow;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use acp_desk_core::StreamEvent;
use acp_desk_core::compact::{Place, append_chunk, finish_entry, into_first_entry, merge_into};
use acp_desk_core::schema::v1 as acp;

/// Reads a row back from the file by its `seq` (`None`: not there, or unreadable).
pub(crate) type Load<'a> = dyn FnMut(i64) -> Option<StreamEvent> + 'a;

#[derive(Default)]
pub(crate) struct Rows {
    next_seq: i64,
    /// Rows held in memory, by `seq`: the ones that may still change and the unwritten ones.
    live: BTreeMap<i64, StreamEvent>,
    last: Option<i64>,
    tools: HashMap<String, i64>,
    terminals: HashMap<String, i64>,
    info: Option<i64>,
    latest: HashMap<&'static str, i64>,
    /// Rows changed since the last commit.
    dirty: BTreeSet<i64>,
    /// Rows replaced (by a later event of a latest-only kind) since the last commit.
    removed: BTreeSet<i64>,
}

impl Rows {
    /// Rows of a session whose stored rows (if any) end before `next_seq`.
    pub(crate) fn starting_at(next_seq: i64) -> Self {
        Rows {
            next_seq,
            ..Rows::default()
        }
    }

    fn push(&mut self, ev: StreamEvent) -> i64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.live.insert(seq, ev);
        self.dirty.insert(seq);
        self.last = Some(seq);
        seq
    }

    /// The row `seq`, read back from the file if it left memory.
    fn entry(&mut self, seq: i64, load: &mut Load<'_>) -> Option<&mut StreamEvent> {
        match self.live.entry(seq) {
            Entry::Occupied(e) => Some(e.into_mut()),
            Entry::Vacant(e) => Some(e.insert(load(seq)?)),
        }
    }

    /// Merges one live event into the rows (the compactor's `apply`, on rows). The event is
    /// taken by value: a new row is the event itself, not a copy of its text.
    pub(crate) fn apply(&mut self, ev: StreamEvent, load: &mut Load<'_>) {
        match Place::of(&ev) {
            Place::Chunk => {
                // The last row is always in memory: nothing to read back.
                if let Some(last) = self.last
                    && let Some(entry) = self.live.get_mut(&last)
                    && append_chunk(entry, &ev)
                {
                    self.dirty.insert(last);
                    return;
                }
                self.push(ev);
            }
            Place::ToolCall(id) => {
                if let Some(&seq) = self.tools.get(id)
                    && let Some(entry) = self.entry(seq, load)
                {
                    merge_into(entry, &ev);
                    self.dirty.insert(seq);
                    return;
                }
                let id = id.to_owned();
                let seq = self.push(into_first_entry(ev, false));
                self.tools.insert(id, seq);
            }
            Place::Terminal(id) => {
                if let Some(&seq) = self.terminals.get(id)
                    && let Some(entry) = self.entry(seq, load)
                {
                    merge_into(entry, &ev);
                    self.dirty.insert(seq);
                    return;
                }
                let id = id.to_owned();
                let seq = self.push(into_first_entry(ev, false));
                self.terminals.insert(id, seq);
            }
            Place::SessionInfo => {
                if let Some(seq) = self.info
                    && let Some(entry) = self.entry(seq, load)
                {
                    merge_into(entry, &ev);
                    self.dirty.insert(seq);
                    return;
                }
                self.info = Some(self.push(ev));
            }
            Place::Latest(kind) => {
                let seq = self.push(ev);
                if let Some(old) = self.latest.insert(kind, seq) {
                    self.live.remove(&old);
                    self.dirty.remove(&old);
                    self.removed.insert(old);
                }
            }
            Place::Append => {
                self.push(ev);
            }
        }
    }

    /// How many rows changed since the last commit.
    pub(crate) fn changes(&self) -> usize {
        self.dirty.len() + self.removed.len()
    }

    /// The changed rows, as a snapshot shows them, in `seq` order. Only a terminal's row can
    /// differ from what is held (its output is kept with slack between cuts), so only it is
    /// copied; the rest are lent.
    pub(crate) fn changed(&self) -> impl Iterator<Item = (i64, Cow<'_, StreamEvent>)> + '_ {
        self.dirty.iter().filter_map(|seq| {
            let ev = self.live.get(seq)?;
            let ev = if matches!(ev, StreamEvent::TerminalOutput { .. }) {
                let mut ev = ev.clone();
                finish_entry(&mut ev);
                Cow::Owned(ev)
            } else {
                Cow::Borrowed(ev)
            };
            Some((*seq, ev))
        })
    }

    /// The rows replaced since the last commit.
    pub(crate) fn removed(&self) -> impl Iterator<Item = i64> + '_ {
        self.removed.iter().copied()
    }

    /// The changes are in the file: forget them, and let go of rows that can no longer change
    /// without a read back.
    pub(crate) fn committed(&mut self) {
        self.dirty.clear();
        self.removed.clear();
        let (last, info) = (self.last, self.info);
        self.live
            .retain(|seq, ev| Some(*seq) == last || Some(*seq) == info || still_running(ev));
    }

    /// How many rows are held in memory (for tests: memory stays bounded).
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.live.len()
    }
}

/// A tool call or terminal that is likely to get more events soon.
fn still_running(ev: &StreamEvent) -> bool {
    match ev {
        StreamEvent::ToolCall(tc) => !matches!(
            tc.status,
            Some(acp::ToolCallStatus::Completed | acp::ToolCallStatus::Failed)
        ),
        StreamEvent::TerminalOutput { exit_status, .. } => exit_status.is_none(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use acp_desk_core::compact::Compactor;
    use acp_desk_core::events::ToolCallEvent;
    use serde_json::json;

    use super::*;

    fn text(t: &str, msg: &str) -> StreamEvent {
        StreamEvent::TextDelta {
            session_id: "s".into(),
            text: t.into(),
            content: None,
            message_id: Some(msg.into()),
        }
    }

    fn tool(
        id: &str,
        title: &str,
        status: Option<acp::ToolCallStatus>,
        update: bool,
    ) -> StreamEvent {
        StreamEvent::ToolCall(Box::new(ToolCallEvent {
            session_id: "s".into(),
            tool_call_id: id.into(),
            tool_name: title.into(),
            arguments: if update {
                json!(null)
            } else {
                json!({"path": "/p/src/main.rs"})
            },
            is_update: update,
            tool_kind: None,
            status,
            content: None,
            locations: None,
            raw_output: update.then(|| json!({"out": title})),
            meta: None,
        }))
    }

    fn usage(used: u64) -> StreamEvent {
        StreamEvent::UsageUpdate {
            session_id: "s".into(),
            size: 1000,
            used,
            cost: None,
            tokens_in: None,
            tokens_out: None,
            model: None,
            size_inferred: None,
            reported_size: None,
            origin: None,
            meta: None,
        }
    }

    fn term(id: &str, data: &str, limit: Option<u64>, exit: bool) -> StreamEvent {
        StreamEvent::TerminalOutput {
            session_id: "s".into(),
            terminal_id: id.into(),
            data: data.into(),
            exit_status: exit.then(|| acp::TerminalExitStatus::new().exit_code(0)),
            truncated: None,
            output_byte_limit: limit,
        }
    }

    /// The rows applied and committed in bursts, with a plain map as the file: what the file
    /// holds in `seq` order. `frames`: each burst arrives merged, as the recorder's queue
    /// hands it over (`Compactor::for_frames`).
    fn stored_as(events: &[StreamEvent], burst: usize, frames: bool) -> (Vec<StreamEvent>, usize) {
        let mut file: BTreeMap<i64, StreamEvent> = BTreeMap::new();
        let mut rows = Rows::default();
        let mut most_held = 0;
        for chunk in events.chunks(burst) {
            let chunk = if frames {
                let mut frame = Compactor::for_frames();
                for ev in chunk {
                    frame.apply(ev);
                }
                frame.snapshot()
            } else {
                chunk.to_vec()
            };
            for ev in chunk {
                rows.apply(ev, &mut |seq| file.get(&seq).cloned());
            }
            for seq in rows.removed() {
                file.remove(&seq);
            }
            for (seq, ev) in rows.changed() {
                file.insert(seq, ev.into_owned());
            }
            rows.committed();
            most_held = most_held.max(rows.held());
        }
        (file.into_values().collect(), most_held)
    }

    fn stored(events: &[StreamEvent], burst: usize) -> (Vec<StreamEvent>, usize) {
        stored_as(events, burst, false)
    }

    fn snapshot(events: &[StreamEvent]) -> Vec<StreamEvent> {
        let mut c = Compactor::new();
        for ev in events {
            c.apply(ev);
        }
        c.snapshot()
    }

    /// A turn with every way rows merge: a long streamed message cut by tool calls, updates of
    /// earlier calls (read back once they left memory), usage replaced, a terminal past its
    /// limit.
    fn mixed_turn() -> Vec<StreamEvent> {
        let mut evs = Vec::new();
        for i in 0..2_000 {
            evs.push(text(&format!("chunk {i} "), "m1"));
            if i % 500 == 250 {
                evs.push(tool(&format!("t{i}"), "Read src/main.rs", None, false));
                evs.push(usage(i));
            }
            if i % 500 == 400 {
                let done = Some(acp::ToolCallStatus::Completed);
                evs.push(tool(&format!("t{}", i - 150), "", done, true));
            }
        }
        for i in 0..50 {
            evs.push(term(
                "term-1",
                &format!("line {i}\n"),
                (i == 0).then_some(64),
                false,
            ));
        }
        evs.push(term("term-1", "", None, true));
        // A finished call updated once more, long after it left memory.
        evs.push(tool("t250", "Read src/lib.rs", None, true));
        evs.push(text("the end", "m2"));
        evs
    }

    #[test]
    fn stored_rows_are_the_compactors_snapshot_whatever_the_commit_bursts() {
        let live = mixed_turn();
        let reference = snapshot(&live);
        for burst in [1, 7, 100, live.len()] {
            let (rows, _) = stored(&live, burst);
            assert_eq!(rows, reference, "committed every {burst} events");
        }
        assert!(reference.len() < 30, "{} rows", reference.len());
    }

    #[test]
    fn rows_from_merged_frames_are_the_same_as_from_every_event() {
        let live = mixed_turn();
        let reference = snapshot(&live);
        for burst in [2, 13, 333, live.len()] {
            assert_eq!(
                stored_as(&live, burst, true).0,
                reference,
                "frames of {burst} events"
            );
        }
    }

    #[test]
    fn memory_holds_only_what_may_still_change() {
        let mut live = Vec::new();
        for i in 0..1_000 {
            live.push(tool(&format!("t{i}"), "Run", None, false));
            live.push(text("output", &format!("m{i}")));
            live.push(tool(
                &format!("t{i}"),
                "",
                Some(acp::ToolCallStatus::Completed),
                true,
            ));
        }
        let (rows, most_held) = stored(&live, 30);
        assert_eq!(rows, snapshot(&live));
        assert!(most_held < 5, "held {most_held} rows");
    }
}
