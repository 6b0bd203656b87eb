// Replays a real agent's side of a recorded ACP exchange (tests/fixtures/*.jsonl, one JSON
// object per line: {"sent": MSG} from the client, {"answered": MSG} from the agent), so the
// engine meets exactly what the real adapter sent.
//
// The recording is walked in order. A `sent` request or notification waits until our client
// sends one of the same method (its id is mapped onto the recorded one); a `sent` answer to an
// agent request waits until our client answers that id (or moves on when the client already
// did). `answered` lines are written as recorded, responses under the client's own ids. When a
// `sent` step is for something the client will not send (the recording's client did more), it
// waits: the test decides what to send. Past the end, `session/close` is answered `{}` and any
// other request gets an error; the process ends when its input closes.
//
// Usage: node wire-replay.mjs FIXTURE.jsonl. No deps.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: node wire-replay.mjs FIXTURE.jsonl\n");
  process.exit(2);
}
const steps = readFileSync(file, "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l));

const ids = new Map(); // recorded request id -> the client's id
const answered = new Set(); // agent request ids the client has answered
const inbox = [];
let wake = null;
const write = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.method === undefined && msg.id !== undefined) {
    answered.add(msg.id);
  }
  inbox.push(msg);
  wake?.();
});
rl.on("close", () => process.exit(0));

const next = () =>
  new Promise((resolve) => {
    const take = () => {
      if (inbox.length > 0) {
        wake = null;
        resolve(inbox.shift());
      } else {
        wake = take;
      }
    };
    take();
  });

/** Answers what the recording has no step for (past its end, or while waiting). */
const unexpected = (msg) => {
  if (msg.method === undefined || msg.id === undefined) return;
  if (msg.method === "session/close") write({ jsonrpc: "2.0", id: msg.id, result: {} });
  else
    write({
      jsonrpc: "2.0",
      id: msg.id,
      error: { code: -32601, message: `wire-replay: ${msg.method} is not in the recording` },
    });
};

for (const step of steps) {
  if (step.answered) {
    const m = { ...step.answered };
    if (m.method === undefined && m.id !== undefined && ids.has(m.id)) m.id = ids.get(m.id);
    write(m);
    continue;
  }
  const want = step.sent;
  if (want.method === undefined) {
    // The recording's client answered one of the agent's requests.
    while (!answered.has(want.id)) {
      const msg = await next();
      if (msg.method !== undefined) {
        unexpected(msg);
      }
    }
    continue;
  }
  for (;;) {
    const msg = await next();
    if (msg.method === want.method) {
      if (want.id !== undefined) ids.set(want.id, msg.id);
      break;
    }
    unexpected(msg);
  }
}
for (;;) unexpected(await next());
