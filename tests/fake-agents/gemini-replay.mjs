// Gemini CLI 0.61.0's sign-in, replayed: `initialize` is answered with the exact line the real
// package sent (tests/fixtures/gemini-cli-0.61.0-initialize.json), and `session/new` is refused
// with its exact -32000 (gemini-cli-0.61.0-session-new-no-key.json) until this process received
// `authenticate {methodId: "gemini-api-key", _meta: {"api-key": "<string>"}}`. Like the real one
// (tests/fixtures/README.md) the key lives in this process's memory only: a new process needs
// it again.
//
// Every message received is appended to $GEMINI_REPLAY_LOG (when set) as one JSON line
// `{"pid", "received"}`, so a test can see what the client sent to which process, key included
// (that file is the agent's side, the test's own).
// No dependencies: plain JSON-RPC lines.
import { appendFileSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const fixtures = new URL('../fixtures/', import.meta.url);
const initializeLine = readFileSync(new URL('gemini-cli-0.61.0-initialize.json', fixtures), 'utf8');
const noKeyLine = readFileSync(
  new URL('gemini-cli-0.61.0-session-new-no-key.json', fixtures),
  'utf8',
);
const log = process.env.GEMINI_REPLAY_LOG;

// The recorded answers carry the ids of the recorded requests (0 and 1): the same bytes when the
// id matches, else the same object with this request's id (key order kept by JSON.stringify).
function replay(line, id) {
  const recorded = JSON.parse(line);
  if (recorded.id === id) return line.endsWith('\n') ? line : line + '\n';
  return JSON.stringify({ ...recorded, id }) + '\n';
}

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
let apiKey;
let sessions = 0;

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    if (log) appendFileSync(log, JSON.stringify({ pid: process.pid, notJson: line }) + '\n');
    return;
  }
  if (log) appendFileSync(log, JSON.stringify({ pid: process.pid, received: msg }) + '\n');
  if (msg.id === undefined || !msg.method) return;
  const { id, method, params } = msg;
  switch (method) {
    case 'initialize':
      process.stdout.write(replay(initializeLine, id));
      return;
    case 'authenticate': {
      const methods = JSON.parse(initializeLine).result.authMethods.map((m) => m.id);
      if (!methods.includes(params?.methodId)) {
        // Gemini's zod parse of the method id fails, answered as an internal error.
        send({
          id,
          error: { code: -32603, message: `Invalid enum value for methodId: ${params?.methodId}` },
        });
        return;
      }
      if (params.methodId !== 'gemini-api-key') {
        // OAuth and Vertex need Google's servers: not replayable offline.
        send({
          id,
          error: { code: -32000, message: `${params.methodId}: not replayed by this test agent` },
        });
        return;
      }
      const key = params?._meta?.['api-key'];
      if (typeof key === 'string') apiKey = key;
      send({ id, result: {} });
      return;
    }
    case 'session/new':
      if (!apiKey) {
        process.stdout.write(replay(noKeyLine, id));
        return;
      }
      sessions += 1;
      send({ id, result: { sessionId: `gemini-replay-${process.pid}-${sessions}` } });
      return;
    case 'session/prompt':
      send({
        method: 'session/update',
        params: {
          sessionId: params?.sessionId,
          update: {
            sessionUpdate: 'agent_message_chunk',
            content: { type: 'text', text: 'replayed Gemini: signed in with an API key' },
          },
        },
      });
      send({ id, result: { stopReason: 'end_turn' } });
      return;
    default:
      send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
});
rl.on('close', () => process.exit(0));
