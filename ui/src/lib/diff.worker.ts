// Computes large diffs off the main thread (see diff.ts: diffAsync).
import { computeDiff } from './diff';

self.onmessage = (
  e: MessageEvent<{ oldText: string | null; newText: string; firstLine: number }>,
) => {
  self.postMessage(computeDiff(e.data.oldText, e.data.newText, e.data.firstLine));
};
