// Agent text is untrusted: Markdown is rendered by a maintained parser (marked) and the HTML is
// then sanitized (DOMPurify) with an allow-list that has no scripts, styles, frames, forms,
// media or SVG. Links never navigate the webview: the click is caught (see Markdown.svelte).
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: false, async: false });

const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'strong',
  'em',
  'del',
  's',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'input',
  'span',
];
// `input` only for GFM task lists: forced to a disabled checkbox below.
const ALLOWED_ATTR = ['href', 'title', 'align', 'type', 'checked', 'disabled', 'class', 'start'];
/** Links that may be opened (in the system browser, on a click); anything else is dropped. */
const SAFE_URL = /^(?:https?:|mailto:)/i;

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      const href = node.getAttribute('href') ?? '';
      if (SAFE_URL.test(href)) node.setAttribute('title', href);
      else node.removeAttribute('href');
      node.setAttribute('rel', 'noopener noreferrer');
    }
    if (node.tagName === 'INPUT') {
      if (node.getAttribute('type') !== 'checkbox') {
        node.remove();
        return;
      }
      node.setAttribute('disabled', '');
    }
    if (node.hasAttribute('class')) {
      // Only the language class of code blocks survives (`language-rust`).
      const kept = (node.getAttribute('class') ?? '')
        .split(/\s+/)
        .filter((c) => /^language-[\w+-]+$/.test(c));
      if (kept.length > 0) node.setAttribute('class', kept.join(' '));
      else node.removeAttribute('class');
    }
  });
}

/** Agent Markdown to safe HTML. */
export function renderMarkdown(text: string): string {
  hook();
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
  });
}
