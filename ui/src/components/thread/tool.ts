// Pure helpers for tool-call cards (tested without a DOM).
import type { ToolCallStatus } from '../../lib/generated/ipc';

export const statusLabel: Record<ToolCallStatus, string> = {
  pending: 'Pending',
  in_progress: 'Running',
  completed: 'Done',
  failed: 'Failed',
};

/** The command and working folder of an execute call's input (`command`/`cmd`, `cwd`). */
export function commandOf(rawInput: unknown): { command: string | null; cwd: string | null } {
  if (!rawInput || typeof rawInput !== 'object') return { command: null, cwd: null };
  const o = rawInput as Record<string, unknown>;
  const c = o['command'] ?? o['cmd'];
  let command: string | null = null;
  if (typeof c === 'string') command = c;
  else if (Array.isArray(c) && c.every((p) => typeof p === 'string')) {
    const parts = c as string[];
    // ["bash", "-lc", "script"]: the script is what was run.
    command =
      parts.length === 3 && /(^|\/)(ba|z)?sh$/.test(parts[0] ?? '') && parts[1]?.startsWith('-')
        ? (parts[2] as string)
        : parts.map((p) => (/^[\w./:=@%+-]+$/.test(p) ? p : JSON.stringify(p))).join(' ');
  }
  const cwd = typeof o['cwd'] === 'string' ? (o['cwd'] as string) : null;
  return { command, cwd };
}

/** A value as text for a <pre>: strings as they are, anything else as indented JSON. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Text shown for a raw output object that wraps command output (Codex: stdout/stderr/output). */
export function outputText(rawOutput: unknown): string {
  if (rawOutput && typeof rawOutput === 'object' && !Array.isArray(rawOutput)) {
    const o = rawOutput as Record<string, unknown>;
    for (const k of ['formatted_output', 'aggregated_output', 'output', 'stdout']) {
      const v = o[k];
      if (typeof v === 'string' && v.length > 0) {
        const stderr =
          typeof o['stderr'] === 'string' && k === 'stdout' ? (o['stderr'] as string) : '';
        return stderr ? `${v}\n${stderr}` : v;
      }
    }
  }
  return asText(rawOutput);
}

const IMAGE_MIME = /^image\/(png|jpeg|gif|webp)$/i;

/** A data: URI for inline image content, or null (only raster types; never remote). */
export function imageSrc(mimeType: string, data: string): string | null {
  if (!IMAGE_MIME.test(mimeType) || !/^[a-z0-9+/=\s]+$/i.test(data)) return null;
  return `data:${mimeType.toLowerCase()};base64,${data}`;
}

/** A local path from a resource URI (`file:///a/b` → `/a/b`), or null for other schemes. */
export function fileOfUri(uri: string): string | null {
  if (uri.startsWith('file://')) {
    try {
      return decodeURIComponent(new URL(uri).pathname);
    } catch {
      return uri.slice('file://'.length);
    }
  }
  if (uri.startsWith('/')) return uri;
  return null;
}
