// An agent that asks to run a shell command exactly as claude-code-acp 0.16.2 did, rebuilt from
// the StreamEvents recorded from the real adapter (tests/real-agents/transcripts): its identity,
// modes and commands; on a prompt its text, the `tool_call` and its update (titled with the
// command line itself: "`echo hi-from-bash > out.txt && cat out.txt`"), then the same
// `session/request_permission` (title, rawInput, the options with their ids and kinds). The
// answer picks what follows: the recorded allow-run or reject-run ending; a cancel ends the turn
// cancelled. The desktop tests use it to check that the command never leaves the window.
//
// Usage: node claude-code-acp-replay.mjs [TRANSCRIPT_DIR]. No model, no network, no deps.
// Hand-written JSON-RPC (like gemini-like.mjs): the point is to send what that agent sent.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";

const dir = process.argv[2] ?? join(import.meta.dirname, "..", "real-agents", "transcripts");
const load = (name) =>
  readFileSync(join(dir, `claude-code-acp-${name}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
const allowRun = load("allow-run");
const rejectRun = load("reject-run");

const ready = allowRun.find((e) => e.kind === "session-status" && e.status === "ready");
const modes = allowRun.find((e) => e.kind === "modes");
const commands = allowRun.find((e) => e.kind === "available-commands");
const sessionId = ready?.agent?.acpSessionId ?? "00000000-0000-4000-8000-000000000001";
const promptAt = allowRun.findIndex((e) => e.kind === "agent-prompt");
if (!ready || promptAt < 0) {
  process.stderr.write(`claude-code-acp-replay: ${dir} has no recorded run with a permission request\n`);
  process.exit(2);
}
const asked = allowRun[promptAt];
const rejectedId = rejectRun.find((e) => e.kind === "agent-prompt")?.targetToolCallId;
/** What was streamed from the turn's start to the request. */
const before = allowRun.slice(allowRun.findIndex((e) => e.kind === "turn-start") + 1, promptAt);
/** What followed the answer, up to the turn's end. */
const after = (events) => {
  const from = events.findIndex((e) => e.kind === "agent-prompt-settled");
  return events.slice(from + 1, events.findIndex((e, i) => i > from && e.kind === "turn-end") + 1);
};

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const update = (u) => send({ method: "session/update", params: { sessionId, update: u } });
let nextId = 1;
const waiting = new Map();
function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

/** A recorded tool-call StreamEvent back into the ACP fields it was made from: absent fields
 * were recorded as "" / null (a title-less update keeps the title it had). */
function toolFields(e, id) {
  const f = { toolCallId: id };
  if (e.toolName) f.title = e.toolName;
  if (e.toolKind) f.kind = e.toolKind;
  if (e.status) f.status = e.status;
  if (e.content) f.content = e.content;
  if (e.locations) f.locations = e.locations;
  if (e.arguments !== null && e.arguments !== undefined) f.rawInput = e.arguments;
  if (e.rawOutput !== undefined) f.rawOutput = e.rawOutput;
  if (e._meta) f._meta = e._meta;
  return f;
}

/** Replays recorded events; the turn-end gives the stop reason. */
function replay(events, idFor) {
  let stop = "end_turn";
  for (const e of events) {
    if (e.kind === "text-delta" && e.text) {
      update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.text } });
    } else if (e.kind === "tool-call") {
      const fields = toolFields(e, idFor(e.toolCallId));
      update({ sessionUpdate: e.isUpdate ? "tool_call_update" : "tool_call", ...fields });
    } else if (e.kind === "turn-end") {
      stop = e.stopReason ?? stop;
    }
  }
  return stop;
}

let turns = 0;
async function prompt(msg) {
  turns += 1;
  // A second prompt in the same session asks about a new call, not the first one again.
  // The reject run's recording has its own id for the same call.
  const idFor = (recorded) => {
    const id = recorded === rejectedId ? asked.targetToolCallId : recorded;
    return turns === 1 ? id : `${id}-${turns}`;
  };
  // The request's own toolCall: what the engine merged from it is the update just before it.
  const requestUpdate = before.findLast((e) => e.kind === "tool-call" && e.isUpdate);
  replay(before.filter((e) => e !== requestUpdate), idFor);
  const toolCall = requestUpdate
    ? toolFields(requestUpdate, idFor(asked.targetToolCallId))
    : { toolCallId: idFor(asked.targetToolCallId), title: asked.toolName, rawInput: asked.rawInput };
  const answer = await request("session/request_permission", {
    sessionId,
    toolCall,
    options: asked.options,
  });
  const outcome = answer.result?.outcome;
  let stop;
  if (outcome?.outcome === "selected") {
    const kind = asked.options.find((o) => o.optionId === outcome.optionId)?.kind ?? "";
    stop = replay(after(kind.startsWith("allow") ? allowRun : rejectRun), idFor);
  } else {
    stop = "cancelled";
  }
  send({ id: msg.id, result: { stopReason: stop } });
}

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id !== undefined && msg.method === undefined) {
    waiting.get(msg.id)?.(msg);
    waiting.delete(msg.id);
  } else if (msg.method === "initialize") {
    const { name, title, version } = ready.agent;
    send({
      id: msg.id,
      result: {
        protocolVersion: 1,
        agentCapabilities: { promptCapabilities: { image: true, embeddedContext: true } },
        authMethods: [],
        agentInfo: { name, title, version },
      },
    });
  } else if (msg.method === "session/new") {
    const result = { sessionId };
    if (modes) result.modes = { currentModeId: modes.currentModeId, availableModes: modes.availableModes };
    send({ id: msg.id, result });
    if (commands) {
      setTimeout(() => update({ sessionUpdate: "available_commands_update", availableCommands: commands.commands }), 0);
    }
  } else if (msg.method === "session/prompt") {
    prompt(msg);
  } else if (msg.method === "session/cancel") {
    // The client answers the waiting request "cancelled"; prompt() ends the turn then.
  } else if (msg.id !== undefined) {
    send({ id: msg.id, error: { code: -32601, message: `${msg.method} is not implemented by this replay` } });
  }
});
rl.on("close", () => process.exit(0));
