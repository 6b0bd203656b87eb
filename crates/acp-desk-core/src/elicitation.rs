//! Elicitation: an agent asks the user for structured input (`elicitation/create`).
//!
//! The schema crate types the request; this module turns a form's `requestedSchema` into the
//! [`ElicitationField`]s a front end draws (in the order the agent wrote them: the crate keeps
//! properties in a sorted map, so the order is read from the raw JSON), and checks an answer
//! against them ([`validate`]) before it goes to the agent. The window mirrors these rules for
//! live feedback (`ui/src/lib/elicitation.ts`); the engine's check is the one that counts.

use std::collections::HashMap;
use std::fmt;

use agent_client_protocol_schema::v1 as acp;
use schemars::JsonSchema;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What a field asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FieldType {
    String,
    Number,
    Integer,
    Boolean,
    /// One of `options` (a string with `enum` or `oneOf`).
    Select,
    /// Any of `options` (an array of such strings).
    MultiSelect,
    /// A type the schema crate does not define: shown with `note`, never sent.
    Unsupported,
}

/// A string field's `format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FieldFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

impl FieldFormat {
    /// The schema crate's format; `None` for one it adds later (the field is then plain text).
    fn of(f: acp::StringFormat) -> Option<Self> {
        Some(match f {
            acp::StringFormat::Email => Self::Email,
            acp::StringFormat::Uri => Self::Uri,
            acp::StringFormat::Date => Self::Date,
            acp::StringFormat::DateTime => Self::DateTime,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldOption {
    pub value: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One field of a form elicitation, as front ends draw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationField {
    /// The property's key: what the answer's `content` is keyed by.
    pub name: String,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<FieldFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// A regular expression the whole value must match (ECMA-262 in the schema; checked with
    /// Rust's `regex`, which lacks look-around and back references: such a pattern is not
    /// checked, and `note` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// Select and multi-select: the choices, in the agent's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<FieldOption>>,
    /// The agent's default, to prefill: text, a number, a boolean or a list of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "default_schema")]
    pub default: Option<Value>,
    /// Why part of the field cannot be asked or checked, for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a default can be, spelt out: a bare JSON value's schema reads as an object in the
/// generated TypeScript.
fn default_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            {"type": "string"},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "array", "items": {"type": "string"}},
            {"type": "null"}
        ]
    })
}

impl ElicitationField {
    fn new(name: &str, field_type: FieldType, required: bool) -> Self {
        Self {
            name: name.to_owned(),
            field_type,
            required,
            title: None,
            description: None,
            format: None,
            min_length: None,
            max_length: None,
            pattern: None,
            minimum: None,
            maximum: None,
            min_items: None,
            max_items: None,
            options: None,
            default: None,
            note: None,
        }
    }

    /// How the field is named to people: its title, else its key.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

/// A field the answer got wrong, and why (for people).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// What the user (or a policy) answers an elicitation with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum ElicitationAnswer {
    /// Form: the values, keyed by field name (optional fields left out). URL: the user agreed
    /// to open the page; no content.
    Accept {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Map<String, Value>>")]
        content: Option<Map<String, Value>>,
    },
    Decline,
    Cancel,
}

impl ElicitationAnswer {
    /// `accept`, `decline` or `cancel`.
    pub fn action(&self) -> ElicitationAction {
        match self {
            Self::Accept { .. } => ElicitationAction::Accept,
            Self::Decline => ElicitationAction::Decline,
            Self::Cancel => ElicitationAction::Cancel,
        }
    }
}

/// The answer's action, as `elicitation-settled` and the audit log say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationAction {
    Accept,
    Decline,
    Cancel,
}

/// The keys of a JSON object in the order they are written (values skipped).
struct KeyOrder(Vec<String>);

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(k);
                }
                Ok(KeyOrder(keys))
            }
        }
        d.deserialize_map(V)
    }
}

/// The order of `requestedSchema.properties` in a raw `elicitation/create` params object.
pub fn property_order(raw_params: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "requestedSchema")]
        requested_schema: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Schema<'a> {
        #[serde(borrow)]
        properties: Option<&'a RawValue>,
    }
    serde_json::from_str::<Params>(raw_params)
        .ok()
        .and_then(|p| p.requested_schema)
        .and_then(|s| serde_json::from_str::<Schema>(s.get()).ok())
        .and_then(|s| s.properties)
        .and_then(|p| serde_json::from_str::<KeyOrder>(p.get()).ok())
        .map(|k| k.0)
        .unwrap_or_default()
}

/// The form's fields, in `order` (the raw JSON's; properties it does not name follow, sorted).
pub fn fields_in_order(schema: &acp::ElicitationSchema, order: &[String]) -> Vec<ElicitationField> {
    let required = schema.required.as_deref().unwrap_or_default();
    let mut names: Vec<&String> = order
        .iter()
        .filter(|n| schema.properties.contains_key(*n))
        .collect();
    for name in schema.properties.keys() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let prop = schema.properties.get(name)?;
            Some(field(name, prop, required.contains(name)))
        })
        .collect()
}

fn options_of(values: &[String]) -> Vec<FieldOption> {
    values
        .iter()
        .map(|v| FieldOption {
            value: v.clone(),
            title: v.clone(),
            description: None,
        })
        .collect()
}

fn titled(options: &[acp::EnumOption]) -> Vec<FieldOption> {
    options
        .iter()
        .map(|o| FieldOption {
            value: o.value.clone(),
            title: o.title.clone(),
            description: o.description.clone(),
        })
        .collect()
}

fn field(name: &str, prop: &acp::ElicitationPropertySchema, required: bool) -> ElicitationField {
    use acp::ElicitationPropertySchema as P;
    match prop {
        P::String(s) => {
            let options = match (&s.one_of, &s.enum_values) {
                (Some(one_of), _) => Some(titled(one_of)),
                (None, Some(values)) => Some(options_of(values)),
                (None, None) => None,
            };
            let mut f = ElicitationField::new(
                name,
                if options.is_some() {
                    FieldType::Select
                } else {
                    FieldType::String
                },
                required,
            );
            f.title.clone_from(&s.title);
            f.description.clone_from(&s.description);
            f.options = options;
            f.default = s.default.clone().map(Value::String);
            if f.options.is_none() {
                f.format = s.format.and_then(FieldFormat::of);
                f.min_length = s.min_length;
                f.max_length = s.max_length;
                if let Some(p) = &s.pattern {
                    f.pattern = Some(p.clone());
                    if compile(p).is_none() {
                        f.note = Some(format!(
                            "The agent's pattern `{p}` cannot be checked here; the agent checks it."
                        ));
                    }
                }
            }
            f
        }
        P::Number(n) => {
            let mut f = ElicitationField::new(name, FieldType::Number, required);
            f.title.clone_from(&n.title);
            f.description.clone_from(&n.description);
            f.minimum = n.minimum;
            f.maximum = n.maximum;
            f.default = n
                .default
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number);
            f
        }
        P::Integer(n) => {
            let mut f = ElicitationField::new(name, FieldType::Integer, required);
            f.title.clone_from(&n.title);
            f.description.clone_from(&n.description);
            // As f64: exact up to 2^53, far beyond any bound a person types.
            #[allow(clippy::cast_precision_loss)]
            {
                f.minimum = n.minimum.map(|v| v as f64);
                f.maximum = n.maximum.map(|v| v as f64);
            }
            f.default = n.default.map(Value::from);
            f
        }
        P::Boolean(b) => {
            let mut f = ElicitationField::new(name, FieldType::Boolean, required);
            f.title.clone_from(&b.title);
            f.description.clone_from(&b.description);
            f.default = b.default.map(Value::Bool);
            f
        }
        P::Array(a) => {
            let options = match &a.items {
                acp::MultiSelectItems::String(s) => Some(options_of(&s.values)),
                acp::MultiSelectItems::Titled(t) => Some(titled(&t.options)),
                _ => None,
            };
            let mut f = ElicitationField::new(
                name,
                if options.is_some() {
                    FieldType::MultiSelect
                } else {
                    FieldType::Unsupported
                },
                required,
            );
            f.title.clone_from(&a.title);
            f.description.clone_from(&a.description);
            f.min_items = a.min_items;
            f.max_items = a.max_items;
            if options.is_none() {
                f.note = Some("The agent asks for a list of a kind ACP Desk cannot show.".into());
            }
            f.options = options;
            f.default = a
                .default
                .clone()
                .map(|v| Value::Array(v.into_iter().map(Value::String).collect()));
            f
        }
        other => {
            let mut f = ElicitationField::new(name, FieldType::Unsupported, required);
            let type_name = serde_json::to_value(other)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| "unknown".into());
            f.note = Some(format!(
                "The agent asks for a value of type `{type_name}`, which ACP Desk cannot show."
            ));
            f
        }
    }
}

/// The pattern as JSON Schema reads it: a search anywhere in the value, like ECMA-262's
/// `test` (unanchored unless the pattern anchors itself); `None` when Rust's regex cannot
/// compile it.
fn compile(pattern: &str) -> Option<regex::Regex> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// WHATWG's rule for `<input type=email>`, which the window's input applies too.
const EMAIL: &str = r"^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$";

/// [`EMAIL`], compiled once.
static EMAIL_RE: std::sync::LazyLock<Result<regex::Regex, regex::Error>> =
    std::sync::LazyLock::new(|| regex::Regex::new(EMAIL));

fn format_error(format: FieldFormat, value: &str) -> Option<&'static str> {
    let ok = match format {
        FieldFormat::Email => EMAIL_RE.as_ref().is_ok_and(|r| r.is_match(value)),
        FieldFormat::Uri => url::Url::parse(value).is_ok(),
        FieldFormat::Date => chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok(),
        FieldFormat::DateTime => chrono::DateTime::parse_from_rfc3339(value).is_ok(),
    };
    if ok {
        return None;
    }
    Some(match format {
        FieldFormat::Email => "must be an email address",
        FieldFormat::Uri => "must be an absolute address, such as https://example.com",
        FieldFormat::Date => "must be a date, YYYY-MM-DD",
        FieldFormat::DateTime => "must be a date and time, such as 2026-12-01T09:30:00Z",
    })
}

fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        v.to_string()
    }
}

/// Checks one value against its field; the first problem, for people.
fn check(f: &ElicitationField, v: &Value) -> Option<String> {
    match f.field_type {
        FieldType::Unsupported => Some("ACP Desk cannot send a value for this field".into()),
        FieldType::String => {
            let Some(s) = v.as_str() else {
                return Some("must be text".into());
            };
            let len = u32::try_from(s.chars().count()).unwrap_or(u32::MAX);
            if let Some(min) = f.min_length
                && len < min
            {
                return Some(format!("must be at least {min} characters long"));
            }
            if let Some(max) = f.max_length
                && len > max
            {
                return Some(format!("must be at most {max} characters long"));
            }
            if let Some(format) = f.format
                && let Some(e) = format_error(format, s)
            {
                return Some(e.into());
            }
            if let Some(p) = &f.pattern
                && let Some(re) = compile(p)
                && !re.is_match(s)
            {
                return Some(format!("must match the pattern {p}"));
            }
            None
        }
        FieldType::Number | FieldType::Integer => {
            let Some(n) = v.as_f64() else {
                return Some("must be a number".into());
            };
            if f.field_type == FieldType::Integer && !(v.is_i64() || v.is_u64()) {
                return Some("must be a whole number".into());
            }
            if let Some(min) = f.minimum
                && n < min
            {
                return Some(format!("must be at least {}", number_text(min)));
            }
            if let Some(max) = f.maximum
                && n > max
            {
                return Some(format!("must be at most {}", number_text(max)));
            }
            None
        }
        FieldType::Boolean => (!v.is_boolean()).then(|| "must be yes or no".into()),
        FieldType::Select => {
            let allowed = f.options.as_deref().unwrap_or_default();
            match v.as_str() {
                Some(s) if allowed.iter().any(|o| o.value == s) => None,
                _ => Some("must be one of the choices offered".into()),
            }
        }
        FieldType::MultiSelect => {
            let Some(items) = v.as_array() else {
                return Some("must be a list of choices".into());
            };
            let allowed = f.options.as_deref().unwrap_or_default();
            let mut seen = Vec::new();
            for item in items {
                match item.as_str() {
                    Some(s) if allowed.iter().any(|o| o.value == s) => {
                        if seen.contains(&s) {
                            return Some(format!("lists `{s}` twice"));
                        }
                        seen.push(s);
                    }
                    _ => return Some("may hold only the choices offered".into()),
                }
            }
            let n = items.len() as u64;
            if let Some(min) = f.min_items
                && n < min
            {
                return Some(format!(
                    "needs at least {min} choice{}",
                    if min == 1 { "" } else { "s" }
                ));
            }
            if let Some(max) = f.max_items
                && n > max
            {
                return Some(format!(
                    "allows at most {max} choice{}",
                    if max == 1 { "" } else { "s" }
                ));
            }
            None
        }
    }
}

/// Every problem of `content` as an answer to `fields`: a required field missing (or empty),
/// a value of the wrong type, out of bounds, too short or long, not matching its format or
/// pattern, not among the options; a key no field asks for. Empty when it may be sent.
pub fn validate(fields: &[ElicitationField], content: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let by_name: HashMap<&str, &ElicitationField> =
        fields.iter().map(|f| (f.name.as_str(), f)).collect();
    for f in fields {
        let value = content.get(&f.name).filter(|v| !v.is_null());
        let empty = match value {
            None => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if empty {
            if f.required {
                errors.push(FieldError {
                    field: f.name.clone(),
                    message: format!("{} is required", f.label()),
                });
            }
            continue;
        }
        if let Some(v) = value
            && let Some(problem) = check(f, v)
        {
            errors.push(FieldError {
                field: f.name.clone(),
                message: format!("{} {problem}", f.label()),
            });
        }
    }
    for key in content.keys() {
        if !by_name.contains_key(key.as_str()) {
            errors.push(FieldError {
                field: key.clone(),
                message: format!("the agent did not ask for `{key}`"),
            });
        }
    }
    errors
}

/// The content as sent: empty optional strings and nulls left out (an empty box is "no
/// answer", not the empty string).
pub fn content_to_send(content: &Map<String, Value>) -> Map<String, Value> {
    content
        .iter()
        .filter(|(_, v)| !v.is_null() && v.as_str() != Some(""))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The host a URL elicitation would open, shown before it is opened; `None` when the URL is
/// not an absolute `http(s)` address (such a request is refused).
pub fn url_host(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    if !matches!(u.scheme(), "https" | "http") {
        return None;
    }
    u.host_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;
    use serde_json::json;

    const PARAMS: &str = r#"{"sessionId":"s","mode":"form","message":"m","requestedSchema":{
        "type":"object",
        "properties":{
          "zeta":{"type":"string","title":"Name","minLength":2,"maxLength":5},
          "email":{"type":"string","format":"email"},
          "site":{"type":"string","format":"uri"},
          "day":{"type":"string","format":"date"},
          "when":{"type":"string","format":"date-time"},
          "code":{"type":"string","pattern":"^[A-Z]{3}$"},
          "odd":{"type":"string","pattern":"(?=x)x"},
          "ratio":{"type":"number","minimum":0.5,"maximum":1.5,"default":1},
          "count":{"type":"integer","minimum":1,"maximum":10},
          "agree":{"type":"boolean","default":true},
          "colour":{"type":"string","enum":["red","green"]},
          "size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
          "tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":1,"maxItems":2},
          "picks":{"type":"array","items":{"anyOf":[{"const":"x","title":"Ex"}]}},
          "blob":{"type":"object"}
        },
        "required":["zeta","count","tags"]}}"#;

    fn fields() -> Vec<ElicitationField> {
        let req: acp::CreateElicitationRequest = serde_json::from_str(PARAMS).unwrap();
        let acp::ElicitationMode::Form(form) = req.mode else {
            panic!("form")
        };
        fields_in_order(&form.requested_schema, &property_order(PARAMS))
    }

    #[test]
    fn fields_keep_the_agents_order_and_every_type_of_the_schema_crate() {
        let f = fields();
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "zeta", "email", "site", "day", "when", "code", "odd", "ratio", "count", "agree",
                "colour", "size", "tags", "picks", "blob"
            ]
        );
        let types: Vec<FieldType> = f.iter().map(|f| f.field_type).collect();
        use FieldType::*;
        assert_eq!(
            types,
            [
                String,
                String,
                String,
                String,
                String,
                String,
                String,
                Number,
                Integer,
                Boolean,
                Select,
                Select,
                MultiSelect,
                MultiSelect,
                Unsupported
            ]
        );
        assert_eq!(f[0].label(), "Name");
        assert!(f[0].required && f[8].required && !f[1].required);
        assert_eq!(f[1].format, Some(FieldFormat::Email));
        assert_eq!(f[4].format, Some(FieldFormat::DateTime));
        assert!(f[5].note.is_none());
        assert!(
            f[6].note.as_deref().unwrap().contains("cannot be checked"),
            "look-around is not Rust regex: said, not silently skipped"
        );
        assert_eq!(f[7].default, Some(json!(1.0)));
        assert_eq!(f[9].default, Some(json!(true)));
        assert_eq!(f[11].options.as_ref().unwrap()[1].title, "Large");
        assert_eq!(f[12].max_items, Some(2));
        assert_eq!(f[13].options.as_ref().unwrap()[0].value, "x");
        assert!(f[14].note.as_deref().unwrap().contains("`object`"));
    }

    fn content(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn good() -> Value {
        json!({
            "zeta": "Ada", "email": "ada@example.com", "site": "https://example.com/x",
            "day": "2026-02-28", "when": "2026-12-01T09:30:00Z", "code": "ABC",
            "ratio": 0.75, "count": 3, "agree": false, "colour": "red", "size": "l",
            "tags": ["a", "c"], "picks": ["x"]
        })
    }

    #[test]
    fn a_good_answer_passes() {
        assert_eq!(validate(&fields(), &content(good())), []);
        // Optional fields may be left out; required ones only.
        let minimal = json!({"zeta": "Ada", "count": 1, "tags": ["b"]});
        assert_eq!(validate(&fields(), &content(minimal)), []);
    }

    #[test]
    fn every_kind_of_bad_input_is_refused_with_the_field_named() {
        let cases = [
            ("zeta", json!("A"), "at least 2 characters"),
            ("zeta", json!("Adaline"), "at most 5 characters"),
            ("zeta", json!(""), "is required"),
            ("zeta", json!(7), "must be text"),
            ("email", json!("ada@"), "email address"),
            ("site", json!("example.com"), "absolute address"),
            ("day", json!("2026-02-30"), "YYYY-MM-DD"),
            ("when", json!("tomorrow"), "date and time"),
            ("code", json!("abc"), "pattern"),
            ("ratio", json!(2), "at most 1.5"),
            ("ratio", json!("1"), "must be a number"),
            ("count", json!(0), "at least 1"),
            ("count", json!(2.5), "whole number"),
            ("agree", json!("yes"), "yes or no"),
            ("colour", json!("blue"), "choices offered"),
            ("size", json!("Small"), "choices offered"),
            ("tags", json!([]), "at least 1 choice"),
            ("tags", json!(["a", "b", "c"]), "at most 2 choices"),
            ("tags", json!(["a", "a"]), "twice"),
            ("tags", json!(["z"]), "only the choices"),
            ("tags", json!("a"), "list of choices"),
            ("blob", json!({}), "cannot send"),
            ("extra", json!(1), "did not ask"),
        ];
        for (name, value, want) in cases {
            let mut c = content(good());
            c.insert(name.into(), value.clone());
            let errors = validate(&fields(), &c);
            assert_eq!(errors.len(), 1, "{name}={value}: {errors:?}");
            assert_eq!(errors[0].field, name);
            assert!(
                errors[0].message.contains(want),
                "{name}={value}: {}",
                errors[0].message
            );
        }
        let mut c = content(good());
        c.remove("count");
        assert_eq!(validate(&fields(), &c)[0].message, "count is required");
    }

    #[test]
    fn empty_optional_boxes_are_not_sent_and_urls_show_their_host() {
        let c = content(json!({"zeta": "Ada", "email": "", "x": null}));
        assert_eq!(content_to_send(&c), content(json!({"zeta": "Ada"})));
        assert_eq!(
            url_host("https://login.example.com/a?b=1").as_deref(),
            Some("login.example.com")
        );
        assert_eq!(url_host("javascript:alert(1)"), None);
        assert_eq!(url_host("file:///etc/passwd"), None);
    }

    #[test]
    fn answers_read_as_the_wire_spells_them() {
        let a: ElicitationAnswer =
            serde_json::from_value(json!({"action": "accept", "content": {"a": 1}})).unwrap();
        assert_eq!(a.action(), ElicitationAction::Accept);
        let d: ElicitationAnswer = serde_json::from_value(json!({"action": "decline"})).unwrap();
        assert_eq!(d, ElicitationAnswer::Decline);
    }
}
