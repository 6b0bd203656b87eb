// xterm.js, its fit addon and its stylesheet: the chunk TerminalView (and LoginTerminal, a
// terminal login) loads with import() when the first terminal shows (most windows never show
// one at start, and the page keeps what it parses: issue 15). Only those two import this
// module, and only with import(); a static import anywhere else would put xterm back into the
// entry chunk.
import '@xterm/xterm/css/xterm.css';

export { FitAddon } from '@xterm/addon-fit';
export { Terminal } from '@xterm/xterm';
