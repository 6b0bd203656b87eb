import { describe, expect, it } from 'vitest';
import type { AgentPromptEvent, ToolCallLocation } from './generated/ipc';
import { diffFirstLine, type DiffItem } from './permission';

const PATH = '/proj/a.txt';

function ask(
  diff: { oldText?: string | null; newText: string },
  more: { rawInput?: unknown; locations?: ToolCallLocation[] } = {},
): [AgentPromptEvent, DiffItem] {
  const d: DiffItem = { type: 'diff', path: PATH, ...diff };
  return [
    {
      sessionId: 's',
      toolCallId: 't#1',
      targetToolCallId: 't',
      options: [],
      content: [d],
      ...more,
    },
    d,
  ];
}

const edit = (oldText: string, newText: string, extra: Record<string, unknown> = {}) => ({
  rawInput: { file_path: PATH, old_string: oldText, new_string: newText, ...extra },
});
const at = (line?: number | null, path = PATH): ToolCallLocation[] => [
  line === undefined ? { path } : { path, line },
];

describe('diffFirstLine: the file line a diff starts at, or null when unknown', () => {
  it('a new file starts at 1', () => {
    expect(diffFirstLine(...ask({ oldText: null, newText: 'x\n' }))).toBe(1);
    expect(diffFirstLine(...ask({ newText: 'x\n' }, { locations: at(7) }))).toBe(1);
  });

  it('an Edit fragment starts at its location line', () => {
    const d = { oldText: 'b\n', newText: 'B\n' };
    expect(diffFirstLine(...ask(d, { ...edit('b\n', 'B\n'), locations: at(2) }))).toBe(2);
  });

  it('an Edit fragment without a line, or with line 0 (no position), is not numbered', () => {
    const d = { oldText: 'b\n', newText: 'B\n' };
    expect(diffFirstLine(...ask(d, { ...edit('b\n', 'B\n'), locations: at() }))).toBeNull();
    expect(diffFirstLine(...ask(d, { ...edit('b\n', 'B\n'), locations: at(null) }))).toBeNull();
    expect(diffFirstLine(...ask(d, { ...edit('b\n', 'B\n'), locations: at(0) }))).toBeNull();
    expect(diffFirstLine(...ask(d, edit('b\n', 'B\n')))).toBeNull();
    // A line for another file says nothing about this one.
    const other = { ...edit('b\n', 'B\n'), locations: at(2, '/proj/other.txt') };
    expect(diffFirstLine(...ask(d, other))).toBeNull();
  });

  it('a fragment that opens with unchanged lines is not numbered (what the line points at is unsaid)', () => {
    const d = { oldText: 'a\nb\n', newText: 'a\nB\n' };
    expect(diffFirstLine(...ask(d, { ...edit('a\nb\n', 'a\nB\n'), locations: at(5) }))).toBeNull();
  });

  it('replace_all puts the fragment in several places: not numbered', () => {
    const d = { oldText: 'b\n', newText: 'B\n' };
    const input = { ...edit('b\n', 'B\n', { replace_all: true }), locations: at(2) };
    expect(diffFirstLine(...ask(d, input))).toBeNull();
  });

  it('two lines named for the file: not numbered', () => {
    const d = { oldText: 'b\n', newText: 'B\n' };
    const locations = [...at(2), ...at(9)];
    expect(diffFirstLine(...ask(d, { ...edit('b\n', 'B\n'), locations }))).toBeNull();
  });

  it('without a raw input that says: the whole file (ACP), unless the location rules it out', () => {
    const whole = { oldText: 'a\nb\nc\n', newText: 'a\nB\nc\n' };
    expect(diffFirstLine(...ask(whole))).toBe(1);
    expect(diffFirstLine(...ask(whole, { locations: at() }))).toBe(1);
    expect(diffFirstLine(...ask(whole, { locations: at(1) }))).toBe(1);
    // The line of the change in the whole text: consistent with the whole file.
    expect(diffFirstLine(...ask(whole, { locations: at(2) }))).toBe(1);
    // A line past the end of both texts cannot be in them: a fragment at that line.
    const frag = { oldText: 'b\n', newText: 'B\n' };
    expect(diffFirstLine(...ask(frag, { locations: at(3) }))).toBe(3);
    // Inside the text but not at its change: either reading could be meant.
    expect(diffFirstLine(...ask(whole, { locations: at(3) }))).toBeNull();
  });

  it("a Write's content is the whole file", () => {
    const d = { oldText: 'old\n', newText: 'new\n' };
    const rawInput = { file_path: PATH, content: 'new\n' };
    expect(diffFirstLine(...ask(d, { rawInput, locations: at(4) }))).toBe(1);
  });
});
