//! The built-in agents: one row per agent, saying everything ACP Desk knows about it (how it
//! is started, how it is detected, how it is installed), so that nothing about one agent lives
//! in a second table that could drift from the first.
//!
//! Facts from the agents' own documentation and packages (shared/notes/real-agents.md and the
//! ACP registry, notes/acp-protocol.md §4). The demo agent is not a row: it ships with ACP Desk
//! and is found next to the running program ([`super::demo_agent_path`]).

/// One built-in agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinAgent {
    /// What `--agent` takes. Stable: the history and remembered permission rules name it.
    pub id: &'static str,
    /// The ids the ACP registry lists this agent under (over the registry's revisions). A
    /// registry agent with one of them is this agent: the listing shows it once.
    pub registry_ids: &'static [&'static str],
    /// For display.
    pub name: &'static str,
    pub description: &'static str,
    /// The installed program, looked up by [`super::detect`].
    pub program: &'static str,
    /// Its arguments to speak ACP on stdio.
    pub args: &'static [&'static str],
    /// npm packages whose global install provides `program` (the current name first).
    pub npm_packages: &'static [&'static str],
    /// Folders under the home folder its own installer puts `program` in (often not on PATH
    /// for a desktop app started from the menu).
    pub install_dirs: &'static [&'static str],
    /// When the program is not installed: a launch through npx that fetches the package on
    /// first use (`npx -y <package> ...`), or `None` when there is none.
    pub npx: Option<&'static [&'static str]>,
    /// A command to copy that installs it.
    pub install_command: &'static str,
    /// What to do once installed (sign in), shown with it.
    pub setup: &'static str,
}

/// The built-in catalog, in the order the listing shows it (and the default rule's "first
/// installed built-in" takes).
pub const BUILTIN: &[BuiltinAgent] = &[
    BuiltinAgent {
        id: "claude",
        registry_ids: &["claude-acp"],
        name: "Claude",
        description: "Claude Code through Anthropic's ACP adapter (claude-agent-acp).",
        program: "claude-agent-acp",
        args: &[],
        npm_packages: &[
            "@agentclientprotocol/claude-agent-acp",
            "@zed-industries/claude-agent-acp",
        ],
        install_dirs: &[".local/bin"],
        npx: Some(&["-y", "@agentclientprotocol/claude-agent-acp"]),
        install_command: "npm install -g @agentclientprotocol/claude-agent-acp",
        setup: "Sign in once with `claude` (Claude Code) or set ANTHROPIC_API_KEY.",
    },
    BuiltinAgent {
        id: "claude-code-acp",
        registry_ids: &["claude-code-acp"],
        name: "Claude (claude-code-acp, older adapter)",
        description: "The older Claude Code ACP adapter, @zed-industries/claude-code-acp.",
        program: "claude-code-acp",
        args: &[],
        npm_packages: &["@zed-industries/claude-code-acp"],
        install_dirs: &[".local/bin"],
        npx: Some(&["-y", "@zed-industries/claude-code-acp"]),
        install_command: "npm install -g @zed-industries/claude-code-acp",
        setup: "Sign in once with `claude` (Claude Code) or set ANTHROPIC_API_KEY.",
    },
    BuiltinAgent {
        id: "codex",
        registry_ids: &["codex-acp"],
        name: "Codex",
        description: "OpenAI Codex through its ACP adapter (codex-acp).",
        program: "codex-acp",
        args: &[],
        npm_packages: &[
            "@agentclientprotocol/codex-acp",
            "@zed-industries/codex-acp",
        ],
        install_dirs: &[".local/bin"],
        npx: Some(&["-y", "@agentclientprotocol/codex-acp"]),
        install_command: "npm install -g @agentclientprotocol/codex-acp",
        setup: "Sign in once with `codex login` or set OPENAI_API_KEY.",
    },
    BuiltinAgent {
        id: "gemini",
        registry_ids: &["gemini"],
        name: "Gemini CLI",
        description: "Google's Gemini CLI in ACP mode (`gemini --acp`).",
        program: "gemini",
        args: &["--acp"],
        npm_packages: &["@google/gemini-cli"],
        install_dirs: &[".local/bin"],
        npx: None,
        install_command: "npm install -g @google/gemini-cli",
        setup: "Sign in once by running `gemini`.",
    },
    BuiltinAgent {
        id: "goose",
        registry_ids: &["goose"],
        name: "goose",
        description: "Block's goose in ACP mode (`goose acp`).",
        program: "goose",
        args: &["acp"],
        npm_packages: &[],
        // Its download_cli.sh installs into ~/.local/bin.
        install_dirs: &[".local/bin"],
        npx: None,
        install_command: "curl -fsSL https://github.com/block/goose/releases/download/stable/download_cli.sh | bash",
        setup: "Run `goose configure` once.",
    },
    BuiltinAgent {
        id: "opencode",
        registry_ids: &["opencode"],
        name: "opencode",
        description: "opencode in ACP mode (`opencode acp`).",
        program: "opencode",
        args: &["acp"],
        npm_packages: &["opencode-ai"],
        // Its install script puts the binary in ~/.opencode/bin.
        install_dirs: &[".opencode/bin", ".local/bin"],
        npx: None,
        install_command: "npm install -g opencode-ai",
        setup: "Run `opencode auth login` once.",
    },
    BuiltinAgent {
        id: "copilot",
        registry_ids: &["github-copilot", "github-copilot-cli"],
        name: "GitHub Copilot",
        description: "GitHub Copilot CLI in ACP mode (`copilot --acp`).",
        program: "copilot",
        args: &["--acp"],
        npm_packages: &["@github/copilot"],
        install_dirs: &[".local/bin"],
        npx: None,
        install_command: "npm install -g @github/copilot",
        setup: "Sign in once by running `copilot` and `/login`.",
    },
];

/// The built-in agent `id`, if there is one.
pub fn builtin(id: &str) -> Option<&'static BuiltinAgent> {
    BUILTIN.iter().find(|a| a.id == id)
}

impl BuiltinAgent {
    /// The installed program's command line, for display.
    pub fn installed_command(&self) -> String {
        std::iter::once(self.program)
            .chain(self.args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// How to get it and what to do then, in one hint.
    pub fn install_hint(&self) -> String {
        format!("Install it with `{}`. {}", self.install_command, self.setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_agent_says_how_to_get_it() {
        let mut ids: Vec<_> = BUILTIN.iter().map(|a| a.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), BUILTIN.len(), "duplicate ids");
        assert!(!ids.contains(&"demo"), "demo is not a catalog row");
        for a in BUILTIN {
            assert!(
                !a.program.is_empty() && !a.program.contains('/'),
                "{}",
                a.id
            );
            assert!(!a.install_command.is_empty(), "{}", a.id);
            assert!(a.install_hint().contains(a.install_command));
            if let Some(npx) = a.npx {
                // npx runs the first package the table says provides the program.
                assert!(npx.contains(&a.npm_packages[0]), "{}", a.id);
            }
        }
        assert_eq!(builtin("gemini").map(|a| a.args), Some(&["--acp"][..]));
        assert_eq!(builtin("nope"), None);
    }
}
