// A deliberately broken ACP agent for the engine's robustness tests. Hand-written JSON-RPC on
// purpose: the point is to send what a correct SDK never would.
//   node misbehave.mjs deaf        on session/prompt: stop reading stdin, send 5000 requests
//   node misbehave.mjs bad-error   answer session/prompt with an error that has no message
//   node misbehave.mjs string-id   answer session/prompt echoing our numeric id as a string
//   node misbehave.mjs big-tools   400 tool calls with 1 MiB rawOutput each, never completed
// Modes for Check (agents/check.rs); MARKER (any text) is only there for the test to find the
// processes in /proc:
//   node misbehave.mjs garbage MARKER    prints text that is not JSON, then nothing, ever
//   node misbehave.mjs silent MARKER     never answers; ignores stdin EOF and SIGTERM; a setsid
//                                        child (with MARKER in its command line) does the same
//   node misbehave.mjs exit3             on initialize: three lines on stderr, exit code 3
//   node misbehave.mjs killed            on initialize: one line on stderr, then SIGKILLs itself
//   node misbehave.mjs invalid-init      answers initialize with a protocolVersion that is a word
//   node misbehave.mjs refuse-init       answers initialize with a JSON-RPC error
//   node misbehave.mjs chatty            prints a banner line on stdout, then answers as `good`
//   node misbehave.mjs good              answers initialize well (agentInfo, capabilities with _meta)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "";
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const forever = () => setInterval(() => {}, 1000);

if (mode === "garbage") {
  process.stdout.write("Welcome to Fake Agent 1.0!\nType 'help' to get started.\n");
  forever();
} else if (mode === "silent") {
  process.on("SIGTERM", () => {});
  const child = spawn(
    process.execPath,
    ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)", process.argv[3] ?? ""],
    { detached: true, stdio: "ignore" },
  );
  child.unref();
  process.stdin.resume();
  forever();
} else if (mode === "chatty") {
  process.stdout.write("fake-agent: loading profile...\n");
}
const quiet = mode === "garbage" || mode === "silent";
const rl = createInterface({ input: process.stdin });

rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (quiet) {
    return;
  }
  if (msg.method === "initialize" && mode === "exit3") {
    process.stderr.write("fake-agent: starting\nfake-agent: no API key found\nError: set FAKE_API_KEY and try again\n");
    process.exit(3);
  } else if (msg.method === "initialize" && mode === "killed") {
    process.stderr.write("fake-agent: out of memory\n");
    process.kill(process.pid, "SIGKILL");
  } else if (msg.method === "initialize" && mode === "invalid-init") {
    send({ id: msg.id, result: { protocolVersion: "one", agentCapabilities: {} } });
  } else if (msg.method === "initialize" && mode === "refuse-init") {
    send({ id: msg.id, error: { code: -32603, message: "Internal error: config file ~/.fake/config.toml is broken" } });
  } else if (msg.method === "initialize") {
    send({
      id: msg.id,
      result: {
        protocolVersion: 1,
        agentCapabilities: { loadSession: true, promptCapabilities: { image: true }, _meta: { fake: 1 } },
        authMethods: [{ id: "fake-login", name: "Log in", description: "Opens a browser" }],
        agentInfo: { name: "fake-agent", title: "Fake Agent", version: "0.0.1" },
      },
    });
  } else if (msg.method === "session/new") {
    send({ id: msg.id, result: { sessionId: "bad-1" } });
  } else if (msg.method === "session/prompt") {
    prompt(msg);
  }
});
rl.on("close", () => quiet || process.exit(0));

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
