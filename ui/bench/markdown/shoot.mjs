// Opens the built harness in Chromium with the app's CSP and saves screenshots; prints CSP
// violations and whether xterm rendered. Usage (from the repository root):
//   HARNESS_OUT=/tmp/thread-harness npx vite build --config ui/bench/markdown/vite.config.ts
//   node ui/bench/markdown/serve.mjs /tmp/thread-harness 4719 &
//   node ui/bench/markdown/shoot.mjs http://localhost:4719 /tmp/shots
import { chromium } from '@playwright/test';
import { mkdir } from 'node:fs/promises';

const base = process.argv[2] ?? 'http://localhost:4719';
const out = process.argv[3] ?? '/tmp/shots';
await mkdir(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
});

async function shot(scene, scheme, name, fn, size = { width: 960, height: 1100 }) {
  const page = await browser.newPage({ viewport: size, colorScheme: scheme, deviceScaleFactor: 1 });
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${base}/harness.html?scene=${scene}`);
  await page.waitForTimeout(700);
  const extra = fn ? await fn(page) : undefined;
  await page.screenshot({ path: `${out}/${name}.png` });
  const xterm = await page.evaluate(() => {
    const rows = document.querySelector('.xterm-rows');
    if (!rows) return null;
    const style = getComputedStyle(rows.querySelector('div') ?? rows);
    return {
      text: rows.textContent?.slice(0, 80),
      lineHeight: style.lineHeight,
      fontFamily: style.fontFamily,
    };
  });
  console.log(
    `${name}: ${problems.length} console problems`,
    xterm ? `xterm: ${JSON.stringify(xterm)}` : '',
    extra ?? '',
  );
  for (const p of [...new Set(problems)].slice(0, 6)) console.log('   ', p.slice(0, 300));
  await page.close();
}

const scenes = (process.env.SCENES ?? 'all,tools,diff,split,big,scrolled').split(',');
for (const scheme of ['light', 'dark']) {
  if (scenes.includes('all'))
    await shot('all', scheme, `thread-entries-${scheme}`, async (p) => {
      await p.evaluate(() => document.querySelector('.scroller')?.scrollTo(0, 0));
      await p.waitForTimeout(300);
    });
  if (scenes.includes('tools'))
    await shot(
      'tools',
      scheme,
      `thread-tools-${scheme}`,
      async (p) => {
        await p.evaluate(() => document.querySelector('.scroller')?.scrollTo(0, 0));
        await p.waitForTimeout(300);
      },
      { width: 960, height: 1500 },
    );
  if (scenes.includes('diff'))
    await shot('diff', scheme, `thread-diff-unified-${scheme}`, null, { width: 900, height: 760 });
  if (scenes.includes('split'))
    await shot(
      'diff',
      scheme,
      `thread-diff-split-${scheme}`,
      async (p) => {
        await p.getByRole('button', { name: 'Split' }).first().click();
        await p.waitForTimeout(200);
      },
      { width: 1100, height: 760 },
    );
  if (scenes.includes('big'))
    await shot(
      'big',
      scheme,
      `thread-big-${scheme}`,
      async (p) => {
        const n = await p.evaluate(() => document.querySelectorAll('[data-entry]').length);
        return `rendered entries: ${n} of 5000`;
      },
      { width: 960, height: 700 },
    );
  if (scenes.includes('terminal'))
    await shot(
      'all',
      scheme,
      `thread-terminal-${scheme}`,
      async (p) => {
        await p.evaluate(() =>
          document.querySelector('[data-terminal-id]')?.scrollIntoView({ block: 'center' }),
        );
        await p.waitForTimeout(400);
      },
      { width: 960, height: 700 },
    );
}
await browser.close();
