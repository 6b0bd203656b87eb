// A session's MCP servers as the engine reported them at its start (the `mcp-servers` event,
// issue 17): which were passed to the agent and which were skipped, and why. What the header's
// chip and its popover say.

/** One server of the `mcp-servers` event (crates/acp-desk-core/src/events.rs). */
export interface McpServerReport {
  name: string;
  transport: 'stdio' | 'http' | 'sse';
  source: 'settings' | 'manifest' | 'project';
  /** The manifest's name, or the project config file's path. */
  sourceDetail?: string | null;
  /** stdio: the command as written (no args); http/sse: the URL without query or user info. */
  target: string;
  passed: boolean;
  /** Why it was skipped, for a person. */
  reason?: string | null;
  /** The credential's secret name. */
  credential?: string | null;
  notes?: string[];
}

export interface McpServersEvent {
  kind: 'mcp-servers';
  sessionId: string;
  servers: McpServerReport[];
}

export interface McpChip {
  /** "MCP 3". */
  label: string;
  /** For the tooltip and screen readers: "3 MCP servers passed to the agent, 1 skipped". */
  meaning: string;
  passed: McpServerReport[];
  skipped: McpServerReport[];
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The chip for a session's servers; null when the session got none and skipped none. */
export function mcpChip(servers: readonly McpServerReport[] | null): McpChip | null {
  if (!servers || servers.length === 0) return null;
  const passed = servers.filter((s) => s.passed);
  const skipped = servers.filter((s) => !s.passed);
  let meaning = `${count(passed.length, 'MCP server', 'MCP servers')} passed to the agent`;
  if (skipped.length > 0) meaning += `, ${skipped.length} skipped`;
  return { label: `MCP ${passed.length}`, meaning, passed, skipped };
}

/** Where a server comes from, in words. */
export function reportSource(s: McpServerReport): string {
  switch (s.source) {
    case 'settings':
      return 'your settings';
    case 'manifest':
      return s.sourceDetail ? `manifest ${s.sourceDetail}` : 'its manifest';
    case 'project':
      return s.sourceDetail ? `project file ${s.sourceDetail}` : 'the project';
  }
}

export function transportWord(t: McpServerReport['transport']): string {
  return t === 'stdio' ? 'program' : t === 'http' ? 'HTTP' : 'SSE';
}

/** Reads the servers of an event whose kind is `mcp-servers` (null for any other event). The
 * event is an addition (ADDITIONS in events.rs); until its type is in the generated file, this
 * is where the UI reads it. */
export function mcpServersOf(ev: { kind: string }): McpServerReport[] | null {
  if (ev.kind !== 'mcp-servers') return null;
  const servers = (ev as Partial<McpServersEvent>).servers;
  return Array.isArray(servers) ? servers : [];
}
