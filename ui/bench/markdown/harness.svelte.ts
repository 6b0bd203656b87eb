// A page that shows the thread with sample data (?scene=all|tools|diff|big|stream), for
// screenshots and the CSP check in a real browser. Not part of the app.
import { mount } from 'svelte';
import '../../src/app.css';
import Thread from '../../src/components/Thread.svelte';
import DiffView from '../../src/components/thread/DiffView.svelte';
import type { SessionView } from '../../src/lib/session-store';
import { runBench } from './browser-bench';
import { FOLDER, bigView, diffSample, emptyView, everyEntry, everyTool } from './fixtures';

const scene = new URLSearchParams(location.search).get('scene') ?? 'all';
const target = document.getElementById('app') as HTMLElement;
const log = (what: string) => () => (document.title = what);

if (scene === 'bench') {
  const pre = document.createElement('pre');
  target.append(pre);
  setTimeout(() => {
    pre.textContent = runBench();
    document.title = 'bench done';
  }, 50);
} else if (scene === 'bigdiff') {
  // 6,000 lines: computed in the worker (diff.worker.ts), under the app's CSP.
  const old = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n') + '\n';
  const next = old.replace('line 1500\n', 'line fifteen hundred\n');
  mount(DiffView, {
    target,
    props: { path: `${FOLDER}/big.txt`, oldText: old, newText: next, folder: FOLDER },
  });
} else if (scene === 'diff') {
  target.style.padding = '16px';
  target.style.overflow = 'auto';
  mount(DiffView, { target, props: { ...diffSample, folder: FOLDER } });
  const created = document.createElement('div');
  created.style.marginTop = '16px';
  target.append(created);
  mount(DiffView, {
    target: created,
    props: {
      path: `${FOLDER}/src/timeout.ts`,
      oldText: null,
      newText: 'export const TIMEOUT_MS = 30_000;\nexport const RETRIES = 3;\n',
      folder: FOLDER,
    },
  });
} else {
  const views: Record<string, () => SessionView> = {
    all: everyEntry,
    tools: everyTool,
    big: () => bigView(5000),
    stream: () => emptyView(),
  };
  let view = $state.raw((views[scene] ?? everyEntry)());
  target.style.display = 'flex';
  target.style.flexDirection = 'column';
  mount(Thread, {
    target,
    props: {
      get view() {
        return view;
      },
      folder: FOLDER,
      onopenpath: (p: string, l: number | null) => log(`open ${p}:${l}`)(),
      onrevealpath: (p: string) => log(`reveal ${p}`)(),
      onopenurl: (u: string) => log(`url ${u}`)(),
    },
  });
  const w = window as unknown as { setView: (v: SessionView) => void; currentView: SessionView };
  w.setView = (v) => {
    view = v;
    w.currentView = v;
  };
  w.currentView = view;
  if (scene === 'stream') {
    const text = everyEntry().entries.find((e) => e.type === 'agent')?.text ?? '';
    let at = 0;
    const timer = setInterval(() => {
      at += 7;
      view = emptyView([{ type: 'agent', key: 1, text: text.slice(0, at), messageId: null }]);
      if (at >= text.length) clearInterval(timer);
    }, 16);
  }
}
