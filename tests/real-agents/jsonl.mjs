#!/usr/bin/env node
// Small JSON / JSON-lines queries for run.sh (so CI needs no jq). Usage: node jsonl.mjs CMD ARGS...
//   text FILE              concatenated text of the `text-delta` StreamEvents
//   stop FILE              stopReason of the last `turn-end` (its reason when it has none)
//   settled FILE KIND      exit 0 when at least one permission was settled and every settled one
//                          chose the option of that kind (allow_once, reject_once) its request offered
//   tools FILE             claude-code-acp's tool names (`_meta.claudeCode.toolName` on tool-call
//                          events), sorted, unique, each followed by a space
//   has-terminal FILE      exit 0 when a tool-call event carries `terminal` content (a client terminal)
//   methods FILE           `method` of each line, each followed by a space (probe-client's calls log)
//   unhandled FILE         paths the fake model server did not serve, each followed by a space
//   get FILE KEY           a top-level key of a JSON file
//   paths FILE             the files of an `acp-desk-cli changes --turn N --json` document, sorted,
//                          space-separated
//   auth-ids FILE          the ids of an `agents check --json` report's authMethods, each followed by a space
//   has-cap FILE PATH      exit 0 when the report's capabilities hold PATH (dotted) and it is not false
//   session FILE           the sessionId of a --json transcript's first event
//   advertised FILE        the session methods its agent advertised (session-status agent.sessionMethods)
//   carries FILE PROMPT TEXT  exit 0 when a main-loop request of the fake server's log whose prompt
//                          is PROMPT has TEXT among its user messages (a continued conversation)
//   count FILE KIND        how many events of that kind a JSON-lines file holds
//   sanitize FILE NAME W H a transcript with the temp folder W, this folder H, the session ids replaced
//   requests FILE W        the fake server's request log, timestamps dropped, W replaced
//   tools-offered FILE     the `tools` dump reduced to name + input_schema
//   mcp-start FILE         mcp-record-server's stdio start line: `argv` and `env` as JSON, one line each
//   mcp-methods FILE T     JSON-RPC methods the record server received over transport T, each
//                          followed by a space
//   mcp-auth FILE T        the distinct Authorization headers it received over T, each followed by
//                          a newline
//   mcp-report FILE        the `mcp-servers` event of a --json transcript: `name:transport:passed`
//                          per server, sorted, each followed by a space
//   auth-how FILE ID       the sign-in action ID of a --json transcript (session-status
//                          agent.authMethods): `via command arg0`, space-separated
//   error-kind FILE        the `kind` of the first `error` event of a --json transcript
//   wire-methods FILE      wire-tap.mjs's log: the `method` of every request and notification the
//                          client sent, each followed by a space
//   wire-error FILE METHOD wire-tap.mjs's log: the agent's error answers to METHOD requests,
//                          `CODE MESSAGE` each, one a line
//   holds FILE EXPR        exit 0 when the JS expression EXPR is truthy, with `e` = the file's
//                          JSON lines (a --json transcript's events, or a wire log); prints the
//                          value when it is not a boolean (so `holds F 'e.find(...)?.x'` prints x)

import fs from "node:fs";

const [cmd, file, ...rest] = process.argv.slice(2);
// A record that was never written (a server nobody started) reads as empty: the check then
// fails saying what it expected, instead of a stack trace.
const raw = () => (cmd.startsWith("mcp-") && !fs.existsSync(file) ? "" : fs.readFileSync(file, "utf8"));
const lines = () =>
  raw()
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
const out = (s) => process.stdout.write(s);
const replaceAll = (s, from, to) => (from ? s.split(from).join(to) : s);

switch (cmd) {
  case "text":
    out(lines().filter((e) => e.kind === "text-delta").map((e) => e.text ?? "").join(""));
    break;
  case "stop": {
    const ends = lines().filter((e) => e.kind === "turn-end");
    const last = ends[ends.length - 1];
    out(last ? String(last.stopReason ?? last.reason) : "");
    break;
  }
  case "settled": {
    const kind = rest[0];
    const evs = lines();
    const want = {};
    for (const e of evs.filter((e) => e.kind === "agent-prompt")) {
      want[e.toolCallId] = (e.options || []).find((o) => o.kind === kind)?.optionId;
    }
    const settled = evs.filter((e) => e.kind === "agent-prompt-settled");
    const good = settled.length > 0 && settled.every((s) => s.outcome?.optionId && s.outcome.optionId === want[s.toolCallId]);
    process.exitCode = good ? 0 : 1;
    break;
  }
  case "tools": {
    const names = new Set(
      lines()
        .filter((e) => e.kind === "tool-call")
        .map((e) => e._meta?.claudeCode?.toolName)
        .filter(Boolean),
    );
    out([...names].sort().map((n) => n + " ").join(""));
    break;
  }
  case "has-terminal":
    process.exitCode = lines().some((e) => e.kind === "tool-call" && (e.content || []).some((c) => c.type === "terminal")) ? 0 : 1;
    break;
  case "methods":
    out(lines().map((e) => e.method + " ").join(""));
    break;
  case "unhandled":
    out([...new Set(lines().filter((e) => e.unhandled).map((e) => e.path))].map((p) => p + " ").join(""));
    break;
  case "session":
    out(String(lines()[0]?.sessionId ?? ""));
    break;
  case "advertised": {
    const m = lines().find((e) => e.kind === "session-status" && e.agent?.sessionMethods)?.agent.sessionMethods || {};
    out(Object.keys(m).filter((k) => m[k]).sort().join(" "));
    break;
  }
  case "carries": {
    const [prompt, text] = rest;
    const hit = lines().some((e) => e.kind === "main" && e.prompt === prompt && (e.userTexts || []).includes(text));
    process.exitCode = hit ? 0 : 1;
    break;
  }
  case "carries-answer": {
    // The request for `prompt` holds an earlier answer of the model's containing `text`.
    const [prompt, text] = rest;
    const hit = lines().some(
      (e) => e.kind === "main" && e.prompt === prompt && (e.assistantTexts || []).some((t) => t.includes(text)),
    );
    process.exitCode = hit ? 0 : 1;
    break;
  }
  case "count":
    out(String(lines().filter((e) => e.kind === rest[0]).length));
    break;
  case "auth-how": {
    const st = lines().filter((e) => e.kind === "session-status" && e.agent?.authMethods);
    const a = (st[st.length - 1]?.agent.authMethods || []).find((m) => m.methodId === rest[0]);
    out(a ? [a.how?.via, a.how?.command ?? "", (a.how?.args || [])[0] ?? ""].join(" ") : "");
    break;
  }
  case "error-kind":
    out(String(lines().find((x) => x.kind === "error")?.error?.kind ?? ""));
    break;
  case "wire-methods":
    out(lines().filter((l) => l.sent?.method).map((l) => l.sent.method + " ").join(""));
    break;
  case "wire-error": {
    // Ids restart with each agent process: pair each request with the next answer of its id.
    const all = lines();
    const found = [];
    all.forEach((l, i) => {
      if (l.sent?.method !== rest[0] || l.sent.id === undefined) return;
      const a = all.slice(i + 1).find((x) => x.answered && x.answered.id === l.sent.id && !x.answered.method);
      if (a?.answered.error) found.push(`${a.answered.error.code} ${a.answered.error.message}\n`);
    });
    out(found.join(""));
    break;
  }
  case "get":
    out(String(JSON.parse(raw())[rest[0]] ?? ""));
    break;
  case "paths":
    out((JSON.parse(raw()).files ?? []).map((f) => f.path).sort().join(" "));
    break;
  case "auth-ids":
    out((JSON.parse(raw()).authMethods ?? []).map((m) => m.id + " ").join(""));
    break;
  case "has-cap": {
    let v = JSON.parse(raw()).capabilities;
    for (const k of rest[0].split(".")) v = v?.[k];
    process.exitCode = v !== undefined && v !== null && v !== false ? 0 : 1;
    break;
  }
  case "sanitize": {
    const [name, work, here] = rest;
    const evs = lines();
    const sid = evs.find((e) => e.sessionId)?.sessionId;
    const acp = evs.find((e) => e.agent?.acpSessionId)?.agent.acpSessionId;
    let s = raw();
    s = replaceAll(s, work, "/tmp/acp-desk-real-agents");
    s = replaceAll(s, here, "tests/real-agents");
    s = replaceAll(s, sid, `s-${name}`);
    s = replaceAll(s, acp, "00000000-0000-4000-8000-000000000001");
    out(s);
    break;
  }
  case "requests": {
    const [work] = rest;
    out(lines().map((e) => replaceAll(JSON.stringify({ ...e, t: undefined }), work, "/tmp/acp-desk-real-agents") + "\n").join(""));
    break;
  }
  case "tools-offered":
    out(JSON.stringify(JSON.parse(raw()).map((t) => ({ name: t.name, input_schema: t.input_schema })), null, 2) + "\n");
    break;
  case "mcp-start": {
    const start = lines().find((e) => e.event === "start");
    out(start ? `${JSON.stringify(start.argv)}\n${JSON.stringify(start.env)}\n` : "");
    break;
  }
  case "mcp-methods":
    out(
      lines()
        .filter((e) => e.event === "rpc" && e.transport === rest[0])
        .map((e) => e.method + " ")
        .join(""),
    );
    break;
  case "mcp-auth":
    out(
      [...new Set(lines().filter((e) => e.transport === rest[0] && "authorization" in e).map((e) => String(e.authorization)))]
        .map((a) => a + "\n")
        .join(""),
    );
    break;
  case "mcp-report": {
    const ev = lines().find((e) => e.kind === "mcp-servers");
    out(ev ? ev.servers.map((s) => `${s.name}:${s.transport}:${s.passed}`).sort().map((s) => s + " ").join("") : "");
    break;
  }
  case "holds": {
    const e = lines();
    const v = new Function("e", `return (${rest[0]});`)(e);
    if (typeof v !== "boolean" && v !== undefined && v !== null) out(typeof v === "string" ? v : JSON.stringify(v));
    process.exitCode = v ? 0 : 1;
    break;
  }
  default:
    console.error(`jsonl.mjs: unknown command ${cmd}`);
    process.exitCode = 2;
}
