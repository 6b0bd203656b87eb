// The "MCP servers & secrets" view's logic: the configured MCP servers (settings, manifests)
// with their credential's state, and the secrets (stored in the keychain or missing, and where
// each is used), storing and removing one. Plain TypeScript: no Svelte, no Tauri, so tests
// drive it directly.
//
// Rule 57: a secret typed in the window goes to the keychain only. `store` hands the value to
// the shell and keeps no copy: nothing here (state, `said`, errors) ever holds it, and no
// command reads a value back: the listings carry names and "stored" only.
import { toUiError, type UiError } from './backend-types';
import type { McpServerRow, McpServersListing, SecretEntry, SecretsListing } from './generated/ipc';

export type { McpServerRow, McpServersListing, SecretEntry, SecretsListing };

/** What the view needs from the shell (src-tauri/src/secrets.rs; tests fake it). */
export interface SecretsBackend {
  secretsList(): Promise<SecretsListing>;
  /** Stores (or replaces) a secret; the listing afterwards, names only. */
  secretSet(name: string, value: string): Promise<SecretsListing>;
  secretDelete(name: string): Promise<SecretsListing>;
  mcpServersList(): Promise<McpServersListing>;
  /** The settings file in the user's editor (made from a short template when there is none). */
  openSettings(): Promise<void>;
}

/** The rule a secret's name follows (SecretRef::new in crates/acp-desk-core/src/secrets.rs). */
export const SECRET_NAME = /^[A-Za-z0-9._\-/:@]{1,128}$/;

/** Why `name` cannot be a secret's name, or null when it can (the shell checks again). */
export function nameProblem(name: string): string | null {
  if (name === '') return 'Give the secret a name, like github-mcp.';
  if (name.length > 128) return 'A secret’s name is at most 128 characters.';
  if (!SECRET_NAME.test(name)) return 'Use letters, digits and . _ - / : @ only (like github-mcp).';
  return null;
}

export function transportLabel(t: McpServerRow['transport']): string {
  return t === 'stdio' ? 'program' : t === 'http' ? 'HTTP' : 'SSE';
}

/** "Your settings" / "Manifest helper". */
export function sourceText(row: Pick<McpServerRow, 'source' | 'sourceDetail'>): string {
  return row.source === 'settings'
    ? 'Your settings'
    : `Manifest ${row.sourceDetail ?? ''}`.trimEnd();
}

/** Which agents get the server. */
export function agentsText(row: Pick<McpServerRow, 'source' | 'sourceDetail' | 'agents'>): string {
  if (row.agents && row.agents.length > 0) return `Only for ${row.agents.join(', ')}`;
  if (row.agents) return 'For no agent (its agents list is empty)';
  if (row.source === 'manifest') return `For its agent, ${row.sourceDetail ?? 'the manifest’s'}`;
  return 'For every agent';
}

/** A server's credential state, in words and a tone. */
export interface CredentialWords {
  text: string;
  tone: 'ok' | 'warn' | 'muted';
}

export function credentialWords(row: McpServerRow): CredentialWords | null {
  if (!row.credential) return null;
  if (row.credentialStored === true)
    return { text: `Credential ${row.credential}: stored`, tone: 'ok' };
  if (row.credentialStored === false)
    return {
      text: `Credential ${row.credential}: missing. Sessions skip this server until it is stored.`,
      tone: 'warn',
    };
  return { text: `Credential ${row.credential}: the keychain cannot be read`, tone: 'muted' };
}

export interface SecretsView {
  secrets: SecretsListing | null;
  servers: McpServersListing | null;
  loading: boolean;
  /** A listing could not be read. */
  listError: UiError | null;
  /** A command's failure (store, remove, open), until dismissed or replaced. */
  error: UiError | null;
  /** What the last action did ("Stored github-mcp in the keychain."). */
  said: string | null;
  /** A store is under way. */
  saving: boolean;
  /** The secret whose removal waits for the user's yes. */
  confirmRemove: string | null;
  /** The name the form is filled with (a "Store secret…" of a row); bumps `formSeq`. */
  formName: string;
  formSeq: number;
}

type Listener = (v: SecretsView) => void;

export class SecretsController {
  private view: SecretsView = {
    secrets: null,
    servers: null,
    loading: false,
    listError: null,
    error: null,
    said: null,
    saving: false,
    confirmRemove: null,
    formName: '',
    formSeq: 0,
  };
  private listeners = new Set<Listener>();
  private listSeq = 0;

  constructor(private backend: SecretsBackend) {}

  get state(): SecretsView {
    return this.view;
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    fn(this.view);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<SecretsView>): void {
    this.view = { ...this.view, ...patch };
    for (const fn of this.listeners) fn(this.view);
  }

  /** Reads both listings again (the latest call's answers win). */
  async refresh(): Promise<void> {
    const seq = ++this.listSeq;
    this.set({ loading: true });
    try {
      const [secrets, servers] = await Promise.all([
        this.backend.secretsList(),
        this.backend.mcpServersList(),
      ]);
      if (seq !== this.listSeq) return;
      this.set({ loading: false, secrets, servers, listError: null });
    } catch (e) {
      if (seq !== this.listSeq) return;
      this.set({ loading: false, listError: toUiError(e) });
    }
  }

  /** A changed secrets listing: the servers' credential states follow it. */
  private async took(secrets: SecretsListing): Promise<void> {
    ++this.listSeq;
    this.set({ secrets });
    try {
      const servers = await this.backend.mcpServersList();
      this.set({ servers });
    } catch (e) {
      this.set({ listError: toUiError(e) });
    }
  }

  /** Fills the form with `name` (a server's or a secret's "Store…"). */
  prepare(name: string): void {
    this.set({ formName: name, formSeq: this.view.formSeq + 1, said: null, error: null });
  }

  /**
   * Stores `value` under `name`; true when the keychain took it (the form then clears its
   * field). The value is passed on, never kept or said.
   */
  async store(name: string, value: string): Promise<boolean> {
    if (this.view.saving) return false;
    const trimmed = name.trim();
    const bad = nameProblem(trimmed);
    if (bad) {
      this.set({ error: { code: 'invalid-input', message: bad }, said: null });
      return false;
    }
    if (value.trim() === '') {
      this.set({
        error: {
          code: 'invalid-input',
          message: `The value for ${trimmed} is empty: paste the token (or a JSON object of headers).`,
        },
        said: null,
      });
      return false;
    }
    const replaced = this.view.secrets?.secrets.some((s) => s.name === trimmed && s.stored);
    this.set({ saving: true, error: null, said: null });
    try {
      const secrets = await this.backend.secretSet(trimmed, value);
      this.set({
        saving: false,
        formName: '',
        said: `${replaced ? 'Replaced' : 'Stored'} ${trimmed} in the keychain. Sessions started from now on use it.`,
      });
      await this.took(secrets);
      return true;
    } catch (e) {
      this.set({ saving: false, error: toUiError(e) });
      return false;
    }
  }

  askRemove(name: string): void {
    this.set({ confirmRemove: name, error: null, said: null });
  }

  cancelRemove(): void {
    this.set({ confirmRemove: null });
  }

  /** Removes the secret the user confirmed. */
  async remove(): Promise<void> {
    const name = this.view.confirmRemove;
    if (!name) return;
    this.set({ confirmRemove: null, error: null, said: null });
    try {
      const secrets = await this.backend.secretDelete(name);
      this.set({ said: `Removed ${name} from the keychain.` });
      await this.took(secrets);
    } catch (e) {
      this.set({ error: toUiError(e) });
      // Removed meanwhile (the CLI, another window): the listing says how things are now.
      void this.refresh();
    }
  }

  async openSettings(): Promise<void> {
    this.set({ error: null, said: null });
    try {
      await this.backend.openSettings();
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  dismiss(): void {
    this.set({ error: null, said: null });
  }
}
