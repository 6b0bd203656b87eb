//! `secret`: the secrets ACP Desk reads from the OS keychain (issue 17), the same items the
//! window's Secrets view shows.
//!
//! - `secret set REF`: the value from stdin (one trailing newline dropped); on a terminal it is
//!   asked for with the typing hidden.
//! - `secret delete REF`: says whether there was one.
//! - `secret list [--json]`: the stored names and the names the settings and manifests use,
//!   each with whether it is stored and where it is used.
//!
//! A value is never printed, logged or put in an error message.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use acp_desk_core::secrets::{Keychain, OsKeychain, SecretRef, SecretValue};
use clap::Subcommand;

use crate::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OUTPUT_CLOSED, EXIT_USAGE};

/// A longer stdin is a mistake (a file piped in by accident), refused unstored.
const MAX_SECRET_BYTES: u64 = 64 * 1024;

#[derive(clap::Args)]
pub struct SecretArgs {
    #[command(subcommand)]
    action: SecretAction,
}

#[derive(Subcommand)]
enum SecretAction {
    /// Store the secret REF in the OS keychain, replacing the one stored there.
    ///
    /// The value is read from stdin (one trailing newline dropped): `printf %s "$TOKEN" |
    /// acp-desk-cli secret set github-mcp`. On a terminal it is asked for, the typing hidden.
    /// REF is the name the settings use (`"credential_ref": "github-mcp"`, an env value
    /// `{"secret": "github-mcp"}`) or a manifest's `credentialRef`: letters, digits and
    /// `. _ - / : @`. The value is never printed.
    ///
    /// Exit status: 0 stored; 1 the keychain failed (none running, locked: the message says
    /// what to do); 2 a bad name, or an empty or non-text value (nothing stored).
    Set {
        /// The secret's name.
        #[arg(value_name = "REF")]
        name: String,
    },
    /// Remove the secret REF from the OS keychain.
    ///
    /// Exit status: 0 deleted; 1 the keychain failed; 2 none was stored under REF.
    Delete {
        /// The secret's name.
        #[arg(value_name = "REF")]
        name: String,
    },
    /// The secrets' names: the ones stored by ACP Desk and the ones the settings and the
    /// manifests use, each with whether it is stored and where it is used. Never values.
    ///
    /// Exit status 1 (after listing the names in use) when the keychain cannot be read.
    List {
        /// One JSON object per secret per line: `{"name", "stored": true|false|null (the
        /// keychain could not be read), "usedBy": [...]}`.
        #[arg(long)]
        json: bool,
    },
}

pub fn secret(args: SecretArgs, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let keychain = OsKeychain::new();
    match args.action {
        SecretAction::Set { name } => set(&keychain, &name, runtime),
        SecretAction::Delete { name } => delete(&keychain, &name),
        SecretAction::List { json } => list(&keychain, json),
    }
}

fn parse_ref(name: &str) -> Result<SecretRef, ExitCode> {
    SecretRef::new(name).map_err(|e| {
        eprintln!("acp-desk-cli: {e}");
        ExitCode::from(EXIT_USAGE)
    })
}

fn set(keychain: &dyn Keychain, name: &str, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let name = match parse_ref(name) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let value = if std::io::stdin().is_terminal() {
        ask_hidden(
            &format!("Secret for {name} (typing is hidden): "),
            runtime.handle(),
            true,
        )
    } else {
        read_piped()
    };
    let value = match value {
        Ok(v) => v,
        Err(Refused::Usage(why)) => {
            eprintln!("acp-desk-cli: nothing stored: {why}");
            return ExitCode::from(EXIT_USAGE);
        }
        Err(Refused::Failed(why)) => {
            eprintln!("acp-desk-cli: nothing stored: {why}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if let Err(e) = keychain.set(&name, &value) {
        eprintln!("acp-desk-cli: could not store the secret `{name}`: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    drop(value);
    println!("stored the secret `{name}` in the keychain");
    let (uses, _) = acp_desk_core::secrets::uses_for_user();
    match uses.get(&name) {
        Some(places) => println!("used by {}", places.join(", ")),
        None => eprintln!(
            "acp-desk-cli: no setting or manifest uses `{name}` yet: name it as an MCP server's \
             \"credential_ref\": \"{name}\" or an env value {{\"secret\": \"{name}\"}} in {}",
            acp_desk_core::paths::settings_file().display()
        ),
    }
    ExitCode::SUCCESS
}

pub(crate) enum Refused {
    /// Bad input: exit 2.
    Usage(String),
    /// Reading failed: exit 1.
    Failed(String),
}

/// The piped value: one trailing newline (`\n` or `\r\n`) dropped, so `echo TOKEN |` works.
pub(crate) fn read_piped() -> Result<SecretValue, Refused> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_SECRET_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Refused::Failed(format!("stdin could not be read ({e})")))?;
    if bytes.len() as u64 > MAX_SECRET_BYTES {
        return Err(Refused::Usage(format!(
            "stdin holds more than {} KiB, more than a secret: pipe in the secret alone",
            MAX_SECRET_BYTES / 1024
        )));
    }
    let Ok(mut text) = String::from_utf8(bytes) else {
        return Err(Refused::Usage(
            "stdin is not UTF-8 text: a secret is stored as text".into(),
        ));
    };
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    if text.is_empty() {
        return Err(Refused::Usage(
            "stdin was empty: pipe the secret in (`printf %s \"$TOKEN\" | acp-desk-cli secret set REF`), or run it on a terminal to type it"
                .into(),
        ));
    }
    Ok(SecretValue::new(text))
}

#[cfg(not(unix))]
pub(crate) fn ask_hidden(
    _: &str,
    _: &tokio::runtime::Handle,
    _: bool,
) -> Result<SecretValue, Refused> {
    Err(Refused::Usage(
        "typing a secret hidden is not supported here yet: pipe it in (`... | acp-desk-cli secret set REF`)"
            .into(),
    ))
}

/// Asks on the terminal with echo off. The terminal is put back on every way out: the
/// guard's drop (an answer, an error, a panic), and the signal task for Ctrl-C, Ctrl-\,
/// a hangup or a kill, which restores it before the process exits.
#[cfg(unix)]
///
/// `exit_on_later_signal`: the signal task stays after the answer and ends the process on a
/// later Ctrl-C (tokio's handler, once installed, replaces the default one). A caller that
/// handles Ctrl-C itself afterwards (`auth`, `run`) passes `false`.
pub(crate) fn ask_hidden(
    prompt: &str,
    runtime: &tokio::runtime::Handle,
    exit_on_later_signal: bool,
) -> Result<SecretValue, Refused> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    use std::sync::{Arc, Mutex};

    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin)
        .map_err(|e| Refused::Failed(format!("the terminal's settings could not be read ({e})")))?;
    let restore: Arc<Mutex<Option<rustix::termios::Termios>>> =
        Arc::new(Mutex::new(Some(saved.clone())));

    struct Restore(Arc<Mutex<Option<rustix::termios::Termios>>>);
    impl Restore {
        /// `true` when echo was still off (the prompt was waiting).
        fn now(slot: &Mutex<Option<rustix::termios::Termios>>) -> bool {
            let mut slot = slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Some(saved) = slot.take() else {
                return false;
            };
            // Nothing more to do when it fails: the terminal is gone (a hangup).
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &saved);
            // The Enter that was not echoed: end the prompt's line.
            eprintln!();
            true
        }
    }
    impl Drop for Restore {
        fn drop(&mut self) {
            Restore::now(&self.0);
        }
    }

    // Registered before echo goes off, so that no signal finds it off with no one to restore it.
    let mut signals = Vec::new();
    {
        use tokio::signal::unix::{SignalKind, signal};
        let _in_runtime = runtime.enter();
        for kind in [
            SignalKind::interrupt(),
            SignalKind::quit(),
            SignalKind::hangup(),
            SignalKind::terminate(),
        ] {
            match signal(kind) {
                Ok(s) => signals.push(s),
                Err(e) => {
                    return Err(Refused::Failed(format!(
                        "the terminal could not be guarded against Ctrl-C ({e}); pipe the secret in instead"
                    )));
                }
            }
        }
    }
    let on_signal = restore.clone();
    // Kept until the process ends (tokio's handler stays installed once set): Ctrl-C while the
    // keychain is asked afterwards (an unlock prompt on a desktop) still ends the command.
    let signals = runtime.spawn(async move {
        any_signal(signals).await;
        if Restore::now(&on_signal) {
            eprintln!("acp-desk-cli: interrupted; nothing stored");
        } else {
            eprintln!("acp-desk-cli: interrupted");
        }
        std::process::exit(i32::from(EXIT_INTERRUPTED));
    });
    let guard = Restore(restore);

    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut hidden = saved;
    hidden.local_modes.remove(LocalModes::ECHO);
    // ECHONL would echo the Enter; the guard ends the line instead.
    hidden.local_modes.remove(LocalModes::ECHONL);
    if let Err(e) = tcsetattr(&stdin, OptionalActions::Flush, &hidden) {
        drop(guard);
        signals.abort();
        return Err(Refused::Failed(format!(
            "the terminal's echo could not be turned off ({e}); pipe the secret in instead"
        )));
    }
    let mut line = String::new();
    // A line longer than a secret is cut here (the terminal's own limit is lower anyway).
    let read = std::io::BufRead::read_line(&mut stdin.lock().take(MAX_SECRET_BYTES), &mut line);
    drop(guard);
    if !exit_on_later_signal {
        signals.abort();
    }
    drop(signals);
    match read {
        Ok(0) => Err(Refused::Usage("no secret was typed".into())),
        Ok(_) => {
            if line.ends_with('\n') {
                line.pop();
                if line.ends_with('\r') {
                    line.pop();
                }
            }
            if line.is_empty() {
                Err(Refused::Usage("the secret typed was empty".into()))
            } else {
                Ok(SecretValue::new(line))
            }
        }
        Err(e) => Err(Refused::Failed(format!(
            "the terminal could not be read ({e})"
        ))),
    }
}

/// Completes when any of `signals` arrives.
#[cfg(unix)]
async fn any_signal(mut signals: Vec<tokio::signal::unix::Signal>) {
    std::future::poll_fn(|cx| {
        for s in &mut signals {
            if s.poll_recv(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    })
    .await;
}

fn delete(keychain: &dyn Keychain, name: &str) -> ExitCode {
    let name = match parse_ref(name) {
        Ok(n) => n,
        Err(code) => return code,
    };
    match keychain.delete(&name) {
        Ok(true) => {
            println!("deleted the secret `{name}` from the keychain");
            let (uses, _) = acp_desk_core::secrets::uses_for_user();
            if let Some(places) = uses.get(&name) {
                eprintln!(
                    "acp-desk-cli: `{name}` is still used by {}: those go without it until it is stored again",
                    places.join(", ")
                );
            }
            ExitCode::SUCCESS
        }
        Ok(false) => {
            eprintln!(
                "acp-desk-cli: no secret `{name}` is stored; nothing deleted (see `acp-desk-cli secret list`)"
            );
            ExitCode::from(EXIT_USAGE)
        }
        Err(e) => {
            eprintln!("acp-desk-cli: could not delete the secret `{name}`: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// One row of `secret list`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    name: SecretRef,
    /// `None`: the keychain could not be read.
    stored: Option<bool>,
    used_by: Vec<String>,
}

fn rows(stored: Option<&[SecretRef]>, uses: BTreeMap<SecretRef, Vec<String>>) -> Vec<Row> {
    let mut rows: BTreeMap<SecretRef, Row> = BTreeMap::new();
    for name in stored.into_iter().flatten() {
        rows.insert(
            name.clone(),
            Row {
                name: name.clone(),
                stored: Some(true),
                used_by: Vec::new(),
            },
        );
    }
    for (name, places) in uses {
        rows.entry(name.clone())
            .or_insert_with(|| Row {
                name,
                stored: stored.map(|_| false),
                used_by: Vec::new(),
            })
            .used_by = places;
    }
    rows.into_values().collect()
}

fn list(keychain: &dyn Keychain, json: bool) -> ExitCode {
    let (uses, problems) = acp_desk_core::secrets::uses_for_user();
    for p in problems
        .iter()
        .filter(|p| p.severity == acp_desk_core::agents::ProblemSeverity::Error)
    {
        eprintln!("acp-desk-cli: {p}");
    }
    let stored = keychain.list();
    let rows = rows(stored.as_deref().ok(), uses);
    let printed = print(|out| {
        for row in &rows {
            if json {
                serde_json::to_writer(&mut *out, row)?;
                writeln!(out)?;
                continue;
            }
            let state = match row.stored {
                Some(true) => "stored",
                Some(false) => "NOT STORED",
                None => "unknown",
            };
            let used = if row.used_by.is_empty() {
                "not used by the settings or any manifest".to_owned()
            } else {
                format!("used by {}", row.used_by.join(", "))
            };
            writeln!(out, "{}\t{state}\t{used}", row.name)?;
        }
        Ok(())
    });
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    match stored {
        Ok(_) => {
            if rows.is_empty() && !json {
                eprintln!(
                    "acp-desk-cli: no secrets: none is stored and no setting or manifest names one (store one with `acp-desk-cli secret set REF`)"
                );
            }
            if rows.iter().any(|r| r.stored == Some(false)) {
                eprintln!(
                    "acp-desk-cli: a secret marked NOT STORED is used but missing: store it with `acp-desk-cli secret set REF`"
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("acp-desk-cli: the keychain could not be read: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn print(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_OUTPUT_CLOSED),
        Err(e) => {
            eprintln!("acp-desk-cli: could not write: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str) -> SecretRef {
        SecretRef::new(name).unwrap()
    }

    #[test]
    fn rows_merge_stored_names_and_uses() {
        let uses = BTreeMap::from([
            (r("a"), vec!["mcp_servers.x (credential_ref)".to_owned()]),
            (r("c"), vec!["agent_servers.y.env.K".to_owned()]),
        ]);
        let rows = rows(Some(&[r("a"), r("b")]), uses.clone());
        let shown: Vec<_> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.stored, r.used_by.len()))
            .collect();
        assert_eq!(
            shown,
            [
                ("a", Some(true), 1),
                ("b", Some(true), 0),
                ("c", Some(false), 1)
            ]
        );
        // The keychain unreadable: the names in use, stored unknown.
        let rows = super::rows(None, uses);
        assert!(rows.iter().all(|r| r.stored.is_none()));
        assert_eq!(rows.len(), 2);
        let line = serde_json::to_string(&rows[0]).unwrap();
        assert_eq!(
            line,
            r#"{"name":"a","stored":null,"usedBy":["mcp_servers.x (credential_ref)"]}"#
        );
    }
}
