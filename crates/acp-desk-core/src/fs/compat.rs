//! What particular agents need from the file service beyond the spec.

use std::path::Path;

use agent_client_protocol_schema::v1 as acp;

use super::error::FsError;
use crate::agents::LaunchSpec;

/// Per-agent deviations from the spec, each for an observed reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Compat {
    /// Answer a read of a missing file with empty text instead of the spec's -32002.
    ///
    /// Gemini CLI (0.61.0) reads a file through `fs/read_text_file` before writing it, and does
    /// not recognise -32002: its SDK hands it a plain object ("[object Object]") and the write
    /// fails with "Error checking existing file", so it could never create a file in our
    /// client (shared/notes/real-agents.md, "Gemini CLI and new files").
    pub missing_file_reads_empty: bool,
}

impl Compat {
    /// From an agent id (`gemini`) or a command line (`gemini --acp`,
    /// `/usr/local/bin/gemini --experimental-acp`, `npx -y @google/gemini-cli --acp`).
    /// Anything unrecognised gets the spec's behaviour.
    pub fn for_agent(agent_id_or_command: &str) -> Compat {
        let words = shell_words::split(agent_id_or_command).unwrap_or_else(|_| {
            agent_id_or_command
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        });
        let Some((program, args)) = words.split_first() else {
            return Compat::default();
        };
        Compat::for_command(program, args)
    }

    /// From a resolved launch: its name, or its program and arguments.
    pub fn for_launch(spec: &LaunchSpec) -> Compat {
        let by_name = Compat::for_agent(&spec.name);
        if by_name != Compat::default() {
            return by_name;
        }
        Compat::for_command(&spec.command, &spec.args)
    }

    /// From what the agent says it is (`initialize` → `agentInfo`). A launch through a wrapper
    /// (a script, a Nix or Flatpak shim, a settings entry named `my-gemini`) hides the program
    /// from [`Compat::for_launch`]; the agent's own name does not. Gemini CLI says `gemini-cli`
    /// (its ACP integration's `initialize`). The version is here so that a quirk can end with
    /// the release that fixes it; none has so far (observed with 0.61.0).
    pub fn for_agent_info(info: &acp::Implementation) -> Compat {
        Compat {
            missing_file_reads_empty: info.name.eq_ignore_ascii_case("gemini-cli"),
        }
    }

    /// Every quirk that either calls for: the launch and what the agent says can each tell.
    pub fn or(self, other: Compat) -> Compat {
        Compat {
            missing_file_reads_empty: self.missing_file_reads_empty
                || other.missing_file_reads_empty,
        }
    }

    fn for_command(program: &str, args: &[String]) -> Compat {
        let gemini =
            is_program(program, "gemini") || args.iter().any(|a| a.contains("@google/gemini-cli"));
        Compat {
            missing_file_reads_empty: gemini,
        }
    }

    /// Applies the read quirks to a read's result.
    pub fn on_read(&self, result: Result<String, FsError>) -> Result<String, FsError> {
        match result {
            Err(FsError::NotFound { .. }) if self.missing_file_reads_empty => Ok(String::new()),
            other => other,
        }
    }
}

/// `program` names `name`, with or without a folder and a Windows extension (`gemini.cmd`).
fn is_program(program: &str, name: &str) -> bool {
    Path::new(program)
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.eq_ignore_ascii_case(name))
}
