// The terminals' colours (TerminalView's output, LoginTerminal's login), light and dark: one
// palette, so an agent's terminal and a login look alike.
import type { ITheme } from '@xterm/xterm';

export const lightTerminal: ITheme = {
  background: '#fbfbfc',
  foreground: '#1d1d22',
  cursor: '#fbfbfc',
  selectionBackground: '#c9c6f5',
  black: '#1d1d22',
  red: '#b42318',
  green: '#127a3d',
  yellow: '#8a5a00',
  blue: '#2b59c3',
  magenta: '#a626a4',
  cyan: '#0e7490',
  white: '#62626e',
  brightBlack: '#62626e',
};

export const darkTerminal: ITheme = {
  background: '#1b1b20',
  foreground: '#e4e4ea',
  cursor: '#1b1b20',
  selectionBackground: '#3d3a6b',
  black: '#2a2a31',
  red: '#ff6b5e',
  green: '#4ad286',
  yellow: '#ffc46b',
  blue: '#7fb0ff',
  magenta: '#d58cf0',
  cyan: '#5fd4e6',
  white: '#ececf1',
  brightBlack: '#8d8d99',
};
