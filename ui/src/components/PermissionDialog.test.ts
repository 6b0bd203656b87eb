// The permission dialog's diff against the requests the agents really sent (issue 12, item 2):
// its line numbers are the file's real ones, or there are none. The thread's card for the same
// call is checked too: it is not changed by the dialog's rule.
import { cleanup, fireEvent, render, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentPromptEvent, StreamEvent } from '../lib/generated/ipc';
import { SessionStore, type ToolEntry } from '../lib/session-store';
import PermissionDialog from './PermissionDialog.svelte';
import ToolCard from './thread/ToolCard.svelte';
import { transcript } from '../test/transcripts';

afterEach(() => cleanup());

function request(events: StreamEvent[]): AgentPromptEvent {
  const asks = events.flatMap((e) => (e.kind === 'agent-prompt' ? [e] : []));
  expect(asks).toHaveLength(1);
  return asks[0] as AgentPromptEvent;
}

/** The card the thread shows for the call the request is about, once the recording is over. */
function card(events: StreamEvent[], toolCallId: string): ToolEntry {
  const store = new SessionStore();
  store.applyAll([{ snapshot: false, events }]);
  const entry = store.state.entries.find(
    (e): e is ToolEntry => e.type === 'tool' && e.toolCallId === toolCallId,
  );
  if (!entry) throw new Error(`no card for ${toolCallId}`);
  return entry;
}

interface Row {
  kind: string;
  oldNo: string;
  newNo: string;
  text: string;
}

/** The unified view's rows: kind, both gutters' numbers (empty when none), the line. */
function rows(root: Element): Row[] {
  return [...root.querySelectorAll('.diff-view tbody tr:not(.gap)')].map((tr) => {
    const nos = [...tr.querySelectorAll('td.no')].map((td) => td.textContent?.trim() ?? '');
    return {
      kind: ['ctx', 'add', 'del'].find((k) => tr.classList.contains(k)) ?? tr.className,
      oldNo: nos[0] ?? '',
      newNo: nos[1] ?? '',
      text: tr.querySelector('td.code')?.textContent ?? '',
    };
  });
}

function showDialog(req: AgentPromptEvent, folder: string): HTMLElement {
  const { container } = render(PermissionDialog, {
    queue: [req],
    folder,
    onanswer: () => Promise.resolve(true),
  });
  return container;
}

function showCard(entry: ToolEntry, folder: string): HTMLElement {
  const { container } = render(ToolCard, {
    entry,
    terminals: {},
    folder,
    onopenpath: () => undefined,
    onrevealpath: () => undefined,
    onopenurl: () => undefined,
  });
  return container;
}

describe('the permission dialog numbers a diff by the file, never wrongly', () => {
  for (const name of ['claude-code-acp-allow-edit', 'claude-code-acp-reject-edit']) {
    it(`shows no line numbers for claude-code-acp's Edit fragment without a line (${name})`, async () => {
      const events = transcript(`real-agents/transcripts/${name}.jsonl`);
      const req = request(events);
      // What the recording says: the diff is the Edit's old_string/new_string, the file's
      // location carries no line, so where the fragment sits is not in the request.
      const input = req.rawInput as Record<string, unknown>;
      const [diff] = req.content ?? [];
      expect(diff).toMatchObject({ type: 'diff', oldText: input['old_string'] });
      expect(req.locations?.every((l) => l.line === undefined || l.line === null)).toBe(true);

      const folder = String(input['file_path']).replace(/\/[^/]*$/, '');
      const dialog = showDialog(req, folder);
      expect(rows(dialog)).toEqual([
        { kind: 'del', oldNo: '', newNo: '', text: 'colour = red' },
        { kind: 'add', oldNo: '', newNo: '', text: 'colour = blue' },
      ]);
      // Said, not just left blank.
      expect(dialog.querySelector('.diff-view [data-unnumbered]')?.textContent).toMatch(
        /line numbers/i,
      );
      // Side by side: no gutters either.
      await fireEvent.click(within(dialog).getByText('Split'));
      expect(dialog.querySelectorAll('table.split td.code')).toHaveLength(2);
      expect(dialog.querySelectorAll('table.split td.no')).toHaveLength(0);
    });
  }

  it("numbers the showcase's fragment from its location's line, as the location says", () => {
    const events = transcript('transcripts/demo/showcase.jsonl');
    const req = request(events);
    expect(req.locations).toEqual([{ path: expect.stringMatching(/old\.ledger$/), line: 3 }]);
    const dialog = showDialog(req, '/tmp/acp-desk-transcripts/project');
    expect(dialog.querySelector('.perm-locations')?.textContent).toContain(
      'tests/fixtures/old.ledger:3',
    );
    expect(rows(dialog)).toEqual([
      { kind: 'del', oldNo: '3', newNo: '', text: '2024-01-03 -.75 coffee' },
      { kind: 'add', oldNo: '', newNo: '3', text: '2024-01-03 -0.75 coffee' },
    ]);
    expect(dialog.querySelector('.diff-view [data-unnumbered]')).toBeNull();
  });

  it("numbers a new file (claude-code-acp's Write) from 1, as before", () => {
    const events = transcript('real-agents/transcripts/claude-code-acp-allow-write.jsonl');
    const req = request(events);
    const dialog = showDialog(req, '/tmp/acp-desk-real-agents/allow-write/proj');
    expect(rows(dialog)).toEqual([
      { kind: 'add', oldNo: '', newNo: '1', text: 'written by the fake model' },
    ]);
    expect(dialog.querySelector('.diff-view [data-unnumbered]')).toBeNull();
  });
});

describe("the thread's card for the same calls numbers them as the dialog does", () => {
  // The card drew the same fragments from 1 too; it now follows the dialog's rule, so a call is
  // numbered the same before and after it is allowed.
  it("claude-code-acp's Edit", () => {
    const events = transcript('real-agents/transcripts/claude-code-acp-allow-edit.jsonl');
    const container = showCard(
      card(events, 'toolu_fake000014'),
      '/tmp/acp-desk-real-agents/allow-edit/proj',
    );
    expect(rows(container)).toEqual([
      { kind: 'del', oldNo: '', newNo: '', text: 'colour = red' },
      { kind: 'add', oldNo: '', newNo: '', text: 'colour = blue' },
    ]);
    expect(container.querySelector('[data-unnumbered]')?.textContent).toMatch(/line numbers/i);
  });

  it("the showcase's edit", () => {
    const events = transcript('transcripts/demo/showcase.jsonl');
    const container = showCard(card(events, 'show-perm'), '/tmp/acp-desk-transcripts/project');
    expect(container.querySelector('.locations')?.textContent).toContain(
      'tests/fixtures/old.ledger:3',
    );
    expect(rows(container)).toEqual([
      { kind: 'del', oldNo: '3', newNo: '', text: '2024-01-03 -.75 coffee' },
      { kind: 'add', oldNo: '', newNo: '3', text: '2024-01-03 -0.75 coffee' },
    ]);
  });
});
