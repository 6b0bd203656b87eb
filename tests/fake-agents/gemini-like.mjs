// An agent that does what Gemini CLI (0.61.0) does when it creates a file through the client,
// and says it is Gemini CLI the way Gemini CLI does (`agentInfo.name: "gemini-cli"`), so the
// engine's per-agent quirks can be tested without Gemini and a model behind it.
//
// Gemini reads a file through `fs/read_text_file` before writing it and does not recognise the
// spec's -32002 for a missing file: its write then fails with "Error checking existing file"
// (shared/notes/real-agents.md, "Gemini CLI and new files"). This agent answers the prompt
// `create NAME` the same way: read NAME; on an error, report that failure; else write NAME.
// Hand-written JSON-RPC: a handful of messages, and the point is to behave like that agent.
import { createInterface } from "node:readline";
import { join } from "node:path";

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const rl = createInterface({ input: process.stdin });
let cwd = "";
let sessionId = "gemini-like-1";
let nextId = 100;
const waiting = new Map();

function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

function say(text) {
  send({
    method: "session/update",
    params: {
      sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
    },
  });
}

async function prompt(msg) {
  const text = msg.params?.prompt?.map((b) => b.text ?? "").join(" ") ?? "";
  const name = /create\s+(\S+)/.exec(text)?.[1] ?? "notes.txt";
  const path = join(cwd, name);
  const read = await request("fs/read_text_file", { sessionId, path });
  if (read.error) {
    // What Gemini shows: its SDK hands it the error as a plain object.
    say(`Error checking existing file: [object Object]`);
  } else {
    const wrote = await request("fs/write_text_file", {
      sessionId,
      path,
      content: `${read.result.content}written by gemini-like\n`,
    });
    say(wrote.error ? `write failed: ${wrote.error.message}` : `Created ${name}.`);
  }
  send({ id: msg.id, result: { stopReason: "end_turn" } });
}

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
    send({
      id: msg.id,
      result: {
        protocolVersion: 1,
        agentCapabilities: {},
        authMethods: [],
        agentInfo: { name: "gemini-cli", title: "Gemini CLI", version: "0.61.0" },
      },
    });
  } else if (msg.method === "session/new") {
    cwd = msg.params.cwd;
    send({ id: msg.id, result: { sessionId } });
  } else if (msg.method === "session/prompt") {
    prompt(msg);
  }
});
rl.on("close", () => process.exit(0));
