//! Checkpoints taken by the engine around real turns of the demo agent (a real process over
//! stdio): the `checkpoint` events, what each turn changed (through `fs/write_text_file` and
//! behind our back), and undoing turns back to the folder as it was, byte for byte.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use acp_desk_core::checkpoint::{CheckpointSettings, Checkpoints, RevertOutcome, StepKind};
use acp_desk_core::events::CheckpointPhase;
use acp_desk_core::{CheckpointOptions, StreamEvent, start};
use common::*;
use sha2::{Digest, Sha256};

/// Every file under `dir` (our shadow folders and `.git` left out): its SHA-256 and mode.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                walk(root, &p, out);
            } else {
                use std::os::unix::fs::PermissionsExt;
                let bytes = std::fs::read(&p).unwrap();
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(
                    rel,
                    format!(
                        "{} {:o}",
                        Sha256::digest(&bytes)
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect::<String>(),
                        meta.permissions().mode() & 0o7777
                    ),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[tokio::test]
async fn every_turn_is_checkpointed_and_can_be_undone_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    let base = root.join("checkpoints");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/keep.rs"), "fn main() {}\n").unwrap();
    std::fs::write(project.join(".gitignore"), "demo-notes.txt\n").unwrap();
    // Ignored, and written through us in turn 2: kept by the write's own checkpoint.
    std::fs::write(project.join("demo-notes.txt"), "the user's own notes\n").unwrap();
    let initial = tree(&project);

    let mut o = opts(&project);
    o.checkpoints = Some(CheckpointOptions {
        base: base.clone(),
        settings: CheckpointSettings::default(),
        git: None,
    });
    let (tx, rx) = channel();
    let h = start(demo(&[]), o, tx).await.unwrap();
    let rest = tokio::spawn(rx.all());
    // Turn 1 writes behind our back; turn 2 through fs/write_text_file.
    h.prompt(vec![acp_desk_core::text_block("direct-write")])
        .await
        .unwrap();
    h.prompt(vec![acp_desk_core::text_block("files")])
        .await
        .unwrap();
    let session = h.id().to_owned();
    // A turn's answer comes once its after-checkpoint is out: no wait here, so a caller who
    // stops at the answer (the CLI) still sees how to undo the turn.
    h.close().await;
    let evs = rest.await.unwrap();
    type Seen = (CheckpointPhase, Option<u32>, Option<u32>, Option<String>);
    let cps: Vec<Seen> = evs
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Checkpoint {
                phase,
                turn,
                summary,
                error,
                ..
            } => Some((*phase, *turn, summary.map(|s| s.files), error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        cps,
        [
            (CheckpointPhase::Before, Some(1), None, None),
            (CheckpointPhase::After, Some(1), Some(2), None),
            (CheckpointPhase::Before, Some(2), None, None),
            (CheckpointPhase::After, Some(2), Some(2), None),
        ],
        "{cps:?}"
    );
    // The before-checkpoint comes between turn-start and the agent's first word. The agent's
    // command list (sent once its session is made) may arrive after turn-start on a loaded
    // machine: it is not a word of the turn's.
    let first_turn: Vec<&str> = evs
        .iter()
        .map(|e| e.kind())
        .skip_while(|k| *k != "turn-start")
        .filter(|k| !["session-status", "available-commands"].contains(k))
        .take(2)
        .collect();
    assert_eq!(first_turn, ["turn-start", "checkpoint"]);

    let repo =
        Checkpoints::open(&base, &project, &CheckpointSettings::default(), None, &[]).unwrap();
    let steps = repo.steps(&session).unwrap();
    assert_eq!(steps.len(), 2);
    assert!(steps.iter().all(|s| s.complete && s.kind == StepKind::Turn));
    let t2 = repo.changes(&session, Some(2)).unwrap();
    let paths: Vec<&str> = t2.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["demo-folder/nested/created.txt", "demo-notes.txt"]);

    // Undo turn 2, then turn 1: the folder is as it was, the ignored file included.
    let r = repo.revert(&session, 2, None, false).unwrap();
    assert!(matches!(r, RevertOutcome::Done { step: 3, .. }), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(project.join("demo-notes.txt")).unwrap(),
        "the user's own notes\n"
    );
    let r = repo.revert(&session, 1, None, false).unwrap();
    assert!(matches!(r, RevertOutcome::Done { step: 4, .. }), "{r:?}");
    assert_eq!(tree(&project), initial);
    // The user's own folder was never turned into a repository.
    assert!(!project.join(".git").exists());
}

#[tokio::test]
async fn without_git_the_turn_runs_and_says_it_was_not_checkpointed() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut o = opts(&project);
    o.checkpoints = Some(CheckpointOptions {
        base: dir.path().join("checkpoints"),
        settings: CheckpointSettings::default(),
        git: Some(dir.path().join("no-such-git")),
    });
    let (tx, rx) = channel();
    let h = start(demo(&[]), o, tx).await.unwrap();
    let rest = tokio::spawn(rx.all());
    let outcome = h
        .prompt(vec![acp_desk_core::text_block("direct-write")])
        .await
        .unwrap();
    assert_eq!(
        outcome.reason,
        acp_desk_core::events::TurnEndReason::Completed
    );
    h.close().await;
    let evs = rest.await.unwrap();
    let error = evs.iter().find_map(|e| match e {
        StreamEvent::Checkpoint { error, .. } => error.clone(),
        _ => None,
    });
    let error = error.expect("a checkpoint event with the error");
    assert!(error.contains("git"), "{error}");
    assert!(project.join("direct-notes.txt").exists(), "the turn ran");
}

/// The registry's review and undo, as the window calls them: a turn's changes, a revert refused
/// while another turn runs in the folder, a conflict after an outside edit (nothing written),
/// forced, and the revert itself undone.
#[tokio::test]
async fn the_registry_reviews_and_undoes_and_refuses_while_a_turn_runs() {
    use acp_desk_app::{AppError, OpenRequest, Registry};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("direct-notes.txt"), "before the turn\n").unwrap();
    let registry = Registry::new(tokio::runtime::Handle::current());
    registry.take_checkpoints(Some(root.join("checkpoints")));
    let mut request = OpenRequest::new(project.clone(), "demo", demo(&[]));
    request.options = opts(&project);
    let id = registry.open(request).id;
    let h = registry.started(&id).await.unwrap();
    h.prompt(vec![acp_desk_core::text_block("direct-write")])
        .await
        .unwrap();
    let list = registry.checkpoint_list(&id).await.unwrap();
    assert_eq!(list.steps.len(), 1);
    assert!(list.storage.bytes > 0);
    let changes = registry.checkpoint_changes(&id, Some(1)).await.unwrap();
    let paths: Vec<&str> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["direct-folder/new.txt", "direct-notes.txt"]);
    let v = registry
        .checkpoint_file(&id, Some(1), "direct-notes.txt".into(), None)
        .await
        .unwrap();
    assert_eq!(v.before.unwrap().text.as_deref(), Some("before the turn\n"));

    // A turn runs in the folder: the revert is refused, nothing written.
    let slow = {
        let h = h.clone();
        tokio::spawn(async move { h.prompt(vec![acp_desk_core::text_block("slow")]).await })
    };
    // Once its checkpoint is taken the turn holds the folder.
    let deadline = tokio::time::Instant::now() + HANG;
    while registry.checkpoint_list(&id).await.unwrap().steps.len() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no checkpoint of the slow turn"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let busy = registry
        .checkpoint_revert(&id, 1, None, false)
        .await
        .unwrap_err();
    assert!(matches!(busy, AppError::FolderBusy(_)), "{busy:?}");
    assert!(busy.to_string().contains("a turn is running"), "{busy}");
    h.cancel().unwrap();
    let _ = slow.await.unwrap();

    // Step 2 was the slow turn (it changed nothing). An outside edit after turn 1: a conflict.
    std::fs::write(project.join("direct-notes.txt"), "the user's edit\n").unwrap();
    let r = registry
        .checkpoint_revert(&id, 1, None, false)
        .await
        .unwrap();
    match r {
        RevertOutcome::Conflicts { conflicts } => {
            assert_eq!(conflicts.len(), 1);
            assert_eq!(conflicts[0].path, "direct-notes.txt");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(project.join("direct-notes.txt")).unwrap(),
        "the user's edit\n"
    );
    assert!(
        project.join("direct-folder/new.txt").exists(),
        "nothing written"
    );
    // Forced: both files back as before turn 1.
    let step = match registry
        .checkpoint_revert(&id, 1, None, true)
        .await
        .unwrap()
    {
        RevertOutcome::Done { step, files, .. } => {
            assert_eq!(files.len(), 2);
            step
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(
        std::fs::read_to_string(project.join("direct-notes.txt")).unwrap(),
        "before the turn\n"
    );
    assert!(
        !project.join("direct-folder").exists(),
        "the emptied folder went too"
    );
    // The revert undone: the user's edit and the turn's new file are back.
    let r = registry
        .checkpoint_revert(&id, step, None, false)
        .await
        .unwrap();
    assert!(matches!(r, RevertOutcome::Done { .. }), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(project.join("direct-notes.txt")).unwrap(),
        "the user's edit\n"
    );
    assert!(project.join("direct-folder/new.txt").exists());
    let list = registry.checkpoint_list(&id).await.unwrap();
    let kinds: Vec<(u32, StepKind, Option<u32>)> = list
        .steps
        .iter()
        .map(|s| (s.turn, s.kind, s.undoes))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, StepKind::Turn, None),
            (2, StepKind::Turn, None),
            (3, StepKind::Revert, Some(1)),
            (4, StepKind::Revert, Some(3)),
        ]
    );
    assert_eq!(list.steps[0].undone_by, [3]);
    registry.close(&id).await.unwrap();

    // The next start of the app, the session restored without its agent: unknown until the
    // front end says where its folder is, then reviewed and undone as before. It goes by its
    // history id: the engine's, which its checkpoints carry.
    let id = h.id().to_owned();
    let next = Registry::new(tokio::runtime::Handle::current());
    next.take_checkpoints(Some(root.join("checkpoints")));
    let unknown = next.checkpoint_list(&id).await.unwrap_err();
    assert!(
        matches!(unknown, AppError::SessionUnknown(_)),
        "{unknown:?}"
    );
    next.know_stored(&id, project.clone());
    assert_eq!(next.checkpoint_list(&id).await.unwrap().steps.len(), 4);
    let r = next.checkpoint_revert(&id, 4, None, false).await.unwrap();
    assert!(matches!(r, RevertOutcome::Done { .. }), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(project.join("direct-notes.txt")).unwrap(),
        "before the turn\n"
    );
    assert!(!project.join("direct-folder").exists());
    // A session that took no checkpoints there: said so, and no shadow repository is made.
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    next.know_stored("another", elsewhere);
    let none = next.checkpoint_list("another").await.unwrap_err();
    assert!(none.to_string().contains("took no checkpoints"), "{none}");
    assert!(
        !Checkpoints::shadow_dir(&root.join("checkpoints"), &root.join("elsewhere")).exists(),
        "no shadow repository was made for it"
    );
}
