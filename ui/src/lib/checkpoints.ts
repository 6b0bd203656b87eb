// The review and undo panel's logic (issue 20): a session's checkpointed steps, what one step
// (or the whole session) changed, one file before and after it, and the undo actions, with the
// conflicts a revert refuses to overwrite shown before anything is forced. Plain TypeScript:
// no Svelte, no Tauri, so tests drive it directly. The shell does the work
// (src-tauri/src/commands.rs, crates/acp-desk-app/src/checkpoints.rs).
import { errorText, toUiError } from './backend-types';
import type {
  ChangeSummary,
  Changes,
  CheckpointListing,
  FileChange,
  FileVersion,
  FileVersions,
  InterruptedUndo,
  RevertConflict,
  RevertOutcome,
  StepInfo,
  Storage,
} from './generated/ipc';

export type {
  ChangeSummary,
  Changes,
  CheckpointListing,
  FileChange,
  FileVersions,
  RevertConflict,
  StepInfo,
};

/** What the panel needs from the shell (backend.ts implements it; tests fake it). `turn` is
 * a step's number as the `checkpoint` events and the CLI's `--turn` give it. */
export interface CheckpointsBackend {
  checkpointList(session: string): Promise<CheckpointListing>;
  /** `turn` null: the session's changes since it started. */
  checkpointChanges(session: string, turn: number | null): Promise<Changes>;
  checkpointFile(
    session: string,
    turn: number | null,
    path: string,
    oldPath: string | null,
  ): Promise<FileVersions>;
  /** Undo step `turn` (only `file` of it, when given). */
  checkpointRevert(
    session: string,
    turn: number,
    file: string | null,
    force: boolean,
  ): Promise<RevertOutcome>;
  /** The whole folder back to before step `turn`. */
  checkpointRestore(session: string, turn: number, force: boolean): Promise<RevertOutcome>;
}

/** An undo the user asked for. */
export type UndoAction =
  | { kind: 'file'; turn: number; path: string }
  | { kind: 'turn'; turn: number }
  | { kind: 'restore'; turn: number };

/** A conflict with the three versions of its file (fetched for the conflict view). */
export interface ConflictShown extends RevertConflict {
  versions: FileVersions | null;
  /** Why the versions could not be read. */
  versionsError: string | null;
}

export interface ReviewView {
  session: string | null;
  /** The step shown; null: the whole session since it started. */
  scope: number | null;
  listing: CheckpointListing | null;
  changes: Changes | null;
  loading: boolean;
  /** Why the listing or the changes could not be read, in words. */
  error: string | null;
  /** The file shown in the diff. */
  selected: string | null;
  versions: FileVersions | null;
  versionsLoading: boolean;
  versionsError: string | null;
  /** An undo waiting for the user's yes (a restore, which rewrites the whole folder). */
  confirm: UndoAction | null;
  /** An undo that found files changed since: nothing was written. */
  conflict: { action: UndoAction; files: ConflictShown[] } | null;
  busy: boolean;
  /** What the last undo did, in words. */
  said: string | null;
  /** Why the last undo failed, in words (nothing was changed). */
  undoError: string | null;
}

type Listener = (v: ReviewView) => void;

function closed(): ReviewView {
  return {
    session: null,
    scope: null,
    listing: null,
    changes: null,
    loading: false,
    error: null,
    selected: null,
    versions: null,
    versionsLoading: false,
    versionsError: null,
    confirm: null,
    conflict: null,
    busy: false,
    said: null,
    undoError: null,
  };
}

/** "3 files +12 −4" (a binary file adds no lines). */
export function summaryText(s: ChangeSummary): string {
  const files = s.files === 1 ? '1 file' : `${s.files} files`;
  return `${files} +${s.added} −${s.removed}`;
}

/** A step as the panel's list names it. */
export function stepTitle(s: StepInfo): string {
  if (s.kind === 'revert') return `Step ${s.turn}: undo of turn ${s.undoes ?? '?'}`;
  if (s.kind === 'restore') return `Step ${s.turn}: restore to before turn ${s.undoes ?? '?'}`;
  return `Turn ${s.turn}`;
}

/** How a file changed, in words. */
export function statusWords(f: FileChange): string {
  if (f.submodule) return 'submodule (not restored)';
  if (f.modeOnly) return 'mode changed';
  switch (f.status) {
    case 'added':
      return 'created';
    case 'deleted':
      return 'deleted';
    case 'renamed':
      return f.oldPath ? `moved from ${f.oldPath}` : 'moved';
    case 'typeChanged':
      return 'type changed';
    default:
      return 'changed';
  }
}

/** "12.3 MB". */
export function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** The space line under the steps. */
export function storageText(s: Storage): string {
  const sessions = s.sessions === 1 ? '1 session' : `${s.sessions} sessions`;
  const steps = s.steps === 1 ? '1 step' : `${s.steps} steps`;
  return (
    `Checkpoints of this folder: ${bytesText(s.bytes)} of ${bytesText(s.budgetBytes)} ` +
    `(${steps} of ${sessions}); the oldest go first past that or after ${s.maxAgeDays} days.`
  );
}

/**
 * An undo cut short (ACP Desk stopped while it wrote files) and put back when the checkpoints
 * were next opened: what happened and what to do.
 */
export function interruptedText(i: InterruptedUndo): string {
  const what =
    i.kind === 'restore'
      ? i.undoes != null
        ? `A restore to before turn ${i.undoes}`
        : 'A restore'
      : i.undoes != null
        ? `An undo of turn ${i.undoes}`
        : 'An undo';
  const count = i.files.length === 1 ? '1 file' : `${i.files.length} files`;
  const files = i.files.length <= 3 ? `${count} (${i.files.join(', ')})` : count;
  const when = new Date(i.at);
  const at = Number.isNaN(when.getTime()) ? i.at : when.toLocaleString();
  const head = `${what} was cut short at ${at}: ACP Desk stopped while it wrote ${files}.`;
  if (!i.stranded?.length) {
    return `${head} Every file is back as it was before it, so it changed nothing; make it again if you still want it.`;
  }
  return `${head} Not every file could be put back; put these back by hand: ${i.stranded.join('; ')}.`;
}

/** Why a conflict's file is one, in words. */
export function conflictWords(c: RevertConflict): string {
  switch (c.reason) {
    case 'changed':
      return 'changed since (by you, another session or a later turn)';
    case 'deleted':
      return 'deleted since';
    case 'created':
      return 'created since, where the undo would put nothing';
  }
}

/** "turn 3", or "step 5" for a revert or restore (they are steps, not the agent's turns). */
export function stepName(turn: number, steps: readonly StepInfo[] = []): string {
  const kind = steps.find((s) => s.turn === turn)?.kind ?? 'turn';
  return `${kind === 'turn' ? 'turn' : 'step'} ${turn}`;
}

/** The three versions a conflict shows, named for the undo: a turn's (or a file's) end, or,
 * for a restore, the session's last checkpoint its conflicts were decided against. */
export function versionLabels(
  a: UndoAction,
  steps: readonly StepInfo[] = [],
): { before: string; after: string; now: string } {
  if (a.kind === 'restore')
    return {
      before: `Before ${stepName(a.turn, steps)}`,
      after: 'At the last checkpoint',
      now: 'Now',
    };
  return { before: 'Before the turn', after: 'After the turn', now: 'Now' };
}

/** What an undo is called on its button and in what it said. */
export function actionWords(a: UndoAction, steps: readonly StepInfo[] = []): string {
  const name = stepName(a.turn, steps);
  if (a.kind === 'file') return `Undo ${a.path} (${name})`;
  if (a.kind === 'turn') return `Undo ${name}`;
  return `Restore the folder to before ${name}`;
}

function doneWords(
  a: UndoAction,
  outcome: Extract<RevertOutcome, { outcome: 'done' }>,
  steps: readonly StepInfo[],
): string {
  const n = outcome.files.length;
  const files = n === 1 ? '1 file' : `${n} files`;
  const name = stepName(a.turn, steps);
  const what =
    a.kind === 'file'
      ? `Put ${a.path} back as it was before ${name}`
      : a.kind === 'turn'
        ? `Undid ${name}: ${files} put back`
        : `Restored the folder to before ${name}: ${files} written or removed`;
  const skipped =
    outcome.skipped && outcome.skipped.length > 0
      ? ` Left as they are: ${outcome.skipped.join(', ')} (submodules).`
      : '';
  return `${what}. This is step ${outcome.step}: undo it from its row to go back.${skipped}`;
}

export class ReviewController {
  private view: ReviewView = closed();
  private listeners = new Set<Listener>();
  /** Bumped by each open/scope/select: a late answer to an older one is dropped. */
  private seq = 0;
  private fileSeq = 0;
  /** Told after an undo wrote files (the thread says so). */
  onundone: ((session: string, words: string) => void) | null = null;

  constructor(private backend: CheckpointsBackend) {}

  get state(): ReviewView {
    return this.view;
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    fn(this.view);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<ReviewView>): void {
    this.view = { ...this.view, ...patch };
    for (const fn of this.listeners) fn(this.view);
  }

  private get steps(): readonly StepInfo[] {
    return this.view.listing?.steps ?? [];
  }

  get isOpen(): boolean {
    return this.view.session !== null;
  }

  /** Opens the panel on step `turn` of `session` (null: the whole session). */
  async open(session: string, turn: number | null): Promise<void> {
    this.view = { ...closed(), session, scope: turn, loading: true };
    this.set({});
    await this.load(turn);
  }

  close(): void {
    this.seq++;
    this.fileSeq++;
    this.view = closed();
    this.set({});
  }

  /** Another step (or the whole session). */
  async showScope(turn: number | null): Promise<void> {
    if (!this.view.session) return;
    this.set({
      scope: turn,
      changes: null,
      selected: null,
      versions: null,
      versionsError: null,
      confirm: null,
      conflict: null,
      loading: true,
    });
    await this.load(turn);
  }

  /** The listing and the scope's changes, then its first file. */
  private async load(turn: number | null): Promise<void> {
    const session = this.view.session;
    if (!session) return;
    const seq = ++this.seq;
    try {
      const [listing, changes] = await Promise.all([
        this.backend.checkpointList(session),
        this.backend.checkpointChanges(session, turn),
      ]);
      if (seq !== this.seq) return;
      const keep = this.view.selected;
      this.set({ listing, changes, loading: false, error: null });
      const first = changes.files.find((f) => f.path === keep) ?? changes.files[0];
      if (first) await this.select(first.path);
      else this.set({ selected: null, versions: null });
    } catch (e) {
      if (seq !== this.seq) return;
      this.set({ loading: false, error: errorText(toUiError(e)) });
    }
  }

  /** Shows one file's diff. */
  async select(path: string): Promise<void> {
    const session = this.view.session;
    const file = this.view.changes?.files.find((f) => f.path === path);
    if (!session || !file) return;
    const seq = ++this.fileSeq;
    this.set({ selected: path, versionsLoading: true, versionsError: null });
    try {
      const versions = await this.backend.checkpointFile(
        session,
        this.view.scope,
        path,
        file.oldPath ?? null,
      );
      if (seq !== this.fileSeq) return;
      this.set({ versions, versionsLoading: false });
    } catch (e) {
      if (seq !== this.fileSeq) return;
      this.set({ versions: null, versionsLoading: false, versionsError: errorText(toUiError(e)) });
    }
  }

  /** Asks first for a restore (it rewrites the whole folder); the others run at once. */
  async request(action: UndoAction): Promise<void> {
    if (action.kind === 'restore') {
      this.set({ confirm: action, said: null, undoError: null });
      return;
    }
    await this.run(action, false);
  }

  cancelConfirm(): void {
    this.set({ confirm: null });
  }

  async confirmRestore(): Promise<void> {
    const a = this.view.confirm;
    if (!a) return;
    this.set({ confirm: null });
    await this.run(a, false);
  }

  /** "Overwrite anyway": the conflicting files are written too. */
  async force(): Promise<void> {
    const c = this.view.conflict;
    if (!c) return;
    await this.run(c.action, true);
  }

  /** "Keep mine": nothing is written. */
  keepMine(): void {
    const c = this.view.conflict;
    if (!c) return;
    this.set({
      conflict: null,
      said: `Nothing was changed: ${actionWords(c.action, this.steps).toLowerCase()} was not done.`,
    });
  }

  private async run(action: UndoAction, force: boolean): Promise<void> {
    const session = this.view.session;
    if (!session || this.view.busy) return;
    this.set({ busy: true, said: null, undoError: null });
    let outcome: RevertOutcome;
    try {
      outcome =
        action.kind === 'restore'
          ? await this.backend.checkpointRestore(session, action.turn, force)
          : await this.backend.checkpointRevert(
              session,
              action.turn,
              action.kind === 'file' ? action.path : null,
              force,
            );
    } catch (e) {
      if (this.view.session !== session) return;
      const error = toUiError(e);
      if (error.code === 'checkpoint-partial') {
        // Files were written: the lists must show the folder as it is now.
        // A conflict on screen would still say nothing was written: it goes.
        this.set({
          busy: false,
          conflict: null,
          undoError: `${actionWords(action, this.steps)} went partly wrong: ${errorText(error)}`,
        });
        await this.load(this.view.scope);
        return;
      }
      this.set({
        busy: false,
        undoError: `${actionWords(action, this.steps)} failed, and no file was changed: ${errorText(error)}`,
      });
      return;
    }
    if (this.view.session !== session) return;
    if (outcome.outcome === 'conflicts') {
      const files = await this.conflictVersions(session, action, outcome.conflicts);
      if (this.view.session !== session) return;
      this.set({ busy: false, conflict: { action, files } });
      return;
    }
    const said =
      outcome.outcome === 'unchanged'
        ? `${actionWords(action, this.steps)}: the files are already as they were; nothing was written.`
        : doneWords(action, outcome, this.steps);
    this.set({ busy: false, conflict: null, said });
    if (outcome.outcome === 'done') this.onundone?.(session, said);
    await this.load(this.view.scope);
  }

  /** Each conflict's before/after/now, for the user to compare before forcing. */
  private async conflictVersions(
    session: string,
    action: UndoAction,
    conflicts: RevertConflict[],
  ): Promise<ConflictShown[]> {
    // A restore goes back to before `turn`, and its conflicts are decided against the
    // session's last checkpoint: that is its middle version, not the step's own end.
    const turn = action.turn;
    return Promise.all(
      conflicts.map(async (c) => {
        try {
          const step = await this.backend.checkpointFile(session, turn, c.path, null);
          if (action.kind !== 'restore') return { ...c, versions: step, versionsError: null };
          const last = await this.backend.checkpointFile(session, null, c.path, null);
          const versions = { ...last, before: step.before ?? null };
          return { ...c, versions, versionsError: null };
        } catch (e) {
          return { ...c, versions: null, versionsError: errorText(toUiError(e)) };
        }
      }),
    );
  }
}

/** A version that has no text to show, in words; null when its text can be shown. */
export function versionWords(v: FileVersion | null | undefined): string | null {
  if (!v) return 'No such file.';
  if (v.link !== null && v.link !== undefined) return `A symbolic link to ${v.link}.`;
  if (v.binary) return `A binary file of ${bytesText(v.bytes)}.`;
  if (v.text === null || v.text === undefined)
    return `Too large to show here (${bytesText(v.bytes)}).`;
  return null;
}

/** What the diff shows for a file: the two texts (`oldText` null: it did not exist), or why
 * there is no diff to show. */
export function diffOf(
  versions: FileVersions,
): { oldText: string | null; newText: string } | { words: string } {
  const { before, after } = versions;
  const shows = (v: FileVersion | null | undefined) => !v || versionWords(v) === null;
  if (shows(before) && shows(after) && (before || after))
    return { oldText: before ? (before.text ?? '') : null, newText: after?.text ?? '' };
  const side = (v: FileVersion | null | undefined) =>
    v ? (versionWords(v) ?? `text, ${bytesText(v.bytes)}.`) : 'no such file.';
  return { words: `Before: ${side(before)} After: ${side(after)}` };
}
