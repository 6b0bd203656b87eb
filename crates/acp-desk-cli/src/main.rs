//! `acp-desk-cli`: ACP Desk's engine without a window.
//!
//! `acp-desk-cli run [--agent NAME | --agent-command "CMD ARG..." | --continue ID [--continue-via
//!  auto|load]] [--cwd DIR] [--add-dir DIR]...
//!  [--permission ask|allow|reject|cancel] [--allow-reads] [--no-audit] [--no-history] [--json]
//!  [--project-mcp] PROMPT...`
//! `acp-desk-cli rules [list] [--agent NAME] [--project DIR]`, `acp-desk-cli rules revoke ID`
//! `acp-desk-cli history [list|show ID|search TEXT...|export ID|delete ID]` (see `history.rs`)
//! `acp-desk-cli changes ID [--turn N] [--json]`, `acp-desk-cli revert ID --turn N [--file PATH]
//!  [--force]`, `acp-desk-cli restore ID --before-turn N [--force]`: review and undo a stored
//!  session's turns from their checkpoints (see `checkpoints.rs`)
//! `acp-desk-cli manifest [--json]`: ACP Desk's own AIP-44 manifest (see `manifest.rs`)
//! `acp-desk-cli secret set|delete REF`, `acp-desk-cli secret list [--json]`: the keychain's
//!  secrets (see `secret.rs`)
//! `acp-desk-cli auth NAME [--method ID] [--agent-command CMD] [--yes]`: sign in to an agent
//!  with one of its `authMethods` (see `auth.rs`)
//!
//! Other tools script this contract; change it only additively.

mod agents;
mod auth;
mod check;
mod checkpoints;
mod elicit;
mod history;
mod manifest;
mod render;
mod secret;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use acp_desk_app::{OpenRequest, Registry};
use acp_desk_core::agents as core_agents;
use acp_desk_core::events::{AgentPromptEvent, TurnEndReason};
use acp_desk_core::{PermissionPolicy, SessionOptions};
use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use tokio::sync::mpsc;

/// Exit code when the user interrupted (Ctrl-C), as shells report SIGINT.
const EXIT_INTERRUPTED: u8 = 130;
/// Exit code when the agent failed to start or a turn ended in error.
const EXIT_FAILED: u8 = 1;
/// Exit code when a turn ended other than with `end_turn` (max tokens, max turn requests,
/// refusal, cancelled by the agent, watchdog).
const EXIT_ENDED_OTHERWISE: u8 = 3;
/// Exit code for usage errors: bad arguments, an unknown agent, a missing folder.
const EXIT_USAGE: u8 = 2;
/// Exit code when stdout was closed by its reader (128 + SIGPIPE, as shells report it).
const EXIT_OUTPUT_CLOSED: u8 = 141;

#[derive(Parser)]
#[command(
    name = "acp-desk-cli",
    version,
    about = "Run ACP agent turns without a window."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run each PROMPT as one turn, in order, in one session.
    ///
    /// Exit status: 0 when every turn ended with `end_turn`; 1 on agent or protocol failure (it
    /// stops the remaining prompts); 2 on a usage error; 3 when a turn ended otherwise (max
    /// tokens, max turn requests, refusal, cancelled by the agent, watchdog); 130 after Ctrl-C;
    /// 141 when stdout was closed. When turns differ: 130, then 1, then 3.
    ///
    /// An agent that needs a sign-in (auth-required, at `session/new` or in a turn) ends the
    /// run with 1 and a message naming `acp-desk-cli auth NAME --method ID` for each method it
    /// offers. On a terminal (stdin and stderr) it asks whether to sign in now; once signed in
    /// it starts the agent again (continuing the recorded session when there was one) and
    /// sends the prompt that hit it again, then the rest; the exit status is then that run's.
    Run(RunArgs),
    /// The agents `--agent` knows, from every source (settings, manifests, registry, built
    /// in): list them, check one, install one.
    Agents(agents::AgentsArgs),
    /// List or revoke remembered permission answers ("always allow" / "always reject").
    Rules(RulesArgs),
    /// The stored sessions: list, show, search, export, delete (`run` records them).
    History(history::HistoryArgs),
    /// What a stored session's turns changed, from the checkpoints taken before and after each
    /// (the session's steps and its changes since it started; with --turn N, step N's files).
    ///
    /// Exit status: 0; 1 a failure; 2 unknown session or step, or no checkpoints.
    Changes(checkpoints::ChangesArgs),
    /// Undo step N of a stored session (its files back as before it, or only --file PATH).
    ///
    /// A file changed since the step is a conflict: nothing is written, the files are listed,
    /// exit 4; --force overwrites them. Refused while a turn runs in that folder (exit 5). The
    /// undo is a step of its own: `revert ID --turn M` undoes it. Exit 2: unknown session,
    /// step or file; 1: a failure (nothing was changed); 6: the undo wrote files, then failed
    /// (stderr names them).
    Revert(checkpoints::RevertArgs),
    /// Put a stored session's whole folder back as it was before step N; conflicts (files
    /// changed after the session's last checkpoint) and exit codes as for `revert`.
    Restore(checkpoints::RestoreArgs),
    /// Print ACP Desk's own AIP-44 manifest (ACP.md: `kind: client`, the capabilities it
    /// advertises), or with --json its AcpDefinition.
    Manifest(manifest::ManifestArgs),
    /// Store, delete and list the secrets MCP servers and agents get from the OS keychain.
    ///
    /// A secret is named by the settings (an MCP server's `credential_ref`, an env value
    /// `{"secret": "REF"}`) or a manifest (`credentialRef`); its value lives in the keychain
    /// only. Values are never printed.
    Secret(secret::SecretArgs),
    /// Sign in to an agent with one of the methods it offers (its `authMethods`).
    ///
    /// Without --method: the one method it offers is used; several are listed (exit 2). A
    /// terminal login runs here, in this terminal (exit status 0 = signed in); one whose
    /// program is not the agent's own launch is run only after you agree (a y/N question on a
    /// terminal, --yes otherwise). An API key is read with the typing hidden on a terminal, or
    /// from stdin (`printf %s "$KEY" | acp-desk-cli auth gemini --method gemini-api-key`), kept
    /// in the OS keychain as `agent-auth/AGENT/METHOD`, sent to the agent on every start, and
    /// checked by a start here. Any other method asks the agent (`authenticate`); it may open
    /// a browser.
    ///
    /// Exit status: 0 signed in; 1 not signed in (the login exited otherwise, the agent
    /// refused, the keychain failed, the agent did not start); 2 a usage error (unknown agent
    /// or method, several methods and no --method, no consent, an empty key); 130 after Ctrl-C.
    Auth(auth::AuthArgs),
}

#[derive(clap::Args)]
struct RulesArgs {
    #[command(subcommand)]
    action: Option<RulesAction>,
    #[command(flatten)]
    filter: RulesFilter,
}

#[derive(clap::Args, Clone, Default)]
struct RulesFilter {
    /// Only the rules of this agent (its launch name: `demo`, `claude`, a settings name).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// Only the rules of this project folder (the session's folder).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

#[derive(Subcommand)]
enum RulesAction {
    /// List the rules, one per line (the default).
    List(RulesFilter),
    /// Remove the rule with this id; the agent is asked again from the next turn on.
    Revoke {
        #[arg(value_name = "ID")]
        id: String,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// An agent by id, from any source `acp-desk-cli agents` lists: `demo` (built in), a name
    /// from `agent_servers` in the settings file, a manifest, the registry, or a built-in
    /// (`claude`, `codex`, `gemini`, `goose`, `opencode`, `copilot`, ...). Settings first, then
    /// manifests, registry, built-in. Default: demo.
    #[arg(long, conflicts_with = "agent_command")]
    agent: Option<String>,
    /// The agent's command line, split into words like a shell would (no shell runs).
    #[arg(long, value_name = "CMD ARG...")]
    agent_command: Option<String>,
    /// Continue the stored session ID (or the one whose id starts with it; see `history
    /// list`) with its stored agent, in its stored folder: `session/resume` when the agent
    /// offers it, else `session/load`, else a new session in the same folder (the agent then
    /// has none of the old conversation). Which one is said on stderr. The turns are added to
    /// the stored session. With --agent or --agent-command, that agent instead of the stored
    /// one (for a session whose command line held secrets, which the history never keeps).
    #[arg(long = "continue", value_name = "ID", conflicts_with = "cwd")]
    continue_id: Option<String>,
    /// With --continue: `load` uses `session/load` even when the agent also offers
    /// `session/resume` (to test the load path); `auto` prefers resume.
    #[arg(long, value_enum, default_value = "auto", requires = "continue_id")]
    continue_via: Via,
    /// The session's folder. Default: the current folder.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Another folder the session may use (repeatable).
    #[arg(long = "add-dir", value_name = "DIR")]
    add_dir: Vec<PathBuf>,
    /// How to answer the agent's permission requests. Default: ask on a terminal; with no
    /// terminal, reject.
    #[arg(long, value_enum)]
    permission: Option<Permission>,
    /// Print StreamEvents as JSON lines on stdout, and nothing else there.
    #[arg(long)]
    json: bool,
    /// Allow the agent's read requests whose every path is inside the session's folders,
    /// without asking. Remembered answers still come first.
    #[arg(long)]
    allow_reads: bool,
    /// Write no audit log for this session (as AIP-44's `audit.kind: off`).
    #[arg(long)]
    no_audit: bool,
    /// Do not record this session in the history (`acp-desk-cli history`).
    #[arg(long)]
    no_history: bool,
    /// Take no checkpoints of the folder (then `changes`, `revert` and `restore` have nothing
    /// for this session). Default: taken before and after each turn, as the `checkpoints`
    /// settings say.
    #[arg(long)]
    no_checkpoints: bool,
    /// A turn ends (`watchdog-timeout`) when the agent sends nothing for this many seconds,
    /// not counting time spent waiting for your answer to a permission request. 0: never.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    turn_idle_timeout: f64,
    /// Seconds a turn may go on after a cancel before the agent is ended.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS", hide = true)]
    cancel_grace: f64,
    /// Switch the session to this mode (`session/set_mode`, one of the agent's modes) before
    /// the first prompt. An agent that refuses it ends the run with its reason.
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// Also give the agent the MCP servers of the folder's own config (`.mcp.json`,
    /// `.cursor/mcp.json`, `.vscode/mcp.json`), for this run. Without it they are never used,
    /// only named on stderr: a repository's config runs programs someone else wrote. Servers
    /// whose values hold `${...}` placeholders are never passed (stderr says why).
    #[arg(long)]
    project_mcp: bool,
    /// After the last turn, keep the session open up to this many seconds while the agent's
    /// background tasks run (and the work it does on its own once one ends), so they end as the
    /// agent says rather than with the session. 0: close at once.
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    wait_tasks: f64,
    /// The prompts, one turn each.
    #[arg(required = true, value_name = "PROMPT")]
    prompts: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Via {
    Auto,
    Load,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Permission {
    Ask,
    Allow,
    Reject,
    Cancel,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    // Sessions (and Check) read `{"secret": REF}` env values and MCP credentials from the OS's
    // keychain; it is only reached when a launch names a secret.
    acp_desk_core::session::set_default_keychain(std::sync::Arc::new(
        acp_desk_core::secrets::OsKeychain::new(),
    ));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("acp-desk-cli: could not start the async runtime: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let result = match cli.command {
        Cmd::Run(args) => {
            // Opened and finished outside the runtime: both are blocking file IO.
            // Read once here for the history switch; the agent is resolved (reading it again)
            // in `check`. Errors skip part of the file: say so, then go on with the rest.
            let settings = acp_desk_core::settings::load();
            agents::print_problems(
                &settings
                    .problems
                    .iter()
                    .filter(|p| p.severity == core_agents::ProblemSeverity::Error)
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            let history_off = !settings.settings.history.enabled;
            if history_off && !args.no_history {
                eprintln!(
                    "acp-desk-cli: this session is not recorded: `history.enabled` is false in {}",
                    acp_desk_core::paths::settings_file().display()
                );
            }
            let history = history::RunHistory::start(!args.no_history && !history_off);
            let r = runtime.block_on(run(args, &history));
            drop(history);
            r
        }
        Cmd::Agents(args) => Ok(agents::agents(args, &runtime)),
        Cmd::Rules(args) => Ok(rules(args)),
        Cmd::History(args) => Ok(history::history(args, &runtime)),
        Cmd::Changes(args) => Ok(checkpoints::changes(args)),
        Cmd::Revert(args) => Ok(checkpoints::revert(args)),
        Cmd::Restore(args) => Ok(checkpoints::restore(args)),
        Cmd::Manifest(args) => manifest::print(args),
        Cmd::Secret(args) => Ok(secret::secret(args, &runtime)),
        Cmd::Auth(args) => Ok(auth::auth(args, &runtime)),
    };
    // Do not wait for the stdin reader thread (it may be blocked on a terminal read).
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("acp-desk-cli: {e:#}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ACP_DESK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}

/// `rules [list]` and `rules revoke`: the same file the app and `run` use.
fn rules(args: RulesArgs) -> ExitCode {
    use acp_desk_core::rules::RuleStore;
    let (mut store, warning) = match RuleStore::open_default() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("acp-desk-cli: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if let Some(w) = warning {
        eprintln!("acp-desk-cli: {w}");
    }
    match args.action {
        Some(RulesAction::Revoke { id }) => match store.revoke(&id) {
            Ok(rule) => {
                println!("revoked {}", RuleStore::describe(&rule));
                ExitCode::SUCCESS
            }
            Err(acp_desk_core::rules::RulesError::UnknownId(id)) => {
                eprintln!(
                    "acp-desk-cli: no permission rule with id `{id}` (see `acp-desk-cli rules list`)"
                );
                ExitCode::from(EXIT_USAGE)
            }
            Err(e) => {
                eprintln!("acp-desk-cli: {e}");
                ExitCode::from(EXIT_FAILED)
            }
        },
        Some(RulesAction::List(filter)) => list_rules(&store, &filter),
        None => list_rules(&store, &args.filter),
    }
}

fn list_rules(store: &acp_desk_core::rules::RuleStore, filter: &RulesFilter) -> ExitCode {
    // Rules are kept per canonical project folder, as sessions record them.
    let project = match &filter.project {
        Some(p) => match std::fs::canonicalize(p) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("acp-desk-cli: --project {}: {e}", p.display());
                return ExitCode::from(EXIT_USAGE);
            }
        },
        None => None,
    };
    let rules = store.list(filter.agent.as_deref(), project.as_deref());
    if rules.is_empty() {
        eprintln!(
            "acp-desk-cli: no remembered permission answers ({})",
            store.path().display()
        );
    }
    for rule in rules {
        println!("{}", acp_desk_core::rules::RuleStore::describe(rule));
    }
    ExitCode::SUCCESS
}

/// What `run` was asked to do, checked before anything starts.
struct Checked {
    spec: core_agents::LaunchSpec,
    opts: SessionOptions,
    ask: bool,
    /// The agent's questions are asked on the terminal (else the engine declines them).
    questions: bool,
    /// The agent's name as the user chose it.
    agent: String,
    origin: acp_desk_store::LaunchOrigin,
    /// The agent's AIP-44 manifest: its MCP servers go to the session.
    manifest: Option<core_agents::manifest::Manifest>,
    /// The folder's own MCP servers, with --project-mcp only.
    project_mcp: Vec<acp_desk_core::mcp::McpServerConfig>,
}

/// `--continue ID`: the stored session, its agent, folder and how to continue it.
fn continuation(
    id: &str,
    via: Via,
    chosen: Option<(
        String,
        core_agents::LaunchSpec,
        acp_desk_store::LaunchOrigin,
    )>,
) -> anyhow::Result<acp_desk_app::OpenRequest> {
    let (store, warnings) = acp_desk_store::Store::open_default()?;
    for w in &warnings {
        eprintln!("acp-desk-cli: {w}");
    }
    let record = store.session(id)?;
    store.check_not_in_use(&record.id)?;
    let via = match via {
        Via::Auto => acp_desk_core::ContinueVia::Auto,
        Via::Load => acp_desk_core::ContinueVia::Load,
    };
    Ok(match chosen {
        Some((agent, spec, origin)) => {
            acp_desk_app::continue_request_with(&record, via, agent, spec, origin)?
        }
        None => acp_desk_app::continue_request(&record, via)?,
    })
}

/// Checks the arguments; an error here is a usage error (exit 2), nothing has started yet.
fn check(args: &RunArgs) -> anyhow::Result<Checked> {
    // The agent the user named (with --continue: instead of the stored one), over every
    // source; a manifest agent's manifest sets its audit log below.
    let mut manifest = None;
    let chosen = match (&args.agent, &args.agent_command) {
        (_, Some(line)) => Some((
            core_agents::from_command_line(line)?,
            acp_desk_store::LaunchOrigin::CommandLine,
        )),
        (Some(name), None) => {
            let resolved =
                core_agents::resolve_in(&core_agents::Sources::default_for_user(), name)?;
            manifest = resolved.manifest;
            Some((resolved.spec, acp_desk_store::LaunchOrigin::Named))
        }
        (None, None) => None,
    }
    .map(|(spec, origin)| (spec.name.clone(), spec, origin));
    let continued = match args.continue_id.as_deref() {
        Some(id) => Some(continuation(id, args.continue_via, chosen.clone())?),
        None => None,
    };
    let spec = match (&continued, chosen) {
        (Some(c), _) => c.spec.clone(),
        (None, Some((_, spec, _))) => spec,
        (None, None) => core_agents::resolve("demo")?,
    };
    let cwd = match &continued {
        Some(c) => c.options.cwd.clone(),
        None => folder(
            args.cwd.clone().unwrap_or(std::env::current_dir()?),
            "--cwd",
        )?,
    };
    let add_dirs = args
        .add_dir
        .iter()
        .map(|d| folder(d.clone(), "--add-dir"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cancel_grace = Duration::try_from_secs_f64(args.cancel_grace)
        .map_err(|_| anyhow::anyhow!("--cancel-grace: not a usable number of seconds"))?;
    let turn_idle_timeout =
        match args.turn_idle_timeout {
            0.0 => None,
            secs => Some(Duration::try_from_secs_f64(secs).map_err(|_| {
                anyhow::anyhow!("--turn-idle-timeout: not a usable number of seconds")
            })?),
        };
    // The contract: "on a terminal" means stdin is a TTY.
    let interactive = std::io::stdin().is_terminal();
    let permission = match args.permission {
        Some(Permission::Ask) if !interactive => {
            bail!("--permission ask needs a terminal on stdin; use allow, reject or cancel")
        }
        Some(p) => p,
        None if interactive => Permission::Ask,
        None => {
            eprintln!(
                "acp-desk-cli: no terminal to ask on: the agent's permission requests will be rejected (use --permission to choose)"
            );
            Permission::Reject
        }
    };
    let project_mcp = project_mcp(&cwd, args.project_mcp);
    let mut opts = SessionOptions::new(cwd);
    opts.additional_dirs = add_dirs;
    opts.cancel_grace = cancel_grace;
    opts.turn_idle_timeout = turn_idle_timeout;
    opts.allow_reads_inside_roots = args.allow_reads;
    // The manifest's `audit` first, so that --no-audit still wins (invariant 33); a stored
    // session continued with its own agent keeps the audit log its manifest set.
    if let Some(m) = &manifest {
        m.apply_audit(&mut opts);
    } else if let Some(c) = &continued {
        opts.audit = c.options.audit;
        opts.audit_dir = c.options.audit_dir.clone();
    }
    if args.no_audit {
        opts.audit = acp_desk_core::audit::AuditKind::Off;
    }
    opts.permission_policy = match permission {
        Permission::Ask => PermissionPolicy::Ask,
        Permission::Allow => PermissionPolicy::AllowOnce,
        Permission::Reject => PermissionPolicy::RejectOnce,
        Permission::Cancel => PermissionPolicy::Cancel,
    };
    // The contract: ask on a terminal, decline otherwise (nobody could answer).
    opts.elicitation_policy = if interactive && std::io::stderr().is_terminal() {
        acp_desk_core::ElicitationPolicy::Ask
    } else {
        acp_desk_core::ElicitationPolicy::Decline
    };
    let (agent, origin) = match continued {
        Some(c) => {
            opts.opening = c.options.opening;
            if manifest.is_none() {
                manifest = c.manifest;
            }
            (c.agent, c.origin)
        }
        None if args.agent_command.is_some() => {
            (spec.name.clone(), acp_desk_store::LaunchOrigin::CommandLine)
        }
        None => (spec.name.clone(), acp_desk_store::LaunchOrigin::Named),
    };
    Ok(Checked {
        spec,
        opts,
        ask: permission == Permission::Ask,
        // Asked on stderr, answered on stdin: both must be the terminal.
        questions: interactive && std::io::stderr().is_terminal(),
        agent,
        origin,
        manifest,
        project_mcp,
    })
}

/// The folder's own MCP config: named on stderr, once; its servers used only when `wanted`
/// (`--project-mcp`, invariant 56). Blocking (small file reads).
fn project_mcp(folder: &std::path::Path, wanted: bool) -> Vec<acp_desk_core::mcp::McpServerConfig> {
    let (servers, files) = acp_desk_app::project_mcp::all_servers(folder);
    if files.is_empty() {
        if wanted {
            eprintln!(
                "acp-desk-cli: --project-mcp: {} has no .mcp.json, .cursor/mcp.json or .vscode/mcp.json with servers; none added",
                folder.display()
            );
        }
        return Vec::new();
    }
    let mut note = if wanted {
        format!(
            "acp-desk-cli: --project-mcp: this run also gives the agent {} MCP server{} from the folder's own config:",
            servers.len(),
            if servers.len() == 1 { "" } else { "s" }
        )
    } else {
        "acp-desk-cli: this folder has its own MCP config, NOT used (a repository's config runs programs someone else wrote); to use it for this run, pass --project-mcp:".to_owned()
    };
    for line in acp_desk_app::project_mcp::describe(&files) {
        note.push_str("\n  ");
        note.push_str(&line);
    }
    eprintln!("{note}");
    if wanted { servers } else { Vec::new() }
}

async fn run(args: RunArgs, history: &history::RunHistory) -> anyhow::Result<ExitCode> {
    let checked = match check(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("acp-desk-cli: {e:#}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    // Which `auth` command signs in to this agent: the name it was chosen by; a command line is
    // never repeated (it may hold a secret).
    let who = match checked.origin {
        acp_desk_store::LaunchOrigin::CommandLine => auth::AgentArg::CommandLine,
        _ => auth::AgentArg::Name(checked.agent.clone()),
    };
    // "On a terminal": stdin for the answer, stderr for the question.
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut checked = checked;
    let mut prompts: &[String] = &args.prompts;
    let mut signed_in = false;
    // A turn before the sign-in that ended other than `end_turn` still makes it exit 3.
    let mut ended_otherwise_before = false;
    loop {
        let watch = auth::AuthWatch::new();
        let outcome = attempt(&args, &checked, prompts, history, &watch).await?;
        let (at, session) = match outcome {
            Attempt::Done(code) if ended_otherwise_before && code == ExitCode::SUCCESS => {
                return Ok(ExitCode::from(EXIT_ENDED_OTHERWISE));
            }
            Attempt::Done(code) => return Ok(code),
            Attempt::AuthRequired {
                at,
                session,
                ended_otherwise,
            } => {
                ended_otherwise_before |= ended_otherwise;
                (at, session)
            }
        };
        let actions = watch.actions();
        eprintln!("acp-desk-cli: {}", auth::advice(actions.as_deref(), &who));
        let actions = actions.unwrap_or_default();
        // Once per run: a second auth-required right after signing in is the agent's to explain.
        if !interactive || signed_in || actions.is_empty() {
            return Ok(ExitCode::from(EXIT_FAILED));
        }
        // Ctrl-C at the question ends the run (tokio's handler replaced the default one).
        let chosen = tokio::select! {
            a = offer(&actions) => a,
            _ = tokio::signal::ctrl_c() => return Ok(ExitCode::from(EXIT_INTERRUPTED)),
        };
        let Some(action) = chosen else {
            return Ok(ExitCode::from(EXIT_FAILED));
        };
        match auth::sign_in(
            &action,
            &checked.spec,
            &checked.opts.cwd,
            false,
            checked.opts.start_timeout.max(Duration::from_secs(120)),
        )
        .await
        {
            Ok(done) => eprintln!("acp-desk-cli: {done}"),
            Err(f) => {
                eprintln!("acp-desk-cli: {}", f.message);
                return Ok(ExitCode::from(f.code));
            }
        }
        signed_in = true;
        prompts = &prompts[at..];
        // The session the agent had (auth-required in a turn): continued where the agent
        // offers it, so the prompt goes on in the same conversation.
        if let Some(id) = session {
            // The history file: blocking IO, and the runtime has more than one worker.
            let continued = tokio::task::block_in_place(|| {
                continuation(
                    &id,
                    Via::Auto,
                    Some((checked.agent.clone(), checked.spec.clone(), checked.origin)),
                )
            });
            match continued {
                Ok(c) => checked.opts.opening = c.options.opening,
                Err(e) => eprintln!(
                    "acp-desk-cli: the session cannot be continued ({e:#}); a new one is started"
                ),
            }
        }
        eprintln!("acp-desk-cli: starting the agent again; sending the prompt again");
    }
}

/// Asks which action to sign in with: a number, or nothing to stop.
async fn offer(
    actions: &[acp_desk_core::auth::AuthAction],
) -> Option<acp_desk_core::auth::AuthAction> {
    let mut question = String::from("Sign in now?\n");
    for (i, a) in actions.iter().enumerate() {
        question.push_str(&format!("  {}) {} ({})\n", i + 1, a.name, a.method_id));
    }
    question.push_str(&format!("Number (1-{}), or Enter to stop: ", actions.len()));
    eprint!("{question}");
    let _ = std::io::Write::flush(&mut std::io::stderr());
    let line = render::terminal_lines().next().await?;
    let n: usize = line.parse().ok()?;
    actions.get(n.checked_sub(1)?).cloned()
}

/// How one start of the agent went.
enum Attempt {
    /// The run is over, with this status.
    Done(ExitCode),
    /// The agent needs a sign-in: at the start (`session: None`), or when prompt `at` (of the
    /// prompts given) was sent in the stored session `session`.
    AuthRequired {
        at: usize,
        session: Option<String>,
        /// A turn before it ended other than `end_turn`.
        ended_otherwise: bool,
    },
}

/// Starts the agent and runs `prompts` in one session.
async fn attempt(
    args: &RunArgs,
    checked: &Checked,
    prompts: &[String],
    history: &history::RunHistory,
    watch: &std::sync::Arc<auth::AuthWatch>,
) -> anyhow::Result<Attempt> {
    let Checked {
        spec,
        opts,
        ask,
        questions,
        agent,
        origin,
        manifest,
        project_mcp,
    } = checked;
    let ask = *ask;
    let asker_needed = ask || *questions;

    // Events are written by a thread of their own: serializing and writing overlap with the
    // engine's parsing, and a slow stdout slows the agent (bounded channel), never grows memory.
    let (ev_tx, ev_rx) = mpsc::channel::<acp_desk_core::EventBatch>(16);
    let (ask_tx, ask_rx) = mpsc::unbounded_channel::<AskMsg>();
    let json = args.json;
    // Tells the turn loop when stdout is gone (a closed pipe: `| head`), so the turn stops
    // rather than running on unseen.
    let (printer_done_tx, mut printer_done) = tokio::sync::oneshot::channel::<bool>();
    let (tasks_tx, tasks_rx) = tokio::sync::watch::channel(render::TaskCount::default());
    let printer = std::thread::spawn(move || {
        let r = render::print_events(ev_rx, json, asker_needed.then_some(ask_tx), ask, tasks_tx);
        let _ = printer_done_tx.send(r.is_err());
        r
    });
    let mut output_gone = false;

    let mut interrupted = false;
    let mut failed = false;
    // A turn that ended other than `end_turn` (max tokens, refusal, cancelled by the agent, the
    // watchdog, ...): exit 3, but the remaining prompts still run.
    let mut ended_otherwise = false;
    // The session runs through the app layer, as the app's do (one path for what observers
    // see). No views: the printer is the one consumer, on the tap, so the agent goes no faster
    // than stdout and no copy of the thread is kept.
    let registry = Registry::new(tokio::runtime::Handle::current());
    if !args.no_checkpoints {
        registry.take_checkpoints(Some(acp_desk_core::paths::checkpoints_dir()));
    }
    if let Some(observer) = history.observer() {
        registry.add_observer(observer);
    }
    registry.add_observer(watch.clone());
    let session = registry.open(OpenRequest {
        agent: agent.clone(),
        spec: spec.clone(),
        options: opts.clone(),
        views: false,
        tap: Some(ev_tx),
        origin: *origin,
        manifest: manifest.clone(),
        project_mcp: project_mcp.clone(),
    });
    let id = session.id;
    let handle = tokio::select! {
        h = registry.started(&id) => h,
        _ = tokio::signal::ctrl_c() => {
            // Closing drops the start under way, which ends the half-started agent.
            let _ = registry.close(&id).await;
            let _ = printer.join();
            return Ok(Attempt::Done(ExitCode::from(EXIT_INTERRUPTED)));
        }
    };
    let handle = match handle {
        Ok(h) => h,
        Err(e) => {
            let auth_required = matches!(
                e,
                acp_desk_app::AppError::Engine(acp_desk_core::EngineError::AuthRequired(_))
            );
            if auth_required {
                watch.start_failed().await;
            }
            let _ = registry.close(&id).await;
            let _ = printer.join();
            eprintln!("acp-desk-cli: {e}");
            return Ok(if auth_required {
                Attempt::AuthRequired {
                    at: 0,
                    session: None,
                    ended_otherwise: false,
                }
            } else {
                Attempt::Done(ExitCode::from(EXIT_FAILED))
            });
        }
    };
    history.announce(handle.id());
    let id_in_history = handle.id().to_owned();
    let asker = asker_needed.then(|| tokio::spawn(render::ask_loop(ask_rx, handle.clone())));

    if let Some(mode) = &args.mode
        && let Err(e) = registry.set_mode(&id, mode).await
    {
        eprintln!("acp-desk-cli: could not switch to mode `{mode}`: {e}");
        let _ = registry.close(&id).await;
        drop(handle);
        let _ = printer.join();
        return Ok(Attempt::Done(ExitCode::from(EXIT_FAILED)));
    }

    // The prompt whose turn ended with auth-required.
    let mut auth_hit = None;
    for (n, prompt) in prompts.iter().enumerate() {
        let turn = registry.prompt(&id, vec![acp_desk_core::text_block(prompt.clone())]);
        tokio::pin!(turn);
        let outcome = loop {
            tokio::select! {
                r = &mut turn => break r,
                Ok(true) = &mut printer_done, if !output_gone => {
                    output_gone = true;
                    let _ = registry.cancel(&id);
                }
                _ = tokio::signal::ctrl_c() => {
                    if interrupted {
                        // Second Ctrl-C: stop waiting for the agent.
                        eprintln!("acp-desk-cli: interrupted again; ending the agent");
                        let _ = registry.close_now(&id).await;
                        let _ = printer.join();
                        return Ok(Attempt::Done(ExitCode::from(EXIT_INTERRUPTED)));
                    }
                    interrupted = true;
                    eprintln!("acp-desk-cli: stopping the turn (Ctrl-C again to end the agent now)");
                    let _ = registry.cancel(&id);
                }
            }
        };
        match outcome {
            Ok(o) if o.reason == TurnEndReason::Error => {
                failed = true;
                if watch.turn(n).await {
                    auth_hit = Some(n);
                }
            }
            Ok(o) => {
                if o.stop_reason != Some(acp_desk_core::schema::v1::StopReason::EndTurn)
                    || o.reason != TurnEndReason::Completed
                {
                    ended_otherwise = true;
                }
            }
            Err(e) => {
                eprintln!("acp-desk-cli: {e}");
                failed = true;
                break;
            }
        }
        if interrupted || failed || output_gone {
            break;
        }
    }
    if args.wait_tasks > 0.0 && !interrupted && !failed && !output_gone {
        let wait = Duration::try_from_secs_f64(args.wait_tasks).unwrap_or(Duration::ZERO);
        tokio::select! {
            waited = wait_for_tasks(tasks_rx, wait) => {
                if !waited {
                    eprintln!(
                        "acp-desk-cli: background tasks still running after {} s; closing the session ends them",
                        args.wait_tasks
                    );
                }
            }
            _ = tokio::signal::ctrl_c() => interrupted = true,
        }
    }
    let _ = registry.close(&id).await;
    if let Some(a) = asker {
        a.abort();
    }
    drop(handle);
    let written = printer
        .join()
        .map_err(|_| anyhow::anyhow!("the output thread panicked"))?;
    match written {
        // The reader of our output went away (`| head`): quietly, as a program killed by
        // SIGPIPE would, and with its status.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            return Ok(Attempt::Done(ExitCode::from(EXIT_OUTPUT_CLOSED)));
        }
        r => r.context("could not write the events")?,
    }
    if let Some(at) = auth_hit
        && !interrupted
    {
        return Ok(Attempt::AuthRequired {
            at,
            session: history.observer().map(|_| id_in_history),
            ended_otherwise,
        });
    }
    // When turns ended differently: 130 wins, then 1, then 3.
    Ok(Attempt::Done(if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if failed {
        ExitCode::from(EXIT_FAILED)
    } else if ended_otherwise {
        ExitCode::from(EXIT_ENDED_OTHERWISE)
    } else {
        ExitCode::SUCCESS
    }))
}

/// How long the agent must be quiet about its tasks, with none running, before `--wait-tasks`
/// is done: claude-agent-acp announces the autonomous cycle that follows a task's end just
/// after that end, and closes it with a usage update.
const TASKS_QUIET: Duration = Duration::from_secs(3);

/// Waits (up to `limit`) until no background task runs and none was heard of for
/// [`TASKS_QUIET`]; `false` when the limit came first.
async fn wait_for_tasks(
    mut rx: tokio::sync::watch::Receiver<render::TaskCount>,
    limit: Duration,
) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let open = rx.borrow_and_update().open;
        let quiet = if open == 0 {
            tokio::time::Instant::now() + TASKS_QUIET
        } else {
            deadline
        };
        tokio::select! {
            changed = rx.changed() => {
                if changed.is_err() {
                    return true;
                }
            }
            _ = tokio::time::sleep_until(quiet.min(deadline)) => {
                return open == 0 && quiet <= deadline;
            }
        }
    }
}

fn folder(p: PathBuf, flag: &str) -> anyhow::Result<PathBuf> {
    let abs = std::fs::canonicalize(&p)
        .with_context(|| format!("{flag} {}: no such folder", p.display()))?;
    if !abs.is_dir() {
        bail!("{flag} {}: not a folder", p.display());
    }
    Ok(abs)
}

/// Messages from the printer to the terminal asker.
pub enum AskMsg {
    Prompt(Box<AgentPromptEvent>),
    Question(Box<acp_desk_core::events::ElicitationEvent>),
    /// A permission request or a question was settled.
    Settled(String),
}
