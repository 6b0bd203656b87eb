// A synthetic thread for the UI bench: `entries` thread entries (user prompts, agent messages
// in Markdown with code, thoughts, tool calls, turn ends), `tools` of them tool calls (half edits
// with a diff, half commands with terminal output), as the compacted events a view gets when it
// attaches (text merged per message, one event per tool call at its latest state). The last
// turn is still running and its last agent message, the last entry, ends with LAST_MARKER.
//
//   node ui/bench/synthetic.mjs [ENTRIES] [TOOLS] > thread.jsonl   # the same events as JSON lines
import { fileURLToPath } from 'node:url';

export const LAST_MARKER = 'BENCH-LAST-ENTRY';
export const STREAM_MARKER = 'BENCH-STREAM-END';

const SESSION = 'bench-session';

/** @param {number} i */
function markdown(i) {
  switch (i % 5) {
    case 0:
      return `Looking at **module ${i}**: the \`parse_${i}\` function returns early when the input is empty, so the [caller](https://example.com/${i}) never sees the error. I will change that and keep the public API as it is.`;
    case 1:
      return `Plan for step ${i}:\n\n- read \`src/lib_${i}.rs\`\n- add a test for the empty case\n- make \`parse_${i}\` return \`Result\`\n- run the tests`;
    case 2:
      return `Here is the new version:\n\n\`\`\`rust\npub fn parse_${i}(input: &str) -> Result<Vec<u32>, Error> {\n    if input.is_empty() {\n        return Err(Error::Empty);\n    }\n    input\n        .split(',')\n        .map(|s| s.trim().parse().map_err(Error::from))\n        .collect()\n}\n\`\`\``;
    case 3:
      return `| case | before | after |\n|---|---|---|\n| empty | panic | \`Err(Empty)\` |\n| \`1,2\` | \`[1, 2]\` | \`Ok([1, 2])\` |\n| \`x\` | panic | \`Err(Parse)\` |`;
    default:
      return `Done with part ${i}. The change is small; the rest of the file stays as it was. Next I will look at the callers.`;
  }
}

/** @param {number} i */
function fileText(i, changed = false) {
  const lines = [];
  for (let l = 0; l < 24; l++) {
    lines.push(
      changed && l % 8 === 3
        ? `    let value_${l} = compute_${i}(${l})?; // changed`
        : `    let value_${l} = compute_${i}(${l}).unwrap();`,
    );
  }
  return `pub fn run_${i}() -> Result<()> {\n${lines.join('\n')}\n    Ok(())\n}\n`;
}

/** @param {number} i */
function testOutput(i) {
  const lines = [`   Compiling crate_${i} v0.1.0`, '    Finished test profile in 1.2s', ''];
  for (let t = 0; t < 24; t++) lines.push(`test module_${i}::case_${t} ... \u001b[32mok\u001b[0m`);
  lines.push('', `test result: ok. 24 passed; 0 failed; finished in 0.0${i % 10}s`);
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * @param {{ entries: number, tools: number }} opts
 */
export function synthesize({ entries, tools }) {
  const turns = Math.max(1, Math.ceil(tools / 2));
  // Per turn: a prompt, two thoughts, two tool calls, a turn end (not for the last, running,
  // turn); agent messages fill the rest.
  const fixed = turns * 6 - 1;
  const agentTotal = Math.max(turns, entries - fixed);
  /** @type {Array<{ kind: string } & Record<string, unknown>>} */
  const events = [
    {
      kind: 'session-status',
      sessionId: SESSION,
      status: 'ready',
      agent: { launchName: 'demo', name: 'bench', title: 'Bench agent', version: '0' },
    },
  ];
  const counts = { user: 0, agent: 0, thought: 0, tool: 0, turnEnd: 0 };
  let message = 0;
  let tool = 0;
  let lastMessageId = '';
  const agent = (/** @type {string} */ text) => {
    lastMessageId = `m${message}`;
    events.push({ kind: 'text-delta', sessionId: SESSION, text, messageId: lastMessageId });
    counts.agent++;
    message++;
  };
  const thought = (/** @type {number} */ t) => {
    events.push({
      kind: 'thought',
      sessionId: SESSION,
      text: `Thinking about turn ${t}: which files matter, what could break, and how to test it.`,
      messageId: `t${message++}`,
    });
    counts.thought++;
  };
  const toolCall = () => {
    const id = `tc-${tool}`;
    const path = `src/module_${tool}.rs`;
    if (tool < tools) {
      if (tool % 2 === 0) {
        events.push({
          kind: 'tool-call',
          sessionId: SESSION,
          toolCallId: id,
          toolName: `Edit ${path}`,
          arguments: {},
          isUpdate: false,
          toolKind: 'edit',
          status: 'completed',
          content: [{ type: 'diff', path, oldText: fileText(tool), newText: fileText(tool, true) }],
          locations: [{ path }],
        });
      } else {
        const terminalId = `term-${tool}`;
        events.push({
          kind: 'tool-call',
          sessionId: SESSION,
          toolCallId: id,
          toolName: 'Run `cargo test`',
          arguments: {},
          isUpdate: false,
          toolKind: 'execute',
          status: 'completed',
          content: [{ type: 'terminal', terminalId }],
          rawInput: { command: 'cargo test' },
        });
        events.push({
          kind: 'terminal-output',
          sessionId: SESSION,
          terminalId,
          data: testOutput(tool),
          exitStatus: { exitCode: 0 },
        });
      }
      counts.tool++;
    }
    tool++;
  };
  for (let t = 0; t < turns; t++) {
    const last = t === turns - 1;
    const agentHere =
      Math.floor((agentTotal * (t + 1)) / turns) - Math.floor((agentTotal * t) / turns);
    events.push({
      kind: 'turn-start',
      sessionId: SESSION,
      prompt: [
        { type: 'text', text: `Step ${t}: make module ${t} return errors instead of panicking.` },
      ],
    });
    counts.user++;
    // prompt, thought, a quarter of the messages, edit, a quarter, thought, a quarter, command,
    // the rest, turn end
    const q = Math.max(1, Math.floor(agentHere / 4));
    thought(t);
    for (let i = 0; i < q; i++) agent(markdown(message));
    toolCall();
    for (let i = 0; i < q; i++) agent(markdown(message));
    thought(t);
    for (let i = 0; i < q; i++) agent(markdown(message));
    toolCall();
    const rest = agentHere - 3 * q;
    for (let i = 0; i < rest; i++) {
      agent(last && i === rest - 1 ? `${markdown(message)}\n\n${LAST_MARKER}` : markdown(message));
    }
    if (!last) {
      events.push({
        kind: 'turn-end',
        sessionId: SESSION,
        reason: 'completed',
        stopReason: 'end_turn',
      });
      counts.turnEnd++;
    }
  }
  events.push({
    kind: 'session-status',
    sessionId: SESSION,
    status: 'prompting',
    agent: { launchName: 'demo', name: 'bench', title: 'Bench agent', version: '0' },
  });
  const total = counts.user + counts.agent + counts.thought + counts.tool + counts.turnEnd;
  return { sessionId: SESSION, lastMessageId, events, counts: { entries: total, ...counts } };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const entries = Number(process.argv[2] ?? 5000);
  const toolCount = Number(process.argv[3] ?? 500);
  const { events, counts } = synthesize({ entries, tools: toolCount });
  for (const e of events) process.stdout.write(`${JSON.stringify(e)}\n`);
  process.stderr.write(`${JSON.stringify(counts)}\n`);
}
