#!/usr/bin/env bash
# Re-records tests/transcripts/demo/*.jsonl: the demo agent's scenarios through the real CLI
# (`acp-desk-cli run --json`), one StreamEvent per line, exactly as the UI receives them.
#
#   tests/transcripts/record.sh              # every scenario in crates/acp-desk-demo-agent/scenarios
#   tests/transcripts/record.sh plan edit    # only these scenarios (by scenario name)
#
# New scenarios (a scenarios/*.json file) are picked up by themselves: each is prompted with its
# first keyword under `--permission allow`. Extra recordings (other policies, several turns, the
# pending permission cut) are listed below. Uses CARGO_TARGET_DIR when set. Nothing here touches
# the user's settings: config and data folders are temporary.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/tests/transcripts/demo"
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --quiet --manifest-path "$root/Cargo.toml" \
  -p acp-desk-cli -p acp-desk-demo-agent -p acp-desk-core --bins
cli="$target/debug/acp-desk-cli"

# A fixed folder, so paths in the recordings do not change from one run to the next.
work="${TMPDIR:-/tmp}/acp-desk-transcripts"
rm -rf "$work"
mkdir -p "$work/project/src" "$work/config" "$work/data" "$out"
project="$work/project"
printf '# Demo project\n\nA few files for the demo agent to look at.\n' >"$project/README.md"
printf 'fn main() {\n    println!("hello");\n}\n' >"$project/src/main.rs"
printf 'first line\nsecond line\nthird line\n' >"$project/notes.txt"
export ACP_DESK_CONFIG_DIR="$work/config" ACP_DESK_DATA_DIR="$work/data" ACP_DESK_LOG=error

# Scenarios that only make sense live (30 s of slow text, 200,000 chunks).
skip=" slow flood "
wanted=" $* "

# record NAME POLICY PROMPT...: one session, one turn per PROMPT. The CLI's exit status is not
# checked: refusals, max tokens and crashes exit non-zero on purpose.
record() {
  local name="$1" policy="$2"
  shift 2
  if [ "$wanted" != "  " ] && [[ "$wanted" != *" ${name%%-*} "* ]] && [[ "$wanted" != *" $name "* ]]; then
    return 0
  fi
  (cd "$project" && timeout 120 "$cli" run --json --no-audit --permission "$policy" "$@") \
    >"$work/$name.jsonl" 2>"$work/$name.stderr" || true
  # A fixed session id (the engine makes a new one each run), so re-recordings diff cleanly.
  node -e '
    const fs = require("fs");
    const [from, to, id] = process.argv.slice(1);
    const lines = fs.readFileSync(from, "utf8").split("\n").filter((l) => l.trim() !== "");
    const out = lines.map((l) => {
      const e = JSON.parse(l);
      if ("sessionId" in e) e.sessionId = id;
      return JSON.stringify(e) + "\n";
    });
    fs.writeFileSync(to, out.join(""));
  ' "$work/$name.jsonl" "$out/$name.jsonl" "s-demo-$name"
  printf '%-22s %5d events  (%s: %s)\n' "$name" "$(wc -l <"$out/$name.jsonl")" "$policy" "$*"
}

for file in "$root"/crates/acp-desk-demo-agent/scenarios/*.json; do
  name="$(basename "$file" .json)"
  [[ "$skip" == *" $name "* ]] && continue
  keyword="$(node -e 'const s = require(process.argv[1]); process.stdout.write(s.keywords[0])' "$file")"
  record "$name" allow "$keyword"
done

# The same permission request, rejected and cancelled by the policy.
record permission-reject reject permission
record permission-cancel cancel permission
# Several turns in one session.
record multi-turn allow plan edit permission

# A permission request still waiting for its answer: the `permission` recording up to and
# including its `agent-prompt` event (the CLI cannot leave a question open, so this is a cut).
if [ -f "$out/permission.jsonl" ]; then
  awk '{ print } /"kind":"agent-prompt"/ { exit }' "$out/permission.jsonl" >"$out/permission-pending.jsonl"
  printf '%-22s %5d events  (cut of permission.jsonl after agent-prompt)\n' \
    permission-pending "$(wc -l <"$out/permission-pending.jsonl")"
fi
