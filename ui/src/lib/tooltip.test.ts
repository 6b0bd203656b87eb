// The tooltip belongs to its element: it goes with it, and it never repeats what the element
// already shows (issue 13: "Allow once" stayed over the transcript after the dialog closed).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TIP_DELAY_MS, tip, tipsWithin } from './tooltip';

const tooltips = () => [...document.querySelectorAll('[role="tooltip"]')];

function button(text: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.textContent = text;
  document.body.append(b);
  return b;
}

function hover(el: Element): void {
  el.dispatchEvent(new Event('pointerenter'));
  el.dispatchEvent(new Event('pointerover', { bubbles: true }));
  vi.advanceTimersByTime(TIP_DELAY_MS);
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  vi.useRealTimers();
  document.body.replaceChildren();
});

describe('tip', () => {
  it('shows after a hover, as text, and names itself in aria-describedby', () => {
    const b = button('×');
    tip(b, 'Close <b>this</b> session');
    hover(b);
    const [t] = tooltips();
    expect(t?.textContent).toBe('Close <b>this</b> session');
    expect(t?.querySelector('b')).toBeNull();
    expect(b.getAttribute('aria-describedby')).toBe(t?.id);
  });

  it('goes when its element is removed under the pointer', () => {
    const b = button('Allow once');
    const action = tip(b, 'Allow once: the agent calls it “Proceed”');
    hover(b);
    expect(tooltips()).toHaveLength(1);
    b.remove();
    action.destroy();
    expect(tooltips()).toHaveLength(0);
  });

  it('goes on a click, even if the click hides its element without removing it', () => {
    const b = button('☰');
    tip(b, 'Hide sessions');
    hover(b);
    expect(tooltips()).toHaveLength(1);
    b.dispatchEvent(new Event('pointerdown', { bubbles: true }));
    expect(tooltips()).toHaveLength(0);
  });

  it('never shows a text the element already shows in full', () => {
    const b = button('Send');
    tip(b, 'Send');
    hover(b);
    // Backticks are how Markdown titles spell code the element shows as code.
    const c = button('Run cargo test');
    tip(c, 'Run `cargo test`');
    hover(c);
    expect(tooltips()).toHaveLength(0);
  });

  it('shows the same text when the element cuts it off', () => {
    const b = button('a/very/long/path/to/a/file.txt');
    Object.defineProperty(b, 'scrollWidth', { value: 300 });
    Object.defineProperty(b, 'clientWidth', { value: 120 });
    tip(b, 'a/very/long/path/to/a/file.txt');
    hover(b);
    expect(tooltips()).toHaveLength(1);
  });
});

describe('tipsWithin', () => {
  it('gives rendered HTML the same tooltip, and drops it when the HTML is replaced', () => {
    const root = document.createElement('div');
    root.innerHTML = '<p><a href="https://example.com" data-tip="https://example.com">docs</a></p>';
    document.body.append(root);
    tipsWithin(root);
    const link = root.querySelector('a') as HTMLElement;
    hover(link);
    expect(tooltips().map((t) => t.textContent)).toEqual(['https://example.com']);
    root.innerHTML = '<p>streamed on</p>';
    vi.advanceTimersByTime(50);
    expect(tooltips()).toHaveLength(0);
  });
});
