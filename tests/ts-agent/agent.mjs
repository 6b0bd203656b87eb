#!/usr/bin/env node
// ACP Desk interop test agent, built on the official ACP TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0). Speaks ACP v1 over stdio (newline-delimited
// JSON-RPC): stdout carries protocol messages only, logs go to stderr.
//
// Per prompt: agent_thought_chunk, plan, tool_call (execute, pending),
// [prompt contains "slow": message chunks every 200 ms for up to 30 s],
// session/request_permission, then
//   allowed  -> tool_call_update completed, 3 message chunks, usage_update, end_turn
//   rejected -> tool_call_update failed, "Permission rejected", end_turn
//   cancelled (permission outcome or session/cancel at any point) -> stopReason "cancelled".
//
// Test hooks (same names and line format as the demo agent's; see README.md):
//   ACP_DESK_DEMO_MCP=http,sse|http|sse|none  mcpCapabilities to advertise (default http,sse)
//   ACP_DESK_DEMO_RECORD=FILE                 append {"method","params"} per session/new|load|resume
//   ACP_DESK_DEMO_RECORD_ENV=NAME[,NAME...]   add "env": {NAME: value|null} to each line
//   ACP_DESK_TS_SESSION_METHODS=load,resume   also offer session/load and/or session/resume
// See README.md.

import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { randomUUID } from "node:crypto";
import { agent, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const AGENT_NAME = "ts-sdk-interop-agent";
const AGENT_VERSION = "0.1.0";
const SDK_VERSION = "2.4.0";
/** Interval between message chunks of a "slow" prompt. */
const SLOW_CHUNK_MS = 200;
/** How long a "slow" prompt streams at most before asking for permission. */
const SLOW_MAX_MS = 30_000;
/**
 * After session/cancel, ACP v1 expects the client to answer a pending permission
 * request with `cancelled`. We wait this long for that answer, then stop waiting
 * (the SDK then sends `$/cancel_request` for it) and end the turn anyway.
 */
const PERMISSION_CANCEL_GRACE_MS = 2_000;

const log = (...args) => console.error(`[${AGENT_NAME}]`, ...args);

/** A bad test hook stops the agent before it speaks, saying which variable and why. */
function fatal(message) {
  log(message);
  process.exit(2);
}

function envList(name) {
  return (process.env[name] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function mcpCapabilities() {
  if (process.env.ACP_DESK_DEMO_MCP === undefined) return { http: true, sse: true };
  const caps = { http: false, sse: false };
  for (const name of envList("ACP_DESK_DEMO_MCP")) {
    if (name === "http" || name === "sse") caps[name] = true;
    else if (name !== "none")
      fatal(`ACP_DESK_DEMO_MCP: unknown MCP transport ${JSON.stringify(name)} (use http, sse or none; stdio is always supported)`);
  }
  return caps;
}

function sessionMethods() {
  const m = { load: false, resume: false };
  for (const name of envList("ACP_DESK_TS_SESSION_METHODS")) {
    if (name === "load" || name === "resume") m[name] = true;
    else if (name !== "none") fatal(`ACP_DESK_TS_SESSION_METHODS: unknown method ${JSON.stringify(name)} (use load, resume or none)`);
  }
  return m;
}

const MCP_CAPS = mcpCapabilities();
const SESSION_METHODS = sessionMethods();
const RECORD_FILE = process.env.ACP_DESK_DEMO_RECORD || null;
const RECORD_ENV = envList("ACP_DESK_DEMO_RECORD_ENV");

/**
 * Appends what the client sent to open a session, for tests that assert what reached the
 * agent. A failed append fails the request: a record silently missing a line would mislead.
 */
function record(method, params) {
  if (RECORD_FILE === null) return;
  const line = { method, params };
  if (RECORD_ENV.length > 0) line.env = Object.fromEntries(RECORD_ENV.map((n) => [n, process.env[n] ?? null]));
  try {
    appendFileSync(RECORD_FILE, `${JSON.stringify(line)}\n`);
  } catch (err) {
    throw new Error(`ACP_DESK_DEMO_RECORD: cannot append to ${RECORD_FILE}: ${err.message} (point it at a writable file, or unset it)`);
  }
}

/** sessionId -> { turn: { cancelled: boolean, controller: AbortController } | null } */
const sessions = new Map();
let toolCallCounter = 0;

class Cancelled extends Error {
  constructor() {
    super("turn cancelled");
  }
}

/** Resolves after `ms`, or rejects with Cancelled as soon as `signal` aborts. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Cancelled());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Cancelled());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function promptText(prompt) {
  return prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

function text(t) {
  return { type: "text", text: t };
}

/**
 * Asks for permission. Resolves with the SDK's RequestPermissionOutcome, or with
 * `{ outcome: "cancelled" }` when the turn is cancelled and the client does not
 * answer within PERMISSION_CANCEL_GRACE_MS.
 */
async function askPermission(client, turn, params) {
  const stopWaiting = new AbortController();
  let graceTimer;
  const onCancel = () => {
    log(`session/cancel while waiting for permission; waiting up to ${PERMISSION_CANCEL_GRACE_MS} ms for the client's answer`);
    graceTimer = setTimeout(() => {
      log("client did not answer the permission request after session/cancel; stop waiting");
      stopWaiting.abort();
    }, PERMISSION_CANCEL_GRACE_MS);
  };
  if (turn.controller.signal.aborted) onCancel();
  else turn.controller.signal.addEventListener("abort", onCancel, { once: true });
  try {
    const response = await client.request(methods.client.session.requestPermission, params, {
      cancellationSignal: stopWaiting.signal,
      stopWaitingOnCancel: true,
    });
    return response.outcome;
  } catch (err) {
    if (stopWaiting.signal.aborted) return { outcome: "cancelled" };
    throw err;
  } finally {
    clearTimeout(graceTimer);
    turn.controller.signal.removeEventListener("abort", onCancel);
  }
}

async function runTurn({ params, client, signal }, turn) {
  const { sessionId } = params;
  const userText = promptText(params.prompt);
  const cancelSignal = AbortSignal.any([turn.controller.signal, signal]);
  const check = () => {
    if (cancelSignal.aborted) throw new Cancelled();
  };
  const update = async (u) => {
    check();
    await client.notify(methods.client.session.update, { sessionId, update: u });
  };

  await update({
    sessionUpdate: "agent_thought_chunk",
    content: text(`Thinking about: ${userText}`),
  });
  await update({
    sessionUpdate: "plan",
    entries: [
      { content: "Run the test suite", priority: "high", status: "in_progress" },
      { content: "Report the result", priority: "medium", status: "pending" },
    ],
  });
  const toolCallId = `call-${++toolCallCounter}`;
  await update({
    sessionUpdate: "tool_call",
    toolCallId,
    title: "Run `npm test`",
    kind: "execute",
    status: "pending",
    rawInput: { command: "npm test" },
  });

  if (/slow/i.test(userText)) {
    const started = Date.now();
    for (let i = 1; Date.now() - started < SLOW_MAX_MS; i++) {
      await update({ sessionUpdate: "agent_message_chunk", content: text(`slow chunk ${i}. `) });
      await sleep(SLOW_CHUNK_MS, cancelSignal);
    }
  }

  check();
  const outcome = await askPermission(client, turn, {
    sessionId,
    toolCall: { toolCallId, title: "Run `npm test`", kind: "execute", status: "pending", rawInput: { command: "npm test" } },
    options: [
      { optionId: "approved", name: "Allow once", kind: "allow_once" },
      { optionId: "approved-always", name: "Always allow", kind: "allow_always" },
      { optionId: "abort", name: "Reject", kind: "reject_once" },
    ],
  });
  log(`permission outcome: ${JSON.stringify(outcome)}`);
  check(); // session/cancel wins over whatever the client answered
  if (outcome.outcome === "cancelled") throw new Cancelled();

  const options = {
    approved: "allow_once",
    "approved-always": "allow_always",
    abort: "reject_once",
  };
  const kind = options[outcome.optionId];
  if (kind === undefined) log(`unknown optionId ${JSON.stringify(outcome.optionId)}: treated as rejected`);

  if (kind?.startsWith("allow_")) {
    await update({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: [{ type: "content", content: text("> npm test\n3 passing (12ms)") }],
      rawOutput: { exitCode: 0 },
    });
    await update({ sessionUpdate: "agent_message_chunk", content: text("Hello from the TS SDK agent. ") });
    await update({ sessionUpdate: "agent_message_chunk", content: text(`You said: ${userText}. `) });
    await update({ sessionUpdate: "agent_message_chunk", content: text("`npm test` passed.") });
    await update({ sessionUpdate: "usage_update", used: 1234, size: 200000 });
  } else {
    await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    await update({ sessionUpdate: "agent_message_chunk", content: text("Permission rejected") });
  }
  check();
  return { stopReason: "end_turn" };
}

const app = agent({ name: AGENT_NAME })
  .onRequest(methods.agent.initialize, ({ params }) => {
    log(`initialize: client protocolVersion ${params.protocolVersion}, clientInfo ${JSON.stringify(params.clientInfo ?? null)}`);
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: SESSION_METHODS.load,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        mcpCapabilities: MCP_CAPS,
        sessionCapabilities: SESSION_METHODS.resume ? { resume: {} } : {},
      },
      authMethods: [],
      agentInfo: {
        name: AGENT_NAME,
        title: `TS SDK interop agent (@agentclientprotocol/sdk ${SDK_VERSION})`,
        version: AGENT_VERSION,
      },
    };
  })
  .onRequest(methods.agent.session.new, ({ params }) => {
    record(methods.agent.session.new, params);
    const sessionId = `ts-sess-${randomUUID()}`;
    sessions.set(sessionId, { turn: null });
    log(`session/new ${sessionId} cwd=${params.cwd}`);
    return { sessionId };
  })
  .onRequest(methods.agent.session.prompt, async (ctx) => {
    const { sessionId } = ctx.params;
    const session = sessions.get(sessionId);
    if (session === undefined) throw new Error(`unknown session ${sessionId}`);
    if (session.turn !== null) throw new Error(`session ${sessionId} already has a prompt turn running`);
    const turn = { controller: new AbortController() };
    session.turn = turn;
    log(`session/prompt ${sessionId}: ${JSON.stringify(promptText(ctx.params.prompt))}`);
    try {
      const response = await runTurn(ctx, turn);
      log(`turn ended: ${response.stopReason}`);
      return response;
    } catch (err) {
      if (err instanceof Cancelled || turn.controller.signal.aborted) {
        log("turn ended: cancelled");
        return { stopReason: "cancelled" };
      }
      log("turn failed:", err);
      throw err;
    } finally {
      session.turn = null;
    }
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    const turn = sessions.get(params.sessionId)?.turn;
    log(`session/cancel ${params.sessionId}${turn ? "" : " (no turn running)"}`);
    turn?.controller.abort();
  });

// This agent keeps no conversation (its turns do not depend on one), so load replays nothing
// and both just take the session up again under the id the client names. Registered only when
// offered, so an agent without them answers "method not found" as ACP expects.
if (SESSION_METHODS.load) {
  app.onRequest(methods.agent.session.load, ({ params }) => {
    record(methods.agent.session.load, params);
    sessions.set(params.sessionId, { turn: null });
    log(`session/load ${params.sessionId} cwd=${params.cwd}`);
    return {};
  });
}
if (SESSION_METHODS.resume) {
  app.onRequest(methods.agent.session.resume, ({ params }) => {
    record(methods.agent.session.resume, params);
    sessions.set(params.sessionId, { turn: null });
    log(`session/resume ${params.sessionId} cwd=${params.cwd}`);
    return {};
  });
}

const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
log(`ready (pid ${process.pid}, @agentclientprotocol/sdk ${SDK_VERSION})`);
await connection.closed;
log("stdin closed; exiting");
process.exit(0);
