import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { ToolKind } from '../../lib/generated/ipc';
import type { Entry, SessionView, ToolEntry } from '../../lib/session-store';
import { emptyView } from '../../lib/session-store';
import Markdown from '../Markdown.svelte';
import Thread from '../Thread.svelte';
import DiffView from './DiffView.svelte';
import ToolCard from './ToolCard.svelte';

afterEach(() => cleanup());

const FOLDER = '/proj';
const threadProps = {
  folder: FOLDER,
  onopenpath: () => undefined,
  onrevealpath: () => undefined,
  onopenurl: () => undefined,
};

function tool(more: Partial<ToolEntry> = {}): ToolEntry {
  return {
    type: 'tool',
    key: 1,
    toolCallId: 'call-1',
    title: 'Run tests',
    kind: 'execute',
    status: 'completed',
    content: [],
    locations: [],
    rawInput: undefined,
    rawOutput: undefined,
    rejected: false,
    files: [],
    ...more,
  };
}

function view(entries: Entry[]): SessionView {
  return { ...emptyView(), entries, status: 'ready' };
}

const noop = () => {};
function card(
  entry: ToolEntry,
  handlers: Partial<Record<'onopenpath' | 'onrevealpath' | 'onopenurl', never>> = {},
) {
  return render(ToolCard, {
    entry,
    terminals: {},
    folder: FOLDER,
    onopenpath: noop,
    onrevealpath: noop,
    onopenurl: noop,
    ...handlers,
  });
}

describe('ToolCard', () => {
  it.each<[ToolKind, string]>([
    ['read', 'read'],
    ['edit', 'edit'],
    ['delete', 'delete'],
    ['move', 'move'],
    ['search', 'search'],
    ['execute', 'execute'],
    ['think', 'think'],
    ['fetch', 'fetch'],
    ['switch_mode', 'switch_mode'],
    ['other', 'other'],
  ])('shows the %s icon, status and kind', (kind, icon) => {
    const { container } = card(tool({ kind, status: 'in_progress' }));
    const root = container.querySelector('[data-entry="tool"]') as HTMLElement;
    expect(root.dataset['kind']).toBe(kind);
    expect(root.dataset['status']).toBe('in_progress');
    expect(root.dataset['toolCallId']).toBe('call-1');
    expect(root.querySelector(`.kind [data-icon="${icon}"]`)).toBeTruthy();
    expect(screen.getByText('Running')).toBeTruthy();
  });

  it('links locations relative to the folder, with open and reveal', async () => {
    const onopenpath = vi.fn();
    const onrevealpath = vi.fn();
    render(ToolCard, {
      entry: tool({
        kind: 'read',
        locations: [{ path: '/proj/src/a.ts', line: 12 }, { path: '/elsewhere/b.ts' }],
      }),
      terminals: {},
      folder: FOLDER,
      onopenpath,
      onrevealpath,
      onopenurl: noop,
    });
    await fireEvent.click(screen.getByText('src/a.ts'));
    expect(onopenpath).toHaveBeenCalledWith('/proj/src/a.ts', 12);
    expect(screen.getByText(':12')).toBeTruthy();
    await fireEvent.click(screen.getByText('/elsewhere/b.ts'));
    expect(onopenpath).toHaveBeenLastCalledWith('/elsewhere/b.ts', null);
    await fireEvent.click(screen.getByLabelText('Reveal a.ts'));
    expect(onrevealpath).toHaveBeenCalledWith('/proj/src/a.ts');
  });

  it('shows the command prominently, and rawOutput when there is no content (Codex)', () => {
    const { container } = card(
      tool({
        rawInput: { command: ['bash', '-lc', 'cargo test'], cwd: '/proj/crates' },
        rawOutput: { stdout: 'test result: ok. 3 passed', exit_code: 0 },
      }),
    );
    expect(container.querySelector('.command code')?.textContent).toBe('cargo test');
    expect(screen.getByText('in crates')).toBeTruthy();
    const output = container.querySelectorAll('details.io')[1] as HTMLDetailsElement;
    expect(output.open).toBe(true);
    expect(output.textContent).toContain('test result: ok. 3 passed');
    // Input is there too, collapsed, as pretty JSON.
    const input = container.querySelectorAll('details.io')[0] as HTMLDetailsElement;
    expect(input.open).toBe(false);
    expect(input.querySelector('pre')?.textContent).toContain('"cwd": "/proj/crates"');
  });

  it('keeps output closed when there is content, and renders content blocks', () => {
    const { container } = card(
      tool({
        kind: 'search',
        content: [
          { type: 'content', content: { type: 'text', text: 'Found **3** matches' } },
          {
            type: 'content',
            content: { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
          },
          {
            type: 'content',
            content: { type: 'image', mimeType: 'image/svg+xml', data: 'PHN2Zz4=' },
          },
        ],
        rawOutput: 'raw',
      }),
    );
    expect(container.querySelector('strong')?.textContent).toBe('3');
    const imgs = container.querySelectorAll('img');
    expect(imgs).toHaveLength(1);
    expect(imgs[0]?.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    expect((container.querySelector('details.io') as HTMLDetailsElement).open).toBe(false);
  });

  it('comes back collapsed after the list unmounts and remounts it', async () => {
    const entry = tool({ toolCallId: 'keep-me', rawInput: { a: 1 } });
    card(entry);
    expect(document.querySelector('details.io')).toBeTruthy();
    await fireEvent.click(screen.getByLabelText('Collapse'));
    expect(document.querySelector('details.io')).toBeNull();
    cleanup();
    card(entry);
    expect(screen.getByLabelText('Expand')).toBeTruthy();
    expect(document.querySelector('details.io')).toBeNull();
  });

  it('shows diff and terminal content', () => {
    const { container } = render(ToolCard, {
      entry: tool({
        kind: 'edit',
        content: [
          { type: 'diff', path: '/proj/a.txt', oldText: 'a\n', newText: 'b\n' },
          { type: 'terminal', terminalId: 't1' },
        ],
      }),
      terminals: {
        t1: {
          text: 'hello\n',
          dropped: 0,
          exitStatus: { exitCode: 0 },
          truncated: false,
          limit: 100,
        },
      },
      folder: FOLDER,
      onopenpath: noop,
      onrevealpath: noop,
      onopenurl: noop,
    });
    expect(container.querySelector('.diff-view')).toBeTruthy();
    const term = container.querySelector('[data-terminal-id="t1"]');
    expect(term).toBeTruthy();
    expect(term?.textContent).toContain('exited 0');
  });
});

describe('DiffView', () => {
  const old = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  it('shows a unified diff with line numbers and folded regions that open', async () => {
    const { container } = render(DiffView, {
      path: '/proj/src/x.ts',
      oldText: old,
      newText: old.replace('line 20\n', 'line twenty\n'),
      folder: FOLDER,
    });
    expect(container.querySelector('.diff-view .path')?.textContent).toBe('src/x.ts');
    const add = container.querySelector('tr.add') as HTMLElement;
    expect(add.textContent).toContain('line twenty');
    expect(container.querySelector('tr.del')?.textContent).toContain('line 20');
    const more = screen.getByText(/Show 16 more lines/);
    expect(container.querySelectorAll('tbody tr:not(.gap)')).toHaveLength(8);
    await fireEvent.click(more);
    expect(container.querySelectorAll('tbody tr:not(.gap)')).toHaveLength(24);
  });

  it('switches to a split view', async () => {
    const { container } = render(DiffView, { path: 'x', oldText: 'a\nb\n', newText: 'a\nc\n' });
    await fireEvent.click(screen.getByText('Split'));
    const row = [...container.querySelectorAll('table.split tr')].find((r) =>
      r.querySelector('td.code.del'),
    );
    expect(row?.querySelector('td.code.del')?.textContent).toBe('b');
    expect(row?.querySelector('td.code.add')?.textContent).toBe('c');
  });

  it('marks a new file, all lines added', () => {
    const { container } = render(DiffView, {
      path: '/proj/n.ts',
      oldText: null,
      newText: 'x\ny\n',
    });
    expect(screen.getByText('New file')).toBeTruthy();
    expect(container.querySelectorAll('tr.add')).toHaveLength(2);
  });
});

describe('Markdown links', () => {
  it('hands web links to onopenurl and never navigates', async () => {
    const onopenurl = vi.fn();
    const { container } = render(Markdown, {
      text: 'See [docs](https://example.com/d) and [x](file:///etc/passwd).',
      onopenurl,
    });
    const [web, local] = [...container.querySelectorAll('a')];
    const click = new MouseEvent('click', { bubbles: true, cancelable: true, button: 0 });
    web?.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(onopenurl).toHaveBeenCalledWith('https://example.com/d');
    const middle = new MouseEvent('auxclick', { bubbles: true, cancelable: true, button: 1 });
    web?.dispatchEvent(middle);
    expect(middle.defaultPrevented).toBe(true);
    expect(onopenurl).toHaveBeenCalledTimes(2);
    const other = new MouseEvent('click', { bubbles: true, cancelable: true });
    local?.dispatchEvent(other);
    expect(other.defaultPrevented).toBe(true);
    expect(onopenurl).toHaveBeenCalledTimes(2);
    expect(location.href).not.toContain('example.com');
  });

  it('adds a Copy button to code blocks', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    render(Markdown, { text: '```rust\nfn main() {}\n```' });
    const copy = await screen.findByText('Copy');
    await fireEvent.click(copy);
    expect(writeText).toHaveBeenCalledWith('fn main() {}');
    expect(await screen.findByText('Copied')).toBeTruthy();
  });
});

describe('Thread', () => {
  it('renders every kind of entry with its data-entry', () => {
    const entries: Entry[] = [
      {
        type: 'user',
        key: 1,
        text: 'hi',
        attachments: [{ kind: 'file', name: 'a.ts', uri: null }],
      },
      { type: 'thought', key: 2, text: 'First line of thought\nsecond', messageId: null },
      { type: 'agent', key: 3, text: 'Hello **there**', messageId: null },
      tool({ key: 4 }),
      { type: 'settled', key: 5, text: 'Permission settled.' },
      { type: 'file', key: 6, path: '/proj/src/a.ts', created: true },
      { type: 'notice', key: 7, severity: 'warning', title: 'Careful', description: null },
      { type: 'error', key: 8, message: 'Broken' },
      { type: 'turn-end', key: 9, reason: 'watchdog-timeout', stopReason: null },
    ];
    const { container } = render(Thread, { view: view(entries), ...threadProps });
    const types = [...container.querySelectorAll('[data-entry]')].map((e) =>
      e.getAttribute('data-entry'),
    );
    expect(types).toEqual([
      'user',
      'thought',
      'agent',
      'tool',
      'settled',
      'file',
      'notice',
      'error',
      'turn-end',
    ]);
    expect(screen.getByRole('alert').textContent).toContain('Broken');
    expect(container.querySelector('[data-reason="watchdog-timeout"]')).toBeTruthy();
    expect(screen.getByText('First line of thought')).toBeTruthy();
    expect(screen.getByText('src/a.ts')).toBeTruthy();
    expect(screen.getByText('created')).toBeTruthy();
    // The list is not a live region (that would read every chunk); a small status line is.
    expect(container.querySelector('.scroller')?.getAttribute('aria-live')).toBeNull();
    expect(container.querySelector('[aria-live="polite"]')?.textContent).toContain('Turn over.');
  });

  it('announces an error once, not each time the list mounts it again', () => {
    const error: Entry = { type: 'error', key: 1, message: 'Broken once' };
    render(Thread, { view: view([error]), ...threadProps });
    expect(screen.getByRole('alert').textContent).toContain('Broken once');
    cleanup();
    render(Thread, { view: view([error]), ...threadProps });
    expect(screen.getByText('Broken once')).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('renders only a window of a 5,000-entry thread', async () => {
    // jsdom has no layout: give the scroller a 600 px viewport (getBoundingClientRect) and
    // every entry 40 px.
    const rect = vi
      .spyOn(HTMLElement.prototype, 'getBoundingClientRect')
      .mockImplementation(function (this: HTMLElement) {
        const height = this.classList.contains('scroller') ? 600 : 40;
        return {
          width: 800,
          height,
          top: 0,
          left: 0,
          right: 800,
          bottom: height,
          x: 0,
          y: 0,
          toJSON: () => ({}),
        };
      });
    // virtual-core measures entries by offsetHeight.
    const offset = vi.spyOn(HTMLElement.prototype, 'offsetHeight', 'get').mockReturnValue(40);
    onTestFinished(() => {
      rect.mockRestore();
      offset.mockRestore();
    });
    const entries: Entry[] = [];
    for (let i = 0; i < 5000; i++)
      entries.push(
        i % 10 === 5
          ? tool({ key: i + 1, toolCallId: `c${i}`, title: `Tool ${i}` })
          : { type: 'agent', key: i + 1, text: `Answer ${i}`, messageId: null },
      );
    const { container } = render(Thread, { view: view(entries), ...threadProps });
    const count = () => container.querySelectorAll('[data-entry]').length;
    // 600 px / (40 px + 10 px gap) = 12 visible, plus the overscan on each side.
    await waitFor(() => expect(count()).toBeGreaterThan(10));
    const shown = count();
    expect(shown).toBeLessThanOrEqual(12 + 2 * 6 + 2);
    // The scroll area is as tall as the whole thread (estimated), not as what is mounted.
    const height = parseFloat((container.querySelector('.items') as HTMLElement).style.height);
    expect(height).toBeGreaterThan(5000 * 40);
  });
});
