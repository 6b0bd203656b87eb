// Paths as the window shows and sends them: relative to the session's folder when inside it.
// The shell gives absolute paths, `/`-separated (or `\` on Windows).

function withoutTrailingSeparators(folder: string): string {
  return folder.replace(/[\\/]+$/, '');
}

/** Whether `path` is `folder` or inside it. */
export function isInside(path: string, folder: string): boolean {
  const f = withoutTrailingSeparators(folder);
  return path === f || path.startsWith(`${f}/`) || path.startsWith(`${f}\\`);
}

/** `path` relative to `folder` when it is inside it ('.' for the folder itself); otherwise
 * unchanged. */
export function relativePath(path: string, folder: string | undefined | null): string {
  if (!folder || !isInside(path, folder)) return path;
  const f = withoutTrailingSeparators(folder);
  return path === f ? '.' : path.slice(f.length + 1);
}

/** The last part of a path or URI (a folder's name in the sidebar, a file's on a chip). */
export function baseName(path: string): string {
  const trimmed = withoutTrailingSeparators(path);
  return trimmed.slice(Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\')) + 1) || path;
}
