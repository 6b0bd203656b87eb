//! A session's thread as the shortest list of [`StreamEvent`]s that rebuilds it.
//!
//! DESIGN.md: attaching to a session returns "a compacted list of StreamEvents (deltas merged per
//! message, each tool call at its latest state), which the UI applies with the same code as live
//! events". A front end feeds every live event to a [`Compactor`] and hands [`Compactor::snapshot`]
//! to a view that attaches (a new window, a reload), then the live events after it. Taking the
//! snapshot and subscribing under one lock is the front end's part; this is the engine's.
//!
//! The rule the tests hold it to: folding the snapshot gives the same state as folding every live
//! event.
//!
//! Where each event lands ([`Place`]) and how it merges ([`append_chunk`], [`merge_into`],
//! [`first_entry`], [`finish_entry`]) are public: the history store (`acp-desk-store`) keeps its
//! rows with the same rules, so a stored thread replays as a snapshot does.

use std::collections::HashMap;

use crate::events::StreamEvent;
use crate::terminal::MAX_OUTPUT_BYTE_LIMIT;

/// Most output kept per terminal in a snapshot when its first event does not carry the
/// terminal's `outputByteLimit`: the largest limit a terminal can have. A view keeps at most its
/// terminal's own limit, cut from the start, so the last `limit` bytes of the merged output
/// rebuild exactly what it shows live; a smaller bound would make attached views differ.
pub const TERMINAL_KEEP_BYTES: usize = MAX_OUTPUT_BYTE_LIMIT;

/// How far past its limit a terminal's merged output may grow before its start is cut (back to
/// the limit): cutting on every delta would move the whole kept text each time once full; with
/// this slack, each byte is moved at most about once. Snapshots are cut to the limit exactly.
const TERMINAL_SLACK_FACTOR: usize = 2;

/// What a terminal's merged output keeps: its own limit when its first event says it, never
/// more than [`TERMINAL_KEEP_BYTES`].
fn terminal_keep(output_byte_limit: Option<u64>) -> usize {
    output_byte_limit
        .map_or(TERMINAL_KEEP_BYTES, |l| {
            usize::try_from(l).unwrap_or(usize::MAX)
        })
        .min(TERMINAL_KEEP_BYTES)
}

/// Kinds of which only the latest event matters: each replaces the previous whole.
fn latest_only(ev: &StreamEvent) -> Option<&'static str> {
    Some(match ev {
        StreamEvent::Plan { .. } => "plan",
        // One that closes a cycle the agent started on its own marks where that cycle's work
        // ends in the thread: kept in its place, as the live window showed it.
        StreamEvent::UsageUpdate { origin, .. }
            if origin.as_deref() != Some("task-notification") =>
        {
            "usage_update"
        }
        StreamEvent::AvailableCommands { .. } => "available-commands",
        StreamEvent::SessionStatus { .. } => "session-status",
        StreamEvent::Modes { .. } => "modes",
        StreamEvent::CurrentMode { .. } => "current-mode",
        StreamEvent::ConfigOptions { .. } => "config-options",
        // A reconnect's report replaces the first start's.
        StreamEvent::McpServers { .. } => "mcp-servers",
        _ => return None,
    })
}

/// Where a live event lands in a compacted thread: the compactor's rules, public so that the
/// history store (`acp-desk-store`) keeps its rows merged exactly as a snapshot keeps its
/// events. [`Compactor::apply`] is written with these and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// A text, thought or user message chunk without a non-text block: appended to the last
    /// entry when [`append_chunk`] takes it (a chunk of the same kind and message), else a new
    /// entry.
    Chunk,
    /// A tool call's event: merged ([`merge_into`]) into the entry of the call with this
    /// `toolCallId`, else the call's first entry ([`first_entry`]).
    ToolCall(&'a str),
    /// A terminal's output: merged ([`merge_into`]) into the entry of the terminal with this id,
    /// else its first entry ([`first_entry`]).
    Terminal(&'a str),
    /// `session-info`: merged ([`merge_into`]) into the first one, else a new entry.
    SessionInfo,
    /// Only the latest event of this kind matters: the previous one leaves the thread and this
    /// one is a new entry at the end.
    Latest(&'static str),
    /// A new entry.
    Append,
}

impl Place<'_> {
    pub fn of(ev: &StreamEvent) -> Place<'_> {
        match ev {
            StreamEvent::ToolCall(tc) => Place::ToolCall(&tc.tool_call_id),
            StreamEvent::TerminalOutput { terminal_id, .. } => Place::Terminal(terminal_id),
            StreamEvent::SessionInfo { .. } => Place::SessionInfo,
            other if chunk_of(other).is_some() => Place::Chunk,
            other => latest_only(other).map_or(Place::Append, Place::Latest),
        }
    }
}

/// Appends the chunk `later` to `last` when both are chunks of the same kind and message
/// ([`Place::Chunk`]); returns whether it did.
pub fn append_chunk(last: &mut StreamEvent, later: &StreamEvent) -> bool {
    let Some((kind, id, text)) = chunk_of(later) else {
        return false;
    };
    if chunk_of(last).is_none_or(|(last_kind, last_id, _)| last_kind != kind || last_id != id) {
        return false;
    }
    text_mut(last).map(|t| t.push_str(text)).is_some()
}

/// Merges a later event into the entry at its [`Place`]: a tool call by the merge rule
/// ([`crate::events::ToolCallEvent::merge`]), a terminal's output appended (its start cut
/// beyond the terminal's limit, with slack), `session-info` field by field. Other pairs are
/// left as they are.
pub fn merge_into(entry: &mut StreamEvent, later: &StreamEvent) {
    match (entry, later) {
        (StreamEvent::ToolCall(first), StreamEvent::ToolCall(tc)) => first.merge(tc),
        (
            first @ StreamEvent::TerminalOutput { .. },
            later @ StreamEvent::TerminalOutput { .. },
        ) => {
            merge_terminal(first, later);
        }
        (
            StreamEvent::SessionInfo {
                title: t,
                updated_at: u,
                ..
            },
            StreamEvent::SessionInfo {
                title, updated_at, ..
            },
        ) => {
            if title.is_some() {
                t.clone_from(title);
            }
            if updated_at.is_some() {
                u.clone_from(updated_at);
            }
        }
        _ => {}
    }
}

/// The entry a tool call's or a terminal's first event makes: a tool call announces itself
/// (`isUpdate: false`) unless `keep_updates` (live frames: the view may have seen the call in
/// an earlier frame); a terminal's output is cut to what it keeps (with slack).
pub fn first_entry(ev: &StreamEvent, keep_updates: bool) -> StreamEvent {
    into_first_entry(ev.clone(), keep_updates)
}

/// [`first_entry`] of an event the caller owns: no copy of its text.
pub fn into_first_entry(mut ev: StreamEvent, keep_updates: bool) -> StreamEvent {
    if let StreamEvent::ToolCall(tc) = &mut ev
        && !keep_updates
    {
        tc.is_update = false;
    }
    if let StreamEvent::TerminalOutput {
        data,
        truncated,
        output_byte_limit,
        ..
    } = &mut ev
        && cut_amortised(data, terminal_keep(*output_byte_limit))
    {
        *truncated = Some(true);
    }
    ev
}

/// An entry as a snapshot shows it: a terminal's output, kept with slack between cuts, is cut
/// to exactly what the terminal keeps.
pub fn finish_entry(ev: &mut StreamEvent) {
    if let StreamEvent::TerminalOutput {
        data,
        truncated,
        output_byte_limit,
        ..
    } = ev
        && cut_start(data, terminal_keep(*output_byte_limit))
    {
        *truncated = Some(true);
    }
}

#[derive(Default)]
pub struct Compactor {
    /// `None` marks an event that a later one replaced (removed lazily; see `compact_holes`).
    events: Vec<Option<StreamEvent>>,
    holes: usize,
    tools: HashMap<String, usize>,
    latest: HashMap<&'static str, usize>,
    info: Option<usize>,
    /// Each terminal's one event (its output merged, at its first appearance).
    terminals: HashMap<String, usize>,
    /// Folding live events into a frame (the hub) rather than a snapshot: a call announced in
    /// an earlier frame stays `isUpdate: true`.
    keep_updates: bool,
}

impl Compactor {
    /// For live frames: events merged the same way, but a tool call's first event in the frame
    /// keeps its `isUpdate` (the view may have seen the call in an earlier frame).
    pub fn for_frames() -> Self {
        Self {
            keep_updates: true,
            ..Self::default()
        }
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// How many events the snapshot holds.
    pub fn len(&self) -> usize {
        self.events.len() - self.holes
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn snapshot(&self) -> Vec<StreamEvent> {
        let mut out: Vec<StreamEvent> = self.events.iter().flatten().cloned().collect();
        for ev in &mut out {
            finish_entry(ev);
        }
        out
    }

    /// [`Compactor::snapshot`] of a compactor no longer needed: its events are moved out, not
    /// copied (a merged frame handed on whole).
    pub fn into_snapshot(self) -> Vec<StreamEvent> {
        let mut out: Vec<StreamEvent> = self.events.into_iter().flatten().collect();
        for ev in &mut out {
            finish_entry(ev);
        }
        out
    }

    /// Bytes of terminal output held (for tests and memory checks): at most about
    /// twice each terminal's limit.
    pub fn terminal_bytes(&self) -> usize {
        self.events
            .iter()
            .flatten()
            .map(|ev| match ev {
                StreamEvent::TerminalOutput { data, .. } => data.len(),
                _ => 0,
            })
            .sum()
    }

    pub fn apply(&mut self, ev: &StreamEvent) {
        match Place::of(ev) {
            Place::Chunk => {
                if let Some(Some(last)) = self.events.last_mut()
                    && append_chunk(last, ev)
                {
                    return;
                }
            }
            Place::ToolCall(id) => {
                if let Some(&i) = self.tools.get(id)
                    && let Some(Some(entry)) = self.events.get_mut(i)
                {
                    merge_into(entry, ev);
                    return;
                }
                self.tools.insert(id.to_owned(), self.events.len());
                self.events.push(Some(first_entry(ev, self.keep_updates)));
                return;
            }
            Place::Terminal(id) => {
                if let Some(&i) = self.terminals.get(id)
                    && let Some(Some(entry)) = self.events.get_mut(i)
                {
                    merge_into(entry, ev);
                    return;
                }
                self.terminals.insert(id.to_owned(), self.events.len());
                self.events.push(Some(first_entry(ev, self.keep_updates)));
                return;
            }
            Place::SessionInfo => {
                if let Some(i) = self.info
                    && let Some(Some(entry)) = self.events.get_mut(i)
                {
                    merge_into(entry, ev);
                    return;
                }
                self.info = Some(self.events.len());
            }
            Place::Latest(kind) => {
                if let Some(i) = self.latest.insert(kind, self.events.len())
                    && let Some(slot) = self.events.get_mut(i)
                {
                    *slot = None;
                    self.holes += 1;
                }
            }
            Place::Append => {}
        }
        self.events.push(Some(ev.clone()));
        self.compact_holes();
    }

    /// Drops replaced events once they are a large share, re-indexing what points into the list.
    fn compact_holes(&mut self) {
        if self.holes < 64 || self.holes * 2 < self.events.len() {
            return;
        }
        let mut map = vec![usize::MAX; self.events.len()];
        let mut kept = Vec::with_capacity(self.events.len() - self.holes);
        for (i, ev) in self.events.drain(..).enumerate() {
            if let Some(ev) = ev {
                map[i] = kept.len();
                kept.push(Some(ev));
            }
        }
        self.events = kept;
        self.holes = 0;
        for i in self.tools.values_mut() {
            *i = map[*i];
        }
        for i in self.latest.values_mut() {
            *i = map[*i];
        }
        for i in self.terminals.values_mut() {
            *i = map[*i];
        }
        if let Some(i) = self.info.as_mut() {
            *i = map[*i];
        }
    }
}

/// A streamed chunk that merges with the previous one of the same kind and message: its kind,
/// message id and text. Chunks carrying a non-text block stand alone.
fn chunk_of(ev: &StreamEvent) -> Option<(&'static str, &Option<String>, &str)> {
    match ev {
        StreamEvent::TextDelta {
            text,
            content: None,
            message_id,
            ..
        } => Some(("text", message_id, text)),
        StreamEvent::Thought {
            text,
            content: None,
            message_id,
            ..
        } => Some(("thought", message_id, text)),
        StreamEvent::UserMessageDelta {
            text,
            content: None,
            message_id,
            ..
        } => Some(("user", message_id, text)),
        _ => None,
    }
}

/// The text a chunk's successors are appended to.
fn text_mut(ev: &mut StreamEvent) -> Option<&mut String> {
    match ev {
        StreamEvent::TextDelta { text, .. }
        | StreamEvent::Thought { text, .. }
        | StreamEvent::UserMessageDelta { text, .. } => Some(text),
        _ => None,
    }
}

/// Appends a terminal's later event to its first: data appended (the start cut beyond the
/// terminal's limit, with slack), exit status and `truncated` kept once set; the first event's
/// `outputByteLimit` stays (a later event does not carry it).
fn merge_terminal(first: &mut StreamEvent, later: &StreamEvent) {
    let (
        StreamEvent::TerminalOutput {
            data,
            exit_status,
            truncated,
            output_byte_limit,
            ..
        },
        StreamEvent::TerminalOutput {
            data: more,
            exit_status: exit,
            truncated: cut,
            ..
        },
    ) = (first, later)
    else {
        return;
    };
    data.push_str(more);
    if exit.is_some() {
        exit_status.clone_from(exit);
    }
    if cut_amortised(data, terminal_keep(*output_byte_limit)) || *cut == Some(true) {
        *truncated = Some(true);
    }
}

/// Cuts `s` back to `max` bytes only once it holds more than [`TERMINAL_SLACK_FACTOR`] times
/// that (amortised: see there). Returns whether anything was dropped.
fn cut_amortised(s: &mut String, max: usize) -> bool {
    if s.len() <= max.saturating_mul(TERMINAL_SLACK_FACTOR) {
        return false;
    }
    cut_start(s, max)
}

/// Drops the start of `s` so that at most `max` bytes remain, cutting at a character boundary
/// (what remains may be a little shorter). Returns whether anything was dropped.
pub fn cut_start(s: &mut String, max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s.drain(..start);
    true
}
