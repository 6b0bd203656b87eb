// Paths as the thread shows them: relative to the session's folder when inside it.

/** `path` relative to `folder` when it is inside it; otherwise unchanged. */
export function relativePath(path: string, folder: string | undefined | null): string {
  if (!folder) return path;
  const base = folder.replace(/[\\/]+$/, '');
  if (path === base) return '.';
  for (const sep of ['/', '\\']) {
    if (path.startsWith(base + sep)) return path.slice(base.length + 1);
  }
  return path;
}

/** The last part of a path or URI. */
export function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  return trimmed.slice(Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\')) + 1) || path;
}
