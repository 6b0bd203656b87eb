#!/usr/bin/env node
// A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI
// (inside @zed-industries/claude-code-acp) without an account or a network.
//
// Usage: node fake-anthropic.mjs [--port-file FILE] [--log FILE] [--tools-dump FILE]
//   Listens on 127.0.0.1 on an ephemeral port; prints `PORT=<n>` on stdout and, with --port-file,
//   writes the port number to FILE once listening. --log appends one JSON line per request
//   (method, path, model, stream, tool names offered, scenario, step, what was answered).
//   --tools-dump PREFIX writes the `tools` array of the first main-loop request to
//   PREFIX-builtin.json (agent's own tools) and of the first one offering `mcp__acp__*` tools
//   (client advertises fs/terminal) to PREFIX-client-fs.json.
//   No dependencies: node:http only.
//
// Scenarios are chosen by the text of the user's latest prompt (see SCENARIOS below). The model
// answers a main-loop request (one that offers tools) with the next step of the scenario: a
// tool_use while steps remain, then an end_turn text that quotes every tool_result it got, so a
// test can check what the tools did. Tool names adapt to what the agent offers: when the client
// advertises fs/terminal capabilities claude-code-acp offers `mcp__acp__Read` etc. instead of the
// built-in `Read`, and the server calls those instead; the scenarios are otherwise identical.
// Side calls (no tools: title / topic detection, bash-prefix checks, quota probes) get short,
// sane answers.

import http from "node:http";
import fs from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
function arg(name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}
const portFile = arg("--port-file");
const logFile = arg("--log");
const toolsDump = arg("--tools-dump");
const toolsDumped = new Set();
// --bodies DIR: every /v1/messages request body as DIR/NNN.json (to read what Claude Code sends).
const bodiesDir = arg("--bodies");
let bodyCount = 0;

function log(entry) {
  if (!logFile) return;
  fs.appendFileSync(logFile, JSON.stringify({ t: new Date().toISOString(), ...entry }) + "\n");
}

// --- fixed strings the tests look for --------------------------------------------------------
export const WRITE_CONTENT = "written by the fake model\n";
export const EDIT_OLD = "colour = red";
export const EDIT_NEW = "colour = blue";
export const RUN_COMMAND = "echo hi-from-bash > out.txt && cat out.txt";
// claude-agent-acp (AIR async tasks, AskUserQuestion as elicitation): see the scenarios below.
export const BG_DONE_COMMAND = "sleep 2; echo done > bg.txt";
export const BG_LONG_COMMAND = "sleep 300";
export const NOTIFIED_TEXT = "Noted: the background job finished.";
export const ASK_ONE = {
  question: "Which colour should the header be?",
  header: "Colour",
  multiSelect: false,
  options: [
    { label: "Blue", description: "Calm and readable" },
    { label: "Green", description: "Fresh" },
  ],
};
export const ASK_MULTI = {
  question: "Which checks should run before a release?",
  header: "Checks",
  multiSelect: true,
  options: [
    { label: "Unit tests", description: "cargo test" },
    { label: "Lints", description: "clippy and fmt" },
    { label: "End to end", description: "Playwright" },
  ],
};

// Each scenario: match(promptText) and steps(ctx) -> list of {tool, input}. ctx.cwd is the
// session's working directory (from the system prompt), ctx.name(base) picks the offered name.
const SCENARIOS = [
  {
    // Issue 20's undo test: one turn that edits a file, writes a new one and runs a shell
    // command that writes another, so that undoing the turn has all three kinds to put back.
    id: "three-ways",
    match: (p) => /\bthree ways\b/i.test(p),
    steps: (ctx) => [
      { tool: ctx.name("Read"), input: { file_path: ctx.abs("edit.txt") } },
      {
        tool: ctx.name("Edit"),
        input: { file_path: ctx.abs("edit.txt"), old_string: EDIT_OLD, new_string: EDIT_NEW },
      },
      { tool: ctx.name("Write"), input: { file_path: ctx.abs("new.txt"), content: WRITE_CONTENT } },
      {
        tool: ctx.name("Bash"),
        input: { command: RUN_COMMAND, description: "Write hi-from-bash to out.txt", timeout: 60000 },
      },
    ],
  },
  {
    // A Bash command sent to the background (Claude Code's own Bash, `run_in_background`); the
    // turn ends while it runs. Once it exits, Claude Code tells the model with a
    // <task-notification> user message (an autonomous cycle, answered below in decide()).
    id: "bg-done",
    match: (p) => /\bbackground job that finishes\b/i.test(p),
    steps: () => [
      {
        tool: "Bash",
        input: { command: BG_DONE_COMMAND, description: "Write done to bg.txt in the background", run_in_background: true },
      },
    ],
  },
  {
    // A background Bash task that runs for 5 minutes, for a client to stop.
    id: "bg-long",
    match: (p) => /\blong background job\b/i.test(p),
    steps: () => [
      {
        tool: "Bash",
        input: { command: BG_LONG_COMMAND, description: "Sleep for five minutes", run_in_background: true },
      },
    ],
  },
  {
    // AskUserQuestion (claude-agent-acp offers it only to a client with elicitation.form and
    // turns it into elicitation/create); the final text quotes the tool's result.
    id: "ask-two",
    match: (p) => /\bask me two questions\b/i.test(p),
    steps: () => [{ tool: "AskUserQuestion", input: { questions: [ASK_ONE, ASK_MULTI] } }],
  },
  {
    id: "ask-one",
    match: (p) => /\bask me a question\b/i.test(p),
    steps: () => [{ tool: "AskUserQuestion", input: { questions: [ASK_ONE] } }],
  },
  {
    // Calls every tool an MCP server configured in ACP Desk offered (`mcp__<server>__<tool>`,
    // not the agent's own `mcp__acp__*`), so the test sees each server reached end to end.
    id: "mcp",
    match: (p) => /\bmcp tools\b/i.test(p),
    steps: (ctx) =>
      ctx.toolNames
        .filter((n) => n.startsWith("mcp__") && !n.startsWith("mcp__acp__"))
        .sort()
        .map((tool) => ({ tool, input: {} })),
  },
  {
    id: "read",
    match: (p) => /\bread\b/i.test(p) && !/\bedit\b/i.test(p),
    steps: (ctx) => [{ tool: ctx.name("Read"), input: { file_path: ctx.abs(ctx.file || "notes.txt") } }],
  },
  {
    id: "write",
    match: (p) => /\bwrite\b/i.test(p),
    steps: (ctx) => [
      {
        tool: ctx.name("Write"),
        input: { file_path: ctx.abs(ctx.file || "new.txt"), content: WRITE_CONTENT },
      },
    ],
  },
  {
    id: "edit",
    match: (p) => /\bedit\b/i.test(p),
    // Claude Code's own Edit refuses a file not read first in the conversation: read, then edit.
    steps: (ctx) => [
      { tool: ctx.name("Read"), input: { file_path: ctx.abs(ctx.file || "edit.txt") } },
      {
        tool: ctx.name("Edit"),
        input: { file_path: ctx.abs(ctx.file || "edit.txt"), old_string: EDIT_OLD, new_string: EDIT_NEW },
      },
    ],
  },
  {
    id: "run",
    match: (p) => /\b(run|shell|bash)\b/i.test(p),
    steps: (ctx) => [
      {
        tool: ctx.name("Bash"),
        input: { command: RUN_COMMAND, description: "Write hi-from-bash to out.txt", timeout: 60000 },
      },
    ],
  },
];

// --- request helpers -------------------------------------------------------------------------
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => {
      if (typeof b === "string") return b;
      if (b.type === "text") return b.text;
      if (b.type === "tool_result") return textOf(b.content);
      return "";
    })
    .join("\n");
}

function systemText(body) {
  return textOf(body.system ?? "");
}

/** The user's own prompt: the last user message with a text block that is not a reminder. */
function latestPrompt(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "user") continue;
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    const texts = blocks
      .filter((b) => b.type === "text" && !/^\s*<(system-reminder|command-|local-command)/.test(b.text))
      .map((b) => b.text.trim())
      .filter(Boolean);
    if (texts.length) return { index: i, text: texts[texts.length - 1] };
  }
  return { index: -1, text: "" };
}

/** Every text block of the request's messages of `role` (reminders left out), in order: what
 * a continued session's request must carry of the earlier turns (prompts and answers). */
function texts(messages, role) {
  return messages
    .filter((m) => m.role === role)
    .flatMap((m) => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content || []))
    .filter((b) => b.type === "text" && !/^\s*<(system-reminder|command-|local-command)/.test(b.text))
    .map((b) => b.text.trim().slice(0, 200))
    .filter(Boolean);
}

/** tool_result blocks after the prompt, in order. */
function toolResultsSince(messages, index) {
  const out = [];
  for (let i = index + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== "user" || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === "tool_result") {
        // Drop the agent's <system-reminder> boilerplate so the quote stays short.
        const text = textOf(b.content).replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "").trimEnd();
        out.push({ isError: !!b.is_error, text });
      }
    }
  }
  return out;
}

let counter = 0;
const id = (prefix) => `${prefix}_fake${String(++counter).padStart(6, "0")}`;

// --- answers ---------------------------------------------------------------------------------
/** A list of content blocks + stop_reason for a request. */
function decide(body) {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const toolNames = tools.map((t) => t.name);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const sys = systemText(body);
  const prompt = latestPrompt(messages);

  // Side calls: no tools offered (or not the main loop).
  if (!toolNames.includes("Bash") && !toolNames.includes("mcp__acp__Bash") && !toolNames.includes("Read")) {
    let text = "OK";
    if (/isNewTopic/.test(sys) || body.output_format || body.outputFormat) {
      text = JSON.stringify({ isNewTopic: false, title: null });
    } else if (/<filepaths>/.test(sys)) {
      // Bash output post-processing: "which files did this command show?" None, say we.
      text = "<is_displaying_contents>\nfalse\n</is_displaying_contents>\n\n<filepaths>\n</filepaths>";
    } else if (/prefix/i.test(sys) && /command/i.test(sys)) {
      text = "none";
    } else if (/title/i.test(sys)) {
      text = "Scripted session";
    }
    return { kind: "side", blocks: [{ type: "text", text }], stop: "end_turn", toolNames };
  }

  const variety = toolNames.some((n) => n.startsWith("mcp__acp__")) ? "client-fs" : "builtin";
  if (toolsDump && !toolsDumped.has(variety)) {
    toolsDumped.add(variety);
    fs.writeFileSync(`${toolsDump}-${variety}.json`, JSON.stringify(tools, null, 2) + "\n");
  }

  const cwdMatch = sys.match(/Working directory:\s*(\S+)/) || textOf(messages[0]?.content).match(/Working directory:\s*(\S+)/);
  const cwd = cwdMatch ? cwdMatch[1] : process.cwd();
  const fileMatch = prompt.text.match(/\b([\w.-]+\.(?:txt|md|json|rs|js))\b/);
  const ctx = {
    cwd,
    toolNames,
    file: fileMatch ? fileMatch[1] : undefined,
    abs: (f) => (path.isAbsolute(f) ? f : path.join(cwd, f)),
    name: (base) => (toolNames.includes(`mcp__acp__${base}`) ? `mcp__acp__${base}` : base),
  };
  // Claude Code's prompt suggestions ("[SUGGESTION MODE: ...]", after a turn): it offers tools
  // but wants one line of text. Suggest nothing.
  if (/^\[SUGGESTION MODE/.test(prompt.text)) {
    return { kind: "suggestion", blocks: [{ type: "text", text: "" }], stop: "end_turn", toolNames };
  }
  // The autonomous cycle: Claude Code woke the model on its own to say a background task ended.
  // It comes as the last user message, inside a <system-reminder> (which latestPrompt skips).
  const lastMsg = messages[messages.length - 1];
  const lastText = lastMsg?.role === "user" ? textOf(lastMsg.content) : "";
  if (/<task-notification>/.test(lastText)) {
    const summary = (lastText.match(/<summary>([\s\S]*?)<\/summary>/) || [])[1] || "";
    return {
      kind: "main",
      scenario: "task-notification",
      blocks: [{ type: "text", text: `${NOTIFIED_TEXT} ${summary.trim()}`.trim() }],
      stop: "end_turn",
      toolNames,
    };
  }
  const scenario = SCENARIOS.find((s) => s.match(prompt.text));
  if (!scenario) {
    return {
      kind: "main",
      scenario: null,
      blocks: [{ type: "text", text: `No scripted scenario for: ${prompt.text}` }],
      stop: "end_turn",
      toolNames,
    };
  }
  const steps = scenario.steps(ctx);
  const results = toolResultsSince(messages, prompt.index);
  const step = results.length;
  // A rejected or failed tool ends the script early: say so and stop.
  const failed = results.find((r) => r.isError);
  if (step < steps.length && !failed) {
    const s = steps[step];
    return {
      kind: "main",
      scenario: scenario.id,
      step,
      blocks: [
        { type: "text", text: `Step ${step + 1} of ${scenario.id}: calling ${s.tool}.` },
        { type: "tool_use", id: id("toolu"), name: s.tool, input: s.input },
      ],
      stop: "tool_use",
      toolNames,
    };
  }
  const quoted = results.map((r, i) => `[result ${i + 1}${r.isError ? " (error)" : ""}]\n${r.text}`).join("\n");
  return {
    kind: "main",
    scenario: scenario.id,
    step,
    blocks: [{ type: "text", text: `Done with ${scenario.id}${failed ? " (a tool failed or was refused)" : ""}.\n${quoted}` }],
    stop: "end_turn",
    toolNames,
  };
}

function usage() {
  return { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

function sendJson(res, status, obj) {
  const data = JSON.stringify(obj);
  res.writeHead(status, { "content-type": "application/json", "request-id": id("req") });
  res.end(data);
}

function sendMessage(res, body, d) {
  sendJson(res, 200, {
    id: id("msg"),
    type: "message",
    role: "assistant",
    model: body.model || "claude-fake",
    content: d.blocks,
    stop_reason: d.stop,
    stop_sequence: null,
    usage: usage(),
  });
}

function sendStream(res, body, d) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "request-id": id("req"),
  });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev("message_start", {
    message: {
      id: id("msg"),
      type: "message",
      role: "assistant",
      model: body.model || "claude-fake",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage(), output_tokens: 1 },
    },
  });
  ev("ping", {});
  d.blocks.forEach((b, index) => {
    if (b.type === "text") {
      ev("content_block_start", { index, content_block: { type: "text", text: "" } });
      // Two deltas, to exercise streaming, split at a space so a path or a word stays whole
      // within one delta (the recordings replace temp paths chunk by chunk).
      const half = Math.floor(b.text.length / 2);
      const mid = b.text.lastIndexOf(" ", half) > 0 ? b.text.lastIndexOf(" ", half) + 1 : half;
      for (const part of [b.text.slice(0, mid), b.text.slice(mid)]) {
        if (part) ev("content_block_delta", { index, delta: { type: "text_delta", text: part } });
      }
    } else if (b.type === "tool_use") {
      ev("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
      const json = JSON.stringify(b.input);
      const mid = Math.floor(json.length / 2);
      for (const part of [json.slice(0, mid), json.slice(mid)]) {
        ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } });
      }
    }
    ev("content_block_stop", { index });
  });
  ev("message_delta", { delta: { stop_reason: d.stop, stop_sequence: null }, usage: { output_tokens: 20 } });
  ev("message_stop", {});
  res.end();
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const url = new URL(req.url, "http://x");
    const raw = Buffer.concat(chunks).toString("utf8");
    let body = {};
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      body = {};
    }
    const entry = { method: req.method, path: url.pathname + url.search };
    try {
      if (req.method === "POST" && url.pathname === "/v1/messages") {
        if (bodiesDir) fs.writeFileSync(path.join(bodiesDir, `${String(++bodyCount).padStart(3, "0")}.json`), raw);
        const d = decide(body);
        Object.assign(entry, {
          model: body.model,
          stream: !!body.stream,
          kind: d.kind,
          scenario: d.scenario,
          step: d.step,
          tools: d.toolNames,
          system: d.kind === "side" ? systemText(body).slice(0, 200) : undefined,
          prompt: latestPrompt(body.messages || []).text.slice(0, 200),
          userTexts: texts(body.messages || [], "user"),
          assistantTexts: texts(body.messages || [], "assistant"),
          answer: d.blocks.map((b) => (b.type === "text" ? { text: b.text.slice(0, 300) } : { tool_use: b.name, input: b.input })),
        });
        log(entry);
        if (body.stream) sendStream(res, body, d);
        else sendMessage(res, body, d);
        return;
      }
      if (req.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
        log(entry);
        sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
        return;
      }
      if (req.method === "GET" && url.pathname === "/v1/models") {
        log(entry);
        sendJson(res, 200, {
          data: [{ type: "model", id: "claude-sonnet-4-5", display_name: "Claude Sonnet 4.5", created_at: "2025-09-29T00:00:00Z" }],
          has_more: false,
          first_id: "claude-sonnet-4-5",
          last_id: "claude-sonnet-4-5",
        });
        return;
      }
      log({ ...entry, unhandled: true });
      sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `fake-anthropic: no route ${url.pathname}` } });
    } catch (e) {
      log({ ...entry, error: String(e && e.stack) });
      sendJson(res, 500, { type: "error", error: { type: "api_error", message: String(e) } });
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  if (portFile) fs.writeFileSync(portFile, String(port));
  process.stdout.write(`PORT=${port}\n`);
});

for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => server.close(() => process.exit(0)));
