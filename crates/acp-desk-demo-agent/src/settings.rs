//! The demo session's modes and config options: what `session/new` offers and what
//! `session/set_mode` / `session/set_config_option` change. They change nothing in how
//! scenarios play (there is no model to configure); they exist so a client can show and
//! exercise its mode and config controls against a real agent.

use agent_client_protocol_schema::v1::{
    SessionConfigKind, SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SessionMode, SessionModeState,
};

use crate::out::RpcError;

/// (id, name, description), the first is the starting mode.
const MODES: &[(&str, &str, &str)] = &[
    (
        "ask",
        "Ask before edits",
        "Asks for permission before changing files or running commands.",
    ),
    (
        "code",
        "Edit freely",
        "Edits files and runs commands without asking.",
    ),
    ("plan", "Plan only", "Writes a plan; changes nothing."),
];

/// (id, name, description), the first is the starting model.
const MODELS: &[(&str, &str, &str)] = &[
    (
        "demo-swift",
        "Demo Swift",
        "Fast, made-up model (the demo has no model at all).",
    ),
    (
        "demo-deep",
        "Demo Deep",
        "Slower, more thorough made-up model.",
    ),
    ("demo-max", "Demo Max", "The largest made-up model."),
];

const THOUGHT_LEVELS: &[(&str, &str)] = &[("low", "Low"), ("medium", "Medium"), ("high", "High")];

/// One session's current mode and option values.
#[derive(Debug, Clone)]
pub struct Settings {
    pub mode: String,
    pub model: String,
    pub thought_level: String,
    pub brief: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            mode: MODES[0].0.to_owned(),
            model: MODELS[0].0.to_owned(),
            thought_level: "medium".to_owned(),
            brief: false,
        }
    }
}

impl Settings {
    pub fn modes(&self) -> SessionModeState {
        let modes = MODES
            .iter()
            .map(|(id, name, description)| {
                SessionMode::new(*id, *name).description((*description).to_owned())
            })
            .collect();
        SessionModeState::new(self.mode.clone(), modes)
    }

    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        let models = MODELS
            .iter()
            .map(|(id, name, description)| {
                SessionConfigSelectOption::new(*id, *name).description((*description).to_owned())
            })
            .collect::<Vec<_>>();
        let levels = THOUGHT_LEVELS
            .iter()
            .map(|(id, name)| SessionConfigSelectOption::new(*id, *name))
            .collect::<Vec<_>>();
        vec![
            SessionConfigOption::select("model", "Model", self.model.clone(), models)
                .description("Which (made-up) model answers.".to_owned())
                .category(SessionConfigOptionCategory::Model),
            SessionConfigOption::select(
                "thought_level",
                "Thinking",
                self.thought_level.clone(),
                levels,
            )
            .description("How hard the (made-up) model thinks.".to_owned())
            .category(SessionConfigOptionCategory::ThoughtLevel),
            SessionConfigOption::boolean("brief", "Brief answers", self.brief)
                .description("Shorter replies (the scripts do not change).".to_owned()),
        ]
    }

    pub fn set_mode(&mut self, mode_id: &str) -> Result<(), RpcError> {
        if !MODES.iter().any(|(id, ..)| *id == mode_id) {
            return Err(RpcError::invalid_params(format!(
                "unknown mode {mode_id:?} (the demo agent has {})",
                names(MODES.iter().map(|m| m.0))
            )));
        }
        self.mode = mode_id.to_owned();
        Ok(())
    }

    pub fn set_option(
        &mut self,
        config_id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<(), RpcError> {
        let option = self
            .config_options()
            .into_iter()
            .find(|o| &*o.id.0 == config_id)
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "unknown config option {config_id:?} (the demo agent has model, thought_level, brief)"
                ))
            })?;
        match (&option.kind, value) {
            (SessionConfigKind::Boolean(_), SessionConfigOptionValue::Boolean { value }) => {
                self.brief = *value;
            }
            (SessionConfigKind::Select(_), SessionConfigOptionValue::ValueId { value }) => {
                let value = &*value.0;
                let (choices, slot): (Vec<&str>, &mut String) = match config_id {
                    "model" => (MODELS.iter().map(|m| m.0).collect(), &mut self.model),
                    _ => (
                        THOUGHT_LEVELS.iter().map(|l| l.0).collect(),
                        &mut self.thought_level,
                    ),
                };
                if !choices.contains(&value) {
                    return Err(RpcError::invalid_params(format!(
                        "{config_id} has no value {value:?} (choose from {})",
                        names(choices.into_iter())
                    )));
                }
                *slot = value.to_owned();
            }
            _ => {
                return Err(RpcError::invalid_params(format!(
                    "{config_id} does not take a value of that type"
                )));
            }
        }
        Ok(())
    }
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_options_change_only_to_offered_values() {
        let mut s = Settings::default();
        assert_eq!(&*s.modes().current_mode_id.0, "ask");
        s.set_mode("plan").unwrap();
        assert_eq!(&*s.modes().current_mode_id.0, "plan");
        assert!(s.set_mode("yolo").is_err());
        s.set_option("model", &SessionConfigOptionValue::value_id("demo-deep"))
            .unwrap();
        assert_eq!(s.model, "demo-deep");
        assert!(
            s.set_option("model", &SessionConfigOptionValue::value_id("gpt"))
                .is_err()
        );
        assert!(
            s.set_option("model", &SessionConfigOptionValue::boolean(true))
                .is_err()
        );
        s.set_option("brief", &SessionConfigOptionValue::boolean(true))
            .unwrap();
        assert!(s.brief);
        s.set_option("thought_level", &SessionConfigOptionValue::value_id("high"))
            .unwrap();
        assert_eq!(s.thought_level, "high");
        assert!(
            s.set_option("nope", &SessionConfigOptionValue::boolean(true))
                .is_err()
        );
        // Every option round-trips through the schema's JSON unchanged.
        for o in s.config_options() {
            let v = serde_json::to_value(&o).unwrap();
            let back: SessionConfigOption = serde_json::from_value(v).unwrap();
            assert_eq!(back, o);
        }
    }
}
