//! Writes the JSON Schema of the IPC types to `ui/src/lib/generated/ipc.schema.json` (or to
//! the path given), from which `npm run gen:types` generates the TypeScript.

fn main() -> anyhow::Result<()> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ui/src/lib/generated/ipc.schema.json"
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| default.to_string());
    std::fs::write(&path, acp_desk_shell::ipc::schema_json())
        .map_err(|e| anyhow::anyhow!("could not write {path}: {e}"))?;
    println!("wrote {path}");
    Ok(())
}
