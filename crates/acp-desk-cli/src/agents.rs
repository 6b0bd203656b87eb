//! `acp-desk-cli agents ...`: every agent of every source, and what to do with one.
//!
//! - `agents [--json]`, `agents list [--json]`: the listing (core).
//! - `agents check NAME [--json]` (helper "check"), `agents install NAME` and `agents
//!   import-registry FILE` (helper "registry") add a variant to [`AgentsAction`], one line in
//!   [`agents`]'s match, and their handler in their own section below.
//!
//! Settings problems (and every other source's) go to stderr, one per line in the
//! `FILE:LINE:COL: FIELD: MESSAGE` shape; with `--json` the listing on stdout carries them too.

use std::process::ExitCode;

use acp_desk_core::agents::{self, AgentListing, AgentSource, AgentStatus, ConfigProblem};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub action: Option<AgentsAction>,
    #[command(flatten)]
    pub list: ListArgs,
}

#[derive(clap::Args, Default)]
pub struct ListArgs {
    /// Print the listing as one JSON object (what the window gets: agents, default agent and
    /// why, settings file, problems).
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Subcommand)]
pub enum AgentsAction {
    /// Every agent of every source (settings, manifests, registry, built in): id, source,
    /// status, launch. The default.
    List(ListArgs),
    // ---- helper "check": `Check(CheckArgs)` goes here.
    /// Start an agent, send `initialize`, and say what answered (name, version, protocol,
    /// capabilities, auth methods, each step's time) or why nothing did, with the fix. Exit 0
    /// when it passed, 1 when it failed, 2 for an unknown agent.
    Check(crate::check::CheckArgs),
    // ---- helper "registry": `Install(InstallArgs)`, `ImportRegistry(ImportArgs)` go here.
}

/// Runs `agents ...`; `runtime` is for the async subcommands (check).
pub fn agents(args: AgentsArgs, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let _ = runtime;
    match args.action {
        None => list(&args.list),
        Some(AgentsAction::List(l)) => list(&l),
        Some(AgentsAction::Check(c)) => crate::check::agents_check(c, runtime),
    }
}

/// Prints problems on stderr, errors first (they skip something), then warnings.
pub fn print_problems(problems: &[ConfigProblem]) {
    use acp_desk_core::agents::ProblemSeverity;
    for severity in [ProblemSeverity::Error, ProblemSeverity::Warning] {
        for p in problems.iter().filter(|p| p.severity == severity) {
            let word = match severity {
                ProblemSeverity::Error => "error",
                ProblemSeverity::Warning => "warning",
            };
            eprintln!("acp-desk-cli: {word}: {p}");
        }
    }
}

// ---- core: the listing -------------------------------------------------------------------

fn list(args: &ListArgs) -> ExitCode {
    let here = std::env::current_dir().unwrap_or_default();
    let listing = agents::listing(&agents::Sources::default_for_user(), &here);
    print_problems(&listing.problems);
    if args.json {
        match serde_json::to_string_pretty(&listing) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("acp-desk-cli: could not write the listing as JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print_table(&listing);
    }
    ExitCode::SUCCESS
}

fn source_word(s: AgentSource) -> &'static str {
    match s {
        AgentSource::Builtin => "built-in",
        AgentSource::Registry => "registry",
        AgentSource::Settings => "settings",
        AgentSource::Manifest => "manifest",
    }
}

fn status_word(s: AgentStatus) -> &'static str {
    match s {
        AgentStatus::Found => "found",
        AgentStatus::Downloads => "downloads on first use",
        AgentStatus::Missing => "missing",
        AgentStatus::NotInstalled => "not installed (installable)",
        AgentStatus::Unavailable => "unavailable on this platform",
        AgentStatus::Unsupported => "unsupported",
        AgentStatus::Invalid => "invalid",
    }
}

fn print_table(listing: &AgentListing) {
    let width = listing
        .agents
        .iter()
        .map(|a| a.id.chars().count())
        .max()
        .unwrap_or(4);
    for a in &listing.agents {
        let mut source = source_word(a.source).to_owned();
        if !a.also_defined_in.is_empty() {
            let others: Vec<&str> = a.also_defined_in.iter().map(|s| source_word(*s)).collect();
            source.push_str(&format!(" (also {})", others.join(", ")));
        }
        println!(
            "{:width$}  {source}  {}  {}",
            a.id,
            status_word(a.status),
            a.command
        );
        if let Some(hint) = &a.hint {
            println!("{:width$}  {hint}", "");
        }
    }
    println!(
        "default for new sessions: {} ({})",
        listing.default_agent, listing.default_reason
    );
    println!(
        "(add agents under `agent_servers` in {})",
        listing.settings_file
    );
}

// ---- helper "check": `agents check NAME [--json]` ----------------------------------------

// ---- helper "registry": `agents install NAME`, `agents import-registry FILE` ---------------
