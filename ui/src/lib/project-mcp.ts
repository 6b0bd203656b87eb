// A project's own MCP config (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`) as the
// window offers it (issue 17, ARCHITECTURE.md invariant 56): never used on its own. When a
// session opens in a folder with a file not decided as it is now (never, or changed since), a
// card above the thread shows everything it would run; the user chooses Use in this folder, Not
// now (asked again next time) or Ignore this file (not asked again until the file changes).
// A decision takes effect for the next session in the folder; "Restart session with them" ends
// the agent and continues the conversation with them.
//
// Plain TS, a Svelte store: the component only renders and calls. The shell checks every
// decision against the file's bytes (by digest), so a file changed since it was shown is refused
// (`project-config-changed`) and shown again here.
import type {
  OfferedFile,
  OfferedServer,
  ProjectMcpChoice,
  ProjectMcpOffer,
  SessionInfo,
} from './generated/ipc';
import { toUiError, type UiError, type Unsubscribe } from './backend-types';

export type {
  OfferedFile,
  OfferedServer,
  ProjectMcpChoice,
  ProjectMcpOffer,
} from './generated/ipc';

/** The project MCP commands (src-tauri/src/project_mcp.rs). */
export interface ProjectMcpBackend {
  projectMcpOffer(folder: string): Promise<ProjectMcpOffer | null>;
  projectMcpDecide(
    folder: string,
    file: string,
    digest: string,
    decision: ProjectMcpChoice,
  ): Promise<void>;
  /** Ends the session's agent and starts a new one continuing it, with the folder's agreed
   * servers as they are now. */
  projectMcpRestart(session: string): Promise<SessionInfo>;
}

/** What the card shows for one folder. */
export interface FolderOffer {
  /** Files to ask about, in the shell's order. */
  files: OfferedFile[];
  /** Files the user chose to use during this run: their servers come with the next session
   * (or a restart). Cleared by a restart or Dismiss. */
  used: string[];
  /** A decision is being recorded, or a restart runs. */
  busy: boolean;
  error: UiError | null;
}

const EMPTY: FolderOffer = { files: [], used: [], busy: false, error: null };

interface Folder {
  offer: ProjectMcpOffer | null;
  /** "Not now": `file` + digest, hidden for this run. */
  later: Set<string>;
  used: string[];
  busy: boolean;
  error: UiError | null;
  /** The latest request: an older answer arriving late is dropped. */
  asked: number;
}

export class ProjectMcpController {
  private folders = new Map<string, Folder>();
  private listeners = new Set<() => void>();
  private asked = 0;

  constructor(private backend: ProjectMcpBackend) {}

  subscribe(run: (c: ProjectMcpController) => void): Unsubscribe {
    const cb = () => run(this);
    this.listeners.add(cb);
    cb();
    return () => this.listeners.delete(cb);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  private folder(path: string): Folder {
    let f = this.folders.get(path);
    if (!f) {
      f = { offer: null, later: new Set(), used: [], busy: false, error: null, asked: 0 };
      this.folders.set(path, f);
    }
    return f;
  }

  /** What the card shows for `folder`. */
  view(folder: string): FolderOffer {
    const f = this.folders.get(folder);
    if (!f) return EMPTY;
    const files = (f.offer?.files ?? []).filter((x) => !f.later.has(laterKey(x)));
    return { files, used: f.used, busy: f.busy, error: f.error };
  }

  /** Asks the shell what `folder`'s files would add (each time a session opens there: a file
   * may have changed meanwhile). A failure is shown on the card, never thrown. */
  async check(folder: string): Promise<void> {
    const f = this.folder(folder);
    const asked = ++this.asked;
    f.asked = asked;
    try {
      const offer = await this.backend.projectMcpOffer(folder);
      if (f.asked !== asked) return;
      f.offer = offer;
      f.error = null;
    } catch (e) {
      if (f.asked !== asked) return;
      f.error = toUiError(e);
    }
    this.changed();
  }

  /** Records `decision` on `file` as shown. A file changed since is shown again, with why. */
  async decide(folder: string, file: OfferedFile, decision: ProjectMcpChoice): Promise<void> {
    const f = this.folder(folder);
    if (f.busy) return;
    f.busy = true;
    f.error = null;
    this.changed();
    try {
      await this.backend.projectMcpDecide(folder, file.file, file.digest, decision);
      if (f.offer) {
        f.offer = { ...f.offer, files: f.offer.files.filter((x) => x.file !== file.file) };
      }
      if (decision === 'use' && !f.used.includes(file.file)) f.used = [...f.used, file.file];
    } catch (e) {
      f.error = toUiError(e);
      if (f.error.code === 'project-config-changed') {
        f.busy = false;
        await this.check(folder);
        // The check clears errors it did not make: this one says why the card changed.
        f.error = toUiError(e);
      }
    } finally {
      f.busy = false;
      this.changed();
    }
  }

  /** "Not now": hidden until the next session in the folder asks again. */
  later(folder: string, file: OfferedFile): void {
    this.folder(folder).later.add(laterKey(file));
    this.changed();
  }

  /** Hides the "used from the next session" note. */
  dismissUsed(folder: string): void {
    this.folder(folder).used = [];
    this.changed();
  }

  /** "Restart session with them". */
  async restart(folder: string, session: string): Promise<void> {
    const f = this.folder(folder);
    if (f.busy) return;
    f.busy = true;
    f.error = null;
    this.changed();
    try {
      await this.backend.projectMcpRestart(session);
      f.used = [];
    } catch (e) {
      f.error = toUiError(e);
    } finally {
      f.busy = false;
      this.changed();
    }
  }
}

function laterKey(f: OfferedFile): string {
  return `${f.file}\n${f.digest}`;
}

/** What a server would run or call, as one line: the command and every argument (quoted where
 * a shell would need it), or the URL without what may hold a token. */
export function serverTarget(s: OfferedServer): string {
  if (s.command) return s.command.map(quoteArg).join(' ');
  if (s.shownUrl) return s.urlHasHiddenParts ? `${s.shownUrl} (+ a query not shown)` : s.shownUrl;
  return '';
}

/** An argument as a POSIX shell would need it written (to read, not to run). */
export function quoteArg(a: string): string {
  if (a !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(a)) return a;
  return `'${a.replace(/'/g, `'\\''`)}'`;
}

/** The file's heading: what it is and whether it changed since a decision. */
export function fileHeading(f: OfferedFile): string {
  if (f.previous === 'use')
    return `${f.file} changed since you chose to use it; its servers are not used until you agree again.`;
  if (f.previous === 'ignore') return `${f.file} changed since you chose to ignore it.`;
  return `This folder has its own MCP servers (${f.file}, written for ${f.tool}).`;
}

/** How many of the file's servers would be used. */
export function usableCount(f: OfferedFile): number {
  return f.servers.filter((s) => s.usable).length;
}
