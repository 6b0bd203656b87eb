use acp_desk_core::elicitation::{validate, ElicitationField};
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let cases: Vec<(Vec<ElicitationField>, serde_json::Map<String, serde_json::Value>)> = serde_json::from_str(&s).unwrap();
    let out: Vec<Vec<String>> = cases.iter().map(|(f, c)| validate(f, c).into_iter().map(|e| e.field).collect()).collect();
    println!("{}", serde_json::to_string(&out).unwrap());
}
