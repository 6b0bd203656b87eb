// Syntax highlighting for code blocks: highlight.js core with a fixed set of languages (no
// auto-detection: it tries every grammar and is slow). Output is HTML made of escaped text and
// `<span class="hljs-…">`; callers still pass it through the sanitizer.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const languages = {
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  ini, // also `toml`
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml, // also `html`, `svg`
  yaml,
};
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['console'], { languageName: 'shell' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['py'], { languageName: 'python' });

/** Blocks longer than this are shown plain: highlighting is linear but not free. */
const MAX_HIGHLIGHT = 100_000;

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** The registered language for a fence's info string (`ts`, `rust`, `toml`...), or null. */
export function knownLanguage(lang: string | undefined | null): string | null {
  const name = (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  if (!name) return null;
  const l = hljs.getLanguage(name);
  return l ? name : null;
}

/** Highlighted HTML for `code` in `lang`, or the escaped text when the language is unknown. */
export function highlightCode(code: string, lang: string | undefined | null): string {
  const name = knownLanguage(lang);
  if (!name || code.length > MAX_HIGHLIGHT) return escapeHtml(code);
  return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
}
