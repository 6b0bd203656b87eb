// THE tooltip: `use:tip={text}` instead of a `title` attribute (ESLint refuses `title` on
// anything but <option>). WebKitGTK's native tooltip outlives its element: a button removed
// under the pointer ("Allow once" as the dialog closes, "Hide sessions" as the sidebar folds)
// left its tooltip over the window. This one belongs to its element:
// - it goes when the pointer leaves, on blur, on any click, key or scroll, when the element is
//   removed (the action's destroy), and when it is no longer shown (checked every frame);
// - it never merely repeats what the element shows: a text equal to the element's own visible
//   text is shown only while that text is cut off (an ellipsis);
// - it sits below the element (above when there is no room), never over it.
// One tooltip element at a time, in <body>, `role="tooltip"`, named by `aria-describedby`.

/** Hover this long before the tooltip shows, as native tooltips do. */
export const TIP_DELAY_MS = 500;

let shown: { owner: HTMLElement; el: HTMLElement; watch: number } | null = null;
let nextId = 1;

/** Text as shown: a title rendered from Markdown shows `code` without its backticks. */
function normalize(s: string): string {
  return s.replace(/`/g, '').replace(/\s+/g, ' ').trim();
}

/** Whether `text` adds something to what `el` already shows. */
export function tipAddsSomething(el: HTMLElement, text: string): boolean {
  const t = normalize(text);
  if (t === '') return false;
  const visible = normalize(el.textContent ?? '');
  if (visible !== t) return true;
  // The same words, cut off: the tooltip shows the rest.
  return el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight + 1;
}

function hide(owner?: HTMLElement): void {
  if (!shown || (owner && shown.owner !== owner)) return;
  shown.owner.removeAttribute('aria-describedby');
  shown.el.remove();
  cancelAnimationFrame(shown.watch);
  document.removeEventListener('keydown', onAnyInput, true);
  document.removeEventListener('pointerdown', onAnyInput, true);
  document.removeEventListener('scroll', onAnyInput, true);
  shown = null;
}

/** A key, a click or a scroll anywhere: whatever it does may move or remove the element. */
function onAnyInput(): void {
  hide();
}

/** While shown, each frame: the element may be removed or hidden by its parent (a folded
 * sidebar keeps its children) without anything telling the tooltip. */
function watchOwner(): void {
  if (!shown) return;
  const { owner } = shown;
  // checkVisibility: a folded parent (display: none) hides the element without removing it.
  if (!owner.isConnected || (owner.checkVisibility && !owner.checkVisibility())) {
    hide();
    return;
  }
  shown.watch = requestAnimationFrame(watchOwner);
}

function show(owner: HTMLElement, text: string): void {
  hide();
  if (!owner.isConnected || !tipAddsSomething(owner, text)) return;
  const el = document.createElement('div');
  el.className = 'tooltip';
  el.setAttribute('role', 'tooltip');
  el.id = `tip-${nextId++}`;
  // Text, never HTML: tooltips show agent words too.
  el.textContent = text;
  document.body.append(el);
  const r = owner.getBoundingClientRect();
  const h = el.offsetHeight;
  const w = el.offsetWidth;
  const below = r.bottom + 6;
  const top = below + h > window.innerHeight && r.top - 6 - h >= 0 ? r.top - 6 - h : below;
  const left = Math.max(4, Math.min(r.left, window.innerWidth - w - 4));
  el.style.top = `${top}px`;
  el.style.left = `${left}px`;
  owner.setAttribute('aria-describedby', el.id);
  shown = { owner, el, watch: requestAnimationFrame(watchOwner) };
  document.addEventListener('keydown', onAnyInput, true);
  document.addEventListener('pointerdown', onAnyInput, true);
  document.addEventListener('scroll', onAnyInput, true);
}

/** Svelte action: `<button use:tip={'Stop the turn (Esc)'}>`. */
export function tip(node: HTMLElement, text: string | null | undefined) {
  let current = text ?? '';
  // Where tests (and the e2e run) read it; a data attribute shows nothing by itself.
  const mark = () => {
    if (current) node.dataset['tip'] = current;
    else delete node.dataset['tip'];
  };
  mark();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cancel = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const later = () => {
    cancel();
    timer = setTimeout(() => {
      timer = undefined;
      show(node, current);
    }, TIP_DELAY_MS);
  };
  const now = () => {
    cancel();
    // Keyboard focus shows it at once; a click's focus does not.
    if (node.matches(':focus-visible')) show(node, current);
  };
  const away = () => {
    cancel();
    hide(node);
  };
  const events: [string, () => void][] = [
    ['pointerenter', later],
    ['pointerleave', away],
    ['focusin', now],
    ['focusout', away],
  ];
  for (const [name, fn] of events) node.addEventListener(name, fn);
  return {
    update(next: string | null | undefined) {
      current = next ?? '';
      mark();
      if (shown?.owner === node) {
        if (current === '') hide(node);
        else show(node, current);
      }
    },
    destroy() {
      cancel();
      for (const [name, fn] of events) node.removeEventListener(name, fn);
      hide(node);
    },
  };
}

/**
 * Svelte action for a container whose HTML is not ours to give actions (rendered Markdown):
 * any element inside with a `data-tip` gets the same tooltip, by the same rules.
 */
export function tipsWithin(root: HTMLElement) {
  let target: HTMLElement | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const over = (e: Event) => {
    const found = e.target instanceof Element ? e.target.closest('[data-tip]') : null;
    const el = found instanceof HTMLElement && root.contains(found) ? found : null;
    if (el === target) return;
    clearTimeout(timer);
    if (target) hide(target);
    target = el;
    if (el)
      timer = setTimeout(() => {
        if (target === el) show(el, el.dataset['tip'] ?? '');
      }, TIP_DELAY_MS);
  };
  const leave = () => {
    clearTimeout(timer);
    if (target) hide(target);
    target = null;
  };
  root.addEventListener('pointerover', over);
  root.addEventListener('pointerleave', leave);
  return {
    destroy() {
      root.removeEventListener('pointerover', over);
      root.removeEventListener('pointerleave', leave);
      leave();
    },
  };
}
