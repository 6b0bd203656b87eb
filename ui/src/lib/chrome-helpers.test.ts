import { describe, expect, it } from 'vitest';
import {
  acceptsImages,
  imageProblem,
  matchCommands,
  mentionAt,
  removeMention,
  slashQuery,
} from './composer-input';
import { FileIndex } from './fuzzy';
import { argRows, commandOf, optionForKey, orderedOptions } from './permission';
import type { SessionView } from './session-store';
import { baseName } from './paths';
import { sessionStatus } from './status';
import { compactNumber, formatCost, usageText } from './usage';

const key = (k: string, shift = false) => ({
  key: k,
  shiftKey: shift,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
});

describe('composer input', () => {
  it('opens the / menu only in the first word', () => {
    expect(slashQuery('/rev', 4)).toBe('rev');
    expect(slashQuery('/', 1)).toBe('');
    expect(slashQuery('/review x', 9)).toBeNull();
    expect(slashQuery('hi /x', 5)).toBeNull();
  });
  it('puts commands that start with the query first', () => {
    const cmds = [{ name: 'pr-review' }, { name: 'review' }, { name: 'init' }];
    expect(matchCommands(cmds, 'rev').map((c) => c.name)).toEqual(['review', 'pr-review']);
  });
  it('finds the @mention at the caret, and removes it', () => {
    expect(mentionAt('see @src/ma', 11)).toEqual({ start: 4, query: 'src/ma' });
    expect(mentionAt('mail@host', 9)).toBeNull();
    expect(mentionAt('@', 1)).toEqual({ start: 0, query: '' });
    expect(removeMention('see @ma and', 4, 7)).toEqual({ text: 'see and', caret: 4 });
  });
  it('says why an image cannot be attached', () => {
    const png = { name: 'a.png', type: 'image/png', size: 10 };
    expect(imageProblem(png, false)).toBe('This agent does not accept images.');
    expect(imageProblem(png, true)).toBeNull();
    expect(imageProblem({ ...png, type: 'image/tiff' }, true)).toContain('not a PNG');
    expect(imageProblem({ ...png, size: 10 * 1024 * 1024 + 1 }, true)).toContain('at most 10 MB');
    expect(acceptsImages({ promptCapabilities: { image: true } })).toBe(true);
    expect(acceptsImages({ promptCapabilities: { image: false } })).toBe(false);
    expect(acceptsImages({})).toBe(false);
    expect(acceptsImages(null)).toBe(false);
  });
});

describe('file index', () => {
  it('ranks fuzzy matches and caps them, over many paths', () => {
    const files = Array.from({ length: 20_000 }, (_, i) => `pkg${i % 50}/src/file${i}.ts`);
    files.push('src/main.rs');
    const index = new FileIndex(files);
    const t = performance.now();
    const hits = index.search('mainrs');
    expect(performance.now() - t).toBeLessThan(500);
    expect(hits[0]?.path).toBe('src/main.rs');
    expect(index.search('file1').length).toBe(50);
    expect(index.search('').length).toBe(50);
    const seg = index.search('mainrs')[0]?.segments ?? [];
    expect(seg.filter((s) => s.hit).map((s) => s.text)).toEqual(['main', 'rs']);
    expect(seg[0]).toEqual({ text: 'src/', hit: false, dir: true });
  });
});

describe('permission helpers', () => {
  it('reads commands the ways agents send them', () => {
    expect(commandOf({ command: 'ls -la', cwd: '/p' })).toEqual({
      command: 'ls -la',
      shell: null,
      cwd: '/p',
    });
    expect(commandOf({ command: ['bash', '-lc', 'make && make test'], workdir: '/w' })).toEqual({
      command: 'make && make test',
      shell: 'bash -lc',
      cwd: '/w',
    });
    expect(commandOf({ cmd: ['rm', '-rf', 'my dir'] })?.command).toBe("rm -rf 'my dir'");
    expect(commandOf({ path: 'x' })).toBeNull();
    expect(commandOf('ls')).toBeNull();
  });
  it('orders options and maps keys by kind', () => {
    const opts = [
      { optionId: 'r', name: 'No', kind: 'reject_once' as const },
      { optionId: 'ra', name: 'Never', kind: 'reject_always' as const },
      { optionId: 'a', name: 'Yes', kind: 'allow_once' as const },
    ];
    expect(orderedOptions(opts).map((o) => o.optionId)).toEqual(['a', 'r', 'ra']);
    expect(optionForKey(opts, key('y'))?.optionId).toBe('a');
    expect(optionForKey(opts, key('n'))?.optionId).toBe('r');
    expect(optionForKey(opts, key('N', true))?.optionId).toBe('ra');
    expect(optionForKey(opts, key('a'))).toBeNull();
    expect(optionForKey(opts, { ...key('y'), ctrlKey: true })).toBeNull();
  });
  it('turns arguments into rows', () => {
    expect(argRows({ a: 'x', b: { c: 1 } })).toEqual([
      { key: 'a', value: 'x', multiline: false },
      { key: 'b', value: '{\n  "c": 1\n}', multiline: true },
    ]);
    expect(argRows([1])).toBeNull();
  });
});

describe('status and usage words', () => {
  const view = (over: Partial<SessionView>): SessionView =>
    ({
      status: 'ready',
      statusDetail: null,
      pending: [],
      elicitations: [],
      turnRunning: false,
      ...over,
    }) as SessionView;
  it('says what the session does', () => {
    expect(sessionStatus(view({})).key).toBe('ready');
    expect(sessionStatus(view({ turnRunning: true })).label).toBe('Working…');
    expect(sessionStatus(view({ status: 'starting' })).key).toBe('starting');
    expect(sessionStatus(view({ pending: [{}] as never })).label).toBe('Waiting for you');
    expect(sessionStatus(view({ status: 'dead', statusDetail: 'exited with 3\nstderr…' }))).toEqual(
      { key: 'dead', label: 'Ended', detail: 'exited with 3' },
    );
    expect(baseName('/home/me/proj/')).toBe('proj');
    expect(baseName('C:\\code\\desk')).toBe('desk');
  });
  it('formats usage', () => {
    expect(compactNumber(999)).toBe('999');
    expect(compactNumber(41_200)).toBe('41.2k');
    expect(compactNumber(1_500_000)).toBe('1.5M');
    expect(formatCost(0.4213, 'USD')).toBe('$0.421');
    expect(formatCost(12.4213, 'USD')).toBe('$12.42');
    expect(formatCost(3, 'EUR')).toBe('€3.00');
    expect(formatCost(1, 'CREDITS')).toBe('1.00 CREDITS');
    const t = usageText({
      used: 190_000,
      size: 200_000,
      cost: null,
      tokensIn: null,
      tokensOut: null,
      model: 'opus',
    });
    expect(t.percent).toBe(95);
    expect(t.tokens).toBeNull();
    expect(t.long).toContain('Model: opus');
  });
});
