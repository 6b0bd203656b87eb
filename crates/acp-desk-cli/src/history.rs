//! `history`: the stored sessions (the same file the window uses), and `run`'s recorder.
//!
//! - `history [list] [--json]`: one session per line, the most recent first.
//! - `history show ID [--json]`: the stored thread, rendered, or its StreamEvents as JSON lines.
//! - `history search TEXT... [--json] [--limit N]`: hits with their session and a snippet.
//! - `history export ID [--format md|jsonl]`: Markdown, or StreamEvent JSON lines.
//! - `history delete ID`: from the history, and from the agent too (`session/delete`, with the
//!   agent started for it) when the agent advertised it; stderr says what was deleted where.
//!
//! `ID` may be any unique start of a session's id. With `--json`, stdout carries only JSON
//! lines.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use acp_desk_app::HistoryRecorder;
use acp_desk_store::{RecorderOptions, Store, StoreError, StoreWarning, export};
use clap::{Subcommand, ValueEnum};

use crate::{EXIT_FAILED, EXIT_USAGE};

/// Hits `history search` prints unless told otherwise.
const DEFAULT_HITS: usize = 50;

#[derive(clap::Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    action: Option<HistoryAction>,
    /// With no action: list the sessions as JSON lines.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum HistoryAction {
    /// List the stored sessions, the most recent first (the default).
    List {
        /// One JSON object per session per line.
        #[arg(long)]
        json: bool,
    },
    /// Show a stored session's thread.
    Show {
        #[arg(value_name = "ID")]
        id: String,
        /// The stored StreamEvents as JSON lines (merged as a snapshot merges them).
        #[arg(long)]
        json: bool,
    },
    /// Search every stored transcript (prompts, answers, tool calls, terminal output).
    Search {
        /// Words that must all occur (any substring of three characters or more matches).
        #[arg(required = true, value_name = "TEXT")]
        text: Vec<String>,
        /// One JSON object per hit per line.
        #[arg(long)]
        json: bool,
        /// The most hits printed, newest first.
        #[arg(long, default_value_t = DEFAULT_HITS, value_name = "N")]
        limit: usize,
    },
    /// Export a stored session.
    Export {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long, value_enum, default_value_t = Format::Md)]
        format: Format,
    },
    /// Delete a stored session, its transcript and its draft.
    Delete {
        #[arg(value_name = "ID")]
        id: String,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    /// Markdown: prompts, answers, tool calls with diffs and outputs.
    Md,
    /// StreamEvent JSON lines.
    Jsonl,
}

fn say_warnings(warnings: &[StoreWarning]) {
    for w in warnings {
        eprintln!("acp-desk-cli: {w}");
    }
}

fn fail(e: &StoreError) -> ExitCode {
    match e {
        StoreError::NotFound(_) | StoreError::Ambiguous { .. } => {
            eprintln!("acp-desk-cli: {e} (see `acp-desk-cli history list`)");
            ExitCode::from(EXIT_USAGE)
        }
        _ => {
            eprintln!("acp-desk-cli: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn time(ms: i64) -> String {
    let t =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    acp_desk_core::audit::rfc3339(t)
}

/// Writes JSON lines or text to stdout; a closed stdout (`| head`) ends quietly.
fn print(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::from(crate::EXIT_OUTPUT_CLOSED)
        }
        Err(e) => {
            eprintln!("acp-desk-cli: could not write: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn json_line(out: &mut dyn Write, v: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, v)?;
    out.write_all(b"\n")
}

pub fn history(args: HistoryArgs, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let (mut store, warnings) = match Store::open_default() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    say_warnings(&warnings);
    let action = args
        .action
        .unwrap_or(HistoryAction::List { json: args.json });
    let result = match action {
        HistoryAction::List { json } => list(&store, json),
        HistoryAction::Show { id, json } => show(&store, &id, json),
        HistoryAction::Search { text, json, limit } => search(&store, &text.join(" "), json, limit),
        HistoryAction::Export { id, format } => export_session(&store, &id, format),
        HistoryAction::Delete { id } => delete(&mut store, &id, runtime),
    };
    result.unwrap_or_else(|e| fail(&e))
}

fn list(store: &Store, json: bool) -> Result<ExitCode, StoreError> {
    let sessions = store.sessions()?;
    if sessions.is_empty() && !json {
        eprintln!(
            "acp-desk-cli: no stored sessions ({})",
            store.path().display()
        );
    }
    Ok(print(|out| {
        for s in &sessions {
            if json {
                json_line(out, s)?;
            } else {
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    s.id,
                    time(s.updated_ms),
                    s.agent,
                    s.status,
                    s.folder,
                    s.shown_title().unwrap_or("").replace(['\t', '\n'], " ")
                )?;
            }
        }
        Ok(())
    }))
}

fn show(store: &Store, id: &str, json: bool) -> Result<ExitCode, StoreError> {
    let session = store.session(id)?;
    if json {
        let rows = store.rows(&session.id)?;
        return Ok(print(|out| out.write_all(export::jsonl(&rows).as_bytes())));
    }
    let events = store.events(&session.id)?;
    let color = std::io::stdout().is_terminal();
    Ok(print(|out| {
        crate::render::write_transcript(out, &events, color)
    }))
}

fn search(store: &Store, text: &str, json: bool, limit: usize) -> Result<ExitCode, StoreError> {
    let hits = store.search(text, limit)?;
    if hits.is_empty() && !json {
        eprintln!("acp-desk-cli: nothing found for `{text}`");
    }
    let color = !json && std::io::stdout().is_terminal();
    let (open, close) = if color {
        ("\x1b[1;33m", "\x1b[0m")
    } else {
        ("[", "]")
    };
    Ok(print(|out| {
        for h in &hits {
            if json {
                json_line(out, h)?;
            } else {
                writeln!(
                    out,
                    "{}\t#{} {}\t{}\t{}",
                    h.session_id,
                    h.seq,
                    h.kind,
                    h.folder,
                    h.title.as_deref().unwrap_or("").replace(['\t', '\n'], " ")
                )?;
                writeln!(out, "    {}", h.snippet.marked(open, close))?;
            }
        }
        Ok(())
    }))
}

fn export_session(store: &Store, id: &str, format: Format) -> Result<ExitCode, StoreError> {
    let session = store.session(id)?;
    let text = match format {
        Format::Jsonl => export::jsonl(&store.rows(&session.id)?),
        Format::Md => export::markdown(&session, &store.events(&session.id)?),
    };
    Ok(print(|out| out.write_all(text.as_bytes())))
}

/// The agent first (it needs the stored record to be started again), then the history, which
/// goes whatever the agent said: the user asked for ACP Desk's copy to go.
fn delete(
    store: &mut Store,
    id: &str,
    runtime: &tokio::runtime::Runtime,
) -> Result<ExitCode, StoreError> {
    let session = store.session(id)?;
    store.check_not_in_use(&session.id)?;
    if store.read_only() {
        // A newer ACP Desk's file: `delete` refuses it, saying so, before the agent is asked,
        // so that nothing is deleted anywhere.
        store.delete(&session.id)?;
    }
    let registry = acp_desk_app::Registry::new(runtime.handle().clone());
    let at_agent = runtime.block_on(registry.delete_at_agent(&session));
    store.delete(&session.id)?;
    match acp_desk_app::checkpoints::drop_session_checkpoints(
        std::path::Path::new(&session.folder),
        &session.id,
    ) {
        Ok(true) => eprintln!("acp-desk-cli: its checkpoints were dropped too"),
        Ok(false) => {}
        Err(e) => eprintln!("acp-desk-cli: its checkpoints could not be dropped: {e}"),
    }
    eprintln!(
        "acp-desk-cli: deleted {} from the history ({}) {}",
        session.id,
        store.path().display(),
        at_agent.describe(&session.agent)
    );
    println!("deleted {}", session.id);
    Ok(ExitCode::SUCCESS)
}

/// `run`'s recorder, when history is on: the warnings go to stderr as they come, and what is
/// left is written when it is dropped (every way `run` returns).
pub struct RunHistory(Option<Arc<HistoryRecorder>>);

impl RunHistory {
    /// Starts recording into the default history file; when that fails, says why and records
    /// nothing (the run goes on).
    pub fn start(on: bool) -> Self {
        if !on {
            return RunHistory(None);
        }
        let opts = RecorderOptions {
            on_warning: Some(Arc::new(|w: &StoreWarning| eprintln!("acp-desk-cli: {w}"))),
            ..RecorderOptions::default()
        };
        match HistoryRecorder::start_default(opts) {
            Ok((h, warnings)) => {
                say_warnings(&warnings);
                RunHistory(Some(Arc::new(h)))
            }
            Err(e) => {
                eprintln!("acp-desk-cli: {e}");
                RunHistory(None)
            }
        }
    }

    pub fn observer(&self) -> Option<Arc<HistoryRecorder>> {
        self.0.clone()
    }

    /// Says which session is recorded, and where to find it again.
    pub fn announce(&self, session_id: &str) {
        if let Some(h) = &self.0 {
            eprintln!(
                "acp-desk-cli: session {session_id} (recorded in {}; `acp-desk-cli history show {session_id}`)",
                h.recorder().path().display()
            );
        }
    }
}

impl Drop for RunHistory {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            // Warnings were printed as they came (the sink); `finish` adds what was not stored.
            h.finish();
        }
    }
}
