/** What Tab moves between inside a modal dialog. */
const FOCUSABLE =
  'button:not([disabled]), textarea:not([disabled]), input:not([disabled]), select:not([disabled]), summary, [href]';

/**
 * Keeps Tab and Shift+Tab inside `dialog` (a modal: nothing behind it may take the focus).
 * Returns whether the key was Tab (handled, whatever it did).
 */
export function trapTab(dialog: HTMLElement, e: KeyboardEvent): boolean {
  if (e.key !== 'Tab') return false;
  const items = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)];
  const first = items[0];
  const last = items.at(-1);
  if (!first || !last) return true;
  const at = document.activeElement;
  if (e.shiftKey && (at === first || at === dialog)) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && at === last) {
    e.preventDefault();
    first.focus();
  }
  return true;
}
