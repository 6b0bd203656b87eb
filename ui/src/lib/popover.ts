// The ways out of a small popover (the ⋯ settings, the background tasks): a click outside it,
// or Esc inside it, which gives the focus back to the button that opened it.

export interface PopoverKeys {
  /** For `<svelte:window onclick>`. */
  onWindowClick(e: MouseEvent): void;
  /** For the popover's root. */
  onkeydown(e: KeyboardEvent): void;
}

export function popoverKeys(
  isOpen: () => boolean,
  close: () => void,
  root: () => HTMLElement | undefined,
  /** The opening button, inside `root`. */
  button: string,
): PopoverKeys {
  return {
    onWindowClick(e) {
      const r = root();
      if (isOpen() && r && !r.contains(e.target as Node)) close();
    },
    onkeydown(e) {
      if (e.key !== 'Escape' || !isOpen()) return;
      e.preventDefault();
      close();
      root()?.querySelector<HTMLElement>(button)?.focus();
    },
  };
}
