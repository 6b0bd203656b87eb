//! What is wrong with a file that describes agents (the settings file, an `ACP.md` manifest, a
//! registry file), said so that the user can find and fix it: the file, the place, the field.
//! Every source of agents reports its problems with this one type, so the CLI and the window
//! show them the same way.

use std::fmt;

/// One problem in one file. `Display`: `FILE:LINE:COLUMN: FIELD: MESSAGE` (the parts that are
/// known), the shape editors and terminals turn into links.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigProblem {
    /// The file, as a path the user can open.
    pub file: String,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The field, as a dotted path from the top of the file (`agent_servers.mine.args`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What is wrong and what to do, in one sentence or two.
    pub message: String,
    /// Whether what the problem concerns was still used (`warning`) or skipped (`error`).
    pub severity: ProblemSeverity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProblemSeverity {
    /// The part concerned was skipped (the rest of the file is used).
    Error,
    /// Used anyway; worth fixing.
    Warning,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

/// A difference between the capabilities an agent's manifest declares and what its
/// `initialize` answer reports. Paths use the wire's camelCase names under the seed's
/// `AcpCapabilities` (`agent.loadSession`, `agent.promptCapabilities.image`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityDifference {
    pub path: String,
    /// What the manifest says; `None`: it does not say.
    pub declared: Option<serde_json::Value>,
    /// What `initialize` reported; `None`: it did not say (false by the protocol's defaults).
    pub reported: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_place_and_field() {
        let p = ConfigProblem {
            file: "/c/settings.json".into(),
            line: Some(3),
            column: Some(7),
            field: Some("agent_servers.a.args".into()),
            message: "expected a list of strings, found a number".into(),
            severity: ProblemSeverity::Error,
        };
        assert_eq!(
            p.to_string(),
            "/c/settings.json:3:7: agent_servers.a.args: expected a list of strings, found a number"
        );
        let bare = ConfigProblem {
            line: None,
            column: None,
            field: None,
            ..p
        };
        assert_eq!(
            bare.to_string(),
            "/c/settings.json: expected a list of strings, found a number"
        );
    }
}
