//! Full-text search: what of a row is indexed, how a search is asked of the index, and the
//! snippet shown for a hit.
//!
//! - Indexed ([`body`]): whole messages (the user's prompts, the agent's messages and
//!   thoughts, user messages of a replay), tool calls (title, paths, text content, diffs' paths
//!   and new text, raw output) and terminal output; at most [`MAX_BODY_BYTES`] of a row.
//! - The index uses FTS5's trigram tokenizer: every three characters are a token, so a search
//!   finds any substring of three or more characters, case-insensitively: identifiers
//!   (`session_info`), parts of paths (`src/main`), words.
//! - A search is split at whitespace; every word must occur (in any order). Words of three
//!   characters or more are asked of the index (one quoted phrase each, so nothing in them is
//!   query syntax); shorter ones are checked with `LIKE` on the hits (or scan, when there is no
//!   longer word). Newest rows first.
//! - Snippets are cut around the first hit and mark every occurrence of every word in them
//!   ([`Snippet::marks`]), found here, not by SQLite, so the marks are exact byte ranges.

use acp_desk_core::StreamEvent;
use acp_desk_core::schema::v1 as acp;
use serde::Serialize;

/// The most of one row's text that is indexed: a huge terminal or tool output is found by its
/// start.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Characters of context around the first hit in a snippet.
const SNIPPET_CHARS: usize = 160;

/// What the index holds of a row, if anything.
pub fn body(ev: &StreamEvent) -> Option<String> {
    let mut out = String::new();
    match ev {
        StreamEvent::TextDelta { text, content, .. }
        | StreamEvent::Thought { text, content, .. }
        | StreamEvent::UserMessageDelta { text, content, .. } => {
            out.push_str(text);
            if let Some(block) = content {
                block_text(block, &mut out);
            }
        }
        StreamEvent::TurnStart { prompt, .. } => {
            for block in prompt {
                block_text(block, &mut out);
            }
        }
        StreamEvent::ToolCall(tc) => {
            line(&mut out, &tc.tool_name);
            for loc in tc.locations.iter().flatten() {
                line(&mut out, &loc.path.to_string_lossy());
            }
            for item in tc.content.iter().flatten() {
                match item {
                    acp::ToolCallContent::Content(c) => block_text(&c.content, &mut out),
                    acp::ToolCallContent::Diff(d) => {
                        line(&mut out, &d.path.to_string_lossy());
                        line(&mut out, &d.new_text);
                    }
                    _ => {}
                }
            }
            match &tc.raw_output {
                Some(serde_json::Value::String(s)) => line(&mut out, s),
                Some(v) if !v.is_null() => line(&mut out, &v.to_string()),
                _ => {}
            }
        }
        StreamEvent::TerminalOutput { data, .. } => out.push_str(data),
        _ => return None,
    }
    if out.len() > MAX_BODY_BYTES {
        let mut end = MAX_BODY_BYTES;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    (!out.trim().is_empty()).then_some(out)
}

fn line(out: &mut String, s: &str) {
    if s.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(s);
}

fn block_text(block: &acp::ContentBlock, out: &mut String) {
    match block {
        acp::ContentBlock::Text(t) => line(out, &t.text),
        acp::ContentBlock::ResourceLink(l) => {
            line(out, &l.name);
            line(out, &l.uri);
        }
        acp::ContentBlock::Resource(r) => match &r.resource {
            acp::EmbeddedResourceResource::TextResourceContents(t) => line(out, &t.uri),
            acp::EmbeddedResourceResource::BlobResourceContents(b) => line(out, &b.uri),
            _ => {}
        },
        _ => {}
    }
}

/// A search as SQL asks it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Query {
    /// The FTS5 query for the words of three characters or more (`None`: there are none).
    pub fts: Option<String>,
    /// `LIKE` patterns for the shorter words.
    pub likes: Vec<String>,
    /// Every word, for the snippet's marks.
    pub words: Vec<String>,
}

/// `None` when the text has no word.
pub(crate) fn query(text: &str) -> Option<Query> {
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if words.is_empty() {
        return None;
    }
    let long: Vec<String> = words
        .iter()
        .filter(|w| w.chars().count() >= 3)
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    let likes = words
        .iter()
        .filter(|w| w.chars().count() < 3)
        .map(|w| {
            let escaped = w
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        })
        .collect();
    Some(Query {
        fts: (!long.is_empty()).then(|| long.join(" ")),
        likes,
        words,
    })
}

/// A hit's text around the first occurrence, with every occurrence marked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snippet {
    /// On one line (line breaks and tabs shown as spaces); `…` where it was cut.
    pub text: String,
    /// Byte ranges `[start, end)` of `text` that match a word of the search.
    pub marks: Vec<(usize, usize)>,
}

impl Snippet {
    /// The text with each mark between `open` and `close` (`[`…`]`, ANSI colours, `<mark>`).
    pub fn marked(&self, open: &str, close: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + 8 * self.marks.len());
        let mut at = 0;
        for &(start, end) in &self.marks {
            out.push_str(&self.text[at..start]);
            out.push_str(open);
            out.push_str(&self.text[start..end]);
            out.push_str(close);
            at = end;
        }
        out.push_str(&self.text[at..]);
        out
    }
}

/// `s` lowercased, with the byte offset in `s` of the character each of its bytes came from.
fn fold(s: &str) -> (String, Vec<usize>) {
    let mut folded = String::with_capacity(s.len());
    let mut origin = Vec::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        for l in c.to_lowercase() {
            folded.push(l);
            origin.extend(std::iter::repeat_n(i, l.len_utf8()));
        }
    }
    (folded, origin)
}

/// Every occurrence of any word in `s`, as byte ranges of `s`, sorted and not overlapping.
fn occurrences(s: &str, words: &[String]) -> Vec<(usize, usize)> {
    let (folded, origin) = fold(s);
    let end_of = |folded_end: usize| {
        let start = origin[folded_end - 1];
        start + s[start..].chars().next().map_or(0, char::len_utf8)
    };
    let mut found = Vec::new();
    for word in words {
        let word = word.to_lowercase();
        if word.is_empty() {
            continue;
        }
        let mut from = 0;
        while let Some(i) = folded[from..].find(&word) {
            let (fs, fe) = (from + i, from + i + word.len());
            found.push((origin[fs], end_of(fe)));
            from = fe;
        }
    }
    found.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(found.len());
    for (s, e) in found {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// The snippet of `body` for a search of `words`: about [`SNIPPET_CHARS`] characters around
/// the first occurrence (the start of the text when none is found, which the index's own case
/// folding can make happen for a few characters).
pub(crate) fn snippet(body: &str, words: &[String]) -> Snippet {
    let all = occurrences(body, words);
    let first = all.first().map_or(0, |o| o.0);
    // Start a third of the window before the hit, at a character boundary.
    let lead = SNIPPET_CHARS / 3;
    let start = body[..first]
        .char_indices()
        .rev()
        .nth(lead.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    let end = body[start..]
        .char_indices()
        .nth(SNIPPET_CHARS)
        .map_or(body.len(), |(i, _)| start + i);
    let mut text = String::new();
    let mut offset = 0isize;
    if start > 0 {
        text.push('…');
        offset = '…'.len_utf8() as isize;
    }
    text.push_str(&body[start..end]);
    if end < body.len() {
        text.push('…');
    }
    let text: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let shift = |i: usize| (i as isize - start as isize + offset) as usize;
    let marks = all
        .into_iter()
        .filter(|&(s, e)| s >= start && e <= end)
        .map(|(s, e)| (shift(s), shift(e)))
        .collect();
    Snippet { text, marks }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn words(s: &str) -> Vec<String> {
        query(s).unwrap().words
    }

    #[test]
    fn queries_quote_long_words_and_check_short_ones_with_like() {
        let q = query(r#"  session_info "x" 5%  src/ma "#).unwrap();
        assert_eq!(q.fts.as_deref(), Some(r#""session_info" """x""" "src/ma""#));
        assert_eq!(q.likes, [r"%5\%%"]);
        assert!(query(" \n ").is_none());
        assert_eq!(query("ab").unwrap().fts, None);
    }

    #[test]
    fn snippets_mark_every_occurrence_in_their_window() {
        let body = format!(
            "{}\nThe Session_Info event and session_info again.\n{}",
            "a".repeat(300),
            "b".repeat(300)
        );
        let s = snippet(&body, &words("session_info"));
        assert!(
            s.text.starts_with('…') && s.text.ends_with('…'),
            "{}",
            s.text
        );
        assert!(!s.text.contains('\n'));
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["Session_Info", "session_info"]);
        assert!(s.marked("[", "]").contains("The [Session_Info] event"));
    }

    #[test]
    fn marks_are_exact_around_characters_that_fold_to_more_bytes() {
        // 'İ' lowercases to two characters: offsets in the folded text are not the original's.
        let body = "İİ naïve Ünïcode path/to/naïve.rs";
        let s = snippet(body, &words("NAÏVE"));
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["naïve", "naïve"]);
    }
}
