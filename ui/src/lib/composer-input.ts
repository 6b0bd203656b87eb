// The composer's text rules: when the `/` menu and the `@` picker open, what they match, and
// which images may be attached. No DOM.
import type { AgentIdentity, CommandInfo } from './generated/ipc';

/** The `/command` being typed: the text starts with `/` and the caret is still in its first word. */
export function slashQuery(text: string, caret: number): string | null {
  if (!text.startsWith('/')) return null;
  const word = /^\/(\S*)/.exec(text)?.[1] ?? '';
  if (caret < 1 || caret > word.length + 1) return null;
  return word;
}

/** Commands for the `/` menu: names starting with the query first, then names containing it. */
export function matchCommands(commands: readonly CommandInfo[], query: string): CommandInfo[] {
  const q = query.toLowerCase();
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(q));
  const contains = commands.filter(
    (c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q),
  );
  return [...starts, ...contains];
}

/** The `@mention` at the caret: `@` at the start or after white space, no space after it. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const m = /(^|\s)@(\S*)$/.exec(before);
  if (!m) return null;
  const query = m[2] ?? '';
  return { start: caret - query.length - 1, query };
}

/** `text` without the `@query` at `start`, and where the caret goes. */
export function removeMention(
  text: string,
  start: number,
  caret: number,
): { text: string; caret: number } {
  // One space left behind would double up with the one before the `@`.
  const before = text.slice(0, start);
  let after = text.slice(caret);
  if ((before === '' || /\s$/.test(before)) && after.startsWith(' ')) after = after.slice(1);
  return { text: before + after, caret: start };
}

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** Why an image cannot be attached, or null when it can. */
export function imageProblem(
  file: { name: string; type: string; size: number },
  accepted: boolean,
): string | null {
  if (!accepted) return 'This agent does not accept images.';
  const name = file.name || 'The image';
  if (!(IMAGE_TYPES as readonly string[]).includes(file.type)) {
    return `${name} is not a PNG, JPEG, GIF or WebP image, so it cannot be attached.`;
  }
  if (file.size > MAX_IMAGE_BYTES) {
    const mb = (file.size / (1024 * 1024)).toFixed(1);
    return `${name} is ${mb} MB; images can be at most 10 MB.`;
  }
  return null;
}

/** A file's bytes as base64 (no `data:` prefix). */
export function readBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error('could not read the image'));
    reader.readAsDataURL(file);
  });
}

/** Whether the agent takes images (its `initialize` promptCapabilities, on session-status). */
export function acceptsImages(agent: Pick<AgentIdentity, 'promptCapabilities'> | null): boolean {
  return agent?.promptCapabilities?.image === true;
}
