// @ts-check
// Debian's Chromium, as the Playwright tests and the UI bench launch it (never a browser that a
// tool downloads). The flags are the machine's (see the env notes): no sandbox as root, no GPU,
// and no background networking, whose connections this machine's closed network refuses.

/** Where Debian's `chromium` package puts the browser; CHROMIUM_PATH overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
