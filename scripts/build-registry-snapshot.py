#!/usr/bin/env python3
"""Builds crates/acp-desk-core/data/acp-registry-snapshot.json, the ACP registry snapshot that
ACP Desk embeds, from a git clone of the public registry repository (agentclientprotocol/registry).

    scripts/build-registry-snapshot.py GIT_DIR [REV]

GIT_DIR is the repository's git directory (a bare clone or `<clone>/.git`); REV defaults to HEAD.
Only git plumbing is used (ls-tree, show), so no work tree is needed and nothing is fetched.

The output has the shape of the registry's own build output (`dist/registry.json` from
`.github/workflows/build_registry.py`): `{version, agents, extensions}`, agents in folder order,
`icon` replaced by the published icon address when the folder has an `icon.svg`. One key is ours:
`_source` names the repository, the commit and its date, which ACP Desk shows as where its
registry agents come from. Folders the registry's build skips (`_not_yet_unsupported`, dot
folders, `dist`) are skipped the same way.

After running it: `cargo nextest run -p acp-desk-core registry` (the snapshot test names the
agents it expects; update it when the registry changed), and commit the data file.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

REGISTRY_VERSION = "1.0.0"
REPOSITORY = "agentclientprotocol/registry"
ICON_BASE = "https://cdn.agentclientprotocol.com/registry/v1/latest"
# The registry's build skips these folders (build_registry.py, SKIP_DIRS), and so do we.
SKIP = {"dist", "_not_yet_unsupported", "__pycache__"}
OUT = Path(__file__).resolve().parent.parent / "crates/acp-desk-core/data/acp-registry-snapshot.json"


def git(git_dir: str, *args: str) -> str:
    # TZ=UTC: `format-local` dates are then UTC whatever the machine's zone.
    env = {**os.environ, "TZ": "UTC"}
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    git_dir = sys.argv[1]
    rev = sys.argv[2] if len(sys.argv) == 3 else "HEAD"
    commit = git(git_dir, "rev-parse", f"{rev}^{{commit}}").strip()
    # The committer date, in UTC: the day this state of the registry was published.
    date = git(git_dir, "show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%d", commit)
    date = date.strip()

    folders = []
    for line in git(git_dir, "ls-tree", commit).splitlines():
        meta, name = line.split("\t", 1)
        if meta.split()[1] == "tree" and not name.startswith(".") and name not in SKIP:
            folders.append(name)

    agents, errors = [], []
    for folder in sorted(folders):
        files = git(git_dir, "ls-tree", "--name-only", commit, f"{folder}/").split()
        if f"{folder}/agent.json" not in files:
            continue  # an extension.json folder, or something else: not an agent
        text = git(git_dir, "show", f"{commit}:{folder}/agent.json")
        try:
            agent = json.loads(text)
        except json.JSONDecodeError as e:
            errors.append(f"{folder}/agent.json: not JSON: {e}")
            continue
        if not isinstance(agent, dict) or agent.get("id") != folder:
            errors.append(f"{folder}/agent.json: `id` must equal the folder name")
            continue
        if f"{folder}/icon.svg" in files:
            agent["icon"] = f"{ICON_BASE}/{folder}.svg"
        else:
            agent.pop("icon", None)
        agents.append(agent)

    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    snapshot = {
        "_source": {
            "repository": REPOSITORY,
            "commit": commit,
            "date": date,
            "builtBy": "scripts/build-registry-snapshot.py",
        },
        "version": REGISTRY_VERSION,
        "agents": agents,
        "extensions": [],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(snapshot, indent=2, ensure_ascii=False) + "\n")
    print(f"{OUT}: {len(agents)} agents from {REPOSITORY} {commit} ({date})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
