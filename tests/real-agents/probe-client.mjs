#!/usr/bin/env node
// A minimal ACP client (raw JSON-RPC over stdio, no dependencies) that ADVERTISES fs and terminal
// capabilities, to check the rig itself with them on, independently of ACP Desk's engine:
// claude-code-acp then offers the model its `mcp__acp__*` tools, the fake model server calls
// those, and the agent calls back fs/* and terminal/* on this client, which serves them.
//
// Usage: node probe-client.mjs --cwd DIR --permission allow|reject --calls FILE \
//          [--updates FILE] [--mcp-servers FILE] -- AGENT_CMD [ARGS...] -- PROMPT
//   --calls FILE    one JSON line per agent->client request: {method, params}
//   --updates FILE  one JSON line per session/update notification
//   --mcp-servers FILE  a JSON array sent as session/new's mcpServers (default [])
//   --wire FILE     every JSON-RPC line each way, as wire-tap.mjs writes them: {"sent": MSG}
//                   (this client to the agent) / {"answered": MSG} (the agent to this client)
//   --air-async-tasks   advertise `_meta.jetbrains.air = {version: 1, capabilities: ["asyncTasks"]}`
//                   (claude-agent-acp then publishes async_task_* session updates)
//   --elicitation-form  advertise `elicitation: {form: {}}` (claude-agent-acp then offers the
//                   model AskUserQuestion and turns it into elicitation/create)
//   --elicit accept|decline|cancel|none   how elicitation/create is answered (default decline;
//                   none: never answered)
//   --cancel-after-ms N  N ms after an elicitation/create arrived, send session/cancel
//   --elicit-content JSON  the `content` of an accept (default {})
//   --stop-task     once an async task with canStop arrives (not the autonomous "turn" ones),
//                   send `_session/async_task/stop` {sessionId, asyncTaskId} for it after
//                   --stop-after-ms (default 1500); its answer goes to stderr and --wire
//   --linger SECONDS   after the prompt's answer, keep the session open (default 0) until every
//                   announced async task is settled (and, with --wait-origin, a usage_update
//                   with that `_meta["_claude/origin"].kind` came), then --grace-ms more
//                   (default 1500); at most SECONDS in all
//   --wait-origin KIND  e.g. task-notification (the autonomous cycle after a task settled)
// Prints the final agent text on stdout; exit 0 when the turn ended `end_turn`.
//
// Not part of ACP Desk: a reference for what ACP Desk must do once it advertises the
// capabilities, and a way to prove the scenarios work with them today.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const argv = process.argv.slice(2);
const opt = (n) => {
  const i = argv.indexOf(n);
  return i >= 0 ? argv[i + 1] : undefined;
};
const sep = argv.indexOf("--");
const sep2 = argv.indexOf("--", sep + 1);
if (sep < 0 || sep2 < 0) {
  console.error("usage: probe-client.mjs --cwd DIR --permission allow|reject --calls FILE -- CMD ARGS -- PROMPT");
  process.exit(2);
}
const agentCmd = argv.slice(sep + 1, sep2);
const promptText = argv.slice(sep2 + 1).join(" ");
const cwd = path.resolve(opt("--cwd") || process.cwd());
const permission = opt("--permission") || "allow";
const callsFile = opt("--calls");
const updatesFile = opt("--updates");
const mcpServersFile = opt("--mcp-servers");
const mcpServers = mcpServersFile ? JSON.parse(fs.readFileSync(mcpServersFile, "utf8")) : [];
const append = (f, o) => f && fs.appendFileSync(f, JSON.stringify(o) + "\n");
const has = (n) => argv.slice(0, sep).includes(n);
const wireFile = opt("--wire");
const airAsyncTasks = has("--air-async-tasks");
const elicitationForm = has("--elicitation-form");
const elicitAction = opt("--elicit") || "decline";
const elicitContent = JSON.parse(opt("--elicit-content") || "{}");
const cancelAfterMs = opt("--cancel-after-ms");
const stopTask = has("--stop-task");
const stopAfterMs = Number(opt("--stop-after-ms") || 1500);
const lingerS = Number(opt("--linger") || 0);
const graceMs = Number(opt("--grace-ms") || 1500);
const waitOrigin = opt("--wait-origin");
const log = (s) => console.error(`probe-client: ${s}`);

const child = spawn(agentCmd[0], agentCmd.slice(1), { cwd, stdio: ["pipe", "pipe", "inherit"] });
let nextId = 1;
const pending = new Map();
const send = (msg) => {
  const full = { jsonrpc: "2.0", ...msg };
  append(wireFile, { sent: full });
  child.stdin.write(JSON.stringify(full) + "\n");
};
const request = (method, params) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });

// --- terminals -------------------------------------------------------------------------------
const terminals = new Map();
let termCounter = 0;
function createTerminal(p) {
  const id = `term-${++termCounter}`;
  // claude-code-acp sends the whole shell command line in `command` with no `args`: run it
  // through a shell in that case, as its own code expects.
  const hasArgs = Array.isArray(p.args) && p.args.length > 0;
  const env = { ...process.env };
  for (const { name, value } of p.env || []) env[name] = value;
  const proc = hasArgs
    ? spawn(p.command, p.args, { cwd: p.cwd || cwd, env })
    : spawn("/bin/sh", ["-c", p.command], { cwd: p.cwd || cwd, env });
  const t = { proc, output: "", exit: null, waiters: [] };
  const add = (d) => {
    t.output += d.toString("utf8");
    if (p.outputByteLimit && Buffer.byteLength(t.output) > p.outputByteLimit) {
      t.output = t.output.slice(-p.outputByteLimit);
      t.truncated = true;
    }
  };
  proc.stdout.on("data", add);
  proc.stderr.on("data", add);
  proc.on("exit", (code, signal) => {
    t.exit = { exitCode: code, signal: signal || null };
    t.waiters.forEach((w) => w(t.exit));
  });
  terminals.set(id, t);
  return { terminalId: id };
}

async function handle(method, p) {
  switch (method) {
    case "fs/read_text_file": {
      let text = fs.readFileSync(p.path, "utf8");
      if (p.line != null || p.limit != null) {
        const lines = text.split("\n");
        const start = Math.max(0, (p.line ?? 1) - 1);
        text = lines.slice(start, p.limit != null ? start + p.limit : undefined).join("\n");
      }
      return { content: text };
    }
    case "fs/write_text_file":
      fs.writeFileSync(p.path, p.content);
      return {};
    case "terminal/create":
      return createTerminal(p);
    case "terminal/output": {
      const t = terminals.get(p.terminalId);
      return { output: t.output, truncated: !!t.truncated, ...(t.exit ? { exitStatus: t.exit } : {}) };
    }
    case "terminal/wait_for_exit": {
      const t = terminals.get(p.terminalId);
      return t.exit ?? (await new Promise((r) => t.waiters.push(r)));
    }
    case "terminal/kill":
      terminals.get(p.terminalId)?.proc.kill("SIGKILL");
      return {};
    case "terminal/release": {
      const t = terminals.get(p.terminalId);
      if (t && !t.exit) t.proc.kill("SIGKILL");
      terminals.delete(p.terminalId);
      return {};
    }
    case "elicitation/create": {
      log(`elicitation/create (${p.mode}): answering ${elicitAction}`);
      if (cancelAfterMs != null) {
        setTimeout(() => {
          log("sending session/cancel");
          send({ method: "session/cancel", params: { sessionId: p.sessionId } });
        }, Number(cancelAfterMs));
      }
      if (elicitAction === "none") return new Promise(() => {});
      if (elicitAction === "accept") return { action: "accept", content: elicitContent };
      return { action: elicitAction };
    }
    case "session/request_permission": {
      const kind = permission === "allow" ? "allow_once" : "reject_once";
      const o = p.options.find((x) => x.kind === kind);
      return { outcome: o ? { outcome: "selected", optionId: o.optionId } : { outcome: "cancelled" } };
    }
    default: {
      const e = new Error(`method not found: ${method}`);
      e.code = -32601;
      throw e;
    }
  }
}

// --- async tasks -----------------------------------------------------------------------------
const tasks = new Map(); // asyncTaskId -> {taskType, canStop, state}
const origins = [];
let settleWaiter = null;
function onUpdate(params) {
  const u = params?.update || {};
  if (u.sessionUpdate === "async_task_spawned") {
    tasks.set(u.asyncTaskId, { taskType: u.taskType, canStop: u.canStop, state: "running" });
    log(`task spawned ${u.asyncTaskId} (${u.taskType}, canStop ${u.canStop})`);
    if (stopTask && u.canStop && u.taskType !== "turn") {
      setTimeout(() => {
        log(`stopping ${u.asyncTaskId}`);
        request("_session/async_task/stop", { sessionId: params.sessionId, asyncTaskId: u.asyncTaskId }).then(
          (r) => log(`stop answered ${JSON.stringify(r)}`),
          (e) => log(`stop failed ${e.message || e}`),
        );
      }, stopAfterMs);
    }
  } else if (u.sessionUpdate === "async_task_state_update") {
    const t = tasks.get(u.asyncTaskId);
    if (t) t.state = u.state;
    log(`task ${u.asyncTaskId} ${u.state}`);
  } else if (u.sessionUpdate === "usage_update") {
    const o = u._meta?.["_claude/origin"];
    if (o) {
      origins.push(o.kind);
      log(`usage_update origin ${JSON.stringify(o)}`);
    }
  }
  settleWaiter?.();
}
const settled = () =>
  [...tasks.values()].every((t) => ["completed", "failed", "stopped"].includes(t.state)) &&
  (!waitOrigin || origins.includes(waitOrigin));
async function linger() {
  if (lingerS <= 0) return;
  const deadline = Date.now() + lingerS * 1000;
  while (Date.now() < deadline && !(tasks.size > 0 && settled())) {
    await new Promise((r) => {
      settleWaiter = r;
      setTimeout(r, 250);
    });
  }
  settleWaiter = null;
  log(settled() ? `settled (${tasks.size} tasks, origins ${JSON.stringify(origins)})` : "linger timed out");
  await new Promise((r) => setTimeout(r, graceMs));
}

let finalText = "";
let buf = "";
child.stdout.on("data", (d) => {
  buf += d.toString("utf8");
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (!line) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      append(wireFile, { answeredText: line });
      continue;
    }
    append(wireFile, { answered: msg });
    if (msg.method && msg.id !== undefined) {
      append(callsFile, { method: msg.method, params: msg.params });
      handle(msg.method, msg.params).then(
        (result) => send({ id: msg.id, result }),
        (e) => send({ id: msg.id, error: { code: e.code ?? -32603, message: String(e.message || e) } }),
      );
    } else if (msg.method) {
      append(updatesFile, msg.params);
      const u = msg.params?.update;
      if (msg.method === "session/update") onUpdate(msg.params);
      if (u?.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") finalText += u.content.text;
    } else if (pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result);
    }
  }
});

const done = (code) => {
  child.kill("SIGTERM");
  setTimeout(() => child.kill("SIGKILL"), 2000).unref();
  process.exitCode = code;
  setTimeout(() => process.exit(code), 2500).unref();
};

try {
  await request("initialize", {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: true, writeTextFile: true },
      terminal: true,
      ...(elicitationForm ? { elicitation: { form: {} } } : {}),
      ...(airAsyncTasks ? { _meta: { jetbrains: { air: { version: 1, capabilities: ["asyncTasks"] } } } } : {}),
    },
    clientInfo: { name: "acp-desk-probe-client", version: "0.0.0" },
  });
  const { sessionId } = await request("session/new", { cwd, mcpServers });
  const r = await request("session/prompt", { sessionId, prompt: [{ type: "text", text: promptText }] });
  console.error(`probe-client: stopReason ${r.stopReason}`);
  await linger();
  process.stdout.write(finalText + "\n");
  done(r.stopReason === "end_turn" ? 0 : 3);
} catch (e) {
  console.error(`probe-client: ${e.message || e}`);
  done(1);
}
