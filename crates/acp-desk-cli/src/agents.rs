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
    /// Install a registry agent's binary for this platform into the data folder (download,
    /// SHA-256 check, extract). npx and uvx agents need no install.
    Install(InstallArgs),
    /// Import a registry file (the ACP registry's registry.json) from disk; it is used instead
    /// of the built-in snapshot from then on.
    ImportRegistry(ImportArgs),
}

/// Runs `agents ...`; `runtime` is for the async subcommands (check).
pub fn agents(args: AgentsArgs, runtime: &tokio::runtime::Runtime) -> ExitCode {
    match args.action {
        None => list(&args.list),
        Some(AgentsAction::List(l)) => list(&l),
        Some(AgentsAction::Check(c)) => crate::check::agents_check(c, runtime),
        Some(AgentsAction::Install(a)) => install(&a),
        Some(AgentsAction::ImportRegistry(a)) => import_registry(&a),
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
        if !a.env_names.is_empty() {
            // Names (and secrets' keychain names) only: never a value.
            println!("{:width$}  env: {}", "", a.env_names.join(", "));
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

#[derive(clap::Args)]
pub struct InstallArgs {
    /// The agent's registry id (as `agents` lists it).
    #[arg(value_name = "NAME")]
    pub name: String,
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// The registry file to import.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,
}

/// `agents install NAME`: exit 0 installed (or already), 1 the install failed (nothing was
/// installed; the reason on stderr), 2 no such registry agent.
fn install(args: &InstallArgs) -> ExitCode {
    use acp_desk_core::agents::install::{self, InstallPhase};
    use acp_desk_core::agents::registry;
    use std::io::{IsTerminal, Write};

    let data_dir = acp_desk_core::paths::data_dir();
    let (index, problems) = registry::load(&data_dir);
    print_problems(&problems);
    let Some(agent) = index.find(&args.name).cloned() else {
        if let Some(b) = acp_desk_core::agents::catalog::builtin(&args.name) {
            // Not ours to download: the agent's own installer (or npm) puts it in place.
            eprintln!(
                "acp-desk-cli: `{}` is a built-in agent, installed with its own installer, not from the registry: {}",
                b.id, b.install_command
            );
            return ExitCode::from(2);
        }
        let unknown = install::InstallError::UnknownAgent {
            id: args.name.clone(),
            origin: index.origin(),
            known: index
                .agents
                .iter()
                .map(|a| a.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        eprintln!("acp-desk-cli: {unknown}");
        return ExitCode::from(2);
    };
    let platform = registry::current_platform();
    let live = std::io::stderr().is_terminal();
    let mut last_phase = None;
    let mut progress = |p: install::InstallProgress| {
        let mut err = std::io::stderr().lock();
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        if live && p.phase == InstallPhase::Downloading {
            let total = p
                .total
                .map_or_else(String::new, |t| format!(" of {:.1} MB", mb(t)));
            let _ = write!(err, "\rdownloading {:.1} MB{total}   ", mb(p.downloaded));
        } else if last_phase != Some(p.phase) {
            let word = match p.phase {
                InstallPhase::Downloading => "downloading",
                InstallPhase::Verifying => "checking the SHA-256",
                InstallPhase::Extracting => "extracting",
                InstallPhase::Installed => "installed",
            };
            let _ = writeln!(err, "{}{word}", if live { "\n" } else { "" });
        }
        last_phase = Some(p.phase);
    };
    match install::install(&agent, platform, &data_dir, &mut progress) {
        Ok(spec) => {
            // Env names only: values may be secrets.
            let env: Vec<&str> = spec.env.iter().map(|(k, _)| k.as_str()).collect();
            println!(
                "{} {} installed: {}{}{}",
                agent.id,
                agent.version,
                spec.command,
                spec.args
                    .iter()
                    .map(|a| format!(" {a}"))
                    .collect::<String>(),
                if env.is_empty() {
                    String::new()
                } else {
                    format!(" (env: {})", env.join(", "))
                }
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("acp-desk-cli: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `agents import-registry FILE`: exit 0 imported (skipped agents listed on stderr), 1 the
/// file was refused (nothing changed; the reason on stderr).
fn import_registry(args: &ImportArgs) -> ExitCode {
    use acp_desk_core::agents::registry;
    let data_dir = acp_desk_core::paths::data_dir();
    match registry::import(&args.file, &data_dir) {
        Ok((index, problems)) => {
            print_problems(&problems);
            println!(
                "imported {} agents ({} skipped); {} is used from now on",
                index.agents.len(),
                problems
                    .iter()
                    .filter(
                        |p| p.severity == acp_desk_core::agents::ProblemSeverity::Error
                            && p.field
                                .as_deref()
                                .is_some_and(|f| !f.contains(".distribution."))
                    )
                    .count(),
                index.origin()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            if let registry::RegistryError::NoUsableAgent { problems, .. } = &e {
                print_problems(problems);
            }
            eprintln!("acp-desk-cli: {e}");
            ExitCode::FAILURE
        }
    }
}
