// Agent output is untrusted. A transcript whose agent text (and tool titles, notices, errors,
// permission requests, file names) is hostile Markdown/HTML must render inert: no script runs, no
// request leaves for another host, no `on*` attribute or `javascript:` address reaches the DOM,
// and a link never navigates the window. The corpus starts from ui/src/lib/markdown.test.ts.
//
// `vite preview` serves the page without the app's CSP (tauri.conf.json applies it only inside
// the app), so the first tests check the sanitizer and the components on their own, without that
// second wall. The `under the app's CSP` variants serve every response of the built UI with the
// exact CSP of tauri.conf.json (`app.security.csp`) as a header and record every
// `securitypolicyviolation`: the showcase transcript (a terminal: xterm adds <style> elements,
// allowed by style-src 'unsafe-inline'; diffs through the worker) replays with none, and the
// hostile corpus still runs nothing.
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectEntries, countEntries, repo, revealEntry, sel, shot } from './hooks';
import { calls, replay, replayed, type StreamEvent } from './mock-ipc.js';
import { sentinelCases, sentinelChunkings } from './sentinel-corpus';

/** The app's CSP, as tauri.conf.json states it, in header form. */
export const APP_CSP = Object.entries(
  (
    JSON.parse(readFileSync(join(repo, 'tauri.conf.json'), 'utf8')) as {
      app: { security: { csp: Record<string, string> } };
    }
  ).app.security.csp,
)
  .map(([directive, value]) => `${directive} ${value}`)
  .join('; ');

interface Violation {
  directive: string;
  blocked: string;
  source: string;
  sample: string;
}

/**
 * Serves every same-origin response with APP_CSP and records the page's CSP violations (read
 * them with `violations(page)`).
 */
async function withAppCsp(page: Page): Promise<void> {
  const origin = new URL(test.info().project.use.baseURL ?? 'http://127.0.0.1').origin;
  await page.route(
    (url) => url.origin === origin,
    async (route) => {
      const response = await route.fetch();
      await route.fulfill({
        response,
        headers: { ...response.headers(), 'content-security-policy': APP_CSP },
      });
    },
  );
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: Violation[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      w.__csp.push({
        directive: e.effectiveDirective,
        blocked: e.blockedURI,
        source: `${e.sourceFile}:${e.lineNumber}`,
        sample: e.sample,
      });
    });
  });
}

function violations(page: Page): Promise<Violation[]> {
  return page.evaluate(() => (window as unknown as { __csp: Violation[] }).__csp);
}

/** The violations that are not Chromium's parse-time reports of agent text (see the corpus test). */
function unexpected(all: Violation[]): Violation[] {
  return all.filter(
    (v) =>
      !(v.directive === 'script-src-attr' && v.blocked === 'inline') &&
      !(v.directive === 'base-uri' && v.blocked.startsWith('https://evil.example')),
  );
}

// Every payload that could run sets window.__pwned (and most also call alert()).
const PWN = 'window.__pwned=(window.__pwned||0)+1;alert(1)';
const REMOTE = 'https://evil.example';

export const corpus: string[] = [
  // From markdown.test.ts.
  '<script>alert(1)</script>',
  `<script>${PWN}</script>`,
  `<img src=x onerror="${PWN}">`,
  `<p onclick="${PWN}">hi</p>`,
  `[click](javascript:${PWN})`,
  `<a href="javascript:${PWN}">x</a>`,
  '<a href="jav&#x09;ascript:alert(1)">x</a>',
  '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  `<svg><script>${PWN}</script><circle onload="${PWN}"/></svg>`,
  `<svg><animate onbegin="${PWN}" attributeName="x" dur="1s"/></svg>`,
  `<iframe src="${REMOTE}/frame"></iframe>`,
  `<form action="${REMOTE}/form"><input name="a"><button>go</button></form>`,
  `<style>body{background:url(${REMOTE}/style-tag.png)}</style>`,
  `<p style="background:url(${REMOTE}/style-attr.png)">x</p>`,
  `![x](${REMOTE}/track.png)`,
  '<object data="x.swf"></object><embed src="x.swf">',
  `<meta http-equiv="refresh" content="0;url=${REMOTE}/refresh">`,
  `<base href="${REMOTE}/">`,
  `<noscript><p title="</noscript><img src=x onerror=${PWN}>">`,
  `<math><mtext><table><mglyph><style><img src=x onerror=${PWN}>`,
  `<link rel="stylesheet" href="${REMOTE}/x.css">`,
  // More.
  `<img src="${REMOTE}/remote-img.png">`,
  `<img srcset="${REMOTE}/srcset.png 2x">`,
  `<svg onload="${PWN}"><rect width="10" height="10"/></svg>`,
  `<svg><a xlink:href="javascript:${PWN}"><text y="20">svg link</text></a></svg>`,
  `<iframe srcdoc="<script>parent.${PWN}</script>"></iframe>`,
  `<iframe src="javascript:${PWN}"></iframe>`,
  `<form><button formaction="javascript:${PWN}">submit</button></form>`,
  `<input type="image" src="${REMOTE}/input.png">`,
  `<video poster="${REMOTE}/poster.png"><source src="${REMOTE}/v.mp4"></video>`,
  `<audio src="${REMOTE}/a.mp3" autoplay></audio>`,
  `<details open ontoggle="${PWN}"><summary>s</summary></details>`,
  `<body onload="${PWN}">`,
  `<div style="width:expression(${PWN})">ie</div>`,
  `<a href="data:text/html,<script>${PWN}</script>">data link</a>`,
  `<a href="vbscript:msgbox(1)">vb</a>`,
  `[ref link][r]\n\n[r]: javascript:${PWN}`,
  `<a href="${REMOTE}/ok" target="_top" ping="${REMOTE}/ping">ping link</a>`,
  `<img src=x onerror=${PWN}//`,
  `<template><img src=x onerror="${PWN}"></template>`,
  `<select><template><style></style><img src=x onerror="${PWN}"></template></select>`,
  `<object data="javascript:${PWN}"></object>`,
  `\`<img src=x onerror="${PWN}">\` in code, and in a block:\n\n\`\`\`html\n<script>${PWN}</script>\n\`\`\``,
  `<xmp><img src=x onerror="${PWN}"></xmp>`,
  `<a id="composer" name="__acpMock">clobber</a><form name="getElementById"></form>`,
];

const sid = 'hostile-session';

/** One agent message per payload (separate Markdown renders), plus hostile text everywhere. */
function transcript(pending: boolean): StreamEvent[] {
  const ev = (e: Record<string, unknown> & { kind: string }): StreamEvent => ({
    sessionId: sid,
    ...e,
  });
  const events: StreamEvent[] = [
    ev({
      kind: 'session-status',
      status: 'ready',
      agent: { launchName: 'demo', name: `<img src=x onerror="${PWN}">` },
    }),
    ev({ kind: 'turn-start', prompt: [{ type: 'text', text: `<script>${PWN}</script> hostile` }] }),
  ];
  corpus.forEach((text, i) => {
    events.push(ev({ kind: 'text-delta', text, messageId: `m${i}` }));
    events.push(ev({ kind: 'thought', text, messageId: `t${i}` }));
  });
  events.push(
    ev({
      kind: 'tool-call',
      toolCallId: 'tc-1',
      toolName: `<img src=x onerror="${PWN}">`,
      arguments: {},
      isUpdate: false,
      toolKind: 'edit',
      status: 'completed',
      content: [
        {
          type: 'diff',
          path: `<svg onload="${PWN}">.rs`,
          oldText: `<script>${PWN}</script>`,
          newText: `<img src=x onerror="${PWN}">`,
        },
        { type: 'content', content: { type: 'text', text: corpus.join('\n\n') } },
      ],
      locations: [{ path: `javascript:${PWN}` }],
    }),
    ev({
      kind: 'terminal-output',
      terminalId: 'term-1',
      data: `\u001b]8;;javascript:${PWN}\u0007link\u001b]8;;\u0007 <img src=x onerror="${PWN}">\r\n`,
    }),
    ev({
      kind: 'notice',
      severity: 'warning',
      source: 'agent',
      title: `<img src=x onerror="${PWN}">`,
      description: `[x](javascript:${PWN})`,
    }),
    ev({ kind: 'error', error: { message: `<script>${PWN}</script>` } }),
    ev({ kind: 'file-changed', path: `<img src=x onerror="${PWN}">`, created: true }),
    ev({
      kind: 'plan',
      entries: [{ content: `<img src=x onerror="${PWN}">`, priority: 'high', status: 'pending' }],
    }),
    ev({ kind: 'session-info', title: `<script>${PWN}</script>` }),
  );
  if (pending) {
    events.push(
      ev({
        kind: 'agent-prompt',
        toolCallId: 'perm-1',
        targetToolCallId: 'tc-2',
        toolName: `<img src=x onerror="${PWN}">`,
        toolKind: 'execute',
        text: `<script>${PWN}</script>`,
        rawInput: { command: `<img src=x onerror="${PWN}">` },
        locations: [{ path: `<svg onload="${PWN}">` }],
        options: [
          { optionId: 'a', name: `<img src=x onerror="${PWN}">`, kind: 'allow_once' },
          { optionId: 'r', name: 'Reject', kind: 'reject_once' },
        ],
      }),
    );
  } else {
    events.push(ev({ kind: 'turn-end', reason: 'completed', stopReason: 'end_turn' }));
  }
  return events;
}

async function watch(
  page: Page,
): Promise<{ dialogs: string[]; remote: string[]; errors: string[] }> {
  const seen = { dialogs: [] as string[], remote: [] as string[], errors: [] as string[] };
  page.on('dialog', (d) => {
    seen.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => seen.errors.push(e.message));
  const origin = new URL(test.info().project.use.baseURL ?? 'http://127.0.0.1').origin;
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) {
      seen.remote.push(url);
    }
  });
  // Nothing leaves the machine even if a request slipped through (it is still counted above).
  await page.route(
    (url) => url.origin !== origin && url.protocol.startsWith('http'),
    (r) => r.abort(),
  );
  return seen;
}

/** What would not be inert: `on*` attributes, script addresses, active elements. */
function findBad(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const bad: string[] = [];
    for (const el of document.querySelectorAll('body *')) {
      for (const attr of el.getAttributeNames()) {
        const value = el.getAttribute(attr) ?? '';
        if (attr.toLowerCase().startsWith('on')) bad.push(`${el.tagName} ${attr}`);
        if (
          /^\s*(javascript|vbscript|data):/i.test(
            [...value].filter((c) => c.charCodeAt(0) > 32).join(''),
          ) &&
          [
            'href',
            'src',
            'xlink:href',
            'action',
            'formaction',
            'data',
            'srcdoc',
            'poster',
          ].includes(attr.toLowerCase())
        ) {
          bad.push(`${el.tagName} ${attr}=${value.slice(0, 40)}`);
        }
      }
      if (
        ['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'META', 'BASE', 'LINK', 'STYLE', 'FRAME'].includes(
          el.tagName,
        )
      ) {
        bad.push(`<${el.tagName.toLowerCase()}> in body`);
      }
    }
    // The composer is the only form in the window.
    for (const f of document.querySelectorAll('form'))
      if (!f.querySelector('#composer')) bad.push('a <form>');
    return bad;
  });
}

/**
 * Scrolls the thread from top to bottom and clicks every link of every row once (a real mouse
 * click, forced: some links are in folded content); how many were clicked.
 */
async function clickEveryLink(page: Page): Promise<number> {
  const thread = page.locator(sel.thread);
  const done = new Set<number>();
  let clicked = 0;
  await thread.evaluate((el) => (el.scrollTop = 0));
  for (let step = 0; step < 1000; step++) {
    await page.evaluate(
      () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
    );
    const rows = await thread
      .locator('.item[data-index]')
      .evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.index)));
    for (const index of rows) {
      if (done.has(index)) continue;
      done.add(index);
      const links = thread.locator(`.item[data-index="${index}"] a`);
      const n = await links.count();
      for (let i = 0; i < n; i++) {
        await links.nth(i).click({ force: true, noWaitAfter: true, timeout: 2000 });
        clicked++;
      }
    }
    const moved = await thread.evaluate((el) => {
      const before = el.scrollTop;
      el.scrollTop = before + Math.max(40, Math.floor(el.clientHeight / 2));
      return el.scrollTop > before;
    });
    if (!moved) break;
  }
  return clicked;
}

async function assertInert(page: Page): Promise<void> {
  expect(await findBad(page)).toEqual([]);
  const head = await page.evaluate(() =>
    [...document.head.children].map((c) => c.outerHTML.slice(0, 80)),
  );
  expect(head.filter((h) => /evil|refresh|<base/i.test(h))).toEqual([]);
}

/** The DOM is inert, no payload ran or asked for anything, and the page threw nothing. */
async function assertNothingRan(
  page: Page,
  seen: { dialogs: string[]; remote: string[]; errors: string[] },
): Promise<void> {
  await assertInert(page);
  expect(
    await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
  ).toBeUndefined();
  expect(seen.dialogs).toEqual([]);
  expect(seen.remote).toEqual([]);
  expect(seen.errors).toEqual([]);
}

for (const csp of [false, true])
  for (const pending of [false, true]) {
    test(`hostile corpus renders inert${csp ? " under the app's CSP" : ''}${pending ? ' (with a permission dialog open)' : ''}`, async ({
      page,
    }) => {
      const seen = await watch(page);
      if (csp) await withAppCsp(page);
      await replay(page, transcript(pending));
      await page.goto('/');
      const start = page.url();
      await expect.poll(() => replayed(page)).toBe(true);
      if (pending) await expect(page.locator(sel.dialog)).toBeVisible();
      else await expect.poll(() => countEntries(page, 'turn-end')).toBe(1);
      // Give timers, refreshes, image loads and animations a moment to fire.
      await page.waitForTimeout(1500);
      await shot(page, `hostile${csp ? '-csp' : ''}${pending ? '-dialog' : ''}--window`);

      await assertNothingRan(page, seen);
      expect(page.url()).toBe(start);

      if (!pending) {
        // Clicking every link in the thread neither navigates nor runs anything. The thread is
        // virtualized: every row is scrolled into the DOM in turn and its links clicked.
        const n = await clickEveryLink(page);
        expect(n).toBeGreaterThan(0);
        await page.waitForTimeout(300);
        expect(page.url()).toBe(start);
        expect(
          await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
        ).toBeUndefined();
        expect(seen.dialogs).toEqual([]);
        expect(seen.remote).toEqual([]);
        // Only web links may be handed to the system browser.
        for (const c of (await calls(page)).filter((c) => c.cmd === 'open_url')) {
          expect(String(c.args.url)).toMatch(/^(https?:|mailto:)/);
        }
      }
      if (csp) {
        // Chromium reports an `on*` attribute (script-src-attr) and a <base> (base-uri) as
        // violations as soon as they are PARSED in this window, even into an inert document
        // (DOMParser, <template>): that is the sanitizer reading the agent's text, each report
        // something blocked anyway (and removed: findBad, the <head> check, document.baseURI).
        // Anything else (a script, a remote image, a frame, a style sheet, a connection, a
        // form) would be our own code breaking the policy, or a payload that got through.
        const all = await violations(page);
        expect(all.length).toBeGreaterThan(0);
        expect(await page.evaluate(() => document.baseURI)).toBe(start);
        expect(unexpected(all)).toEqual([]);
      }
    });
  }

// Issue 12: a payload the sanitizer removes together with its content (an unclosed `<style>`,
// `<script>`, `<textarea>`, ...) took the rest of the agent's message with it. Each payload of
// sentinel-corpus.ts (shared with markdown.test.ts) is one agent message, streamed chunk by
// chunk through the built UI under the app's CSP; every sentinel sentence after it must be
// rendered visible (`innerText`), and nothing may run.
for (const chunking of ['inside the tag', 'at the newlines'])
  test(`text after a hostile payload stays visible, streamed ${chunking}, under the app's CSP`, async ({
    page,
  }) => {
    test.setTimeout(120_000);
    const seen = await watch(page);
    await withAppCsp(page);
    const cases = sentinelCases(PWN);
    const events: StreamEvent[] = [
      { kind: 'session-status', status: 'ready', agent: { launchName: 'demo', name: 'Demo' } },
      { kind: 'turn-start', prompt: [{ type: 'text', text: 'hostile, streamed' }] },
    ];
    cases.forEach((c, i) => {
      const parts = sentinelChunkings(c).find(([how]) => how === chunking)?.[1] ?? [];
      expect(parts.join('')).toBe(c.message);
      for (const text of parts) events.push({ kind: 'text-delta', text, messageId: `s${i}` });
    });
    events.push({ kind: 'turn-end', reason: 'completed', stopReason: 'end_turn' });
    // One chunk per frame (longer than an animation frame): the growing message is rendered
    // between its chunks, through the streaming path, as it is from a real agent.
    await replay(
      page,
      events.map((e) => ({ sessionId: sid, ...e })),
      { pace: 20 },
    );
    await page.goto('/');
    await expect.poll(() => replayed(page), { timeout: 90_000 }).toBe(true);
    await expect.poll(() => countEntries(page, 'turn-end')).toBe(1);

    const agent = (await collectEntries(page)).filter((e) => e.entry === 'agent');
    expect(agent).toHaveLength(cases.length);
    const missing: string[] = [];
    cases.forEach((c, i) => {
      for (const s of c.sentinels)
        if (!agent[i]?.visibleText.includes(s)) missing.push(`${c.name}: ${s}`);
    });
    expect(missing).toEqual([]);

    await assertNothingRan(page, seen);
    expect(unexpected(await violations(page))).toEqual([]);
  });

test("the showcase replays under the app's CSP without a violation", async ({ page }) => {
  const seen = await watch(page);
  await withAppCsp(page);
  await replay(page, join(repo, 'tests/transcripts/demo/showcase.jsonl'), {
    folder: '/tmp/acp-desk-transcripts/project',
  });
  const response = await page.goto('/');
  // The document came with the app's policy.
  expect(response?.headers()['content-security-policy']).toBe(APP_CSP);
  await expect.poll(() => replayed(page)).toBe(true);
  // Every row mounted once (Markdown, highlight, diffs, the terminal), then the terminal again.
  const entries = await collectEntries(page);
  expect(entries.filter((e) => e.entry === 'tool')).toHaveLength(12);
  const term = await revealEntry(page, '[data-terminal-id="term-1"]');
  await expect(term).toContainText('test result: ok. 12 passed');
  // xterm's own <style> elements are in (style-src 'unsafe-inline').
  expect(await page.evaluate(() => document.querySelectorAll('style').length)).toBeGreaterThan(0);
  await revealEntry(page, '[data-tool-call-id="show-edit"] .diff-view');
  // highlight.js came as its own chunk (loaded on first use) and coloured the Rust blocks.
  await expect(page.locator('.markdown code.language-rust .hljs-keyword').first()).toBeAttached();
  await page.waitForTimeout(500);
  expect(await violations(page)).toEqual([]);
  expect(seen.errors).toEqual([]);
  expect(seen.remote).toEqual([]);

  // The policy is live: an inline script of our own making is refused and reported.
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.head.append(s);
  });
  expect(await page.evaluate(() => (window as unknown as { __inline?: number }).__inline)).toBe(
    undefined,
  );
  await expect
    .poll(async () => (await violations(page)).map((v) => v.directive))
    .toEqual(['script-src-elem']);
});

test('the detectors catch a payload that bypasses the sanitizer', async ({ page }) => {
  const seen = await watch(page);
  await replay(page, transcript(false));
  await page.goto('/');
  await expect.poll(() => replayed(page)).toBe(true);
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(1);
  // Straight into the DOM, as an unsanitized {@html} would put it.
  await page.evaluate(
    ([pwn, remote, thread]) => {
      document
        .querySelector(thread)
        ?.insertAdjacentHTML(
          'beforeend',
          `<img src=x onerror="${pwn}"><img src="${remote}/bypass.png"><a href="javascript:${pwn}">x</a>`,
        );
    },
    [PWN, REMOTE, sel.thread] as const,
  );
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned))
    .toBe(1);
  await expect.poll(() => seen.dialogs.length).toBe(1);
  await expect.poll(() => seen.remote).toEqual([`${REMOTE}/bypass.png`]);
  const bad = await findBad(page);
  expect(bad).toContain('IMG onerror');
  expect(bad.some((b) => b.startsWith('A href=javascript:'))).toBe(true);
});
