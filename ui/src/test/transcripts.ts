// Recorded transcripts for component tests: claude-code-acp through `acp-desk-cli run --json`
// (tests/real-agents/transcripts) and the demo agent's scenarios (tests/transcripts/demo).
import type { StreamEvent } from '../lib/generated/ipc';

const recorded = import.meta.glob(
  ['../../../tests/real-agents/transcripts/*.jsonl', '../../../tests/transcripts/demo/*.jsonl'],
  { query: '?raw', import: 'default', eager: true },
) as Record<string, string>;

/** The events of `tests/<path>`, e.g. `transcripts/demo/permission.jsonl`. */
export function transcript(path: string): StreamEvent[] {
  const text = recorded[`../../../tests/${path}`];
  if (text === undefined) throw new Error(`no transcript ${path}`);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as StreamEvent);
}
