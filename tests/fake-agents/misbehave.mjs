// A deliberately broken ACP agent for the engine's robustness tests. Hand-written JSON-RPC on
// purpose: the point is to send what a correct SDK never would.
//   node misbehave.mjs deaf        on session/prompt: stop reading stdin, send 5000 requests
//   node misbehave.mjs bad-error   answer session/prompt with an error that has no message
//   node misbehave.mjs string-id   answer session/prompt echoing our numeric id as a string
//   node misbehave.mjs big-tools   400 tool calls with 1 MiB rawOutput each, never completed
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "";
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const rl = createInterface({ input: process.stdin });

rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.method === "initialize") {
    send({ id: msg.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] } });
  } else if (msg.method === "session/new") {
    send({ id: msg.id, result: { sessionId: "bad-1" } });
  } else if (msg.method === "session/prompt") {
    prompt(msg);
  }
});
rl.on("close", () => process.exit(0));

function prompt(msg) {
  if (mode === "deaf") {
    rl.close = () => {};
    process.stdin.pause();
    process.stdin.removeAllListeners("data");
    for (let i = 0; i < 5000; i++) {
      send({ id: 1000 + i, method: "fs/read_text_file", params: { sessionId: "bad-1", path: "/etc/hostname" } });
    }
    setInterval(() => {}, 1000);
  } else if (mode === "bad-error") {
    send({ id: msg.id, error: { code: -32603 } });
  } else if (mode === "string-id") {
    update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "ok" } });
    send({ id: String(msg.id), result: { stopReason: "end_turn" } });
  } else if (mode === "big-tools") {
    const big = "x".repeat(1024 * 1024);
    for (let i = 0; i < 400; i++) {
      update({ sessionUpdate: "tool_call", toolCallId: `t${i}`, title: "big", rawOutput: { text: big } });
    }
    send({ id: msg.id, result: { stopReason: "end_turn" } });
  }
}

function update(u) {
  send({ method: "session/update", params: { sessionId: "bad-1", update: u } });
}
