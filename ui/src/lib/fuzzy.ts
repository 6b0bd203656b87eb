// The `@` file picker's matching: fuzzysort over the project's paths (prepared once per listing).
import fuzzysort, { type Snapshot } from 'fuzzysort';

/** A piece of a matched path: `hit` pieces are the characters that matched the query. */
export interface Segment {
  text: string;
  hit: boolean;
  /** Part of the folders before the file's name (shown dimmer). */
  dir: boolean;
}

export interface FileMatch {
  path: string;
  segments: Segment[];
}

/** How many matches the picker shows. */
export const MAX_SHOWN = 50;

/** A listing prepared for repeated queries (prepare once, query on every keystroke). */
export class FileIndex {
  private snapshot: Snapshot;
  constructor(private readonly files: readonly string[]) {
    this.snapshot = fuzzysort.snapshot(files);
  }

  get size(): number {
    return this.files.length;
  }

  /** The best `limit` matches for `query`, best first; an empty query lists the first files. */
  search(query: string, limit = MAX_SHOWN): FileMatch[] {
    const q = query.trim();
    if (q === '') {
      return this.files.slice(0, limit).map((path) => ({ path, segments: split(path, new Set()) }));
    }
    const results = fuzzysort.go(q, this.snapshot, { limit, threshold: 0 });
    return results.map((r) => ({ path: r.target, segments: split(r.target, new Set(r.indexes)) }));
  }
}

/** `path` in runs of matched / unmatched characters, cut where the file name starts. */
function split(path: string, hits: Set<number>): Segment[] {
  const out: Segment[] = [];
  const nameAt = path.lastIndexOf('/') + 1;
  for (let i = 0; i < path.length; i++) {
    const hit = hits.has(i);
    const dir = i < nameAt;
    const last = out.at(-1);
    const ch = path[i] as string;
    if (last && last.hit === hit && last.dir === dir) last.text += ch;
    else out.push({ text: ch, hit, dir });
  }
  return out;
}
