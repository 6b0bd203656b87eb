// Serves a built page with the app's Content-Security-Policy (from tauri.conf.json) as a header,
// so a browser enforces exactly what the app ships. Usage:
//   node ui/bench/markdown/serve.mjs <dir> [port] [--tauri-style-nonce]
// --tauri-style-nonce adds a nonce to style-src like Tauri's asset CSP modification does, to
// show its effect ('unsafe-inline' is ignored by browsers once a nonce is present).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2] ?? fileURLToPath(new URL('dist', import.meta.url));
const port = Number(process.argv[3] ?? 4719);
const conf = JSON.parse(
  await readFile(fileURLToPath(new URL('../../../tauri.conf.json', import.meta.url)), 'utf8'),
);
const csp = { ...conf.app.security.csp };
if (process.argv.includes('--tauri-style-nonce')) csp['style-src'] += " 'nonce-abc123'";
const header = Object.entries(csp)
  .map(([k, v]) => `${k} ${v}`)
  .join('; ');
const types = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

createServer(async (req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
    /^(\.\.[/\\])+/,
    '',
  );
  try {
    const body = await readFile(join(dir, path === '/' ? 'harness.html' : path));
    res.writeHead(200, {
      'content-type': types[extname(path)] ?? 'application/octet-stream',
      'content-security-policy': header,
    });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end();
  }
}).listen(port, () => console.log(`http://localhost:${port}/  CSP: ${header}`));
