//! See `acp_desk_core::supervisor`.

#[cfg(target_os = "linux")]
fn main() {
    std::process::exit(acp_desk_core::supervisor::main());
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("acp-desk-supervisor is only used on Linux");
    std::process::exit(2);
}
