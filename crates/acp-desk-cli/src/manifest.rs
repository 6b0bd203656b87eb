//! `acp-desk-cli manifest [--json]`: ACP Desk's own AIP-44 manifest, as `ACP.md` text (front
//! matter and body) or as the `AcpDefinition` in JSON.

use std::io::Write;
use std::process::ExitCode;

use acp_desk_core::agents::manifest;

#[derive(clap::Args)]
pub struct ManifestArgs {
    /// Print the AcpDefinition as JSON instead of ACP.md text.
    #[arg(long)]
    json: bool,
}

pub fn print(args: ManifestArgs) -> anyhow::Result<ExitCode> {
    let own = manifest::own_manifest();
    let text = if args.json {
        let mut t = serde_json::to_string_pretty(&own)?;
        t.push('\n');
        t
    } else {
        manifest::render(&own)?
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // Closed by its reader (`| head`): as a program killed by SIGPIPE.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::from(141)),
        r => {
            r?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
