//! A stored session exported: as StreamEvent JSON lines (what `--json` printed, merged), or as
//! Markdown for people: the prompts, the answers, each tool call with its input, diffs and
//! output, terminal output, the plan, errors and notices.
//!
//! Agent text goes into the Markdown as the agent wrote it (it is Markdown already); everything
//! else that is not ours (inputs, outputs, file contents) goes inside code fences longer than
//! any run of backticks in it, so it cannot break out of them.

use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

use acp_desk_core::StreamEvent;
use acp_desk_core::events::ToolCallEvent;
use acp_desk_core::schema::v1 as acp;

use crate::store::{SessionRecord, StoredRow};

/// Lines of unchanged text shown around a diff's change.
const DIFF_CONTEXT: usize = 3;

/// The rows as JSON lines, one StreamEvent per line.
pub fn jsonl(rows: &[StoredRow]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&r.data);
        out.push('\n');
    }
    out
}

fn time(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    acp_desk_core::audit::rfc3339(t)
}

/// A code fence that `body` cannot close early.
fn fence(out: &mut String, info: &str, body: &str) {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(out, "{ticks}{info}");
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{ticks}\n");
}

/// The session as Markdown.
pub fn markdown(session: &SessionRecord, events: &[StreamEvent]) -> String {
    let mut out = String::new();
    let title = session.shown_title().unwrap_or("Untitled session");
    let _ = writeln!(out, "# {}\n", title.replace('\n', " "));
    let agent = match session.agent_identity.as_ref() {
        Some(a) => match (&a.title, &a.name, &a.version) {
            (Some(t), _, Some(v)) | (None, Some(t), Some(v)) => {
                format!("{} ({t} {v})", session.agent)
            }
            _ => session.agent.clone(),
        },
        None => session.agent.clone(),
    };
    let _ = writeln!(out, "- Session: `{}`", session.id);
    let _ = writeln!(out, "- Agent: {agent}");
    let _ = writeln!(out, "- Folder: `{}`", session.folder);
    let _ = writeln!(
        out,
        "- Started: {}; last event: {}",
        time(session.created_ms),
        time(session.updated_ms)
    );
    let status = match &session.status_detail {
        Some(d) => format!("{} ({d})", session.status),
        None => session.status.clone(),
    };
    let _ = writeln!(out, "- Status: {status}\n");

    let mut speaker = "";
    for ev in events {
        match ev {
            StreamEvent::TurnStart { prompt, .. } => {
                out.push_str("## Prompt\n\n");
                speaker = "prompt";
                for block in prompt {
                    block_markdown(&mut out, block);
                }
            }
            StreamEvent::UserMessageDelta { text, .. } => {
                if speaker != "user" {
                    out.push_str("## User\n\n");
                    speaker = "user";
                }
                let _ = writeln!(out, "{text}\n");
            }
            StreamEvent::TextDelta { text, content, .. } => {
                if speaker != "agent" {
                    out.push_str("## Agent\n\n");
                    speaker = "agent";
                }
                out.push_str(text);
                out.push_str("\n\n");
                if let Some(block) = content {
                    block_markdown(&mut out, block);
                }
            }
            StreamEvent::Thought { text, .. } => {
                out.push_str("> **Thought**\n>\n");
                for line in text.lines() {
                    let _ = writeln!(out, "> {line}");
                }
                out.push('\n');
            }
            StreamEvent::ToolCall(tc) => tool_markdown(&mut out, tc),
            StreamEvent::TerminalOutput {
                terminal_id,
                data,
                exit_status,
                truncated,
                ..
            } => {
                let _ = write!(out, "#### Terminal `{terminal_id}`");
                if let Some(s) = exit_status {
                    match (s.exit_code, &s.signal) {
                        (Some(c), _) => {
                            let _ = write!(out, " (exit code {c})");
                        }
                        (None, Some(sig)) => {
                            let _ = write!(out, " (signal {sig})");
                        }
                        _ => {}
                    }
                }
                out.push_str("\n\n");
                if *truncated == Some(true) {
                    out.push_str("*(only the end of the output was kept)*\n\n");
                }
                fence(&mut out, "", data);
            }
            StreamEvent::Plan { entries, .. } => {
                out.push_str("### Plan\n\n");
                for e in entries {
                    let mark = match e.status {
                        acp::PlanEntryStatus::Completed => "x",
                        _ => " ",
                    };
                    let _ = writeln!(out, "- [{mark}] {}", e.content.replace('\n', " "));
                }
                out.push('\n');
            }
            StreamEvent::Error { error, .. } => {
                let _ = writeln!(out, "> **Error:** {}\n", error.message.replace('\n', " "));
            }
            StreamEvent::Notice {
                title, description, ..
            } => {
                let _ = write!(out, "> **Notice:** {}", title.replace('\n', " "));
                if let Some(d) = description {
                    let _ = write!(out, " {}", d.replace('\n', " "));
                }
                out.push_str("\n\n");
            }
            StreamEvent::TurnEnd {
                reason,
                stop_reason,
                ..
            } => {
                let reason = serde_json::to_value(reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                if reason != "completed"
                    || stop_reason.is_some_and(|s| s != acp::StopReason::EndTurn)
                {
                    let stop = stop_reason
                        .and_then(|s| serde_json::to_value(s).ok())
                        .and_then(|v| v.as_str().map(str::to_owned));
                    let _ = writeln!(
                        out,
                        "*(the turn ended: {reason}{})*\n",
                        stop.map(|s| format!(", {s}")).unwrap_or_default()
                    );
                }
                speaker = "";
            }
            _ => {}
        }
    }
    out
}

fn block_markdown(out: &mut String, block: &acp::ContentBlock) {
    match block {
        acp::ContentBlock::Text(t) => {
            out.push_str(&t.text);
            out.push_str("\n\n");
        }
        acp::ContentBlock::ResourceLink(l) => {
            let _ = writeln!(out, "- attached: `{}` ({})\n", l.name, l.uri);
        }
        acp::ContentBlock::Resource(r) => {
            let uri = match &r.resource {
                acp::EmbeddedResourceResource::TextResourceContents(t) => t.uri.as_str(),
                acp::EmbeddedResourceResource::BlobResourceContents(b) => b.uri.as_str(),
                _ => "",
            };
            let _ = writeln!(out, "- embedded: {uri}\n");
        }
        acp::ContentBlock::Image(_) => out.push_str("- (an image)\n\n"),
        acp::ContentBlock::Audio(_) => out.push_str("- (audio)\n\n"),
        _ => {}
    }
}

fn tool_markdown(out: &mut String, tc: &ToolCallEvent) {
    let title = if tc.tool_name.is_empty() {
        "(untitled)"
    } else {
        tc.tool_name.as_str()
    };
    let _ = write!(out, "### Tool call: {}", title.replace('\n', " "));
    let mut facts = Vec::new();
    if let Some(k) = tc.tool_kind
        && let Some(k) = serde_json::to_value(k)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
    {
        facts.push(k);
    }
    if let Some(s) = tc.status
        && let Some(s) = serde_json::to_value(s)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
    {
        facts.push(s);
    }
    if !facts.is_empty() {
        let _ = write!(out, " ({})", facts.join(", "));
    }
    out.push_str("\n\n");
    for loc in tc.locations.iter().flatten() {
        match loc.line {
            Some(l) => {
                let _ = writeln!(out, "- `{}:{l}`", loc.path.display());
            }
            None => {
                let _ = writeln!(out, "- `{}`", loc.path.display());
            }
        }
    }
    if tc.locations.as_ref().is_some_and(|l| !l.is_empty()) {
        out.push('\n');
    }
    if let Some(input) = tc.input() {
        out.push_str("Input:\n\n");
        let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
        fence(out, "json", &pretty);
    }
    for item in tc.content.iter().flatten() {
        match item {
            acp::ToolCallContent::Diff(d) => {
                let _ = writeln!(out, "Diff of `{}`:\n", d.path.display());
                fence(out, "diff", &diff(d.old_text.as_deref(), &d.new_text));
            }
            acp::ToolCallContent::Content(c) => match &c.content {
                acp::ContentBlock::Text(t) => {
                    out.push_str("Output:\n\n");
                    fence(out, "", &t.text);
                }
                other => block_markdown(out, other),
            },
            acp::ToolCallContent::Terminal(t) => {
                let _ = writeln!(out, "Output: terminal `{}` (below)\n", t.terminal_id);
            }
            _ => {}
        }
    }
    match &tc.raw_output {
        Some(serde_json::Value::String(s)) => {
            out.push_str("Raw output:\n\n");
            fence(out, "", s);
        }
        Some(v) if !v.is_null() => {
            out.push_str("Raw output:\n\n");
            fence(
                out,
                "json",
                &serde_json::to_string_pretty(v).unwrap_or_default(),
            );
        }
        _ => {}
    }
}

/// A unified-style diff of one change: the lines both texts start and end with are context
/// (at most [`DIFF_CONTEXT`] shown), the rest removed and added. `None`: a new file.
fn diff(old: Option<&str>, new: &str) -> String {
    let old: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let new: Vec<&str> = new.lines().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = String::new();
    for l in &old[prefix.saturating_sub(DIFF_CONTEXT)..prefix] {
        let _ = writeln!(out, " {l}");
    }
    for l in &old[prefix..old.len() - suffix] {
        let _ = writeln!(out, "-{l}");
    }
    for l in &new[prefix..new.len() - suffix] {
        let _ = writeln!(out, "+{l}");
    }
    let tail = new.len() - suffix;
    for l in &new[tail..(tail + DIFF_CONTEXT).min(new.len())] {
        let _ = writeln!(out, " {l}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_show_the_change_with_a_little_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(diff(Some(old), new), " b\n c\n d\n-e\n+E\n f\n g\n h\n");
        assert_eq!(diff(None, "x\ny"), "+x\n+y\n");
    }

    #[test]
    fn fences_are_longer_than_any_backticks_inside() {
        let mut out = String::new();
        fence(&mut out, "", "```\nnot the end\n````");
        assert!(out.starts_with("`````\n"), "{out}");
        assert!(out.ends_with("`````\n\n"), "{out}");
    }
}
