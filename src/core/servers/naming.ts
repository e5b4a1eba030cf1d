import { splitCommandLine } from '../transport/commandLine';

/** How a new server is reached, as "Add Server..." asks it. */
export type NewServerKind = 'stdio' | 'npm' | 'http';

/** File names that say nothing about the server: the folder above names it instead. */
const GENERIC_FILES = new Set(['index', 'main', 'server', 'cli', 'app', 'start', 'run', 'bin', '__main__']);
/** Build and source folders between a package folder and its entry file. */
const BUILD_FOLDERS = new Set(['dist', 'build', 'out', 'lib', 'src', 'bin', 'esm', 'cjs', 'node_modules', '.bin']);

/**
 * A name to suggest for a new server: the host of a URL, the npm package (`@scope/server-foo` →
 * `foo`), or the program or script, where a generic entry file (`…/server-foo/dist/index.js`)
 * gives way to the package folder it lives in (`foo`).
 */
export function suggestServerName(kind: NewServerKind, value: string): string {
  if (kind === 'http') {
    const host = new URL(value).hostname;
    if (host === 'localhost' || /^[\d.]+$|^\[/.test(host)) return 'local';
    const labels = host.split('.');
    return labels.slice(0, -1).find((l) => !['www', 'mcp', 'api'].includes(l)) ?? labels[0];
  }
  const words = splitCommandLine(value);
  const meaningful = kind === 'npm' ? words[0] : (words.find((w, i) => i > 0 && !w.startsWith('-')) ?? words[0]);
  if (!meaningful) return 'server';
  const segments = meaningful
    .replace(/(.)@[^/@]*$/, '$1')
    .split(/[/\\]/)
    .filter(Boolean);
  const strip = (s: string) => s.replace(/\.(m?js|cjs|py|ts|mts|cts)$/, '');
  let base = strip(segments.pop() ?? '');
  if (GENERIC_FILES.has(base.toLowerCase())) {
    while (segments.length && BUILD_FOLDERS.has(segments[segments.length - 1].toLowerCase())) segments.pop();
    if (segments.length) base = segments.pop()!;
  }
  return base.replace(/^(mcp-)?server-|-mcp(-server)?$/g, '') || base || 'server';
}

/**
 * What a tool, prompt or resource is called on screen: its title, and beside it its name when the
 * two differ, since names are what the CLI, results and server instructions use.
 */
export function titleAndName(item: { name: string; title?: string; annotations?: object }): { label: string; name?: string } {
  const annotated = (item.annotations as { title?: unknown } | undefined)?.title;
  const label = item.title ?? (typeof annotated === 'string' ? annotated : undefined) ?? item.name;
  return label === item.name ? { label } : { label, name: item.name };
}
