#!/usr/bin/env node
// Records the wire between a client and an agent: `node wire-tap.mjs LOG -- CMD ARGS...` runs CMD
// with the client's stdin/stdout passed through line by line, appending each line to LOG as
// `{"sent": MSG}` (client to agent) or `{"answered": MSG}` (agent to client); a line that is not
// JSON is kept as `{"sentText"|"answeredText": LINE}`. The agent's side of the wire, so "we never
// sent X" is read from the wire itself, not from our own logs. No dependencies. Exits with the
// agent's status; SIGTERM/SIGINT/SIGHUP are passed on.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [log, sep, cmd, ...args] = process.argv.slice(2);
if (!log || sep !== '--' || !cmd) {
  process.stderr.write('usage: node wire-tap.mjs LOG -- CMD [ARGS...]\n');
  process.exit(2);
}
const record = (dir, line) => {
  let entry;
  try {
    entry = { [dir]: JSON.parse(line) };
  } catch {
    entry = { [dir + 'Text']: line };
  }
  appendFileSync(log, JSON.stringify(entry) + '\n');
};
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const fromClient = createInterface({ input: process.stdin });
fromClient.on('line', (line) => {
  record('sent', line);
  child.stdin.write(line + '\n');
});
fromClient.on('close', () => child.stdin.end());
child.stdin.on('error', () => {});
const fromAgent = createInterface({ input: child.stdout });
fromAgent.on('line', (line) => {
  record('answered', line);
  process.stdout.write(line + '\n');
});
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => {
  // The agent's last lines are written before leaving.
  fromAgent.on('close', () => process.exit(code ?? (signal ? 143 : 1)));
});
