// xterm.js, its fit addon and its stylesheet: the chunk TerminalView loads with import() when
// the first terminal shows (most windows never show one at start, and the page keeps what it
// parses: issue 15). Only TerminalView imports this module; a static import anywhere else would
// put xterm back into the entry chunk.
import '@xterm/xterm/css/xterm.css';

export { FitAddon } from '@xterm/addon-fit';
export { Terminal } from '@xterm/xterm';
