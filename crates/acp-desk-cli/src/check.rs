//! `acp-desk-cli agents check NAME [--json] [--timeout SECS]` and `agents check --agent-command
//! LINE`: starts the agent, runs `initialize`, and says what answered or why nothing did
//! (`acp_desk_core::agents::check`). Human output: one line per step with its time, then the
//! agent's name, version, protocol, capabilities and auth methods, or the failure and its fix.
//! `--json`: the `CheckReport` as one JSON object on stdout. Exit status: 0 when the check
//! passed, 1 when it failed, 2 on a usage error (an unknown agent).

use std::process::ExitCode;
use std::time::Duration;

use acp_desk_core::agents::{self, CheckLimits, CheckReport};
use serde_json::Value;

/// Exit code when the agent failed its check.
const EXIT_FAILED: u8 = 1;
/// Exit code for usage errors (an unknown agent, a bad command line or limit).
const EXIT_USAGE: u8 = 2;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The agent, by the name `run --agent` takes (`demo`, a built-in, a settings name).
    #[arg(value_name = "NAME", required_unless_present = "agent_command")]
    name: Option<String>,
    /// An agent's command line instead of a name, split into words like a shell would (no
    /// shell runs).
    #[arg(long, value_name = "CMD ARG...", conflicts_with = "name")]
    agent_command: Option<String>,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// How long to wait for the agent's answer to `initialize`, in seconds (npx agents
    /// download themselves on first use: give them longer).
    #[arg(long, value_name = "SECS", default_value_t = 20.0)]
    timeout: f64,
}

/// Runs `agents check`.
pub fn agents_check(args: CheckArgs, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let Ok(initialize) = Duration::try_from_secs_f64(args.timeout) else {
        eprintln!("acp-desk-cli: --timeout: not a usable number of seconds");
        return ExitCode::from(EXIT_USAGE);
    };
    let limits = CheckLimits { initialize };
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::env::temp_dir());
    let report = match (&args.agent_command, &args.name) {
        (Some(line), _) => match agents::from_command_line(line) {
            Ok(spec) => runtime.block_on(agents::check(&spec, &cwd, limits)),
            Err(e) => {
                eprintln!("acp-desk-cli: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        },
        // By name over every source: a built-in's install command as the fix when it is
        // missing, a manifest's declared capabilities compared (`check_agent`).
        (None, Some(name)) => match runtime.block_on(agents::check_agent(
            &agents::Sources::default_for_user(),
            name,
            &cwd,
            limits,
        )) {
            Ok(report) => report,
            Err(e) => {
                eprintln!("acp-desk-cli: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        },
        (None, None) => {
            eprintln!("acp-desk-cli: agents check needs an agent NAME or --agent-command");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if args.json {
        match serde_json::to_string(&report) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("acp-desk-cli: could not write the report: {e}");
                return ExitCode::from(EXIT_FAILED);
            }
        }
    } else {
        print!("{}", human(&report));
    }
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// The report for people.
fn human(r: &CheckReport) -> String {
    let mut out = String::new();
    for step in &r.steps {
        let state = if step.ok { "ok" } else { "FAILED" };
        out.push_str(&format!(
            "{:<11} {:>7} ms  {state}\n",
            step.name, step.millis
        ));
    }
    if r.agent_name.is_some() || r.agent_version.is_some() {
        let name = r.agent_name.as_deref().unwrap_or("(no name)");
        let title = r
            .agent_title
            .as_deref()
            .filter(|t| *t != name)
            .map(|t| format!(" ({t})"))
            .unwrap_or_default();
        let version = r.agent_version.as_deref().unwrap_or("(no version)");
        out.push_str(&format!("agent:        {name}{title} {version}\n"));
    } else if r.protocol_version.is_some() {
        out.push_str("agent:        (it sent no agentInfo)\n");
    }
    if let Some(v) = r.protocol_version {
        out.push_str(&format!("protocol:     {v}\n"));
    }
    if let Some(caps) = &r.capabilities {
        let mut flat = Vec::new();
        flatten("", caps, &mut flat);
        let caps = if flat.is_empty() {
            "(none)".to_string()
        } else {
            flat.join(", ")
        };
        out.push_str(&format!("capabilities: {caps}\n"));
    }
    if r.ok || !r.auth_methods.is_empty() {
        if r.auth_methods.is_empty() {
            out.push_str("auth methods: (none)\n");
        }
        for (i, m) in r.auth_methods.iter().enumerate() {
            let label = if i == 0 { "auth methods:" } else { "" };
            let description = m
                .description
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "{label:<13} {} ({}; {}){description}\n",
                m.name,
                m.id,
                m.how.describe()
            ));
        }
    }
    for d in &r.differences {
        let show = |v: &Option<Value>| v.as_ref().map_or_else(|| "absent".into(), Value::to_string);
        out.push_str(&format!(
            "differs:      {}: the manifest declares {}, the agent reports {}\n",
            d.path,
            show(&d.declared),
            show(&d.reported)
        ));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning:      {w}\n"));
    }
    match &r.failure {
        Some(f) => {
            let kind = serde_json::to_value(f.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            out.push_str(&format!("FAILED ({kind}): {}\n", f.message));
            out.push_str(&format!("fix: {}\n", f.fix));
        }
        None => out.push_str(&format!("{}: ok\n", r.agent)),
    }
    out
}

/// Capabilities as dotted paths: `loadSession`, `promptCapabilities.image`; a `false` is left
/// out (not offered), an empty object inside a group is offered (`sessionCapabilities.list`),
/// other values are shown.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, v, out);
            }
        }
        // An empty group at the top (`sessionCapabilities: {}`) offers nothing; inside one
        // (`sessionCapabilities.list: {}`) it is ACP's way of saying "offered".
        Value::Object(_) if prefix.contains('.') => out.push(prefix.to_owned()),
        Value::Bool(true) if !prefix.is_empty() => out.push(prefix.to_owned()),
        Value::Bool(_) | Value::Null | Value::Object(_) => {}
        other if !prefix.is_empty() => out.push(format!("{prefix}={other}")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_flatten_to_what_is_offered() {
        let caps = serde_json::json!({
            "loadSession": true,
            "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
            "sessionCapabilities": {"list": {}, "resume": null},
            "auth": {},
            "mcpCapabilities": {"http": false, "sse": false},
            "_meta": {"x": 1}
        });
        let mut flat = Vec::new();
        flatten("", &caps, &mut flat);
        flat.sort();
        assert_eq!(
            flat,
            [
                "_meta.x=1",
                "loadSession",
                "promptCapabilities.embeddedContext",
                "promptCapabilities.image",
                "sessionCapabilities.list"
            ]
        );
    }
}
