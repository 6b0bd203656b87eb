//! What the window may ask of the session's folder: prompt parts turned into ACP content
//! blocks (files read, images checked), the project's file list for the `@` picker, paths to
//! open or reveal, and links to open. Every path is checked to lie inside the session's folder
//! after canonicalisation (`..` and symlinks resolved), so the webview cannot name a file
//! elsewhere. Blocking: callers run these on the blocking pool.

use std::path::{Path, PathBuf};

use acp_desk_core::schema::v1 as acp;
use base64::Engine as _;

use crate::ipc::{IpcError, ProjectFiles, PromptPart};

/// Larger text files go as links: an agent's context is precious and a 10 MB log is not a
/// prompt.
pub const MAX_EMBEDDED_BYTES: u64 = 256 * 1024;
/// Agents' model APIs refuse far smaller images; more is a paste gone wrong.
pub const MAX_IMAGE_BYTES: usize = 10 * 1024 * 1024;
/// The `@` picker filters in the webview; beyond this many entries the list costs more to
/// send and filter than it helps.
pub const MAX_LISTED_FILES: usize = 20_000;

const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// `path` (relative to `root`, `/`-separated, or absolute) resolved, if it names something
/// inside `root` (which is canonical). Refuses anything else with `path-outside`.
pub fn resolve_inside(root: &Path, path: &str) -> Result<PathBuf, IpcError> {
    if path.trim().is_empty() {
        return Err(IpcError::InvalidInput("no path was given".into()));
    }
    let given = Path::new(path);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };
    // Lexically first: a path that is outside on its face is refused before the file system is
    // touched (on Windows, canonicalising `\\host\share\f` would already reach out to that host).
    if !lexically_normal(&joined).starts_with(root) {
        return Err(outside(path, root));
    }
    let canonical = std::fs::canonicalize(&joined).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            IpcError::InvalidInput(format!(
                "{path} does not exist in {} (was it moved or deleted?)",
                root.display()
            ))
        } else {
            IpcError::InvalidInput(format!("{path} cannot be opened: {e}"))
        }
    })?;
    // Again after symlinks are resolved: a link inside may point anywhere.
    if !canonical.starts_with(root) {
        return Err(outside(path, root));
    }
    Ok(canonical)
}

fn outside(path: &str, root: &Path) -> IpcError {
    IpcError::PathOutside(format!(
        "{path} is outside the session's folder {}; only files inside it can be used here",
        root.display()
    ))
}

/// `path` with `.` dropped and `..` applied to the names before it, without asking the file
/// system (so symlinks are not followed: the canonical check after covers them).
fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Extensions of files the system would run, install or follow rather than show: opening one
/// that an agent wrote would run the agent's code with the user's click.
const RISKY_EXTENSIONS: &[&str] = &[
    "app",
    "appimage",
    "apk",
    "application",
    "bat",
    "cmd",
    "com",
    "command",
    "cpl",
    "deb",
    "desktop",
    "dmg",
    "exe",
    "gadget",
    "hta",
    "inf",
    "ins",
    "jar",
    "jnlp",
    "js",
    "jse",
    "lnk",
    "msc",
    "msi",
    "msp",
    "pif",
    "pkg",
    "ps1",
    "psm1",
    "reg",
    "rpm",
    "scf",
    "scr",
    "sh",
    "shortcut",
    "terminal",
    "tool",
    "url",
    "vb",
    "vbe",
    "vbs",
    "webloc",
    "workflow",
    "ws",
    "wsf",
    "wsh",
];

/// Refuses to open (not reveal) what the system would run: executables (Unix mode bits), app
/// bundles and script/installer/shortcut extensions. The user can reveal it and decide.
pub fn check_openable(file: &Path) -> Result<(), IpcError> {
    let name = file.display();
    let risky_ext = file
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| RISKY_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    let meta = std::fs::metadata(file)
        .map_err(|e| IpcError::InvalidInput(format!("{name} cannot be opened: {e}")))?;
    #[cfg(unix)]
    let executable = {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    };
    #[cfg(not(unix))]
    let executable = false;
    if risky_ext || executable {
        return Err(IpcError::InvalidInput(format!(
            "{name} is a program or script, and opening it would run it; ACP Desk only opens              documents. Use Reveal to see it in the file manager."
        )));
    }
    Ok(())
}

/// What "Open settings file" opens: the file; while it does not exist, the folder it goes in
/// (we never create it); neither: an error that names the path, so the user can create it.
/// Blocking. An executable settings file is refused like any other (see [`check_openable`]).
pub fn settings_target(file: &Path) -> Result<PathBuf, IpcError> {
    if file.is_file() {
        check_openable(file)?;
        return Ok(file.to_owned());
    }
    match file.parent() {
        Some(dir) if dir.is_dir() => Ok(dir.to_owned()),
        _ => Err(IpcError::InvalidInput(format!(
            "There is no settings file yet: create {} to add agents (under `agent_servers`).",
            file.display()
        ))),
    }
}

/// Whether the parts say anything: text that is not blank, or any file or image.
pub fn is_empty_prompt(parts: &[PromptPart]) -> bool {
    parts.iter().all(|p| match p {
        PromptPart::Text { text } => text.trim().is_empty(),
        PromptPart::File { .. } | PromptPart::Image { .. } => false,
    })
}

/// The prompt's parts as ACP content blocks, in order. Files become `resource_link`s, or
/// embedded text `resource`s when the agent accepts embedded context and the file is small
/// UTF-8 text; images are checked against what the agent accepts and what they claim to be.
pub fn prompt_blocks(
    root: &Path,
    parts: Vec<PromptPart>,
    caps: &acp::PromptCapabilities,
) -> Result<Vec<acp::ContentBlock>, IpcError> {
    let mut blocks = Vec::with_capacity(parts.len());
    for part in parts {
        let block = match part {
            // Blank text between attachments is the composer's spacing, not content.
            PromptPart::Text { text } if text.trim().is_empty() => continue,
            PromptPart::Text { text } => acp::ContentBlock::Text(acp::TextContent::new(text)),
            PromptPart::File { path } => file_block(root, &path, caps)?,
            PromptPart::Image {
                mime_type,
                data,
                name,
            } => image_block(mime_type, data, name.as_deref(), caps)?,
        };
        blocks.push(block);
    }
    Ok(blocks)
}

fn file_block(
    root: &Path,
    path: &str,
    caps: &acp::PromptCapabilities,
) -> Result<acp::ContentBlock, IpcError> {
    let file = resolve_inside(root, path)?;
    let meta = std::fs::metadata(&file)
        .map_err(|e| IpcError::InvalidInput(format!("{path} cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(IpcError::InvalidInput(format!(
            "{path} is not a file; attach files, not folders"
        )));
    }
    let uri = url::Url::from_file_path(&file)
        .map_err(|()| IpcError::InvalidInput(format!("{path} cannot be named as a file URI")))?
        .to_string();
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    let mime = guess_mime(&file);
    if caps.embedded_context && meta.len() <= MAX_EMBEDDED_BYTES {
        // Capped again while reading: a log still being written may have grown since.
        let mut bytes = Vec::new();
        std::fs::File::open(&file)
            .and_then(|f| {
                use std::io::Read as _;
                f.take(MAX_EMBEDDED_BYTES + 1).read_to_end(&mut bytes)
            })
            .map_err(|e| IpcError::InvalidInput(format!("{path} cannot be read: {e}")))?;
        // Binary files, and a file that grew past the cap since, go as links.
        let grew = bytes.len() as u64 > MAX_EMBEDDED_BYTES;
        if let (false, Ok(text)) = (grew, String::from_utf8(bytes)) {
            let contents = acp::TextResourceContents::new(text, uri).mime_type(mime);
            return Ok(acp::ContentBlock::Resource(acp::EmbeddedResource::new(
                acp::EmbeddedResourceResource::TextResourceContents(contents),
            )));
        }
    }
    let link = acp::ResourceLink::new(name, uri)
        .mime_type(mime)
        .size(i64::try_from(meta.len()).ok());
    Ok(acp::ContentBlock::ResourceLink(link))
}

fn image_block(
    mime_type: String,
    data: String,
    name: Option<&str>,
    caps: &acp::PromptCapabilities,
) -> Result<acp::ContentBlock, IpcError> {
    let what = name.unwrap_or("the image");
    if !caps.image {
        return Err(IpcError::InvalidInput(format!(
            "this agent does not accept images; remove {what} from the prompt"
        )));
    }
    if !IMAGE_TYPES.contains(&mime_type.as_str()) {
        return Err(IpcError::InvalidInput(format!(
            "{what} is {mime_type}; only PNG, JPEG, GIF and WebP images can be sent"
        )));
    }
    // Checked before decoding, so a huge paste is not decoded to be refused.
    if data.len() / 4 * 3 > MAX_IMAGE_BYTES + 3 {
        return Err(too_big(what));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|e| IpcError::InvalidInput(format!("{what} is not valid base64: {e}")))?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(too_big(what));
    }
    if !looks_like(&mime_type, &bytes) {
        return Err(IpcError::InvalidInput(format!(
            "{what} is not a {mime_type} image (its content says otherwise)"
        )));
    }
    Ok(acp::ContentBlock::Image(acp::ImageContent::new(
        data, mime_type,
    )))
}

fn too_big(what: &str) -> IpcError {
    IpcError::InvalidInput(format!(
        "{what} is larger than {} MiB; send a smaller image",
        MAX_IMAGE_BYTES / (1024 * 1024)
    ))
}

/// The image's magic bytes agree with its claimed type (a misnamed file would be refused by
/// the agent's model API with a less helpful message).
fn looks_like(mime: &str, b: &[u8]) -> bool {
    match mime {
        "image/png" => b.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => b.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a"),
        "image/webp" => b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP",
        _ => false,
    }
}

/// A MIME type from the file's extension, for the common cases only (agents cope without).
fn guess_mime(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let mime = match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" | "tsx" => "text/x-typescript",
        "json" => "application/json",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "sh" => "application/x-sh",
        "c" | "h" => "text/x-c",
        "cpp" | "hpp" | "cc" => "text/x-c++",
        "go" => "text/x-go",
        "java" => "text/x-java",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        _ => return None,
    };
    Some(mime.to_string())
}

/// The session folder's files, relative and `/`-separated, sorted: `.gitignore` (and
/// `.git/info/exclude`, global excludes) honoured even outside a git repository, hidden
/// folders (`.git`, `.venv`, ...) skipped, symlinks not followed, at most
/// [`MAX_LISTED_FILES`].
pub fn list_files(root: &Path) -> ProjectFiles {
    list_files_capped(root, MAX_LISTED_FILES)
}

pub fn list_files_capped(root: &Path, cap: usize) -> ProjectFiles {
    let walker = ignore::WalkBuilder::new(root)
        // Hidden files (.env.example, .github/...) are project files; hidden folders are tool
        // state (.git, .venv, .cache), skipped below.
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        // A walk in name order stops at the same files each time when the cap is hit.
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| {
            let hidden_dir = e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name().to_str().is_some_and(|n| n.starts_with('.'));
            !hidden_dir
        })
        .build();
    let mut files = Vec::new();
    let mut truncated = false;
    for entry in walker {
        // Unreadable folders are skipped: the list is a convenience, not an inventory.
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        // A name that is not UTF-8 could not be sent back as a path that means the same file.
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        let Some(parts) = parts else { continue };
        if files.len() == cap {
            truncated = true;
            break;
        }
        files.push(parts.join("/"));
    }
    files.sort();
    ProjectFiles { files, truncated }
}

/// `url` if it is a link the system may open for the user: http, https or mailto. Anything
/// else (`javascript:`, `file:`, `data:`, custom app schemes) could run or reveal something,
/// so it is refused.
pub fn check_url(url: &str) -> Result<url::Url, IpcError> {
    let parsed = url::Url::parse(url.trim())
        .map_err(|e| IpcError::InvalidInput(format!("{url} is not a valid link: {e}")))?;
    match parsed.scheme() {
        "http" | "https" if parsed.host_str().is_some_and(|h| !h.is_empty()) => Ok(parsed),
        // Only the harmless fields: some mail apps honour `attach=` (a local file, sent away).
        "mailto"
            if parsed.query_pairs().all(|(k, _)| {
                matches!(
                    k.to_ascii_lowercase().as_str(),
                    "subject" | "body" | "cc" | "bcc" | "to"
                )
            }) =>
        {
            Ok(parsed)
        }
        "mailto" => Err(IpcError::InvalidInput(format!(
            "{url} asks the mail app for more than an address, subject and body; it is not opened"
        ))),
        "http" | "https" => Err(IpcError::InvalidInput(format!("{url} names no host"))),
        other => Err(IpcError::InvalidInput(format!(
            "links of the kind `{other}:` are not opened; only http, https and mailto links are"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_outside_on_its_face_is_refused_before_the_file_system_is_asked() {
        let root = std::env::temp_dir().join("acp-desk-lexical-root-that-does-not-exist");
        // Neither exists: a lexical refusal says "outside", not "does not exist".
        for bad in ["../x", "a/../../x", "/etc/passwd"] {
            assert!(
                matches!(resolve_inside(&root, bad), Err(IpcError::PathOutside(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            resolve_inside(&root, "a/../b"),
            Err(IpcError::InvalidInput(_))
        ));
    }

    #[test]
    fn programs_and_scripts_are_not_opened() {
        let dir = tempfile::tempdir().expect("temp dir");
        let doc = dir.path().join("notes.md");
        std::fs::write(&doc, "# notes").expect("write");
        assert!(check_openable(&doc).is_ok());
        for name in ["run.sh", "setup.EXE", "x.desktop", "y.command", "z.bat"] {
            let f = dir.path().join(name);
            std::fs::write(&f, "x").expect("write");
            assert!(check_openable(&f).is_err(), "{name}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let tool = dir.path().join("README");
            std::fs::write(&tool, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            assert!(
                check_openable(&tool).is_err(),
                "an executable without an extension"
            );
        }
    }

    #[test]
    fn mail_links_carry_an_address_subject_and_body_only() {
        assert!(check_url("mailto:a@example.invalid?subject=hi&body=there&cc=b@x.invalid").is_ok());
        assert!(check_url("mailto:a@example.invalid?attach=/home/me/.ssh/id_rsa").is_err());
    }

    #[test]
    fn links_other_than_http_https_mailto_are_refused() {
        for ok in [
            "https://example.com/a?b=c",
            "http://localhost:8080/",
            "mailto:dev@example.invalid",
            "  https://example.com  ",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "vscode://file/etc/passwd",
            "ftp://example.com/",
            "https://",
            "example.com",
            "",
        ] {
            let Err(IpcError::InvalidInput(m)) = check_url(bad) else {
                panic!("{bad} was allowed")
            };
            assert!(!m.is_empty());
        }
    }

    #[test]
    fn image_types_are_checked_by_content() {
        assert!(looks_like("image/png", b"\x89PNG\r\n\x1a\nrest"));
        assert!(!looks_like("image/png", b"GIF89a"));
        assert!(looks_like("image/webp", b"RIFF\0\0\0\0WEBPVP8 "));
        assert!(!looks_like("image/svg+xml", b"<svg"));
    }

    #[test]
    fn open_settings_file_opens_the_file_else_its_folder_and_never_creates_either() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        assert_eq!(settings_target(&file).unwrap(), dir.path());
        assert!(!file.exists());
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(settings_target(&file).unwrap(), file);
        let nowhere = dir.path().join("no/such/settings.json");
        let err = settings_target(&nowhere).unwrap_err().to_string();
        assert!(err.contains("no/such/settings.json"), "{err}");
        assert!(!dir.path().join("no").exists());
    }
}
