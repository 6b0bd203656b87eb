// What the reader opened or closed in the thread (a tool card collapsed, a thought expanded),
// kept by entry key: the virtualized list unmounts entries that scroll away and mounts them
// again later, and they must come back as the reader left them.
const state = new Map<string, boolean>();
const MAX = 5000;

export function remembered(key: string, fallback: boolean): boolean {
  return state.get(key) ?? fallback;
}

export function remember(key: string, value: boolean): void {
  state.delete(key);
  state.set(key, value);
  if (state.size > MAX) state.delete(state.keys().next().value as string);
}
