#!/usr/bin/env bash
# A real third-party ACP agent (@zed-industries/claude-code-acp, which runs the real Claude Code
# CLI) driven through acp-desk-cli, its model API replaced by a scripted local server
# (fake-anthropic.mjs). See README.md in this folder.
#
# Env:
#   ACP_DESK_CLI        the CLI binary (default target/debug/acp-desk-cli, relative to the repo root)
#   EXPECT_CLIENT_FS    1 (default): fs/terminal must go through the client (ACP Desk advertises
#                       and serves them); 0: the agent must use its own tools; auto: report which,
#                       assert neither
#   RUN_PROBE           1 (default): also run the rig self-check with probe-client.mjs (a minimal
#                       client that advertises fs/terminal); 0: skip it
#   RECORD_TRANSCRIPTS  1: write the CLI's --json output per scenario to transcripts/ (sanitized)
#   SKIP_NPM_CI         1: skip `npm ci` (node_modules already installed)
#   KEEP_WORK           1: keep the temp folder (printed) for inspection
#   REAL_AGENT_TIMEOUT  seconds one CLI run may take (default 180)
#   REAL_AGENTS_SECRETS how the MCP scenario passes its secrets: `keychain` (stored with
#                       `acp-desk-cli secret set`, named by credential_ref / {"secret": REF}; needs
#                       a Secret Service: run under tests/keychain/run.sh), `plain` (literal headers
#                       and env values in the settings), `auto` (default: keychain when the run is
#                       inside tests/keychain/run.sh, else plain)
# Prints `ok - …` / `FAIL - …` per check and a closing line `N passed, N failed`; exits 1 on any
# failure, 2 when the rig cannot start.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CLI=${ACP_DESK_CLI:-target/debug/acp-desk-cli}
[[ $CLI = /* ]] || CLI=$ROOT/$CLI
EXPECT=${EXPECT_CLIENT_FS:-1}
RUN_PROBE=${RUN_PROBE:-1}
RECORD=${RECORD_TRANSCRIPTS:-0}
TIMEOUT=${REAL_AGENT_TIMEOUT:-180}
NODE=$(command -v node || true)

START=$(date +%s.%N)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/acp-desk-real-agents.XXXXXX")
# Every process this script starts (other than the model server) carries this variable, so the
# cleanup can find exactly them, and only them, through /proc, whatever process group they are in.
MARK="ACP_DESK_REAL_AGENTS_RUN=$WORK"
SERVER_PID=
MCP_PID=

# shellcheck source=tests/real-agents/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cleanup() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null
  [[ -n $MCP_PID ]] && kill "$MCP_PID" 2>/dev/null
  end_marked
  [[ -n $SERVER_PID ]] && wait "$SERVER_PID" 2>/dev/null
  if [[ ${KEEP_WORK:-0} = 1 ]]; then echo "# kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PASS=0
FAIL=0
ok() {
  PASS=$((PASS + 1))
  echo "ok - $*"
}
bad() {
  FAIL=$((FAIL + 1))
  echo "FAIL - $*"
}
check() { # check DESCRIPTION COMMAND...
  local d=$1
  shift
  if "$@"; then ok "$d"; else bad "$d"; fi
}
q() { "$NODE" "$HERE/jsonl.mjs" "$@"; }
# Runs a command in the background and waits: a signal to this script is then handled at once
# (bash defers traps while a foreground child runs).
fg() {
  "$@" &
  wait $!
}
die() {
  echo "real-agents: $*" >&2
  echo "0 passed, 1 failed"
  exit 2
}

[[ -n $NODE ]] || die "node not found (Node.js 20+ needed)"
[[ -x $CLI ]] || die "no CLI at $CLI (build it: cargo build -p acp-desk-cli -p acp-desk-demo-agent -p acp-desk-core --bins, or set ACP_DESK_CLI)"

if [[ ${SKIP_NPM_CI:-0} != 1 ]]; then
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >"$WORK/npm.log" 2>&1 ||
    { cat "$WORK/npm.log" >&2; die "npm ci failed"; }
fi
AGENT_JS=$HERE/node_modules/@zed-industries/claude-code-acp/dist/index.js
[[ -f $AGENT_JS ]] || die "claude-code-acp is not installed in $HERE/node_modules"
AGENT_VERSION=$(q get "$HERE/node_modules/@zed-industries/claude-code-acp/package.json" version)
CLAUDE_VERSION=$(q get "$HERE/node_modules/@anthropic-ai/claude-agent-sdk/package.json" claudeCodeVersion)
echo "# claude-code-acp $AGENT_VERSION (Claude Code $CLAUDE_VERSION), node $("$NODE" --version), CLI $CLI"
echo "# EXPECT_CLIENT_FS=$EXPECT"

# --- the model server ---------------------------------------------------------------------------
"$NODE" "$HERE/fake-anthropic.mjs" --port-file "$WORK/port" --log "$WORK/requests.jsonl" \
  --tools-dump "$WORK/tools-offered" >"$WORK/server.out" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
[[ -s $WORK/port ]] || die "the fake model server did not start: $(cat "$WORK/server.out")"
PORT=$(cat "$WORK/port")

mkdir -p "$WORK/home"
# A clean environment: nothing of the user's (API keys, Claude settings, CLAUDECODE, proxies) leaks in.
agent_env=(
  env -i "PATH=$PATH" "HOME=$WORK/home" "TMPDIR=$WORK" "LANG=C.UTF-8" "$MARK"
  "ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT" "ANTHROPIC_API_KEY=test"
  "DISABLE_TELEMETRY=1" "DISABLE_AUTOUPDATER=1" "DISABLE_ERROR_REPORTING=1"
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1" "IS_SANDBOX=1"
  # A broken model server should fail a scenario in seconds, not after ten backed-off retries.
  "CLAUDE_CODE_MAX_RETRIES=1" "API_TIMEOUT_MS=60000"
  "ACP_DESK_CONFIG_DIR=$WORK/acp-desk-config" "ACP_DESK_DATA_DIR=$WORK/acp-desk-data"
  "ACP_DESK_LOG=${ACP_DESK_LOG:-debug}"
)

# --- helpers ------------------------------------------------------------------------------------
EDIT_BEFORE=$'title: test\ncolour = red\nend\n'
EDIT_AFTER=$'title: test\ncolour = blue\nend\n'
NOTES=$'secret-token-42\n'

new_project() { # new_project DIR
  mkdir -p "$1"
  printf '%s' "$NOTES" >"$1/notes.txt"
  printf '%s' "$EDIT_BEFORE" >"$1/edit.txt"
}
snapshot() { (cd "$1" && find . -print0 | sort -z | xargs -0 -I{} sh -c 'if [ -f "{}" ]; then sha256sum "{}"; else echo "dir {}"; fi'); }
file_is() { [[ -f $1 && "$(cat "$1"; echo x)" == "$2"x ]]; }
text_of() { q text "$1"; }
contains() { [[ $1 == *"$2"* ]]; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
stop_reason() { q stop "$1"; }
# Every settled permission chose the option of kind $2 offered by its request.
settled_by_kind() { q settled "$1" "$2"; }
# The tool names the agent ran, as claude-code-acp reports them in tool_call `_meta.claudeCode.toolName`.
tool_names() { q tools "$1"; }
no_leftovers() {
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    [[ -z $(marked_pids) ]] && return 0
    sleep 0.2
  done
  echo "# left running: $(marked_pids | tr '\n' ' ')" >&2
  return 1
}
# Checks which path fs/terminal took. $2: the tools the scenario uses (Read Edit Write Bash).
check_route() {
  local out=$1 label=$2
  shift 2
  local names
  names=$(tool_names "$out")
  local t via_client=1 via_agent=1
  for t in "$@"; do
    contains " $names" " mcp__acp__$t " || via_client=0
    contains " $names" " $t " || via_agent=0
  done
  if [[ $via_client = 1 && " $*" == *" Bash"* && $label != reject/* ]]; then
    # A client terminal shows up as terminal content on the tool call (none when refused).
    q has-terminal "$out" || via_client=0
  fi
  case $EXPECT in
    1) check "$label: fs/terminal went through the client (tools: $names)" test $via_client = 1 ;;
    0) check "$label: the agent used its own tools (tools: $names)" test $via_agent = 1 ;;
    *) if [[ $via_client = 1 ]]; then
         echo "# $label: fs/terminal went through the client (tools: $names)"
       elif [[ $via_agent = 1 ]]; then
         echo "# $label: the agent used its own tools, not the client's fs/terminal (tools: $names)"
       else
         bad "$label: expected tools $* not seen (tools: $names)"
       fi ;;
  esac
}

# pty_run LOG STEPS CMD...: CMD in a pty (util-linux script), its output in LOG; STEPS holds lines
# `TEXT<TAB>KEYS`: once LOG holds TEXT, KEYS (printf escapes) are typed. Sets PTY_RC.
pty_run() {
  local log=$1 steps=$2 fd want keys sp n
  shift 2
  local cmdline
  printf -v cmdline '%q ' "$@"
  : >"$log"
  rm -f "$log.in" && mkfifo "$log.in"
  # `exec env`: script runs "$SHELL -c"; dash (CI's /bin/sh) forks instead of exec'ing, and then
  # timeout's own process group is a background one: the CLI's read of the tty stops it (SIGTTIN).
  script -qfec "exec env $cmdline" "$log" <"$log.in" >/dev/null 2>&1 &
  sp=$!
  exec {fd}>"$log.in"
  while IFS=$'\t' read -r want keys; do
    for n in $(seq 900); do
      grep -qaF -- "$want" "$log" && break
      kill -0 "$sp" 2>/dev/null || break
      sleep 0.1
    done
    if ! grep -qaF -- "$want" "$log"; then
      echo "# pty: never saw «$want»; last output:" && tail -c 600 "$log" | tr -cd '[:print:]\n' | tail -n 5 | sed 's/^/#   /'
      kill "$sp" 2>/dev/null
      break
    fi
    sleep 0.7
    # shellcheck disable=SC2059 # the keys are printf escapes on purpose
    [[ -n $keys ]] && printf "$keys" >&"$fd"
  done <"$steps"
  wait "$sp"
  PTY_RC=$?
  exec {fd}>&-
  rm -f "$log.in"
}
record() { # record OUT NAME
  [[ $RECORD = 1 ]] || return 0
  mkdir -p "$HERE/transcripts"
  q sanitize "$1" "$2" "$WORK" "$HERE" >"$HERE/transcripts/$2.jsonl"
}

# run_cli MODE NAME PROMPT: fresh project in $WORK/MODE-NAME/proj; sets OUT, ERR, RC, PROJ, BEFORE.
run_cli() {
  local mode=$1 name=$2 prompt=$3
  local dir=$WORK/$mode-$name
  PROJ=$dir/proj
  OUT=$dir/out.jsonl
  ERR=$dir/stderr.log
  new_project "$PROJ"
  BEFORE=$(snapshot "$PROJ")
  local t0 t1
  t0=$(date +%s.%N)
  fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" run --cwd "$PROJ" --permission "$mode" --json \
    --turn-idle-timeout 60 --agent-command "node '$AGENT_JS'" "$prompt" >"$OUT" 2>"$ERR"
  RC=$?
  t1=$(date +%s.%N)
  echo "# $mode/$name: exit $RC in $(elapsed "$t0" "$t1") s"
  check "$mode/$name: CLI exit 0 and the turn ended end_turn" test "$RC:$(stop_reason "$OUT")" = "0:end_turn"
  check "$mode/$name: no agent process outlived the CLI" no_leftovers
  if [[ $RC != 0 ]]; then
    echo "# last stderr lines:" && tail -n 15 "$ERR" | sed 's/^/#   /'
  fi
  record "$OUT" "claude-code-acp-$mode-$name"
}

# --- agents check: it starts, answers initialize and says who it is -----------------------------
CHECK=$WORK/check
mkdir -p "$CHECK"
t0=$(date +%s.%N)
fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" agents check --json --timeout 60 \
  --agent-command "node '$AGENT_JS'" >"$CHECK/report.json" 2>"$CHECK/stderr.log"
RC=$?
echo "# check: exit $RC in $(elapsed "$t0" "$(date +%s.%N)") s: $(head -c 600 "$CHECK/report.json")"
check "check: exit 0 and ok" test "$RC:$(q get "$CHECK/report.json" ok)" = "0:true"
check "check: agent name and version reported" \
  test "$(q get "$CHECK/report.json" agentName) $(q get "$CHECK/report.json" agentVersion)" = "@zed-industries/claude-code-acp $AGENT_VERSION"
check "check: protocol version 1" test "$(q get "$CHECK/report.json" protocolVersion)" = 1
check "check: auth methods listed [$(q auth-ids "$CHECK/report.json")]" contains " $(q auth-ids "$CHECK/report.json")" " claude-login "
check "check: capabilities as sent (loadSession, sessionCapabilities.resume)" \
  eval 'q has-cap "$CHECK/report.json" loadSession && q has-cap "$CHECK/report.json" sessionCapabilities.resume'
# claude-code-acp 0.16.2 (dist/acp-agent.js initialize) advertises both: every MCP server type
# ACP Desk has reaches it, and the MCP scenario below expects none skipped.
check "check: mcpCapabilities http and sse advertised" \
  eval 'q has-cap "$CHECK/report.json" mcpCapabilities.http && q has-cap "$CHECK/report.json" mcpCapabilities.sse'
check "check: no agent process outlived the check" no_leftovers
[[ $RC = 0 ]] || { echo "# stderr:" && tail -n 15 "$CHECK/stderr.log" | sed 's/^/#   /'; }
fg "${agent_env[@]}" "$CLI" agents check --timeout 60 --agent-command "node '$AGENT_JS'" >"$CHECK/human.txt" 2>&1
check "check: the human report names the agent and its steps" \
  eval 'grep -q "^initialize .* ok$" "$CHECK/human.txt" && grep -q "^agent: *@zed-industries/claude-code-acp (Claude Code) $AGENT_VERSION" "$CHECK/human.txt"'

# --- through acp-desk-cli: --permission allow ---------------------------------------------------
run_cli allow read "read notes.txt"
check "allow/read: the file's content is in the agent's final text" contains "$(text_of "$OUT")" "secret-token-42"
check "allow/read: the project is unchanged" test "$(snapshot "$PROJ")" = "$BEFORE"
check_route "$OUT" "allow/read" Read

run_cli allow write "write new.txt"
check "allow/write: new.txt has the model's content" file_is "$PROJ/new.txt" $'written by the fake model\n'
check "allow/write: the permission was answered with its allow_once option" settled_by_kind "$OUT" allow_once
check_route "$OUT" "allow/write" Write

run_cli allow edit "edit edit.txt"
check "allow/edit: edit.txt was edited (red -> blue, other lines kept)" file_is "$PROJ/edit.txt" "$EDIT_AFTER"
check "allow/edit: the permission was answered with its allow_once option" settled_by_kind "$OUT" allow_once
check_route "$OUT" "allow/edit" Read Edit

run_cli allow run "run a shell command"
check "allow/run: out.txt was written by the shell command" file_is "$PROJ/out.txt" $'hi-from-bash\n'
check "allow/run: the command's output is in the agent's final text" contains "$(text_of "$OUT")" "hi-from-bash"
check "allow/run: the permission was answered with its allow_once option" settled_by_kind "$OUT" allow_once
check_route "$OUT" "allow/run" Bash

# --- checkpoints (issue 20): one turn edits a file, writes one, and a shell command writes another;
# undoing the turn puts the folder back byte for byte -------------------------------------------
run_cli allow undo "change the project three ways"
check "allow/undo: the turn changed all three (edit.txt, new.txt, out.txt)" \
  eval 'file_is "$PROJ/edit.txt" "$EDIT_AFTER" && file_is "$PROJ/new.txt" $'"'"'written by the fake model\n'"'"' && file_is "$PROJ/out.txt" $'"'"'hi-from-bash\n'"'"''
UNDO_ID=$(fg "${agent_env[@]}" "$CLI" history list 2>/dev/null | awk -F'\t' -v p="$PROJ" '$5 == p { print $1; exit }')
fg "${agent_env[@]}" "$CLI" changes "$UNDO_ID" --turn 1 --json >"$WORK/allow-undo/changes.json" 2>"$WORK/allow-undo/changes.err"
check "allow/undo: changes lists the three files [$(q paths "$WORK/allow-undo/changes.json")]" \
  test "$(q paths "$WORK/allow-undo/changes.json")" = "edit.txt new.txt out.txt"
fg "${agent_env[@]}" "$CLI" revert "$UNDO_ID" --turn 1 >"$WORK/allow-undo/revert.out" 2>"$WORK/allow-undo/revert.err"
RC=$?
check "allow/undo: revert --turn 1 exit 0 [$(tail -n 1 "$WORK/allow-undo/revert.err" "$WORK/allow-undo/revert.out" | tr '\n' ' ')]" test "$RC" = 0
check "allow/undo: the folder is byte for byte as before the turn (hashes of every file)" test "$(snapshot "$PROJ")" = "$BEFORE"

# --- through acp-desk-cli: --permission reject: nothing may be written --------------------------
for sc in "write:write new.txt:Write" "edit:edit edit.txt:Read Edit" "run:run a shell command:Bash"; do
  IFS=: read -r name prompt tools <<<"$sc"
  run_cli reject "$name" "$prompt"
  # shellcheck disable=SC2086 # $tools is a list of tool names
  check_route "$OUT" "reject/$name" $tools
  check "reject/$name: nothing written (project unchanged)" test "$(snapshot "$PROJ")" = "$BEFORE"
  check "reject/$name: the permission was answered with its reject_once option" settled_by_kind "$OUT" reject_once
done

# --- continuing a stored session: run --continue with session/resume, then with session/load ----
# A first turn recorded into the history, then two continuations of it; the model's request in
# each continued turn must carry the first turn's prompt (the agent really has the conversation).
CONT=$WORK/continue
PROJ=$CONT/proj
new_project "$PROJ"
FIRST="my favourite fruit is the quince"
fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" run --cwd "$PROJ" --permission reject --json \
  --turn-idle-timeout 60 --agent-command "node '$AGENT_JS'" "$FIRST" >"$CONT/first.jsonl" 2>"$CONT/first.err"
RC=$?
check "continue: the first turn ended end_turn" test "$RC:$(stop_reason "$CONT/first.jsonl")" = "0:end_turn"
SID=$(q session "$CONT/first.jsonl")
ADVERTISED=" $(q advertised "$CONT/first.jsonl") "
check "continue: the agent advertised session/load [$ADVERTISED]" contains "$ADVERTISED" " load "
check "continue: the agent advertised session/resume [$ADVERTISED]" contains "$ADVERTISED" " resume "
for sc in "auto:resumed" "load:loaded"; do
  IFS=: read -r via outcome <<<"$sc"
  prompt="what did I say first? ($via)"
  fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" run --continue "$SID" --continue-via "$via" \
    --permission reject --json --turn-idle-timeout 60 "$prompt" >"$CONT/$via.jsonl" 2>"$CONT/$via.err"
  RC=$?
  check "continue/$via: the continued turn ended end_turn" test "$RC:$(stop_reason "$CONT/$via.jsonl")" = "0:end_turn"
  check "continue/$via: stderr says it was $outcome" grep -q "continuing $SID: $outcome" "$CONT/$via.err"
  check "continue/$via: the model's request carries the first turn's prompt" q carries "$WORK/requests.jsonl" "$prompt" "$FIRST"
  # The scripted model answered the first prompt "No scripted scenario for: <prompt>".
  check "continue/$via: the model's request carries the first turn's answer" \
    q carries-answer "$WORK/requests.jsonl" "$prompt" "No scripted scenario for: $FIRST"
  check "continue/$via: no agent process outlived the CLI" no_leftovers
  if [[ $RC != 0 ]]; then
    echo "# last stderr lines:" && tail -n 15 "$CONT/$via.err" | sed 's/^/#   /'
  fi
done
fg "${agent_env[@]}" "$CLI" history show "$SID" --json >"$CONT/stored.jsonl" 2>"$CONT/stored.err"
check "continue: history show holds the three turns under one id, no replayed prompt" \
  test "$(q count "$CONT/stored.jsonl" turn-start):$(q count "$CONT/stored.jsonl" user-message-delta)" = "3:0"

# --- MCP servers from ACP Desk's settings reach claude-code-acp -----------------------------------
# A stdio, an http and an sse server (mcp-record-server.mjs) configured in ACP Desk's settings; the
# scripted model calls every MCP tool it is offered. Asserted where it arrives: what each server
# recorded (its argv and env, the Authorization header of every HTTP request, the MCP methods),
# the tool results in the model's final text, ACP Desk's `mcp-servers` report, and a continued
# session starting the servers again. The secrets must appear nowhere ACP Desk writes.
MCP=$WORK/mcp
mkdir -p "$MCP"
SECRETS=${REAL_AGENTS_SECRETS:-auto}
if [[ $SECRETS = auto ]]; then
  if [[ -n ${ACP_DESK_KEYCHAIN_HARNESS:-} ]]; then SECRETS=keychain; else SECRETS=plain; fi
fi
echo "# mcp: secrets passed as $SECRETS"
"$NODE" "$HERE/mcp-record-server.mjs" http --record "$MCP/http.jsonl" --port-file "$MCP/port" \
  >"$MCP/http-server.out" 2>&1 &
MCP_PID=$!
for _ in $(seq 100); do [[ -s $MCP/port ]] && break; sleep 0.1; done
if [[ ! -s $MCP/port ]]; then
  bad "mcp: the recording MCP server did not start: $(cat "$MCP/http-server.out")"
else
  MCP_PORT=$(cat "$MCP/port")
  HTTP_TOKEN="http-token-$RANDOM$RANDOM$RANDOM"
  SSE_TOKEN="sse-token-$RANDOM$RANDOM$RANDOM"
  STDIO_VALUE="stdio-value-$RANDOM$RANDOM$RANDOM"
  mcp_env=("${agent_env[@]}")
  if [[ $SECRETS = keychain ]]; then
    # The session bus of the harness's unlocked keyring (env -i drops it otherwise).
    mcp_env+=("DBUS_SESSION_BUS_ADDRESS=${DBUS_SESSION_BUS_ADDRESS:-}")
    # The http credential a bare token (→ Authorization: Bearer), the sse one a JSON object of
    # headers: both forms the seed allows.
    printf '%s' "$HTTP_TOKEN" | "${mcp_env[@]}" "$CLI" secret set real-agents-http >"$MCP/secret.log" 2>&1
    check "mcp: secret set real-agents-http" test $? = 0
    printf '{"Authorization": "Bearer %s"}' "$SSE_TOKEN" | "${mcp_env[@]}" "$CLI" secret set real-agents-sse >>"$MCP/secret.log" 2>&1
    check "mcp: secret set real-agents-sse" test $? = 0
    printf '%s' "$STDIO_VALUE" | "${mcp_env[@]}" "$CLI" secret set real-agents-stdio >>"$MCP/secret.log" 2>&1
    check "mcp: secret set real-agents-stdio" test $? = 0
    http_auth='"credential_ref": "real-agents-http"'
    sse_auth='"credential_ref": "real-agents-sse"'
    stdio_token='{"secret": "real-agents-stdio"}'
  else
    http_auth="\"headers\": {\"Authorization\": \"Bearer $HTTP_TOKEN\"}"
    sse_auth="\"headers\": {\"Authorization\": \"Bearer $SSE_TOKEN\"}"
    stdio_token="\"$STDIO_VALUE\""
  fi
  STDIO_RECORD=$MCP/stdio.jsonl
  mkdir -p "$WORK/acp-desk-config"
  cat >"$WORK/acp-desk-config/settings.json" <<JSON
{
  "mcp_servers": {
    "recstdio": {
      "command": "$NODE",
      "args": ["$HERE/mcp-record-server.mjs", "stdio", "--record", "$STDIO_RECORD", "--env", "REC_TOKEN", "--tool", "probe_stdio", "an arg with spaces"],
      "env": {"REC_TOKEN": $stdio_token}
    },
    "rechttp": {"url": "http://127.0.0.1:$MCP_PORT/mcp", $http_auth},
    "recsse": {"type": "sse", "url": "http://127.0.0.1:$MCP_PORT/sse", $sse_auth}
  }
}
JSON
  agent_env_saved=("${agent_env[@]}")
  agent_env=("${mcp_env[@]}")
  run_cli allow mcp "call the mcp tools"
  MCP_OUT=$OUT MCP_ERR=$ERR
  want_argv="[\"stdio\",\"--record\",\"$STDIO_RECORD\",\"--env\",\"REC_TOKEN\",\"--tool\",\"probe_stdio\",\"an arg with spaces\"]"
  check "mcp/stdio: started with the configured args, verbatim" \
    test "$(q mcp-start "$STDIO_RECORD" | head -1)" = "$want_argv"
  check "mcp/stdio: its env had the configured value" \
    test "$(q mcp-start "$STDIO_RECORD" | sed -n 2p)" = "{\"REC_TOKEN\":\"$STDIO_VALUE\"}"
  check "mcp/stdio: initialize, tools/list, tools/call [$(q mcp-methods "$STDIO_RECORD" stdio)]" \
    eval 'contains " $(q mcp-methods "$STDIO_RECORD" stdio)" " initialize notifications/initialized tools/list " && contains "$(q mcp-methods "$STDIO_RECORD" stdio)" "tools/call "'
  for t in http sse; do
    token=$HTTP_TOKEN
    [[ $t = sse ]] && token=$SSE_TOKEN
    check "mcp/$t: every request carried the configured Authorization" \
      test "$(q mcp-auth "$MCP/http.jsonl" $t)" = "Bearer $token"
    check "mcp/$t: initialize, tools/list, tools/call [$(q mcp-methods "$MCP/http.jsonl" $t)]" \
      eval 'contains " $(q mcp-methods "$MCP/http.jsonl" '$t')" " initialize notifications/initialized tools/list " && contains "$(q mcp-methods "$MCP/http.jsonl" '$t')" "tools/call "'
  done
  for r in "probe_stdio answered via stdio" "probe answered via http" "probe answered via sse"; do
    check "mcp: the model got \"$r\"" contains "$(text_of "$MCP_OUT")" "$r"
  done
  check "mcp: ACP Desk reported all three passed [$(q mcp-report "$MCP_OUT")]" \
    test "$(q mcp-report "$MCP_OUT")" = "rechttp:http:true recsse:sse:true recstdio:stdio:true "
  # A continued session gets them again (claude-code-acp resumes: session/resume with mcpServers).
  SID=$(q session "$MCP_OUT")
  fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" run --continue "$SID" --permission allow --json \
    --turn-idle-timeout 60 "call the mcp tools again" >"$MCP/continue.jsonl" 2>"$MCP/continue.err"
  RC=$?
  check "mcp/continue: the continued turn ended end_turn" test "$RC:$(stop_reason "$MCP/continue.jsonl")" = "0:end_turn"
  check "mcp/continue: the stdio server was started again, with the same env" \
    test "$(grep -c '"event":"start"' "$STDIO_RECORD"):$(grep -c "\"REC_TOKEN\":\"$STDIO_VALUE\"" "$STDIO_RECORD")" = "2:2"
  check "mcp/continue: the model got every tool's answer again" \
    eval 'contains "$(text_of "$MCP/continue.jsonl")" "probe_stdio answered via stdio" && contains "$(text_of "$MCP/continue.jsonl")" "probe answered via sse"'
  check "mcp/continue: the http servers saw the credential only as configured" \
    test "$(q mcp-auth "$MCP/http.jsonl" http)|$(q mcp-auth "$MCP/http.jsonl" sse)" = "Bearer $HTTP_TOKEN|Bearer $SSE_TOKEN"
  check "mcp/continue: no agent process outlived the CLI" no_leftovers
  # Nowhere ACP Desk wrote (data: history, audit, logs; events and stderr) holds a secret; with the
  # keychain, not the settings either. The servers' own records are the request side.
  places=("$WORK/acp-desk-data" "$MCP_OUT" "$MCP_ERR" "$MCP/continue.jsonl" "$MCP/continue.err")
  [[ $SECRETS = keychain ]] && places+=("$WORK/acp-desk-config" "$MCP/secret.log")
  leaks=$(grep -rlaF -e "$HTTP_TOKEN" -e "$SSE_TOKEN" -e "$STDIO_VALUE" "${places[@]}" 2>/dev/null | sed "s|$WORK/||" | tr '\n' ' ')
  check "mcp: no secret in ACP Desk's files, events or logs${leaks:+ (found in: $leaks)}" test -z "$leaks"
  agent_env=("${agent_env_saved[@]}")
  rm -f "$WORK/acp-desk-config/settings.json"
  if [[ $RUN_PROBE = 1 ]]; then
    # Rig self-check: the same servers straight from a minimal client, so a failure above that
    # this passes is ACP Desk's, not the rig's.
    PROBE_STDIO=$MCP/probe-stdio.jsonl
    cat >"$MCP/probe-servers.json" <<JSON
[
  {"name": "recstdio", "command": "$NODE", "args": ["$HERE/mcp-record-server.mjs", "stdio", "--record", "$PROBE_STDIO", "--env", "REC_TOKEN", "--tool", "probe_stdio"], "env": [{"name": "REC_TOKEN", "value": "$STDIO_VALUE"}]},
  {"type": "http", "name": "rechttp", "url": "http://127.0.0.1:$MCP_PORT/mcp", "headers": [{"name": "Authorization", "value": "Bearer $HTTP_TOKEN"}]},
  {"type": "sse", "name": "recsse", "url": "http://127.0.0.1:$MCP_PORT/sse", "headers": [{"name": "Authorization", "value": "Bearer $SSE_TOKEN"}]}
]
JSON
    mkdir -p "$MCP/probe-proj"
    fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$NODE" "$HERE/probe-client.mjs" --cwd "$MCP/probe-proj" --permission allow \
      --calls "$MCP/probe-calls.jsonl" --mcp-servers "$MCP/probe-servers.json" -- "$NODE" "$AGENT_JS" -- "call the mcp tools" \
      >"$MCP/probe-text.txt" 2>"$MCP/probe.err"
    check "probe/mcp: exit 0 (end_turn)" test $? = 0
    check "probe/mcp: every tool answered" \
      eval 'grep -q "probe_stdio answered via stdio" "$MCP/probe-text.txt" && grep -q "probe answered via http" "$MCP/probe-text.txt" && grep -q "probe answered via sse" "$MCP/probe-text.txt"'
    check "probe/mcp: the stdio server got its env" test "$(q mcp-start "$PROBE_STDIO" | sed -n 2p)" = "{\"REC_TOKEN\":\"$STDIO_VALUE\"}"
    check "probe/mcp: no agent process outlived the probe client" no_leftovers
  fi
  kill "$MCP_PID" 2>/dev/null
  wait "$MCP_PID" 2>/dev/null
  MCP_PID=
fi

# --- claude-agent-acp 0.101.0: background tasks and AskUserQuestion (issue 19) ------------------
# The pinned @agentclientprotocol/claude-agent-acp publishes background work as AIR async tasks
# (only for a client that advertises `_meta.jetbrains.air` asyncTasks) and asks AskUserQuestion
# through elicitation/create (only for a client with `elicitation.form`). Each run goes through
# wire-tap.mjs, so what ACP Desk advertised is read from the wire.
AIR_PKG=$HERE/node_modules/@agentclientprotocol/claude-agent-acp
AIR_JS=$AIR_PKG/dist/index.js
if [[ ${RUN_AIR:-1} = 1 && -f $AIR_JS ]]; then
  AIR_VERSION=$(q get "$AIR_PKG/package.json" version)
  echo "# claude-agent-acp $AIR_VERSION"
  # --wait-tasks SECONDS: the CLI keeps the session open after the turn while tasks run (and for
  # the autonomous cycle that follows), when it has the option.
  WAIT_TASKS=()
  "$CLI" run --help 2>&1 | grep -q -- '--wait-tasks' && WAIT_TASKS=(--wait-tasks 60)
  [[ ${#WAIT_TASKS[@]} = 0 ]] && echo "# acp-desk-cli run has no --wait-tasks: the autonomous cycle is not waited for"
  evq() { q holds "$OUT" "$1"; } # an expression over the transcript's events `e`
  # run_air NAME PROMPT [CLI OPTIONS...]: sets OUT, ERR, RC, PROJ, AIR_WIRE.
  run_air() {
    local name=$1 prompt=$2
    shift 2
    local dir=$WORK/air-$name
    PROJ=$dir/proj OUT=$dir/out.jsonl ERR=$dir/stderr.log AIR_WIRE=$dir/wire.jsonl
    new_project "$PROJ"
    local t0=$(date +%s.%N)
    fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" run --cwd "$PROJ" --permission allow --json \
      --turn-idle-timeout 60 "$@" --agent-command "node '$HERE/wire-tap.mjs' '$AIR_WIRE' -- node '$AIR_JS'" \
      "$prompt" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    echo "# air/$name: exit $RC in $(elapsed "$t0" "$(date +%s.%N)") s"
    check "air/$name: CLI exit 0 and the turn ended end_turn" test "$RC:$(stop_reason "$OUT")" = "0:end_turn"
    check "air/$name: no agent process (nor its background command) outlived the CLI" no_leftovers
    [[ $RC = 0 ]] || { echo "# last stderr lines:" && tail -n 15 "$ERR" | sed 's/^/#   /'; }
  }

  run_air bg-done "start a background job that finishes" "${WAIT_TASKS[@]}"
  check "air: ACP Desk advertised _meta.jetbrains.air asyncTasks (version 1) and elicitation.form" \
    q holds "$AIR_WIRE" 'e.some((l) => { const c = l.sent?.method === "initialize" && l.sent.params.clientCapabilities;
      return c && c._meta?.jetbrains?.air?.version === 1 && c._meta.jetbrains.air.capabilities?.includes("asyncTasks") && !!c.elicitation?.form; })'
  TASK=$(evq 'e.find((x) => x.kind === "background-task" && x.phase === "started" && x.task.taskKind === "shell")?.task.taskId')
  check "air/bg-done: a background-task started: a shell task, stoppable, tied to its Bash tool call [$TASK]" \
    evq 'e.some((x) => x.kind === "background-task" && x.phase === "started" && x.task.taskKind === "shell" && x.task.canStop === true && !!x.task.toolCallId)'
  SETTLED='e.find((x) => x.kind === "background-task" && x.phase === "settled" && x.task.taskId === "'$TASK'")'
  check "air/bg-done: its phases in order: started, (updated…), settled, nothing after" \
    evq 'e.filter((x) => x.kind === "background-task" && x.task.taskId === "'$TASK'").map((x) => x.phase).join(" ").match(/^started( updated)* settled$/) !== null'
  OUTPUT_FILE=$(evq "$SETTLED?.task.outputFile")
  check "air/bg-done: the settled task names its output file …/tasks/$TASK.output [${OUTPUT_FILE#$WORK/}]" \
    eval '[[ $OUTPUT_FILE == /*/tasks/$TASK.output ]]'
  if [[ ${#WAIT_TASKS[@]} != 0 ]]; then
    check "air/bg-done: settled with status completed, by the agent [$(evq "JSON.stringify($SETTLED?.task ?? null)" | head -c 400)]" \
      evq "$SETTLED?.task.status === 'completed' && $SETTLED?.task.settledBy === 'agent'"
    check "air/bg-done: the output file exists" test -f "$OUTPUT_FILE"
    check "air/bg-done: the command ran: bg.txt = done" file_is "$PROJ/bg.txt" $'done\n'
    check "air/bg-done: the autonomous cycle: a usage_update with origin task-notification" \
      evq 'e.some((x) => x.kind === "usage_update" && x.origin === "task-notification")'
    check "air/bg-done: … and the model's answer to the notification" contains "$(text_of "$OUT")" "Noted: the background job finished."
    check "air/bg-done: … after our turn ended (its usage_update follows the turn-end)" \
      evq 'e.findIndex((x) => x.kind === "usage_update" && x.origin === "task-notification") > e.findIndex((x) => x.kind === "turn-end")'
  else
    # The CLI ends the session with the turn, before the command's `sleep 2` is over.
    check "air/bg-done: settled at the session's end (no --wait-tasks) [$(evq "JSON.stringify($SETTLED?.task ?? null)" | head -c 400)]" \
      evq "$SETTLED?.task.status === 'stopped' && $SETTLED?.task.settledBy === 'session-end' || ['stopped', 'failed'].includes($SETTLED?.task.status) && $SETTLED?.task.settledBy === 'agent'"
  fi

  # A task still running when the session ends: settled by the end (ACP Desk's, or the agent's
  # own state update when it sends one before it exits); its `sleep 300` must not outlive the CLI.
  run_air bg-long "start a long background job"
  TASK=$(evq 'e.find((x) => x.kind === "background-task" && x.phase === "started" && x.task.taskKind === "shell")?.task.taskId')
  check "air/bg-long: a stoppable shell task started [$TASK]" \
    evq 'e.some((x) => x.kind === "background-task" && x.phase === "started" && x.task.taskKind === "shell" && x.task.canStop === true)'
  SETTLED='e.find((x) => x.kind === "background-task" && x.phase === "settled" && x.task.taskId === "'$TASK'")'
  check "air/bg-long: settled when the session ended [$(evq "JSON.stringify($SETTLED?.task ?? null)" | head -c 300)]" \
    evq "$SETTLED?.task.status === 'stopped' && $SETTLED?.task.settledBy === 'session-end' || ['stopped', 'failed'].includes($SETTLED?.task.status) && $SETTLED?.task.settledBy === 'agent'"
  check "air/bg-long: no running task left: every started task (at least one) settled" \
    evq 'e.filter((x) => x.kind === "background-task" && x.phase === "started").every((s) => e.some((x) => x.kind === "background-task" && x.phase === "settled" && x.task.taskId === s.task.taskId)) && e.some((x) => x.kind === "background-task")'

  # AskUserQuestion with no terminal: the CLI declines; the agent tells the model so.
  run_air ask-decline "ask me a question"
  EL='e.find((x) => x.kind === "elicitation")'
  check "air/ask-decline: an elicitation (form) with the question as its message, tied to the tool call" \
    evq "$EL?.mode === 'form' && $EL?.message === 'Which colour should the header be?' && !!$EL?.toolCallId"
  check "air/ask-decline: its fields in the schema's order: question_0, question_0_custom [$(evq "$EL?.fields?.map((f) => f.name).join(' ')")]" \
    evq "$EL?.fields?.map((f) => f.name).join(' ') === 'question_0 question_0_custom'"
  check "air/ask-decline: question_0 is a select of Blue, Green, not required [$(evq "JSON.stringify($EL?.fields?.[0])" | head -c 300)]" \
    evq "$EL?.fields?.[0]?.type === 'select' && $EL.fields[0].options.map((o) => o.value).join() === 'Blue,Green' && $EL.fields[0].required === false"
  check "air/ask-decline: settled decline (no terminal)" \
    evq 'e.some((x) => x.kind === "elicitation-settled" && x.action === "decline")'
  check "air/ask-decline: on the wire ACP Desk answered {action: decline}" \
    q holds "$AIR_WIRE" 'e.some((l) => l.sent?.result?.action === "decline")'
  check "air/ask-decline: the model was told the user did not answer" contains "$(text_of "$OUT")" "The user did not answer the questions."

  # AskUserQuestion on a terminal (a pty): two questions, one multi-select, answered field by
  # field as the CLI asks them (its prompts on stderr, the --json events to a file).
  ASK=$WORK/air-ask-pty
  mkdir -p "$ASK"
  new_project "$ASK/proj"
  AIR_WIRE=$ASK/wire.jsonl OUT=$ASK/out.jsonl
  printf '%s\t%s\n' 'Answer it (4 fields)?' '\r' 'Colour (optional)' '2\r' \
    'Other (optional) - Type your own answer, or add a note' '\r' 'Checks (optional)' '1, 3\r' \
    'Other (optional) - Type your own answer to add' 'Benchmarks\r' >"$ASK/steps"
  pty_run "$ASK/ask.pty" "$ASK/steps" "${agent_env[@]}" "TERM=xterm-256color" timeout -k 5 "$TIMEOUT" \
    bash -c 'out=$1; shift; exec "$@" >"$out"' run-json "$OUT" \
    "$CLI" run --cwd "$ASK/proj" --permission allow --json --turn-idle-timeout 60 \
    --agent-command "node '$HERE/wire-tap.mjs' '$AIR_WIRE' -- node '$AIR_JS'" "ask me two questions"
  echo "# air/ask-pty: exit $PTY_RC"
  check "air/ask-pty: CLI exit 0 and the turn ended end_turn" test "$PTY_RC:$(stop_reason "$OUT")" = "0:end_turn"
  check "air/ask-pty: the pty showed the question and both questions' choices" \
    eval 'grep -qaF "The agent asks: Please answer the following questions." "$ASK/ask.pty" && grep -qaF "2) Green - Fresh" "$ASK/ask.pty" && grep -qaF "3) End to end - Playwright" "$ASK/ask.pty"'
  check "air/ask-pty: fields question_0, question_0_custom, question_1 (multi-select), question_1_custom [$(evq 'e.find((x) => x.kind === "elicitation")?.fields?.map((f) => f.name + ":" + f.type).join(" ")')]" \
    evq 'e.find((x) => x.kind === "elicitation")?.fields?.map((f) => f.name + ":" + f.type).join(" ") === "question_0:select question_0_custom:string question_1:multi-select question_1_custom:string"'
  check "air/ask-pty: settled accept by the user" \
    evq 'e.some((x) => x.kind === "elicitation-settled" && x.action === "accept" && x.by === "user")'
  check "air/ask-pty: on the wire: accept {question_0: Green, question_1: [Unit tests, End to end], question_1_custom: Benchmarks}" \
    q holds "$AIR_WIRE" 'e.some((l) => { const r = l.sent?.result, c = r?.content || {};
      return r?.action === "accept" && c.question_0 === "Green" && JSON.stringify(c.question_1) === JSON.stringify(["Unit tests", "End to end"]) && c.question_1_custom === "Benchmarks" && Object.keys(c).length === 3; })'
  check "air/ask-pty: the model got the answers (quoted in its reply)" \
    contains "$(text_of "$OUT")" '"Which colour should the header be?"="Green", "Which checks should run before a release?"="Unit tests, End to end, Benchmarks"'
  check "air/ask-pty: no agent process outlived the CLI" no_leftovers
fi

# --- sign-in: ~/.claude.json.backup and no ~/.claude.json (issue 18) -----------------------------
# claude-code-acp 0.16.2 refuses session/new with -32000 in that state (dist/acp-agent.js
# newSession); its one auth method, claude-login, carries `_meta["terminal-auth"]` (node …/cli.js)
# because ACP Desk advertises it, and its `authenticate` throws. Every agent start here goes
# through wire-tap.mjs, so what ACP Desk sent is read from the wire.
SIGN=$WORK/sign-in
mkdir -p "$SIGN/home" "$SIGN/home-offline"
printf '{}\n' >"$SIGN/home/.claude.json.backup"
printf '{}\n' >"$SIGN/home-offline/.claude.json.backup"
WIRE=$SIGN/wire.jsonl
: >"$WIRE"
TAPPED="node '$HERE/wire-tap.mjs' '$WIRE' -- node '$AGENT_JS'"
# claude-code-acp names its cli.js by import.meta.resolve: the real path (node_modules may be a link).
LOGIN_JS=$(cd "$HERE/node_modules/@anthropic-ai/claude-agent-sdk" && pwd -P)/cli.js
# ANTHROPIC_AUTH_TOKEN: Claude Code then skips its connectivity preflight to api.anthropic.com
# (cli.js: VV() is false with a token), which offline ends the login with exit 1 (below).
sign_env=("${agent_env[@]}" "HOME=$SIGN/home" "ANTHROPIC_AUTH_TOKEN=test" "TERM=xterm-256color")
new_project "$SIGN/proj"
fg "${sign_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" run --cwd "$SIGN/proj" --json --agent-command "$TAPPED" \
  "read notes.txt" >"$SIGN/before.jsonl" 2>"$SIGN/before.err"
RC=$?
check "sign-in: not signed in, run exits 1" test $RC = 1
REFUSED=$(q wire-error "$WIRE" session/new)
check "sign-in: on the wire, session/new was answered -32000 [$REFUSED]" test "$REFUSED" = "-32000 Authentication required"
check "sign-in: … which ACP Desk reports as kind auth-required" test "$(q error-kind "$SIGN/before.jsonl")" = auth-required
HOW=$(q auth-how "$SIGN/before.jsonl" claude-login)
check "sign-in: claude-login is a terminal-command running node …/claude-agent-sdk/cli.js [$HOW]" \
  test "$HOW" = "terminal-command node $LOGIN_JS"
check "sign-in: the message names acp-desk-cli auth … --method claude-login" \
  grep -qF "acp-desk-cli auth --agent-command CMD --method claude-login" "$SIGN/before.err"
# No terminal and no --yes: the login's command is not the launch, so nothing runs.
fg "${sign_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" auth --agent-command "$TAPPED" --method claude-login \
  </dev/null >"$SIGN/refused.out" 2>"$SIGN/refused.err"
RC=$?
check "sign-in: without a terminal or --yes the login is refused (exit 2), nothing run" \
  eval 'test $RC = 2 && grep -q "Nothing was run" "$SIGN/refused.err" && test ! -e "$SIGN/home/.claude.json"'
# In a pty: agree, then Claude Code's own onboarding (theme, the API key, security notes, folder
# trust), then /exit.
printf '%s\t%s\n' 'Run it? [y/N]' 'y\r' '/theme' '\r' 'sk-ant-...test' '\033[A' 'sk-ant-...test' '\r' \
  'injection' '\r' 'execute' '\r' 'shortcuts' '/exit' 'REPL' '\r' '--resume' '' >"$SIGN/steps"
pushd "$SIGN/proj" >/dev/null
pty_run "$SIGN/login.pty" "$SIGN/steps" "${sign_env[@]}" timeout -k 5 "$TIMEOUT" \
  "$CLI" auth --agent-command "$TAPPED" --method claude-login
popd >/dev/null
PTY=$(tr -cd '[:print:]\n' <"$SIGN/login.pty")
check "sign-in: acp-desk-cli auth asked, then ran Claude Code Login in the pty" \
  contains "$PTY" "running the login \"Claude Code Login\" in this terminal: node $LOGIN_JS"
check "sign-in: Claude Code $CLAUDE_VERSION's own screens were in the pty (Welcome … v$CLAUDE_VERSION, its exit's claude --resume)" \
  eval 'grep -qaF "v$CLAUDE_VERSION" "$SIGN/login.pty" && grep -qaF "claude --resume" "$SIGN/login.pty"'
check "sign-in: the login exited 0, auth exited 0 saying signed in" \
  eval 'test $PTY_RC = 0 && contains "$PTY" "exited with status 0"'
check "sign-in: Claude Code created ~/.claude.json" test -f "$SIGN/home/.claude.json"
fg "${sign_env[@]}" timeout -k 5 "$TIMEOUT" "$CLI" run --cwd "$SIGN/proj" --json --agent-command "$TAPPED" \
  "read notes.txt" >"$SIGN/after.jsonl" 2>"$SIGN/after.err"
RC=$?
check "sign-in: afterwards the session opens and the prompt goes through (exit $RC, $(stop_reason "$SIGN/after.jsonl"))" \
  test "$RC:$(stop_reason "$SIGN/after.jsonl")" = "0:end_turn"
check "sign-in: … with the file's content in the answer" contains "$(text_of "$SIGN/after.jsonl")" "secret-token-42"
SENT=$(q wire-methods "$WIRE")
check "sign-in: authenticate was never sent [$SENT]" eval '! contains " $SENT" " authenticate " && contains " $SENT" " initialize "'
# Offline without a token: Claude Code's preflight fails and it exits 1; auth says so. It has
# written ~/.claude.json at its start all the same.
printf '%s\t%s\n' 'Run it? [y/N]' 'y\r' 'ENOTFOUND' '' >"$SIGN/steps-offline"
offline_env=("${agent_env[@]}" "HOME=$SIGN/home-offline" "TERM=xterm-256color")
pushd "$SIGN/proj" >/dev/null
pty_run "$SIGN/offline.pty" "$SIGN/steps-offline" "${offline_env[@]}" timeout -k 5 "$TIMEOUT" \
  "$CLI" auth --agent-command "$TAPPED" --method claude-login
popd >/dev/null
PTY=$(tr -cd '[:print:]\n' <"$SIGN/offline.pty")
check "sign-in offline: Claude Code could not reach api.anthropic.com, exited 1, auth reported it (exit $PTY_RC)" \
  eval 'test $PTY_RC = 1 && contains "$PTY" "Unable" && contains "$PTY" "exited with status 1"'
echo "# sign-in offline: ~/.claude.json $( [[ -f $SIGN/home-offline/.claude.json ]] && echo created || echo not created) by the failed login"
check "sign-in: no agent process outlived the CLI" no_leftovers

# --- rig self-check: the same scenarios with fs/terminal advertised, by probe-client.mjs ---------
if [[ $RUN_PROBE = 1 ]]; then
  probe() { # probe MODE NAME PROMPT
    local dir=$WORK/probe-$1-$2
    PROJ=$dir/proj
    CALLS=$dir/calls.jsonl
    new_project "$PROJ"
    BEFORE=$(snapshot "$PROJ")
    : >"$CALLS"
    fg "${agent_env[@]}" timeout -k 5 "$TIMEOUT" "$NODE" "$HERE/probe-client.mjs" --cwd "$PROJ" --permission "$1" \
      --calls "$CALLS" --updates "$dir/updates.jsonl" -- "$NODE" "$AGENT_JS" -- "$3" >"$dir/text.txt" 2>"$dir/stderr.log"
    local rc=$?
    check "probe/$1/$2: exit 0 (end_turn)" test $rc = 0
    PROBE_METHODS=$(q methods "$CALLS")
  }
  methods_are() { test "$PROBE_METHODS" = "$1"; }
  probe allow read "read notes.txt"
  check "probe/allow/read: content in the final text" contains "$(cat "$WORK/probe-allow-read/text.txt")" "secret-token-42"
  check "probe/allow/read: client methods [$PROBE_METHODS]" methods_are "fs/read_text_file "
  probe allow write "write new.txt"
  check "probe/allow/write: new.txt written" file_is "$PROJ/new.txt" $'written by the fake model\n'
  check "probe/allow/write: client methods [$PROBE_METHODS]" methods_are "session/request_permission fs/write_text_file "
  probe allow edit "edit edit.txt"
  check "probe/allow/edit: edit.txt edited" file_is "$PROJ/edit.txt" "$EDIT_AFTER"
  check "probe/allow/edit: client methods [$PROBE_METHODS]" methods_are "fs/read_text_file session/request_permission fs/read_text_file fs/write_text_file "
  probe allow run "run a shell command"
  check "probe/allow/run: out.txt written" file_is "$PROJ/out.txt" $'hi-from-bash\n'
  check "probe/allow/run: client methods [$PROBE_METHODS]" methods_are "session/request_permission terminal/create terminal/wait_for_exit terminal/output terminal/release "
  probe reject write "write new.txt"
  check "probe/reject/write: nothing written" test "$(snapshot "$PROJ")" = "$BEFORE"
  check "probe/reject/write: client methods [$PROBE_METHODS]" methods_are "session/request_permission "
  check "probe: no agent process outlived the probe client" no_leftovers
  if [[ ${RUN_AIR:-1} = 1 && -f $AIR_JS ]]; then
    # claude-agent-acp's async tasks (and their stop) and AskUserQuestion straight from
    # probe-client.mjs: the recording script, writing to the temp folder, its checks as ours.
    mkdir -p "$WORK/air-probe"
    fg env OUT_DIR="$WORK/air-probe" SKIP_NPM_CI=1 TMPDIR="$WORK" "$HERE/record-claude-agent-acp.sh" >"$WORK/air-probe.log" 2>&1
    rc=$?
    sed 's/^/#   /' "$WORK/air-probe.log"
    check "probe/air: record-claude-agent-acp.sh's checks passed ($(tail -n 1 "$WORK/air-probe.log"))" test $rc = 0
  fi
fi

if [[ $RECORD = 1 ]]; then
  q requests "$WORK/requests.jsonl" "$WORK" >"$HERE/transcripts/fake-anthropic-requests.jsonl"
  for v in builtin client-fs; do
    [[ -f $WORK/tools-offered-$v.json ]] &&
      q tools-offered "$WORK/tools-offered-$v.json" >"$HERE/transcripts/tools-offered-$v.json"
  done
fi
unhandled=$(q unhandled "$WORK/requests.jsonl")
check "the model server saw no request it does not serve${unhandled:+ ($unhandled)}" test -z "$unhandled"

echo "# total $(elapsed "$START" "$(date +%s.%N)") s"
echo "$PASS passed, $FAIL failed"
[[ $FAIL = 0 ]]
