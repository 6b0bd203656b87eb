// The Agents view's logic: every agent the shell lists (built-in, settings, manifests, the ACP
// registry), filtered and grouped, with Check, Install (its progress), "use for new sessions",
// and the problems of the files agents come from. Plain TypeScript: no Svelte, no Tauri, so
// tests drive it directly. The listing is fetched after the window is up (detection may take a
// while: it never holds up the window's start).
import { toUiError, type UiError } from './backend-types';
import type {
  AgentEntry,
  AgentListing,
  AgentSource,
  AgentStatus,
  CapabilityDifference,
  CheckReport,
  ConfigProblem,
  InstallProgress,
  RegistryImported,
} from './agents-ipc';

export type {
  AgentEntry,
  AgentListing,
  AgentSource,
  AgentStatus,
  CheckReport,
  ConfigProblem,
  InstallProgress,
  RegistryImported,
};

/** What the Agents view needs from the shell (src-tauri/src/agents.rs; tests fake it). */
export interface AgentsBackend {
  /** Every agent, with detection (cached by the engine); blocking work on the shell's pool. */
  agentsList(): Promise<AgentListing>;
  /** Starts the agent, runs `initialize`, ends it: what it said and how long each step took. */
  agentCheck(id: string): Promise<CheckReport>;
  /** Downloads and installs a registry binary; the listing afterwards. */
  agentInstall(id: string, onProgress: (p: InstallProgress) => void): Promise<AgentListing>;
  /** Remembers the agent for new sessions (the app's state file); the listing afterwards. */
  agentsUseForNewSessions(id: string): Promise<AgentListing>;
  /** The settings file in the user's editor (made from a short template when there is none). */
  agentsOpenSettings(): Promise<void>;
  /** An agent's ACP.md in the user's editor. */
  agentsOpenManifest(id: string): Promise<void>;
  /** The file dialog, then the chosen registry file imported: the registry now in use and the
   * listing afterwards, or null when the user cancelled. */
  agentsImportRegistry(): Promise<RegistryImported | null>;
  /** The agent's install command on the clipboard. */
  agentsCopyInstallCommand(id: string): Promise<void>;
}

/** How a status is said, and its colour. */
export interface StatusWords {
  label: string;
  tone: 'ok' | 'info' | 'warn' | 'error' | 'muted';
  /** A sentence for the tooltip: what it means. */
  meaning: string;
}

export function statusWords(status: AgentStatus): StatusWords {
  switch (status) {
    case 'found':
      return { label: 'Installed', tone: 'ok', meaning: 'Its program was found on this computer.' };
    case 'downloads':
      return {
        label: 'Downloads on first use',
        tone: 'info',
        meaning: 'Its launcher (npx or uvx) is installed; the package is fetched the first time.',
      };
    case 'missing':
      return {
        label: 'Not installed',
        tone: 'warn',
        meaning: 'Its program was not found: install it, then Check it.',
      };
    case 'not-installed':
      return {
        label: 'Not installed',
        tone: 'warn',
        meaning: 'A download for this computer exists: Install fetches and unpacks it.',
      };
    case 'unavailable':
      return {
        label: 'Not for this computer',
        tone: 'muted',
        meaning: 'Its registry entry has no build for this system.',
      };
    case 'unsupported':
      return {
        label: 'Cannot be used',
        tone: 'muted',
        meaning: 'ACP Desk cannot start it (see why below).',
      };
    case 'invalid':
      return {
        label: 'Has errors',
        tone: 'error',
        meaning: 'Its definition has errors (listed below); fix them and it comes back.',
      };
  }
}

/** Whether new sessions can start with it as it is now. */
export function usable(a: AgentEntry): boolean {
  return a.status === 'found' || a.status === 'downloads';
}

export function sourceLabel(source: AgentSource): string {
  switch (source) {
    case 'builtin':
      return 'Built in';
    case 'registry':
      return 'ACP registry';
    case 'settings':
      return 'Your settings';
    case 'manifest':
      return 'Manifest';
  }
}

/** `FILE:LINE:COL: FIELD: MESSAGE`, as the engine's Display writes it. */
export function problemText(p: ConfigProblem): string {
  return `${problemPlace(p)}: ${p.message}`;
}

/** `FILE:LINE:COL: FIELD`: where the problem is. */
export function problemPlace(p: ConfigProblem): string {
  let at = p.file;
  if (p.line != null) at += `:${p.line}`;
  if (p.line != null && p.column != null) at += `:${p.column}`;
  return p.field ? `${at}: ${p.field}` : at;
}

/** Agents whose id, name or description hold every word of `query` (any case). */
export function filterAgents(agents: readonly AgentEntry[], query: string): AgentEntry[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...agents];
  return agents.filter((a) => {
    const text = `${a.id}\n${a.name}\n${a.description ?? ''}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** Registry agents: the ones that run now first, then those to install, then the rest. */
const RANK: Record<AgentStatus, number> = {
  found: 0,
  downloads: 1,
  'not-installed': 2,
  missing: 3,
  invalid: 4,
  unsupported: 5,
  unavailable: 6,
};

export interface AgentGroups {
  /** Built-in, settings and manifest agents, in the listing's order. */
  yours: AgentEntry[];
  /** Registry agents installed on this computer (a program found). */
  registryReady: AgentEntry[];
  /** The other registry agents: downloaded on first use, to install, not for this system. */
  registryMore: AgentEntry[];
}

export function groupAgents(agents: readonly AgentEntry[]): AgentGroups {
  const yours = agents.filter((a) => a.source !== 'registry');
  const registry = agents
    .filter((a) => a.source === 'registry')
    .sort((a, b) => RANK[a.status] - RANK[b.status] || a.name.localeCompare(b.name));
  return {
    yours,
    registryReady: registry.filter((a) => a.status === 'found'),
    registryMore: registry.filter((a) => a.status !== 'found'),
  };
}

/** "start 12 ms · initialize 340 ms". */
export function stepsText(r: CheckReport): string {
  return r.steps
    .map(
      (s) =>
        `${s.name} ${s.millis < 1000 ? `${s.millis} ms` : `${(s.millis / 1000).toFixed(1)} s`}${s.ok ? '' : ' (failed)'}`,
    )
    .join(' · ');
}

/** "Demo Agent 0.1.0 (acp-desk-demo), protocol 1". */
export function identityText(r: CheckReport): string | null {
  const name = r.agentTitle || r.agentName;
  const parts: string[] = [];
  if (name) parts.push(name);
  if (r.agentVersion) parts.push(r.agentVersion);
  let out = parts.join(' ');
  if (r.agentTitle && r.agentName && r.agentTitle !== r.agentName) out += ` (${r.agentName})`;
  if (r.protocolVersion != null) out += `${out ? ', ' : ''}protocol ${r.protocolVersion}`;
  return out || null;
}

/** The capabilities the agent reported that are on, as dotted paths ("promptCapabilities.image",
 * "loadSession"), plain values with their value; an empty object says nothing and is left out. */
export function capabilityList(caps: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, path: string): void => {
    if (v === true) out.push(path);
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      const entries = Object.entries(v as Record<string, unknown>).filter(([k]) => k !== '_meta');
      for (const [k, x] of entries) walk(x, path ? `${path}.${k}` : k);
    } else if (typeof v === 'string' || typeof v === 'number') out.push(`${path}: ${v}`);
  };
  walk(caps, '');
  return out;
}

function shown(v: unknown): string {
  return v === undefined || v === null ? 'nothing' : JSON.stringify(v);
}

/** "promptCapabilities.image: declared true, reported false". */
export function differenceText(
  d: Pick<CapabilityDifference, 'path'> & {
    declared?: unknown;
    reported?: unknown;
  },
): string {
  return `${d.path}: the manifest declares ${shown(d.declared)}, the agent reports ${shown(d.reported)}`;
}

/** An install's progress in words ("Downloading: 1.2 of 3.4 MB"). */
export function progressText(p: InstallProgress): string {
  const mb = (n: number) => (n / 1_000_000).toFixed(1);
  switch (p.phase) {
    case 'downloading':
      return p.total
        ? `Downloading: ${mb(p.downloaded)} of ${mb(p.total)} MB`
        : `Downloading: ${mb(p.downloaded)} MB`;
    case 'verifying':
      return 'Checking its sha256…';
    case 'extracting':
      return 'Unpacking…';
    case 'installed':
      return 'Installed.';
  }
}

/** A Check of one agent: running, or its report, or the command's failure. */
export interface CheckState {
  running: boolean;
  report: CheckReport | null;
  error: UiError | null;
}

export interface InstallState {
  running: boolean;
  progress: InstallProgress | null;
  error: UiError | null;
}

export interface AgentsView {
  listing: AgentListing | null;
  loading: boolean;
  /** The listing could not be read. */
  listError: UiError | null;
  /** A command's failure (open, import, use), until dismissed or replaced. */
  error: UiError | null;
  query: string;
  checks: Record<string, CheckState>;
  installs: Record<string, InstallState>;
  /** What the last action did ("Imported …"), shown briefly. */
  said: string | null;
}

type Listener = (v: AgentsView) => void;

export class AgentsController {
  private view: AgentsView = {
    listing: null,
    loading: false,
    listError: null,
    error: null,
    query: '',
    checks: {},
    installs: {},
    said: null,
  };
  private listeners = new Set<Listener>();
  private listSeq = 0;

  /** `onlisting` hears every new listing (the window's agent picker follows it); null when the
   * first one could not be read. */
  constructor(
    private backend: AgentsBackend,
    private onlisting: (l: AgentListing | null) => void = () => undefined,
  ) {}

  get state(): AgentsView {
    return this.view;
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    fn(this.view);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<AgentsView>): void {
    this.view = { ...this.view, ...patch };
    for (const fn of this.listeners) fn(this.view);
  }

  private take(listing: AgentListing): void {
    this.set({ listing, listError: null });
    this.onlisting(listing);
  }

  /** Reads the listing again (the latest call's answer wins). */
  async refresh(): Promise<void> {
    const seq = ++this.listSeq;
    this.set({ loading: true });
    try {
      const listing = await this.backend.agentsList();
      if (seq !== this.listSeq) return;
      this.set({ loading: false });
      this.take(listing);
    } catch (e) {
      if (seq !== this.listSeq) return;
      this.set({ loading: false, listError: toUiError(e) });
      if (!this.view.listing) this.onlisting(null);
    }
  }

  setQuery(query: string): void {
    this.set({ query });
  }

  dismissError(): void {
    this.set({ error: null, said: null });
  }

  async check(id: string): Promise<void> {
    if (this.view.checks[id]?.running) return;
    const put = (c: CheckState) => this.set({ checks: { ...this.view.checks, [id]: c } });
    put({ running: true, report: null, error: null });
    try {
      put({ running: false, report: await this.backend.agentCheck(id), error: null });
    } catch (e) {
      put({ running: false, report: null, error: toUiError(e) });
    }
  }

  async install(id: string): Promise<void> {
    if (this.view.installs[id]?.running) return;
    const put = (s: InstallState) => this.set({ installs: { ...this.view.installs, [id]: s } });
    put({ running: true, progress: null, error: null });
    try {
      const listing = await this.backend.agentInstall(id, (progress) =>
        put({ running: true, progress, error: null }),
      );
      put({
        running: false,
        progress: { agent: id, phase: 'installed', downloaded: 0 },
        error: null,
      });
      this.take(listing);
    } catch (e) {
      put({ running: false, progress: null, error: toUiError(e) });
    }
  }

  async useForNewSessions(id: string): Promise<void> {
    try {
      this.take(await this.backend.agentsUseForNewSessions(id));
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  async openSettings(): Promise<void> {
    await this.run(() => this.backend.agentsOpenSettings());
  }

  async openManifest(id: string): Promise<void> {
    await this.run(() => this.backend.agentsOpenManifest(id));
  }

  async copyInstallCommand(id: string): Promise<void> {
    await this.run(async () => {
      await this.backend.agentsCopyInstallCommand(id);
      this.set({ said: 'The install command is on the clipboard.' });
    });
  }

  async importRegistry(): Promise<void> {
    await this.run(async () => {
      const imported = await this.backend.agentsImportRegistry();
      if (!imported) return;
      this.take(imported.listing);
      const r = imported.registry;
      const skipped = imported.problems.length;
      this.set({
        said: `${r.label}: ${r.agents} agent${r.agents === 1 ? '' : 's'} from it are listed${skipped > 0 ? ` (${skipped} of its entries cannot be used)` : ''}.`,
      });
    });
  }

  private async run(command: () => Promise<void>): Promise<void> {
    this.set({ error: null, said: null });
    try {
      await command();
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }
}

/** What the compact pickers (sidebar, empty window) offer: your and the built-in agents, the
 * registry agents installed here, and the current one wherever it comes from; the Agents view
 * has the rest. */
export function pickerAgents(listing: AgentListing, current: string): AgentEntry[] {
  return listing.agents.filter(
    (a) => a.source !== 'registry' || a.status === 'found' || a.id === current,
  );
}

/** An option's words: the name, and why it cannot be chosen when it cannot. */
export function pickerLabel(a: AgentEntry): string {
  return usable(a) ? a.name : `${a.name} (${statusWords(a.status).label.toLowerCase()})`;
}

/** Where the entry comes from, after its source's label: the file, or the registry's snapshot;
 * null when it would only repeat the label ("Built in" / "built in"). */
export function originText(a: AgentEntry): string | null {
  const origin = a.origin?.trim();
  if (!origin) return null;
  const label = sourceLabel(a.source);
  if (origin.toLowerCase() === label.toLowerCase()) return null;
  // "ACP registry snapshot 2026-02-07 (3de1678)" beside "ACP registry".
  if (origin.toLowerCase().startsWith(`${label.toLowerCase()} `)) {
    return origin.slice(label.length + 1);
  }
  return origin;
}
