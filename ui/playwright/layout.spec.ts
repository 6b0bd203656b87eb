// The window's layout from 800x600 to 1920x1080, light and dark, with the showcase transcript
// replayed (every card kind, the pickers, the usage meter): the header keeps to one row, and no
// element of the header, the sidebar or the composer overflows its box. Text that is cut on
// purpose ends in an ellipsis and is readable whole in a tooltip: such an element may be
// narrower than its text only then. One window screenshot per size and theme:
// screenshots/layout-<w>x<h>-<light|dark>.png (docs/screenshots has the curated copies).
import { expect, test, type Page } from '@playwright/test';
import { join } from 'node:path';
import { repo, sel, shot } from './hooks';
import { replay, replayed } from './mock-ipc.js';

const showcase = join(repo, 'tests/transcripts/demo/showcase.jsonl');
/** Where the demo agent ran when recording (record.sh). */
const folder = '/tmp/acp-desk-transcripts/project';

const sizes = [
  { width: 800, height: 600 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
] as const;
const schemes = ['light', 'dark'] as const;

/** What overflows inside `root`: each element wider inside than its box, unless it is cut
 * with an ellipsis and a tooltip (its own or an ancestor's) holds all of its text. */
async function overflowing(page: Page, root: string): Promise<string[]> {
  return page.evaluate((root) => {
    const box = document.querySelector(root);
    if (!box) return [`${root} is missing`];
    const describe = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${[...el.classList]
        .map((c) => `.${c}`)
        .join('')} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    const out: string[] = [];
    for (const el of [box, ...box.querySelectorAll('*')]) {
      if (!(el instanceof HTMLElement) || el.offsetParent === null) continue;
      if (el.scrollWidth <= el.clientWidth) continue;
      const style = getComputedStyle(el);
      const text = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      const tip = el.closest('[data-tip]')?.getAttribute('data-tip')?.replace(/\s+/g, ' ') ?? '';
      if (style.textOverflow === 'ellipsis' && text !== '' && tip.includes(text)) continue;
      out.push(`${describe(el)}: ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return out;
  }, root);
}

/** The header's parts that do not share one row with the others (their boxes, top to bottom,
 * must overlap). */
async function headerRows(page: Page): Promise<{ rows: number; height: number }> {
  return page.evaluate(() => {
    const header = document.querySelector('.session-header') as HTMLElement;
    const parts = [...header.children].filter(
      (c): c is HTMLElement => c instanceof HTMLElement && c.offsetParent !== null,
    );
    // Parts laid out left to right: a part whose top is below another's bottom starts a row.
    const boxes = parts.map((p) => p.getBoundingClientRect());
    const tops = boxes.map((b) => b.top);
    const bottoms = boxes.map((b) => b.bottom);
    const rows = Math.max(...tops) < Math.min(...bottoms) ? 1 : 2;
    return { rows, height: header.getBoundingClientRect().height };
  });
}

/** Every control of the showcase is in the header, in its row or behind ⋯ (whose panel must
 * fit as well). */
async function everyControlReachable(page: Page): Promise<void> {
  const controls = [
    '[data-mode-picker]',
    'select[data-config-option="model"]',
    'select[data-config-option="thought_level"]',
    'input[data-config-option="brief"]',
    '[data-usage]',
  ].map((c) => page.locator(`.session-header ${c}`));
  const more = page.getByRole('button', { name: 'More settings' });
  const folded = await more.isVisible();
  if (folded) await more.click();
  for (const c of controls) await expect(c).toBeVisible();
  if (!folded) return;
  expect(await overflowing(page, '.session-header')).toEqual([]);
  await more.click();
  await expect(controls[3] as ReturnType<Page['locator']>).toBeHidden();
}

for (const scheme of schemes) {
  for (const size of sizes) {
    const name = `${size.width}x${size.height}`;
    test(`layout at ${name} (${scheme}): one header row, nothing overflows`, async ({ page }) => {
      // Before the page loads: the sidebar folds or not from the width the window starts at.
      await page.setViewportSize(size);
      await page.emulateMedia({ colorScheme: scheme });
      await replay(page, showcase, { folder });
      await page.goto('/');
      await expect.poll(() => replayed(page)).toBe(true);
      await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'ready');
      await expect(page.locator('[data-usage]')).toBeVisible();

      if (size.width >= 900) await expect(page.locator('nav.sidebar')).toBeVisible();
      await shot(page, `layout-${name}-${scheme}`);
      expect(await headerRows(page)).toMatchObject({ rows: 1 });
      expect(await overflowing(page, '.session-header')).toEqual([]);
      await everyControlReachable(page);
      expect(await overflowing(page, '.composer-wrap')).toEqual([]);
      // The placeholder is shown whole: the box is as wide as its text needs.
      const placeholder = await page.locator(sel.composer).evaluate((box) => {
        const t = box as HTMLTextAreaElement;
        const ctx = document.createElement('canvas').getContext('2d');
        const style = getComputedStyle(t);
        if (!ctx) return { text: 0, box: 0 };
        ctx.font = `${style.fontSize} ${style.fontFamily}`;
        const pad = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
        return { text: ctx.measureText(t.placeholder).width, box: t.clientWidth - pad };
      });
      expect(placeholder.text).toBeLessThanOrEqual(placeholder.box);

      const sidebar = page.locator('nav.sidebar');
      if (size.width < 900) {
        // Folded on a small window; shown on demand, it must fit too, and so must the rest.
        await expect(sidebar).toHaveCount(0);
        await page.getByRole('button', { name: 'Show the session list' }).click();
        await expect(sidebar).toBeVisible();
        await everyControlReachable(page);
      }
      expect(await overflowing(page, 'nav.sidebar')).toEqual([]);
      expect(await headerRows(page)).toMatchObject({ rows: 1 });
      expect(await overflowing(page, '.session-header')).toEqual([]);
      expect(await overflowing(page, '.composer-wrap')).toEqual([]);
    });
  }
}
