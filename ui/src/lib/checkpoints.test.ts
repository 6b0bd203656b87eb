import { describe, expect, it } from 'vitest';
import type { IpcError, RevertOutcome } from './generated/ipc';
import {
  diffOf,
  interruptedText,
  ReviewController,
  stepTitle,
  storageText,
  summaryText,
  versionLabels,
  versionWords,
  type Changes,
  type CheckpointListing,
  type CheckpointsBackend,
  type FileVersions,
  type StepInfo,
} from './checkpoints';
import { SessionStore } from './session-store';

type Tree = Map<string, string>;
interface Step {
  turn: number;
  kind: StepInfo['kind'];
  undoes: number | null;
  before: Tree;
  after: Tree;
}

const lines = (t: string | undefined) => (t ? t.split('\n').length : 0);

/** The shell as a plain model: a folder of text files, and steps with a tree before and after
 * each, as the shadow repository keeps them. Reverts only write files still as the step left
 * them, unless forced, and are steps themselves. */
class FakeFolder implements CheckpointsBackend {
  now: Tree;
  steps: Step[] = [];
  calls: string[] = [];
  fail: IpcError | null = null;
  constructor(files: Record<string, string>) {
    this.now = new Map(Object.entries(files));
  }
  /** A turn of the agent: `edit` changes the folder. */
  turn(edit: (t: Tree) => void): void {
    const before = new Map(this.now);
    edit(this.now);
    this.steps.push({
      turn: this.steps.length + 1,
      kind: 'turn',
      undoes: null,
      before,
      after: new Map(this.now),
    });
  }
  private span(turn: number | null): { from: Tree; to: Tree } {
    if (turn === null) {
      // As the core's session span: from before its first step to its last checkpoint.
      const first = this.steps[0];
      const last = this.steps.at(-1);
      return { from: first ? first.before : this.now, to: last ? last.after : this.now };
    }
    const s = this.steps.find((x) => x.turn === turn);
    if (!s)
      throw { code: 'step-unknown', message: `no step ${turn} in this session's checkpoints` };
    return { from: s.before, to: s.after };
  }
  private diff(from: Tree, to: Tree): Changes['files'] {
    const paths = [...new Set([...from.keys(), ...to.keys()])].sort();
    return paths
      .filter((p) => from.get(p) !== to.get(p))
      .map((p) => ({
        path: p,
        status: !from.has(p) ? 'added' : !to.has(p) ? 'deleted' : 'modified',
        added: lines(to.get(p)),
        removed: lines(from.get(p)),
        binary: false,
      }));
  }
  async checkpointList(session: string): Promise<CheckpointListing> {
    this.calls.push(`list ${session}`);
    if (this.fail) throw this.fail;
    return {
      folder: '/p',
      steps: this.steps.map((s) => {
        const files = this.diff(s.before, s.after);
        return {
          turn: s.turn,
          kind: s.kind,
          undoes: s.undoes,
          at: '2026-12-03T08:00:00Z',
          complete: true,
          summary: {
            files: files.length,
            added: files.reduce((n, f) => n + (f.added ?? 0), 0),
            removed: files.reduce((n, f) => n + (f.removed ?? 0), 0),
          },
          undoneBy: this.steps.filter((r) => r.undoes === s.turn).map((r) => r.turn),
        };
      }),
      storage: { bytes: 6000, budgetBytes: 2 * 1024 ** 3, maxAgeDays: 30, steps: 2, sessions: 1 },
      interrupted: [],
    };
  }
  async checkpointChanges(_s: string, turn: number | null): Promise<Changes> {
    this.calls.push(`changes ${turn}`);
    const { from, to } = this.span(turn);
    const files = this.diff(from, to);
    return {
      turn,
      files,
      summary: {
        files: files.length,
        added: files.reduce((n, f) => n + (f.added ?? 0), 0),
        removed: files.reduce((n, f) => n + (f.removed ?? 0), 0),
      },
    };
  }
  async checkpointFile(_s: string, turn: number | null, path: string): Promise<FileVersions> {
    this.calls.push(`file ${turn} ${path}`);
    const { from, to } = this.span(turn);
    const v = (t: string | undefined) =>
      t === undefined ? null : { text: t, bytes: t.length, binary: false };
    return { path, before: v(from.get(path)), after: v(to.get(path)), now: v(this.now.get(path)) };
  }
  private apply(target: Tree, paths: string[], expected: Tree, force: boolean): RevertOutcome {
    const conflicts = paths
      .filter((p) => this.now.get(p) !== expected.get(p))
      .map((p) => ({
        path: p,
        reason: !this.now.has(p) ? ('deleted' as const) : ('changed' as const),
      }));
    if (conflicts.length > 0 && !force) return { outcome: 'conflicts', conflicts };
    const write = paths.filter((p) => this.now.get(p) !== target.get(p));
    if (write.length === 0) return { outcome: 'unchanged' };
    const before = new Map(this.now);
    for (const p of write) {
      const t = target.get(p);
      if (t === undefined) this.now.delete(p);
      else this.now.set(p, t);
    }
    const step = this.steps.length + 1;
    return { outcome: 'done', step, files: write, before } as RevertOutcome & { before: Tree };
  }
  private record(kind: StepInfo['kind'], undoes: number, o: RevertOutcome): RevertOutcome {
    if (o.outcome !== 'done') return o;
    type Done = Extract<RevertOutcome, { outcome: 'done' }>;
    const { before, ...rest } = o as Done & { before: Tree };
    this.steps.push({ turn: rest.step, kind, undoes, before, after: new Map(this.now) });
    return rest;
  }
  async checkpointRevert(
    _s: string,
    turn: number,
    file: string | null,
    force: boolean,
  ): Promise<RevertOutcome> {
    this.calls.push(`revert ${turn} ${file} ${force}`);
    if (this.fail) throw this.fail;
    const { from, to } = this.span(turn);
    const paths = this.diff(from, to)
      .map((f) => f.path)
      .filter((p) => file === null || p === file);
    return this.record('revert', turn, this.apply(from, paths, to, force));
  }
  async checkpointRestore(_s: string, turn: number, force: boolean): Promise<RevertOutcome> {
    this.calls.push(`restore ${turn} ${force}`);
    const { from } = this.span(turn);
    const last = this.steps.at(-1) as Step;
    const paths = [...new Set([...from.keys(), ...this.now.keys()])].filter(
      (p) => from.get(p) !== this.now.get(p),
    );
    return this.record('restore', turn, this.apply(from, paths, last.after, force));
  }
}

function folderWithTwoTurns(): FakeFolder {
  const f = new FakeFolder({ 'a.txt': 'one\n', 'b.txt': 'keep\n' });
  f.turn((t) => {
    t.set('a.txt', 'one\ntwo\n');
    t.set('new.txt', 'made\n');
  });
  f.turn((t) => t.delete('b.txt'));
  return f;
}

describe('ReviewController', () => {
  it('opens on a turn: the steps, its files, and the first file’s diff', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    await review.open('s1', 1);
    const v = review.state;
    expect(v.listing?.steps.map(stepTitle)).toEqual(['Turn 1', 'Turn 2']);
    expect(v.changes?.files.map((f) => [f.path, f.status])).toEqual([
      ['a.txt', 'modified'],
      ['new.txt', 'added'],
    ]);
    expect(summaryText(v.changes?.summary ?? { files: 0, added: 0, removed: 0 })).toBe(
      '2 files +5 −2',
    );
    expect(v.selected).toBe('a.txt');
    expect(v.versions?.before?.text).toBe('one\n');
    expect(v.versions?.after?.text).toBe('one\ntwo\n');
    await review.select('new.txt');
    expect(review.state.versions && diffOf(review.state.versions)).toEqual({
      oldText: null,
      newText: 'made\n',
    });
  });

  it('undoes a turn: its files back as they were, the step said in the thread', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    const told: string[] = [];
    review.onundone = (_s, words) => told.push(words);
    await review.open('s1', 1);
    await review.request({ kind: 'turn', turn: 1 });
    expect(Object.fromEntries(folder.now)).toEqual({ 'a.txt': 'one\n' });
    expect(review.state.said).toBe(
      'Undid turn 1: 2 files put back. This is step 3: undo it from its row to go back.',
    );
    expect(told).toEqual([review.state.said]);
    // The listing was read again: turn 1 is undone by step 3, which can itself be undone.
    const steps = review.state.listing?.steps ?? [];
    expect(steps[0]?.undoneBy).toEqual([3]);
    expect(steps.map(stepTitle)).toContain('Step 3: undo of turn 1');
    await review.showScope(3);
    await review.request({ kind: 'turn', turn: 3 });
    expect(folder.now.get('a.txt')).toBe('one\ntwo\n');
    expect(folder.now.get('new.txt')).toBe('made\n');
  });

  it('undoes one file of a turn and leaves the others', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    await review.open('s1', 1);
    await review.request({ kind: 'file', turn: 1, path: 'new.txt' });
    expect(folder.now.has('new.txt')).toBe(false);
    expect(folder.now.get('a.txt')).toBe('one\ntwo\n');
    expect(review.state.said).toMatch(/^Put new.txt back as it was before turn 1\./);
  });

  it('shows a conflict’s three versions and writes nothing until Overwrite anyway', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    await review.open('s1', 1);
    folder.now.set('a.txt', 'one\ntwo\nmine\n'); // the user's edit after the turn
    await review.request({ kind: 'turn', turn: 1 });
    expect(folder.now.get('a.txt')).toBe('one\ntwo\nmine\n');
    expect(folder.now.has('new.txt')).toBe(true);
    const c = review.state.conflict;
    expect(c?.files.map((f) => [f.path, f.reason])).toEqual([['a.txt', 'changed']]);
    expect(c?.files[0]?.versions).toMatchObject({
      before: { text: 'one\n' },
      after: { text: 'one\ntwo\n' },
      now: { text: 'one\ntwo\nmine\n' },
    });
    review.keepMine();
    expect(review.state.conflict).toBeNull();
    expect(review.state.said).toBe('Nothing was changed: undo turn 1 was not done.');
    expect(folder.now.get('a.txt')).toBe('one\ntwo\nmine\n');

    await review.request({ kind: 'turn', turn: 1 });
    await review.force();
    expect(folder.calls).toContain('revert 1 null true');
    expect(Object.fromEntries(folder.now)).toEqual({ 'a.txt': 'one\n' });
    expect(review.state.conflict).toBeNull();
  });

  it('asks before a restore, and restores the whole folder to before the turn', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    await review.open('s1', null);
    await review.request({ kind: 'restore', turn: 1 });
    expect(review.state.confirm).toEqual({ kind: 'restore', turn: 1 });
    expect(folder.calls.some((c) => c.startsWith('restore'))).toBe(false);
    review.cancelConfirm();
    expect(review.state.confirm).toBeNull();
    await review.request({ kind: 'restore', turn: 1 });
    await review.confirmRestore();
    expect(Object.fromEntries(folder.now)).toEqual({ 'a.txt': 'one\n', 'b.txt': 'keep\n' });
    expect(review.state.said).toMatch(/^Restored the folder to before turn 1: 3 files/);
  });

  it('shows a restore’s conflict against the session’s last checkpoint, not the step’s end', async () => {
    const folder = folderWithTwoTurns();
    // A later turn changed the file again: the step's own end is not what the session left.
    folder.turn((t) => t.set('a.txt', 'one\ntwo\nthree\n'));
    const review = new ReviewController(folder);
    await review.open('s1', null);
    folder.now.set('a.txt', 'the user’s own\n');
    await review.request({ kind: 'restore', turn: 1 });
    await review.confirmRestore();
    const c = review.state.conflict;
    expect(c?.files.map((f) => f.path)).toContain('a.txt');
    expect(c?.files.find((f) => f.path === 'a.txt')?.versions).toMatchObject({
      before: { text: 'one\n' },
      after: { text: 'one\ntwo\nthree\n' },
      now: { text: 'the user’s own\n' },
    });
    expect(
      versionLabels(c?.action ?? { kind: 'turn', turn: 0 }, review.state.listing?.steps),
    ).toEqual({
      before: 'Before turn 1',
      after: 'At the last checkpoint',
      now: 'Now',
    });
    expect(versionLabels({ kind: 'turn', turn: 2 })).toEqual({
      before: 'Before the turn',
      after: 'After the turn',
      now: 'Now',
    });
  });

  it('says why in words when the shell refuses, and changes nothing', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    await review.open('s1', 2);
    folder.fail = {
      code: 'folder-busy',
      message: 'a turn is running in this folder; wait for it to end (or stop it), then try again',
    };
    await review.request({ kind: 'turn', turn: 2 });
    expect(review.state.undoError).toBe(
      'Undo turn 2 failed, and no file was changed: a turn is running in this folder; wait for it to end (or stop it), then try again',
    );
    expect(folder.now.has('b.txt')).toBe(false);
    folder.fail = { code: 'checkpoints-off', message: 'checkpoints are turned off' };
    await review.open('s1', null);
    expect(review.state.error).toBe('checkpoints are turned off');
  });

  it('says what was written when an undo went partly wrong, and shows the folder as it is', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    await review.open('s1', 2);
    const message =
      'the files were put back (b.txt), but the checkpoint of the result could not be taken, so this undo cannot itself be undone from ACP Desk: git failed: disk full';
    const listed = folder.calls.filter((c) => c.startsWith('list')).length;
    // Asked after a conflict, as Overwrite anyway does: the conflict goes with the answer.
    folder.now.set('b.txt', 'someone’s\n');
    const revert = folder.checkpointRevert.bind(folder);
    folder.checkpointRevert = async (s, t, f, force) => {
      if (force) throw { code: 'checkpoint-partial', message };
      return revert(s, t, f, force);
    };
    await review.request({ kind: 'turn', turn: 2 });
    expect(review.state.conflict).not.toBeNull();
    await review.force();
    expect(review.state.conflict).toBeNull();
    expect(review.state.undoError).toBe(`Undo turn 2 went partly wrong: ${message}`);
    expect(folder.calls.filter((c) => c.startsWith('list')).length).toBe(listed + 1);
    expect(review.state.error).toBeNull();
  });

  it('drops a late answer for a scope the user left', async () => {
    const folder = folderWithTwoTurns();
    const review = new ReviewController(folder);
    const opening = review.open('s1', 1);
    const second = review.showScope(2);
    await Promise.all([opening, second]);
    expect(review.state.scope).toBe(2);
    expect(review.state.changes?.files.map((f) => f.path)).toEqual(['b.txt']);
    review.close();
    expect(review.isOpen).toBe(false);
  });
});

describe('words', () => {
  it('names what a version is when it has no text', () => {
    expect(versionWords(null)).toBe('No such file.');
    expect(versionWords({ bytes: 2048, binary: true })).toBe('A binary file of 2.0 KB.');
    expect(versionWords({ bytes: 3, binary: false, link: 'target' })).toBe(
      'A symbolic link to target.',
    );
    expect(versionWords({ bytes: 9 * 1024 * 1024, binary: false })).toBe(
      'Too large to show here (9.0 MB).',
    );
    expect(
      diffOf({ path: 'x.bin', before: { bytes: 10, binary: true }, after: null, now: null }),
    ).toEqual({ words: 'Before: A binary file of 10 B. After: no such file.' });
  });

  it('says the space used and what is kept', () => {
    expect(
      storageText({
        bytes: 5 * 1024 * 1024,
        budgetBytes: 2 * 1024 ** 3,
        maxAgeDays: 30,
        steps: 4,
        sessions: 2,
      }),
    ).toBe(
      'Checkpoints of this folder: 5.0 MB of 2.0 GB (4 steps of 2 sessions); the oldest go first past that or after 30 days.',
    );
  });
});

describe('an undo cut short', () => {
  const at = '2026-12-03T08:00:00Z';
  it('says it changed nothing, and what to do', () => {
    const text = interruptedText({ at, step: 3, kind: 'revert', undoes: 1, files: ['a', 'b'] });
    expect(text).toContain('An undo of turn 1 was cut short at ');
    expect(text).toContain('ACP Desk stopped while it wrote 2 files (a, b).');
    expect(text).toContain('so it changed nothing; make it again if you still want it.');
  });
  it('names what could not be put back', () => {
    const text = interruptedText({
      at,
      step: 4,
      kind: 'restore',
      undoes: 2,
      files: ['a.txt'],
      stranded: ['/p/a.txt is kept in /p/.checkpoint.acpdesk-tmp-1/aside-0'],
    });
    expect(text).toContain('A restore to before turn 2 was cut short');
    expect(text).toContain('wrote 1 file (a.txt).');
    expect(text).toContain(
      'put these back by hand: /p/a.txt is kept in /p/.checkpoint.acpdesk-tmp-1/aside-0.',
    );
  });
});

describe('SessionStore and checkpoints', () => {
  it('puts a turn’s changes after its end, once its end is checkpointed', () => {
    const store = new SessionStore();
    store.applyAll([
      {
        snapshot: false,
        events: [
          { kind: 'turn-start', sessionId: 's', prompt: [{ type: 'text', text: 'go' }] },
          { kind: 'checkpoint', sessionId: 's', phase: 'before', turn: 4, waitedMs: 12 },
          { kind: 'turn-end', sessionId: 's', reason: 'completed', stopReason: 'end_turn' },
          {
            kind: 'checkpoint',
            sessionId: 's',
            phase: 'after',
            turn: 4,
            summary: { files: 2, added: 3, removed: 1 },
          },
          // A turn that changed nothing: no line for it.
          { kind: 'turn-start', sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] },
          { kind: 'checkpoint', sessionId: 's', phase: 'before', turn: 5 },
          { kind: 'turn-end', sessionId: 's', reason: 'completed', stopReason: 'end_turn' },
          {
            kind: 'checkpoint',
            sessionId: 's',
            phase: 'after',
            turn: 5,
            summary: { files: 0, added: 0, removed: 0 },
          },
          // One that could not be checkpointed: the engine's notice says it; no line, no step.
          { kind: 'checkpoint', sessionId: 's', phase: 'before', error: 'disk full' },
        ],
      },
    ]);
    const v = store.state;
    expect(v.entries.map((e) => e.type)).toEqual([
      'user',
      'turn-end',
      'changes',
      'user',
      'turn-end',
    ]);
    expect(v.entries[2]).toMatchObject({ turn: 4, summary: { files: 2, added: 3, removed: 1 } });
    expect(v.lastStep).toBe(5);
  });
});
