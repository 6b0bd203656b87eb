#!/usr/bin/env bash
# Records the raw JSON-RPC wire of the pinned @agentclientprotocol/claude-agent-acp (AIR async
# tasks, AskUserQuestion as elicitation/create) into tests/fixtures/, driven by probe-client.mjs
# against the scripted model server fake-anthropic.mjs. Offline (no account, no network beyond
# `npm ci`). See tests/fixtures/README.md for what each file holds.
#
#   tests/real-agents/record-claude-agent-acp.sh          # npm ci, record all four, check them
#   SKIP_NPM_CI=1 KEEP_WORK=1 tests/real-agents/record-claude-agent-acp.sh
#   OUT_DIR=/tmp/x tests/real-agents/record-claude-agent-acp.sh   # write elsewhere (a dry run)
#
# Each recording is checked for what it must show (prints `ok - …` / `FAIL - …`); exit 1 when a
# check failed (the files are written anyway, for a look), 2 when the rig cannot start.
# The temp folder of the run is replaced by `<WORK>` in the recordings (also inside the folder
# name Claude Code derives from the project path: `-<WORK>-NAME-proj`), the model server's port
# by `<PORT>`.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT_DIR:-$ROOT/tests/fixtures}
NODE=$(command -v node || true)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/acp-desk-record.XXXXXX")
MARK="ACP_DESK_REAL_AGENTS_RUN=$WORK"
SERVER_PID=

# shellcheck source=tests/real-agents/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cleanup() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null
  end_marked
  [[ -n $SERVER_PID ]] && wait "$SERVER_PID" 2>/dev/null
  if [[ ${KEEP_WORK:-0} = 1 ]]; then echo "# kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok - $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
die() { echo "record: $*" >&2; exit 2; }

[[ -n $NODE ]] || die "node not found"
if [[ ${SKIP_NPM_CI:-0} != 1 ]]; then
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >"$WORK/npm.log" 2>&1 ||
    { cat "$WORK/npm.log" >&2; die "npm ci failed"; }
fi
PKG=$HERE/node_modules/@agentclientprotocol/claude-agent-acp
AGENT_JS=$PKG/dist/index.js
[[ -f $AGENT_JS ]] || die "claude-agent-acp is not installed in $HERE/node_modules"
VERSION=$("$NODE" -p "require('$PKG/package.json').version")
SDK_VERSION=$("$NODE" -p "require('$PKG/node_modules/@anthropic-ai/claude-agent-sdk/package.json').version" 2>/dev/null ||
  "$NODE" -p "require('$HERE/node_modules/@anthropic-ai/claude-agent-sdk/package.json').version")
echo "# claude-agent-acp $VERSION (claude-agent-sdk $SDK_VERSION), node $("$NODE" --version)"

"$NODE" "$HERE/fake-anthropic.mjs" --port-file "$WORK/port" --log "$WORK/requests.jsonl" \
  --tools-dump "$WORK/tools-offered" >"$WORK/server.out" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
[[ -s $WORK/port ]] || die "the fake model server did not start: $(cat "$WORK/server.out")"
PORT=$(cat "$WORK/port")

# record NAME PROMPT PROBE_OPTIONS... : one probe-client run in a fresh project and HOME.
record() {
  local name=$1 prompt=$2
  shift 2
  local dir=$WORK/$name
  mkdir -p "$dir/home" "$dir/proj" "$dir/tmp"
  echo "# recording $name: \"$prompt\""
  env -i "PATH=$PATH" "HOME=$dir/home" "TMPDIR=$dir/tmp" "LANG=C.UTF-8" "$MARK" \
    "ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT" "ANTHROPIC_API_KEY=test" \
    "DISABLE_TELEMETRY=1" "DISABLE_AUTOUPDATER=1" "DISABLE_ERROR_REPORTING=1" \
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1" "IS_SANDBOX=1" \
    "CLAUDE_CODE_MAX_RETRIES=1" "API_TIMEOUT_MS=60000" \
    timeout 180 "$NODE" "$HERE/probe-client.mjs" --cwd "$dir/proj" --permission allow \
    --calls "$dir/calls.jsonl" --wire "$dir/wire.jsonl" --air-async-tasks --elicitation-form "$@" \
    -- "$NODE" "$AGENT_JS" -- "$prompt" >"$dir/stdout.txt" 2>"$dir/stderr.log" &
  wait $!
  local rc=$?
  local want=${EXPECT_RC:-0} # probe-client: 0 end_turn, 3 another stop reason
  [[ $rc = "$want" ]] && ok "$name: the probe's turn ended $([[ $want = 0 ]] && echo end_turn || echo "with exit $want (not end_turn)")" ||
    { bad "$name: probe-client exited $rc"; tail -n 15 "$dir/stderr.log" | sed 's/^/#   /'; }
  # The recording, without the temp folder's path and the port.
  # Claude Code also names a folder after the project's path, with every `/` (and `.`) a `-`.
  local slug=${WORK//[\/.]/-}
  sed -e "s#$WORK#<WORK>#g" -e "s#$slug#-<WORK>#g" -e "s#127\.0\.0\.1:$PORT#127.0.0.1:<PORT>#g" "$dir/wire.jsonl" \
    >"$OUT/claude-agent-acp-$VERSION-$name.jsonl"
}
# has NAME DESCRIPTION NODE_EXPR : a check over the recording's messages (`m`: array of
# {dir: "sent"|"answered", msg}; `u`: the session/update params' updates).
has() {
  local name=$1 d=$2 expr=$3
  if "$NODE" -e '
    const fs = require("fs");
    const m = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
      .map((e) => ({ dir: e.sent ? "sent" : "answered", msg: e.sent || e.answered || {} }));
    const u = m.filter((e) => e.msg.method === "session/update").map((e) => e.msg.params.update);
    process.exit(eval(process.argv[2]) ? 0 : 1);
  ' "$OUT/claude-agent-acp-$VERSION-$name.jsonl" "$expr"; then ok "$name: $d"; else bad "$name: $d"; fi
}

record async-tasks "start a background job that finishes" --linger 60 --wait-origin task-notification
has async-tasks "a shell task spawned, stoppable, tied to its Bash tool call" \
  'u.some((x) => x.sessionUpdate === "async_task_spawned" && x.taskType === "shell" && x.canStop === true && x.toolCallId)'
has async-tasks "its output file came" 'u.some((x) => /async_task_(spawned|progress|state_update)/.test(x.sessionUpdate) && /tasks\/[^/]+\.output$/.test(x.outputFilePath || ""))'
has async-tasks "the shell task completed" \
  'u.some((x) => x.sessionUpdate === "async_task_state_update" && x.state === "completed" && !x.asyncTaskId.startsWith("autonomous-turn-"))'
has async-tasks "an autonomous turn (taskType turn) spawned and completed" \
  'u.some((x) => x.sessionUpdate === "async_task_spawned" && x.taskType === "turn") && u.some((x) => x.sessionUpdate === "async_task_state_update" && x.asyncTaskId.startsWith("autonomous-turn-") && x.state === "completed")'
has async-tasks "a usage_update with _claude/origin kind task-notification" \
  'u.some((x) => x.sessionUpdate === "usage_update" && x._meta?.["_claude/origin"]?.kind === "task-notification")'
has async-tasks "the model answered the notification" \
  'u.some((x) => x.sessionUpdate === "agent_message_chunk" && /finished/.test(x.content?.text || ""))'
[[ $(cat "$WORK/async-tasks/proj/bg.txt" 2>/dev/null) = done ]] && ok "async-tasks: bg.txt = done" || bad "async-tasks: bg.txt = done"

record async-task-stop "start a long background job" --stop-task --stop-after-ms 1500 --linger 30 --grace-ms 3000
has async-task-stop "the client sent _session/async_task/stop and it answered {stopped: true}" \
  'm.some((e) => e.dir === "sent" && e.msg.method === "_session/async_task/stop") && m.some((e) => e.dir === "answered" && e.msg.result?.stopped === true)'
has async-task-stop "the task settled stopped" 'u.some((x) => x.sessionUpdate === "async_task_state_update" && x.state === "stopped")'

ASK_CONTENT='{"question_0":"Green","question_1":["Unit tests","End to end"],"question_1_custom":"Benchmarks"}'
record ask-user-question "ask me two questions" --elicit accept --elicit-content "$ASK_CONTENT"
has ask-user-question "elicitation/create in form mode, tied to the tool call" \
  'm.some((e) => e.msg.method === "elicitation/create" && e.msg.params.mode === "form" && e.msg.params.toolCallId)'
has ask-user-question "the answer reached the model (quoted in the final text)" \
  'u.some((x) => x.sessionUpdate === "agent_message_chunk" && /Green/.test(x.content?.text || "")) && m.some((e) => JSON.stringify(e.msg).includes("Benchmarks") && e.dir === "answered")'

record ask-user-question-decline "ask me a question" --elicit decline
has ask-user-question-decline "elicitation/create sent and answered decline" \
  'm.some((e) => e.msg.method === "elicitation/create") && m.some((e) => e.dir === "sent" && e.msg.result?.action === "decline")'

# Cancelled while the question is open (the client never answers): the agent withdraws its
# request with $/cancel_request and the turn ends cancelled.
EXPECT_RC=3 record ask-user-question-cancel "ask me a question" --elicit none --cancel-after-ms 1000
has ask-user-question-cancel "session/cancel sent while elicitation/create was open" \
  'm.some((e) => e.msg.method === "elicitation/create") && m.some((e) => e.dir === "sent" && e.msg.method === "session/cancel")'
has ask-user-question-cancel "the agent withdrew it: \$/cancel_request with the elicitation's id" \
  'm.some((e) => e.dir === "answered" && e.msg.method === "$/cancel_request" && e.msg.params.requestId === m.find((x) => x.msg.method === "elicitation/create").msg.id)'

if "$NODE" -e 'const l = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  process.exit(l.some((e) => e.unhandled) ? 1 : 0)' "$WORK/requests.jsonl"; then
  ok "the model server saw no request it does not serve"
else
  bad "the model server saw a request it does not serve"
fi
if grep -l -e "$WORK" -e "${WORK##*/}" -e "${WORK##*.}" -e "acp-desk-rec" "$OUT"/claude-agent-acp-"$VERSION"-*.jsonl >/dev/null 2>&1; then
  bad "a recording still names the temp folder"
else
  ok "no recording names the temp folder"
fi
echo "$PASS passed, $FAIL failed"
[[ $FAIL = 0 ]]
