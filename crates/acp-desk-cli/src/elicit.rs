//! The agent's questions (`elicitation`) on a terminal: a form field by field, each checked as
//! it is typed (the engine's rules, `acp_desk_core::elicitation::validate`), or a page to open
//! (its host and address shown; the user opens it). Without a terminal the engine declines
//! them (`ElicitationPolicy::Decline`): nobody can answer.
//!
//! [`Asking`] is the state of one question, fed one line at a time by the terminal asker
//! (`render::ask_loop`), so that a question settled meanwhile (a stop, the agent withdrawing
//! it) is dropped between lines.

use acp_desk_core::elicitation::{
    ElicitationAnswer, ElicitationField, FieldFormat, FieldType, validate,
};
use acp_desk_core::events::{ElicitationEvent, ElicitationModeKind};
use serde_json::{Map, Value};

/// What to do after a line.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Print this and read another line.
    Ask(String),
    /// Send this answer.
    Answer(ElicitationAnswer),
}

enum Stage {
    /// Answer, decline or cancel?
    Choose,
    Field(usize),
}

pub struct Asking {
    pub ev: Box<ElicitationEvent>,
    stage: Stage,
    content: Map<String, Value>,
}

fn fields(ev: &ElicitationEvent) -> &[ElicitationField] {
    ev.fields.as_deref().unwrap_or_default()
}

impl Asking {
    /// The question and what to type first.
    pub fn new(ev: Box<ElicitationEvent>) -> (Self, String) {
        let mut s = format!("\nThe agent asks: {}\n", ev.message);
        match ev.mode {
            ElicitationModeKind::Url => {
                let host = ev.host.as_deref().unwrap_or("an unknown host");
                s.push_str(&format!(
                    "  It wants you to open a page on {host}:\n    {}\n",
                    ev.url.as_deref().unwrap_or_default()
                ));
                s.push_str(
                    "Open it? y) yes (open it in your browser; the agent waits for the page), d) decline, c) cancel: ",
                );
            }
            ElicitationModeKind::Form => {
                if let Some(t) = &ev.title {
                    s.push_str(&format!("  {t}\n"));
                }
                if let Some(d) = &ev.description {
                    s.push_str(&format!("  {d}\n"));
                }
                let n = fields(&ev).len();
                s.push_str(&format!(
                    "Answer it ({n} field{})? Enter) answer, d) decline, c) cancel: ",
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
        (
            Self {
                ev,
                stage: Stage::Choose,
                content: Map::new(),
            },
            s,
        )
    }

    /// The next line typed; `None` at the end of input (Ctrl-D), which cancels.
    pub fn feed(&mut self, line: Option<&str>) -> Next {
        let Some(line) = line.map(str::trim) else {
            return Next::Answer(ElicitationAnswer::Cancel);
        };
        match self.stage {
            Stage::Choose => {
                let url = self.ev.mode == ElicitationModeKind::Url;
                match line.to_ascii_lowercase().as_str() {
                    "d" | "decline" => Next::Answer(ElicitationAnswer::Decline),
                    "c" | "cancel" => Next::Answer(ElicitationAnswer::Cancel),
                    "y" | "yes" if url => Next::Answer(ElicitationAnswer::Accept { content: None }),
                    "" if !url => match self.cannot_ask() {
                        Some(label) => Next::Ask(format!(
                            "ACP Desk cannot ask the required field {label}; type d to decline or c to cancel: "
                        )),
                        None => self.start_field(0),
                    },
                    _ if url => Next::Ask("Type y, d or c: ".into()),
                    _ => Next::Ask("Press Enter to answer, or type d or c: ".into()),
                }
            }
            Stage::Field(i) => self.field_line(i, line),
        }
    }

    /// A required field of a type this cannot ask: the form cannot be answered here.
    fn cannot_ask(&self) -> Option<String> {
        fields(&self.ev)
            .iter()
            .find(|f| f.required && f.field_type == FieldType::Unsupported)
            .map(|f| f.label().to_owned())
    }

    /// Asks field `i`, or answers when every field is done (skipping what cannot be asked).
    fn start_field(&mut self, mut i: usize) -> Next {
        let all = fields(&self.ev);
        while let Some(f) = all.get(i) {
            if f.field_type != FieldType::Unsupported {
                break;
            }
            i += 1;
        }
        let Some(f) = all.get(i) else {
            let errors = validate(all, &self.content);
            if let Some(e) = errors.first() {
                // Not reached when every field passed on its own; say it rather than loop.
                self.stage = Stage::Choose;
                self.content.clear();
                return Next::Ask(format!(
                    "{}; press Enter to go through the fields again, or type d or c: ",
                    e.message
                ));
            }
            return Next::Answer(ElicitationAnswer::Accept {
                content: Some(std::mem::take(&mut self.content)),
            });
        };
        // The fields skipped just now (the ones between the last asked and this one).
        let from = match self.stage {
            Stage::Field(prev) => prev + 1,
            Stage::Choose => 0,
        };
        let mut notes = String::new();
        for skipped in all.iter().take(i).skip(from) {
            if let Some(n) = &skipped.note {
                notes.push_str(&format!("  ({} skipped: {n})\n", skipped.label()));
            }
        }
        let asked = question(f);
        self.stage = Stage::Field(i);
        Next::Ask(notes + &asked)
    }

    fn field_line(&mut self, i: usize, line: &str) -> Next {
        let Some(f) = fields(&self.ev).get(i).cloned() else {
            return self.start_field(i);
        };
        let value = match parse(&f, line) {
            Ok(v) => v,
            Err(e) => return Next::Ask(format!("  {e}\n{}", question(&f))),
        };
        let mut one = Map::new();
        if let Some(v) = &value {
            one.insert(f.name.clone(), v.clone());
        }
        if let Some(e) = validate(std::slice::from_ref(&f), &one).first() {
            return Next::Ask(format!("  {}\n{}", e.message, question(&f)));
        }
        match value {
            Some(v) => {
                self.content.insert(f.name.clone(), v);
            }
            None => {
                self.content.remove(&f.name);
            }
        }
        self.start_field(i + 1)
    }
}

fn hint(f: &ElicitationField) -> String {
    let mut parts = Vec::new();
    match f.field_type {
        FieldType::String => {
            parts.push(
                match f.format {
                    Some(FieldFormat::Email) => "an email address",
                    Some(FieldFormat::Uri) => "an address like https://…",
                    Some(FieldFormat::Date) => "a date, YYYY-MM-DD",
                    Some(FieldFormat::DateTime) => "a date and time, like 2026-12-01T09:30:00Z",
                    None => "text",
                }
                .to_owned(),
            );
            match (f.min_length, f.max_length) {
                (Some(a), Some(b)) => parts.push(format!("{a} to {b} characters")),
                (Some(a), None) => parts.push(format!("at least {a} characters")),
                (None, Some(b)) => parts.push(format!("at most {b} characters")),
                (None, None) => {}
            }
        }
        FieldType::Number | FieldType::Integer => {
            parts.push(if f.field_type == FieldType::Integer {
                "a whole number".into()
            } else {
                "a number".into()
            });
            match (f.minimum, f.maximum) {
                (Some(a), Some(b)) => parts.push(format!("{a} to {b}")),
                (Some(a), None) => parts.push(format!("at least {a}")),
                (None, Some(b)) => parts.push(format!("at most {b}")),
                (None, None) => {}
            }
        }
        FieldType::Boolean => parts.push("y or n".into()),
        FieldType::Select => parts.push("a number from the list".into()),
        FieldType::MultiSelect => parts.push("numbers from the list, separated by commas".into()),
        FieldType::Unsupported => {}
    }
    parts.join(", ")
}

fn default_text(f: &ElicitationField) -> Option<String> {
    let d = f.default.as_ref()?;
    Some(match d {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "y" } else { "n" }.into(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    })
}

/// One field's question: its label (`*` when required), what to type, the default, choices.
fn question(f: &ElicitationField) -> String {
    let mut s = format!(
        "{}{}",
        f.label(),
        if f.required { " *" } else { " (optional)" }
    );
    if let Some(d) = &f.description {
        s.push_str(&format!(" - {d}"));
    }
    s.push('\n');
    for (i, o) in f.options.iter().flatten().enumerate() {
        s.push_str(&format!("    {}) {}", i + 1, o.title));
        if let Some(d) = &o.description {
            s.push_str(&format!(" - {d}"));
        }
        s.push('\n');
    }
    s.push_str(&format!("  {}", hint(f)));
    if let Some(d) = default_text(f) {
        s.push_str(&format!(" [Enter: {d}]"));
    } else if !f.required {
        s.push_str(" [Enter: leave empty]");
    }
    s.push_str(": ");
    s
}

fn choice(f: &ElicitationField, word: &str) -> Result<String, String> {
    let options = f.options.as_deref().unwrap_or_default();
    if let Ok(n) = word.parse::<usize>()
        && let Some(o) = n.checked_sub(1).and_then(|i| options.get(i))
    {
        return Ok(o.value.clone());
    }
    options
        .iter()
        .find(|o| o.value == word || o.title.eq_ignore_ascii_case(word))
        .map(|o| o.value.clone())
        .ok_or_else(|| format!("`{word}` is not one of the choices"))
}

/// The value typed for `f`; `None`: left empty (the default, when there is one, is used).
fn parse(f: &ElicitationField, line: &str) -> Result<Option<Value>, String> {
    if line.is_empty() {
        return Ok(f.default.clone());
    }
    Ok(Some(match f.field_type {
        FieldType::String | FieldType::Unsupported => Value::String(line.to_owned()),
        FieldType::Integer => Value::from(
            line.parse::<i64>()
                .map_err(|_| format!("`{line}` is not a whole number"))?,
        ),
        FieldType::Number => {
            let n = line
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .ok_or_else(|| format!("`{line}` is not a number"))?;
            Value::Number(n)
        }
        FieldType::Boolean => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return Err("type y or n".into()),
        },
        FieldType::Select => Value::String(choice(f, line)?),
        FieldType::MultiSelect => Value::Array(
            line.split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(|w| choice(f, w).map(Value::String))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;
    use acp_desk_core::elicitation::FieldOption;

    fn field(name: &str, t: FieldType, required: bool) -> ElicitationField {
        serde_json::from_value(serde_json::json!({"name": name, "type": t, "required": required}))
            .unwrap()
    }

    fn ev(fields: Vec<ElicitationField>) -> Box<ElicitationEvent> {
        Box::new(ElicitationEvent {
            session_id: "s".into(),
            request_id: "e1".into(),
            mode: ElicitationModeKind::Form,
            message: "Details?".into(),
            tool_call_id: None,
            title: None,
            description: None,
            fields: Some(fields),
            url: None,
            host: None,
        })
    }

    #[test]
    fn a_form_is_asked_field_by_field_and_bad_input_is_asked_again() {
        let mut n = field("n", FieldType::Integer, true);
        n.minimum = Some(1.0);
        n.maximum = Some(9.0);
        let mut pick = field("pick", FieldType::MultiSelect, false);
        pick.options = Some(vec![
            FieldOption {
                value: "a".into(),
                title: "Alpha".into(),
                description: None,
            },
            FieldOption {
                value: "b".into(),
                title: "Beta".into(),
                description: None,
            },
        ]);
        let mut ok = field("ok", FieldType::Boolean, false);
        ok.default = Some(Value::Bool(true));
        let (mut a, first) = Asking::new(ev(vec![n, pick, ok]));
        assert!(first.contains("Answer it (3 fields)?"), "{first}");
        let Next::Ask(q) = a.feed(Some("")) else {
            panic!()
        };
        assert!(q.starts_with("n *"), "{q}");
        let Next::Ask(q) = a.feed(Some("twelve")) else {
            panic!()
        };
        assert!(q.contains("not a whole number"), "{q}");
        let Next::Ask(q) = a.feed(Some("12")) else {
            panic!()
        };
        assert!(q.contains("must be at most 9"), "{q}");
        let Next::Ask(q) = a.feed(Some("3")) else {
            panic!()
        };
        assert!(q.contains("1) Alpha") && q.contains("2) Beta"), "{q}");
        let Next::Ask(q) = a.feed(Some("2, alpha")) else {
            panic!()
        };
        assert!(q.contains("[Enter: y]"), "{q}");
        assert_eq!(
            a.feed(Some("")),
            Next::Answer(ElicitationAnswer::Accept {
                content: serde_json::json!({"n": 3, "pick": ["b", "a"], "ok": true})
                    .as_object()
                    .cloned()
            })
        );
    }

    #[test]
    fn decline_cancel_end_of_input_and_a_page() {
        let (mut a, _) = Asking::new(ev(vec![field("x", FieldType::String, true)]));
        assert_eq!(a.feed(Some("d")), Next::Answer(ElicitationAnswer::Decline));
        let (mut a, _) = Asking::new(ev(vec![]));
        assert_eq!(a.feed(None), Next::Answer(ElicitationAnswer::Cancel));
        let mut url = ev(vec![]);
        url.mode = ElicitationModeKind::Url;
        url.fields = None;
        url.url = Some("https://login.example.com/x".into());
        url.host = Some("login.example.com".into());
        let (mut a, first) = Asking::new(url);
        assert!(first.contains("a page on login.example.com"), "{first}");
        assert!(matches!(a.feed(Some("maybe")), Next::Ask(_)));
        assert_eq!(
            a.feed(Some("y")),
            Next::Answer(ElicitationAnswer::Accept { content: None })
        );
    }
}
