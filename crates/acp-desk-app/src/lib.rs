//! ACP Desk's app layer, between the engine (acp-desk-core) and the front ends (the desktop
//! shell, the CLI). Nothing here depends on Tauri or a webview. See ARCHITECTURE.md.

pub mod state;
