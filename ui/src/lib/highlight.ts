// Syntax highlighting for code blocks: highlight.js core with a fixed set of languages (no
// auto-detection: it tries every grammar and is slow). Output is HTML made of escaped text and
// `<span class="hljs-…">`; callers still pass it through the sanitizer.
//
// highlight.js and its grammars are a chunk of their own (hljs-languages.ts), loaded with
// `import()` when the first code block with a language is rendered: most windows never show
// one at start, and parsing the grammars cost the page memory it keeps (issue 15). Until the
// chunk is in, code is the same escaped text in the same `<pre><code>`, so nothing moves when
// the spans arrive; `highlighterReady` tells renderers to render again (markdown.ts).
import { writable, type Readable } from 'svelte/store';
import type { HLJSApi } from 'highlight.js';

let hljs: HLJSApi | null = null;
let loading: Promise<void> | null = null;
const ready = writable(false);
/** True once highlight.js is loaded: what was rendered plain before can be rendered again. */
export const highlighterReady: Readable<boolean> = { subscribe: ready.subscribe };

/** Whether code rendered now is highlighted (false until `loadHighlighter` has finished). */
export function highlighterLoaded(): boolean {
  return hljs !== null;
}

/** Loads highlight.js once; every call returns the same promise. A chunk that fails to load
 * (the bundle changed under a running window) leaves code plain, as for unknown languages. */
export function loadHighlighter(): Promise<void> {
  loading ??= import('./hljs-languages').then(
    (m) => {
      hljs = m.default;
      ready.set(true);
    },
    (e: unknown) => console.warn('highlight.js could not be loaded; code stays plain', e),
  );
  return loading;
}

/** Blocks longer than this are shown plain: highlighting is linear but not free. */
const MAX_HIGHLIGHT = 100_000;

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** A fence's language name (`ts` of "ts title=x"), lower case, or "" when it has none. */
export function fenceLanguage(lang: string | undefined | null): string {
  return (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
}

/** The registered language for a fence's info string (`ts`, `rust`, `toml`...), or null. */
export function knownLanguage(lang: string | undefined | null): string | null {
  const name = fenceLanguage(lang);
  if (!name || !hljs) return null;
  const l = hljs.getLanguage(name);
  return l ? name : null;
}

/** Highlighted HTML for `code` in `lang`, or the escaped text when the language is unknown. */
export function highlightCode(code: string, lang: string | undefined | null): string {
  const name = knownLanguage(lang);
  if (!name || !hljs || code.length > MAX_HIGHLIGHT) return escapeHtml(code);
  return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
}
