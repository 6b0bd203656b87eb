#!/usr/bin/env node
// A tiny MCP server that records what its client (the agent) gave it, for tests that assert an MCP
// server configured in ACP Desk really reached the agent and was started/connected with what we
// passed. No dependencies (node:http, node:readline); nothing from the internet.
//
//   node mcp-record-server.mjs stdio --record FILE [--env NAME]... [--tool NAME] [ARG...]
//     MCP over stdio (newline-delimited JSON-RPC). At start appends
//     {"event":"start","transport":"stdio","argv":[every argument after the script's path],
//     "env":{NAME: value|null}}.
//   node mcp-record-server.mjs http --record FILE --port-file FILE [--tool NAME]
//     MCP Streamable HTTP on POST /mcp (JSON answers, no server-initiated stream: GET /mcp is
//     405, which the spec allows), plus the legacy HTTP+SSE transport on GET /sse +
//     POST /messages. Listens on 127.0.0.1:0 and writes the port to --port-file.
//
// Every JSON-RPC message received appends {"event":"rpc","transport","method","id"} and, over
// HTTP, "authorization" (the header as received: the test compares it with what it configured)
// and "path". It serves initialize, ping, tools/list (one tool, --tool, default "probe") and
// tools/call (answers "<tool> answered via <transport>"); other requests get -32601,
// notifications are only recorded. The record holds secrets on purpose: it is the request side.

import fs from "node:fs";
import http from "node:http";
import readline from "node:readline";
import { randomUUID } from "node:crypto";

const [mode, ...rest] = process.argv.slice(2);
const opts = { record: null, portFile: null, env: [], tool: "probe", extra: [] };
for (let i = 0; i < rest.length; i++) {
  const a = rest[i];
  const value = () => {
    if (i + 1 >= rest.length) die(`${a} needs a value`);
    return rest[++i];
  };
  if (a === "--record") opts.record = value();
  else if (a === "--port-file") opts.portFile = value();
  else if (a === "--env") opts.env.push(value());
  else if (a === "--tool") opts.tool = value();
  else opts.extra.push(a);
}

function die(message) {
  process.stderr.write(`mcp-record-server: ${message}\n`);
  process.exit(2);
}

if (mode !== "stdio" && mode !== "http") die(`first argument must be stdio or http, not ${JSON.stringify(mode)}`);
if (!opts.record) die("--record FILE is required");

function record(entry) {
  fs.appendFileSync(opts.record, `${JSON.stringify({ t: new Date().toISOString(), ...entry })}\n`);
}

const TOOL = {
  name: opts.tool,
  description: `Records that it was called (ACP Desk test MCP server, ${mode}).`,
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
};

/** The answer to one JSON-RPC message, or null for a notification. */
function answer(message, transport) {
  if (message.id === undefined || message.id === null) return null;
  const ok = (result) => ({ jsonrpc: "2.0", id: message.id, result });
  switch (message.method) {
    case "initialize":
      return ok({
        // Whatever the client speaks: this server uses nothing version-specific.
        protocolVersion: message.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: `acp-desk-mcp-record-${transport}`, version: "0.1.0" },
      });
    case "ping":
      return ok({});
    case "tools/list":
      return ok({ tools: [TOOL] });
    case "tools/call":
      if (message.params?.name !== TOOL.name) {
        return { jsonrpc: "2.0", id: message.id, error: { code: -32602, message: `unknown tool ${message.params?.name}` } };
      }
      return ok({ content: [{ type: "text", text: `${TOOL.name} answered via ${transport}` }], isError: false });
    default:
      return { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: `method not found: ${message.method}` } };
  }
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

if (mode === "stdio") {
  const env = Object.fromEntries(opts.env.map((n) => [n, process.env[n] ?? null]));
  record({ event: "start", transport: "stdio", pid: process.pid, argv: process.argv.slice(2), env });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    if (line.trim() === "") return;
    const message = parse(line);
    if (message === undefined) {
      record({ event: "bad-line", transport: "stdio" });
      process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } })}\n`);
      return;
    }
    record({ event: "rpc", transport: "stdio", method: message.method ?? null, id: message.id ?? null });
    const reply = answer(message, "stdio");
    if (reply) process.stdout.write(`${JSON.stringify(reply)}\n`);
  });
  rl.on("close", () => {
    record({ event: "stdin-closed", transport: "stdio" });
    process.exit(0);
  });
} else {
  /** Legacy SSE sessions: id -> the open GET /sse response. */
  const streams = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url, "http://x");
      const authorization = req.headers.authorization ?? null;
      const base = { transport: "http", path: url.pathname, authorization };
      if (req.method === "GET" && url.pathname === "/sse") {
        const id = randomUUID();
        streams.set(id, res);
        record({ event: "sse-open", ...base, transport: "sse" });
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
        res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`);
        // The response's close (the client went away); the request's fires once its body is read.
        res.on("close", () => streams.delete(id));
        return;
      }
      if (req.method === "POST" && url.pathname === "/messages") {
        const stream = streams.get(url.searchParams.get("sessionId") ?? "");
        const message = parse(Buffer.concat(chunks).toString("utf8"));
        record({ event: "rpc", ...base, transport: "sse", method: message?.method ?? null, id: message?.id ?? null });
        if (!stream) {
          record({ event: "unknown-sse-session", ...base, transport: "sse" });
          res.writeHead(404).end("no such SSE session");
          return;
        }
        res.writeHead(202).end("Accepted");
        const reply = message === undefined ? null : answer(message, "sse");
        if (reply) stream.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
        return;
      }
      if (url.pathname !== "/mcp") {
        record({ event: "unhandled", ...base, httpMethod: req.method });
        res.writeHead(404).end();
        return;
      }
      if (req.method !== "POST") {
        // No server-initiated stream (GET) and no session to end (DELETE): both allowed by the spec.
        record({ event: "http", ...base, httpMethod: req.method });
        res.writeHead(405, { allow: "POST" }).end();
        return;
      }
      const message = parse(Buffer.concat(chunks).toString("utf8"));
      if (message === undefined || Array.isArray(message)) {
        record({ event: "bad-body", ...base });
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "expected one JSON-RPC message" } }));
        return;
      }
      record({ event: "rpc", ...base, method: message.method ?? null, id: message.id ?? null, session: req.headers["mcp-session-id"] ?? null });
      const reply = answer(message, "http");
      if (!reply) {
        res.writeHead(202).end();
        return;
      }
      const headers = { "content-type": "application/json" };
      if (message.method === "initialize") headers["mcp-session-id"] = randomUUID();
      res.writeHead(200, headers);
      res.end(JSON.stringify(reply));
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address();
    if (opts.portFile) fs.writeFileSync(opts.portFile, String(port));
    process.stdout.write(`PORT=${port}\n`);
  });
  for (const sig of ["SIGTERM", "SIGINT"]) {
    process.on(sig, () => {
      for (const s of streams.values()) s.end();
      server.close(() => process.exit(0));
    });
  }
}
