import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { win32 as nodePathWin32 } from 'node:path';
import { pathToFileURL } from 'node:url';
import { thisMachine } from '../../src/core/policy/gate';
import { isPathName, pathsOutsideRoots, resourceOutsideRoots, type FenceContext } from '../../src/core/policy/fence';

/** A simulated machine without a single symlink. */
const noLinks = { lstat: async () => undefined, readlink: async () => Promise.reject(new Error('EINVAL')) };

const posix = (roots: string[], platform: NodeJS.Platform = 'linux'): FenceContext => ({
  platform,
  ...noLinks,
  home: '/home/me',
  roots: roots.map((r) => ({ uri: `file://${r}` })),
});
const windows = (roots: string[]): FenceContext => ({
  platform: 'win32',
  ...noLinks,
  home: 'C:\\Users\\me',
  roots: roots.map((uri) => ({ uri })),
});

interface Case {
  name: string;
  args: unknown;
  ctx: FenceContext;
  /** The pointers found outside, with the path each resolved to. */
  outside: Array<[pointer: string, resolved: string]>;
  schema?: unknown;
}

const WS = posix(['/ws']);
const WIN = windows(['file:///c:/Users/me/ws']);

const cases: Case[] = [
  { name: 'plain traversal under "path"', args: { path: '../../../etc/passwd' }, ctx: WS, outside: [['/path', '/etc/passwd']] },
  { name: 'traversal that stays inside', args: { path: 'a/b/../c.txt' }, ctx: WS, outside: [] },
  { name: 'absolute path inside', args: { path: '/ws/src/x.ts' }, ctx: WS, outside: [] },
  { name: 'absolute path outside under any name', args: { anything: '/etc/shadow' }, ctx: WS, outside: [['/anything', '/etc/shadow']] },
  { name: 'sibling with the root as a string prefix', args: { path: '/ws-evil/x' }, ctx: WS, outside: [['/path', '/ws-evil/x']] },
  { name: 'the root itself', args: { dir: '/ws' }, ctx: WS, outside: [] },
  { name: 'dot segments inside an absolute path', args: { path: '/ws/./a/../../etc' }, ctx: WS, outside: [['/path', '/etc']] },
  { name: 'file: URI outside', args: { x: 'file:///etc/shadow' }, ctx: WS, outside: [['/x', '/etc/shadow']] },
  { name: 'file: URI inside', args: { x: 'file:///ws/readme.md' }, ctx: WS, outside: [] },
  { name: 'encoded traversal in a file: URI', args: { uri: 'file:///ws/%2e%2e/etc/passwd' }, ctx: WS, outside: [['/uri', '/etc/passwd']] },
  {
    name: 'encoded slashes in a file: URI',
    args: { uri: 'file:///ws/..%2f..%2fetc%2fpasswd' },
    ctx: WS,
    outside: [['/uri', '/etc/passwd']],
  },
  { name: 'encoded traversal in a plain path', args: { path: '%2e%2e/%2e%2e/etc/passwd' }, ctx: WS, outside: [['/path', '/etc/passwd']] },
  { name: 'encoded traversal, no path-like name', args: { q: '..%2F..%2Fetc' }, ctx: WS, outside: [['/q', '/etc']] },
  { name: 'relative path resolved against the first root', args: { filePath: 'src/index.ts' }, ctx: posix(['/ws', '/other']), outside: [] },
  {
    name: 'relative path against the first root, not the second',
    args: { filePath: '../other/x' },
    ctx: posix(['/ws', '/other']),
    outside: [],
  },
  {
    name: 'relative path escaping every root',
    args: { source_dir: '../../x' },
    ctx: posix(['/ws/a', '/other']),
    outside: [['/source_dir', '/x']],
  },
  { name: 'a second root', args: { path: '/other/notes' }, ctx: posix(['/ws', '/other']), outside: [] },
  { name: 'home directory', args: { cwd: '~/.ssh/id_rsa' }, ctx: WS, outside: [['/cwd', '/home/me/.ssh/id_rsa']] },
  { name: 'bare ~', args: { value: '~' }, ctx: WS, outside: [['/value', '/home/me']] },
  {
    name: 'nested arrays and objects',
    args: { ops: [{ edits: [{ target: '/etc/hosts' }, { target: 'ok.txt' }] }, ['/ws/in', '/tmp/out']] },
    ctx: WS,
    outside: [
      ['/ops/0/edits/0/target', '/etc/hosts'],
      ['/ops/1/1', '/tmp/out'],
    ],
  },
  { name: 'plural name: every item', args: { paths: ['a.txt', '../../b.txt'] }, ctx: WS, outside: [['/paths/1', '/b.txt']] },
  { name: 'camelCase name', args: { destinationFolder: '../out' }, ctx: WS, outside: [['/destinationFolder', '/out']] },
  { name: 'fileName', args: { fileName: '..' }, ctx: WS, outside: [['/fileName', '/']] },
  {
    name: 'schema format uri-reference',
    args: { ref: '../up' },
    schema: { properties: { ref: { type: 'string', format: 'uri-reference' } } },
    ctx: WS,
    outside: [['/ref', '/up']],
  },
  {
    name: 'schema format uri, https: not a path',
    args: { ref: 'https://example.com/../x' },
    schema: { properties: { ref: { format: 'uri' } } },
    ctx: WS,
    outside: [],
  },
  {
    name: 'pointer escapes ~ and /; a key ~user is a home',
    args: { 'a/b': { '~c': '/etc' } },
    ctx: WS,
    outside: [
      ['/a~1b/~0c', '/home/c'],
      ['/a~1b/~0c', '/etc'],
    ],
  },
  { name: 'harmless: "and/or"', args: { text: 'and/or', ratio: '3/4', date: '2026/12/01' }, ctx: WS, outside: [] },
  {
    name: 'harmless: a URL under a path-like name',
    args: { location: 'https://example.com/a/../b', uri: 'mailto:me@example.com' },
    ctx: WS,
    outside: [],
  },
  { name: 'harmless: a sentence with a path inside', args: { message: 'see /etc/passwd\nfor details' }, ctx: WS, outside: [] },
  { name: 'harmless: dots that are no segment', args: { text: 'wait...', v: '1.2..3' }, ctx: WS, outside: [] },
  { name: 'harmless: numbers and booleans under path names', args: { path: 3, file: true, dir: null }, ctx: WS, outside: [] },
  { name: 'case: darwin ignores it', args: { path: '/WS/Readme.md' }, ctx: posix(['/ws'], 'darwin'), outside: [] },
  { name: 'case: linux does not', args: { path: '/WS/Readme.md' }, ctx: WS, outside: [['/path', '/WS/Readme.md']] },
  { name: 'Windows: drive path inside, other case and slashes', args: { path: 'c:/users/ME/ws/a.txt' }, ctx: WIN, outside: [] },
  { name: 'Windows: another drive', args: { path: 'D:\\ws\\a.txt' }, ctx: WIN, outside: [['/path', 'D:\\ws\\a.txt']] },
  {
    name: 'Windows: traversal with backslashes',
    args: { path: '..\\..\\secrets.txt' },
    ctx: WIN,
    outside: [['/path', 'c:\\Users\\secrets.txt']],
  },
  { name: 'Windows: sibling prefix', args: { path: 'C:\\Users\\me\\ws2\\x' }, ctx: WIN, outside: [['/path', 'C:\\Users\\me\\ws2\\x']] },
  { name: 'Windows: UNC share', args: { any: '\\\\server\\share\\x' }, ctx: WIN, outside: [['/any', '\\\\server\\share\\x']] },
  {
    name: 'Windows: file: URI of a UNC share',
    args: { any: 'file://server/share/x' },
    ctx: WIN,
    outside: [['/any', '\\\\server\\share\\x']],
  },
  {
    name: 'Windows: UNC root holds its own paths',
    args: { any: '\\\\server\\share\\a\\b' },
    ctx: windows(['file://server/share/a']),
    outside: [],
  },
  {
    name: 'Windows: file: URI with an encoded drive colon',
    args: { uri: 'file:///C%3A/Windows/system32' },
    ctx: WIN,
    outside: [['/uri', 'C:\\Windows\\system32']],
  },
  { name: 'no roots: every path is outside', args: { path: 'a.txt' }, ctx: posix([]), outside: [['/path', 'a.txt']] },
];

/**
 * A simulated file system: `links` maps a path to its symlink target, `exists` lists what else is
 * there. Lookups are recorded, so a case can tell the fence looked component by component.
 */
function simulated(base: FenceContext, links: Record<string, string>, exists: string[] = []): FenceContext {
  const fold = (p: string) => (base.platform === 'win32' ? p.toLowerCase() : p);
  const linkOf = new Map(Object.entries(links).map(([k, v]) => [fold(k), v]));
  // The folders that hold a link or an entry exist too.
  const there = new Set<string>();
  const sep = base.platform === 'win32' ? /[\\/]/ : /\//;
  for (const entry of [...Object.keys(links), ...exists]) {
    const parts = entry.split(sep);
    for (let i = 2; i <= parts.length; i++) there.add(fold(parts.slice(0, i).join(base.platform === 'win32' ? '\\' : '/')));
  }
  return {
    ...base,
    lstat: async (p) =>
      linkOf.has(fold(p)) ? { isSymbolicLink: () => true } : there.has(fold(p)) ? { isSymbolicLink: () => false } : undefined,
    readlink: async (p) => {
      const target = linkOf.get(fold(p));
      if (target === undefined) throw new Error('EINVAL');
      return target;
    },
  };
}

/** The issue's attacks and their relatives, on simulated machines (POSIX and Windows). */
const adversarial: Case[] = [
  // Whitespace and control characters: a server that trims reads the absolute path.
  { name: 'a leading space', args: { path: ' /home/me/.ssh/id_rsa' }, ctx: WS, outside: [['/path', '/home/me/.ssh/id_rsa']] },
  { name: 'a leading tab', args: { path: '\t/etc/passwd' }, ctx: WS, outside: [['/path', '/etc/passwd']] },
  { name: 'a leading newline', args: { path: '\n/etc/passwd' }, ctx: WS, outside: [['/path', '/etc/passwd']] },
  { name: 'a leading BOM and NBSP', args: { path: '\ufeff\u00a0/etc/passwd' }, ctx: WS, outside: [['/path', '/etc/passwd']] },
  { name: 'a leading space under an ordinary name', args: { q: ' /etc/passwd' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  { name: 'a percent-encoded leading space', args: { path: '%20/etc/passwd' }, ctx: WS, outside: [['/path', '/etc/passwd']] },
  // Symlinks, resolved as the kernel does.
  {
    name: 'ws/linkdir/../secret: .. leaves from the link target',
    args: { path: '/ws/linkdir/../secret' },
    ctx: simulated(WS, { '/ws/linkdir': '/outside' }, ['/outside']),
    outside: [['/path', '/secret']],
  },
  {
    name: 'a relative link target',
    args: { path: 'rel/x' },
    ctx: simulated(WS, { '/ws/rel': '../outside' }, ['/outside']),
    outside: [['/path', '/outside/x']],
  },
  {
    name: 'a dangling link: its target counts',
    args: { path: 'dangling' },
    ctx: simulated(WS, { '/ws/dangling': '/home/me/.ssh/authorized_keys' }, ['/home', '/home/me', '/home/me/.ssh']),
    outside: [['/path', '/home/me/.ssh/authorized_keys']],
  },
  {
    name: 'a dangling link to another link, dangling too',
    args: { path: 'a' },
    ctx: simulated(WS, { '/ws/a': '/ws/b', '/ws/b': '/etc/new' }),
    outside: [['/path', '/etc/new']],
  },
  {
    name: 'a link loop: refused',
    args: { path: 'loop/x' },
    ctx: simulated(WS, { '/ws/loop': '/ws/loop2', '/ws/loop2': '/ws/loop' }),
    outside: [['/path', '/ws/loop/x (more than 40 symlinks)']],
  },
  {
    name: '40 links are followed, inside',
    args: { path: 'l0' },
    ctx: simulated(WS, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`/ws/l${i}`, i === 39 ? '/ws/end' : `/ws/l${i + 1}`]))),
    outside: [],
  },
  {
    name: 'a link under an ordinary name',
    args: { q: 'secretlink' },
    ctx: simulated(WS, { '/ws/secretlink': '/secret' }),
    outside: [['/q', '/secret']],
  },
  {
    name: 'a NUL byte: the C reading is the link',
    args: { path: 'secretlink\u0000.txt' },
    ctx: simulated(WS, { '/ws/secretlink': '/secret' }),
    outside: [['/path', '/secret']],
  },
  {
    name: 'a link as a key',
    args: { map: { secretlink: 1 } },
    ctx: simulated(WS, { '/ws/secretlink': '/secret' }),
    outside: [['/map/secretlink', '/secret']],
  },
  {
    name: 'file: URI, ..%2f after a link',
    args: { uri: 'file:///ws/linkdir/..%2fsecret' },
    ctx: simulated(WS, { '/ws/linkdir': '/outside' }, ['/outside']),
    // The first reading found outside: the pathname as given, the link followed (decoded, it is /secret).
    outside: [['/uri', '/outside/..%2fsecret']],
  },
  // The server's working folder.
  {
    name: 'relative: against the working folder too',
    args: { path: 'a.txt' },
    ctx: { ...WS, cwd: '/srv' },
    outside: [['/path', '/srv/a.txt']],
  },
  { name: 'relative: the working folder is a root', args: { path: 'a.txt' }, ctx: { ...WS, cwd: '/ws' }, outside: [] },
  { name: 'a word is no path, wherever the server runs', args: { q: 'hello world' }, ctx: { ...WS, cwd: '/srv' }, outside: [] },
  {
    name: 'a traversal under an ordinary name leaves the working folder',
    args: { q: '../x' },
    ctx: { ...WS, cwd: '/srv' },
    outside: [['/q', '/x']],
  },
  // URIs.
  { name: 'file://localhost/…', args: { x: 'file://localhost/etc/passwd' }, ctx: WS, outside: [['/x', '/etc/passwd']] },
  { name: 'file:/x (one slash)', args: { x: 'file:/etc/passwd' }, ctx: WS, outside: [['/x', '/etc/passwd']] },
  { name: 'file: URI with a host the server ignores', args: { x: 'file://evil/ws/a' }, ctx: WS, outside: [['/x', '/evil/ws/a']] },
  {
    name: 'file: URI: the query read as path by a naive server',
    args: { uri: 'file:///ws/a?/../../etc' },
    ctx: WS,
    outside: [['/uri', '/etc']],
  },
  { name: 'file: URI with surrounding spaces', args: { x: '  file:///etc/passwd ' }, ctx: WS, outside: [['/x', '/etc/passwd']] },
  { name: 'a scheme-like prefix under a path name', args: { path: 'x-y:/../../etc' }, ctx: WS, outside: [['/path', '/etc']] },
  { name: 'a web URL under an ordinary name is not a path', args: { q: 'https://example.com/../../../../etc' }, ctx: WS, outside: [] },
  // Homes, keys, nesting.
  { name: '~user under a path name', args: { path: '~root/.ssh/id_rsa' }, ctx: WS, outside: [['/path', '/home/root/.ssh/id_rsa']] },
  { name: 'an absolute key', args: { m: { '/etc/passwd': true } }, ctx: WS, outside: [['/m/~1etc~1passwd', '/etc/passwd']] },
  { name: 'keys of a path-named map are paths', args: { files: { '../x': 'content' } }, ctx: WS, outside: [['/files/..~1x', '/x']] },
  { name: 'nested arrays', args: { items: [[[['inside'], ['/etc/x']]]] }, ctx: WS, outside: [['/items/0/0/1/0', '/etc/x']] },
  { name: 'backslashes read as separators on POSIX', args: { q: '..\\..\\etc' }, ctx: WS, outside: [['/q', '/etc']] },
  {
    name: 'a file content of several lines under an ordinary name is not a path',
    args: { content: '/* licence */\nexport {};\n' },
    ctx: WS,
    outside: [],
  },
  // Windows, simulated.
  { name: 'Windows: a trailing dot on the root is the root', args: { path: 'C:\\Users\\me\\ws.\\a.txt' }, ctx: WIN, outside: [] },
  { name: 'Windows: ".. " is ..', args: { path: '.. \\.. \\x' }, ctx: WIN, outside: [['/path', 'c:\\Users\\x']] },
  { name: 'Windows: \\\\?\\ prefix inside', args: { path: '\\\\?\\C:\\Users\\me\\ws\\a' }, ctx: WIN, outside: [] },
  {
    name: 'Windows: \\\\?\\ prefix outside',
    args: { q: '\\\\?\\C:\\Windows\\win.ini' },
    ctx: WIN,
    outside: [['/q', 'C:\\Windows\\win.ini']],
  },
  {
    name: 'Windows: a rooted path on the base drive',
    args: { path: '\\Windows\\win.ini' },
    ctx: WIN,
    outside: [['/path', 'c:\\Windows\\win.ini']],
  },
  { name: 'Windows: drive-relative on another drive', args: { path: 'D:secret' }, ctx: WIN, outside: [['/path', 'D:\\secret']] },
  { name: 'Windows: leading space', args: { path: ' C:\\Windows' }, ctx: WIN, outside: [['/path', 'C:\\Windows']] },
  {
    name: 'Windows: a junction, then ..',
    args: { path: 'j\\..\\x' },
    ctx: simulated(WIN, { 'c:\\Users\\me\\ws\\j': 'C:\\outside' }, ['C:\\outside']),
    outside: [['/path', 'C:\\x']],
  },
  {
    name: 'Windows: a link target with the \\\\?\\ prefix',
    args: { path: 'j\\x' },
    ctx: simulated(WIN, { 'c:\\Users\\me\\ws\\j': '\\\\?\\D:\\data' }),
    outside: [['/path', 'D:\\data\\x']],
  },
  { name: 'Windows: ~', args: { path: '~\\.ssh' }, ctx: WIN, outside: [['/path', 'C:\\Users\\me\\.ssh']] },
  // The device namespace past a drive or a UNC share: the object manager's names (GLOBALROOT, a
  // volume's GUID, a disk, a raw volume) reach any file of the machine, and name nothing in a root.
  ...[
    '\\\\?\\GLOBALROOT\\??\\C:\\Users\\me\\.ssh\\id_rsa',
    '\\\\?\\GLOBALROOT\\Device\\HarddiskVolume3\\Users\\me\\.ssh\\id_rsa',
    '\\\\.\\GLOBALROOT\\Device\\HarddiskVolume3\\Users\\me\\.ssh\\id_rsa',
    '//?/GLOBALROOT/??/C:/Users/me/.ssh/id_rsa',
    '\\\\?\\Volume{4c1b02c1-d990-11dc-99ae-806e6f6e6963}\\Users\\me\\.ssh\\id_rsa',
    '\\\\.\\PhysicalDrive0',
    '\\\\.\\C:',
    '\\\\?\\C:',
  ].map((value): Case => ({
    name: `Windows: the device namespace ${JSON.stringify(value)}`,
    args: { q: value },
    ctx: WIN,
    outside: [['/q', nodePathWin32.resolve(value)]],
  })),
  {
    name: 'Windows: a link target in the device namespace (a volume mount point)',
    args: { path: 'j\\x' },
    ctx: simulated(WIN, { 'c:\\Users\\me\\ws\\j': '\\\\?\\Volume{4c1b02c1-d990-11dc-99ae-806e6f6e6963}\\' }),
    outside: [['/path', '\\\\?\\Volume{4c1b02c1-d990-11dc-99ae-806e6f6e6963}\\x']],
  },
];

/** The server's environment, as it runs in /ws. */
// A password that happens to climb: only its expansion leaves the root, and it must not be shown.
const ENV = { HOME: '/home/me', PWD: '/ws', OLDPWD: '/srv/old', DB_PASSWORD: '../../hunter2' };
const WS_ENV: FenceContext = { ...WS, cwd: '/ws', env: ENV };
const WIN_ENV: FenceContext = { ...WIN, env: { USERPROFILE: 'C:\\Users\\me', HOME: 'C:\\Users\\me' } };
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Strings a server reads more of than they say (issue 45): variables, flags, JSON, data: URLs, lines, URL preprocessing, schemes, ~user. */
const strings: Case[] = [
  // Variables, expanded against the server's environment (an unset one is empty, as a shell and Go's os.ExpandEnv read it).
  { name: '$HOME', args: { path: '$HOME/.ssh/id_rsa' }, ctx: WS_ENV, outside: [['/path', '/home/me/.ssh/id_rsa']] },
  { name: '${HOME} under an ordinary name', args: { q: '${HOME}' }, ctx: WS_ENV, outside: [['/q', '/home/me']] },
  { name: '${PWD}/.. leaves the working folder', args: { path: '${PWD}/../secret' }, ctx: WS_ENV, outside: [['/path', '/secret']] },
  { name: '${PWD}/… inside', args: { path: '${PWD}/src/a.ts', q: '$PWD/x' }, ctx: WS_ENV, outside: [] },
  { name: 'an unset variable is empty', args: { path: '$NOPE/etc/passwd' }, ctx: WS_ENV, outside: [['/path', '/etc/passwd']] },
  { name: '${X:-default}', args: { q: '${NOPE:-/etc}/passwd' }, ctx: WS_ENV, outside: [['/q', '/etc/passwd']] },
  { name: '${X:+alternative}', args: { q: '${HOME:+/etc}/passwd' }, ctx: WS_ENV, outside: [['/q', '/etc/passwd']] },
  { name: 'a shell parameter ($1, $@) is empty too', args: { q: '$@/etc/passwd' }, ctx: WS_ENV, outside: [['/q', '/etc/passwd']] },
  { name: 'an encoded $', args: { path: '%24HOME/.ssh' }, ctx: WS_ENV, outside: [['/path', '/home/me/.ssh']] },
  { name: '~+ and ~- (the shell’s PWD and OLDPWD)', args: { q: '~-/x' }, ctx: WS_ENV, outside: [['/q', '/srv/old/x']] },
  {
    name: 'Windows: %USERPROFILE%, any case',
    args: { path: '%USERPROFILE%\\.ssh', q: '%userprofile%' },
    ctx: WIN_ENV,
    outside: [
      ['/path', 'C:\\Users\\me\\.ssh'],
      ['/q', 'C:\\Users\\me'],
    ],
  },
  { name: 'Windows: an unset %X% stays as written', args: { path: '%NOPE%\\a.txt' }, ctx: WIN_ENV, outside: [] },
  { name: 'Windows: $HOME too', args: { path: '$home\\x' }, ctx: WIN_ENV, outside: [['/path', 'C:\\Users\\me\\x']] },
  // Values after = in flags.
  {
    name: '--from-file= in an argument list',
    args: { args: ['-v', '--from-file=/etc/passwd'] },
    ctx: WS,
    outside: [['/args/1', '/etc/passwd']],
  },
  {
    name: '--from-file= in one string of words',
    args: { args: '-v --from-file=/etc/passwd' },
    ctx: WS,
    outside: [['/args', '/etc/passwd']],
  },
  { name: 'a quoted flag value', args: { a: ['--out="/etc/x y"'] }, ctx: WS, outside: [['/a/0', '/etc/x y']] },
  { name: '-Dname=value', args: { a: ['-Dconfig=../x.properties'] }, ctx: WS, outside: [['/a/0', '/x.properties']] },
  { name: 'a short flag with its value attached', args: { a: ['-o/etc/cron.d/x'] }, ctx: WS, outside: [['/a/0', '/etc/cron.d/x']] },
  {
    name: 'a flag value with a variable',
    args: { a: ['--key=$HOME/.ssh/id_rsa'] },
    ctx: WS_ENV,
    outside: [['/a/0', '/home/me/.ssh/id_rsa']],
  },
  // JSON inside strings, recursively.
  { name: 'JSON inside a string', args: { query: '{"path": "/abs"}' }, ctx: WS, outside: [['/query', '/abs']] },
  {
    name: 'JSON inside JSON inside a string',
    args: { query: JSON.stringify({ q: JSON.stringify({ path: '../../x' }) }) },
    ctx: WS,
    outside: [['/query', '/x']],
  },
  { name: 'a JSON string literal', args: { q: '"/etc/passwd"' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  { name: 'a JSON array of paths', args: { q: ' ["a.txt", "/etc/passwd"] ' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  { name: 'a key of JSON inside a string', args: { q: '{"/etc/passwd": 1}' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  // data: URLs whose content is a path, a file: URI or JSON.
  { name: 'a data: URL', args: { q: 'data:,/etc/passwd' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  { name: 'a percent-encoded data: URL', args: { q: 'data:text/plain,%2Fetc%2Fpasswd' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  { name: 'a base64 data: URL', args: { q: `data:text/plain;base64,${b64('/etc/passwd')}` }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  {
    name: 'a data: URL of a file: URI',
    args: { q: `data:;base64,${b64('file:///etc/shadow')}` },
    ctx: WS,
    outside: [['/q', '/etc/shadow']],
  },
  {
    name: 'a data: URL of JSON',
    args: { q: `data:application/json;base64,${b64('{"path":"../../x"}')}` },
    ctx: WS,
    outside: [['/q', '/x']],
  },
  {
    name: 'a data: URL with spaces in its base64',
    args: { q: `data:;base64,${b64('/etc/passwd').replace(/(.{4})/g, '$1 ')}` },
    ctx: WS,
    outside: [['/q', '/etc/passwd']],
  },
  // Every line of a string under a path name.
  { name: 'a second line under a path name', args: { path: 'ok.txt\n/etc/passwd' }, ctx: WS, outside: [['/path', '/etc/passwd']] },
  { name: 'CR LF lines under a path name', args: { files: ['ok.txt\r\n../../x'] }, ctx: WS, outside: [['/files/0', '/x']] },
  // The WHATWG URL parser strips tab, newline and carriage return anywhere.
  { name: 'fi\\nle:', args: { uri: 'fi\nle:///etc/passwd' }, ctx: WS, outside: [['/uri', '/etc/passwd']] },
  { name: 'file\\r:', args: { uri: 'file\r:///etc/passwd' }, ctx: WS, outside: [['/uri', '/etc/passwd']] },
  { name: 'fi\\tle:', args: { uri: 'fi\tle:///etc/passwd' }, ctx: WS, outside: [['/uri', '/etc/passwd']] },
  { name: 'fi\\nle: under an ordinary name', args: { ref: 'fi\nle:///etc/passwd' }, ctx: WS, outside: [['/ref', '/etc/passwd']] },
  { name: 'a newline inside the path of a file: URI', args: { ref: 'file:///et\nc/passwd' }, ctx: WS, outside: [['/ref', '/etc/passwd']] },
  // Schemes of no one's with dot segments: a URL parser removes them.
  { name: 'a made-up scheme with ..', args: { uri: 'ab:/../secret' }, ctx: WS, outside: [['/uri', '/secret']] },
  { name: 'a made-up scheme with an encoded ..', args: { q: 'ab://host/%2e%2e/%2E%2e/x' }, ctx: WS, outside: [['/q', '/x']] },
  // ~user, wherever a path may be.
  { name: '~user under an ordinary name', args: { q: '~root/.ssh/id_rsa' }, ctx: WS, outside: [['/q', '/home/root/.ssh/id_rsa']] },
  { name: '~user alone', args: { q: '~postgres' }, ctx: WS, outside: [['/q', '/home/postgres']] },
];

/** The attacker's pass of issue 45: other parsers' readings of a string. */
const otherReadings: Case[] = [
  {
    name: 'fullwidth dots and solidus (NFKC, Windows best fit)',
    args: { path: '．．／．．／etc/passwd' },
    ctx: WS,
    outside: [['/path', '/etc/passwd']],
  },
  { name: 'fullwidth under an ordinary name', args: { q: '．．／secret' }, ctx: WS, outside: [['/q', '/secret']] },
  { name: 'Windows: fullwidth reverse solidus', args: { path: '．．＼．．＼x' }, ctx: WIN, outside: [['/path', 'c:\\Users\\x']] },
  {
    name: 'Windows: %CD% is the working folder',
    args: { path: '%CD%\\..\\x' },
    ctx: { ...WIN_ENV, cwd: 'C:\\Users\\me\\ws' },
    outside: [['/path', 'C:\\Users\\me\\x']],
  },
  {
    name: 'a file: URI with backslashes (WHATWG reads them as /)',
    args: { uri: 'file:///ws\\..\\..\\secret' },
    ctx: WS,
    outside: [['/uri', '/secret']],
  },
  { name: 'percent-encoded twice', args: { path: '%252e%252e/%252e%252e/etc' }, ctx: WS, outside: [['/path', '/etc']] },
  { name: 'an encoded ${HOME}', args: { q: '%24%7BHOME%7D/.ssh' }, ctx: WS_ENV, outside: [['/q', '/home/me/.ssh']] },
  {
    name: 'a data: URL of JSON in a flag',
    args: { args: ['--config=data:,{"path":"/etc/x"}'] },
    ctx: WS,
    outside: [['/args/0', '/etc/x']],
  },
  { name: 'an encoded flag', args: { args: ['--from-file%3D/abs'] }, ctx: WS, outside: [['/args/0', '/abs']] },
  { name: 'JSON escapes', args: { q: '{"path": "\\u002e\\u002e/x"}' }, ctx: WS, outside: [['/q', '/x']] },
  {
    name: 'Windows: a flag with a drive path',
    args: { args: ['--in=C:\\Windows\\win.ini'] },
    ctx: WIN,
    outside: [['/args/0', 'C:\\Windows\\win.ini']],
  },
  { name: 'Windows: //server/share', args: { q: '//server/share/x' }, ctx: WIN, outside: [['/q', '\\\\server\\share\\x']] },
  { name: 'harmless: accents, ligatures and circled digits', args: { q: 'ﬁle ① café', path: 'ｓｒｃ/a.ts' }, ctx: WS, outside: [] },
];

/** What must stay allowed: a fence that cries wolf gets turned off. */
const harmlessStrings: Case[] = [
  { name: 'prices and regex replacements', args: { q: 'costs $5 each', replacement: '$1-$2', re: '^a$' }, ctx: WS_ENV, outside: [] },
  { name: 'a variable in a sentence', args: { q: 'echo $HOME', text: 'see ${PWD}/../x for details' }, ctx: WS_ENV, outside: [] },
  {
    name: 'flags that name nothing outside',
    args: { args: ['--verbose', '--count=3', '--out=dist/x', '-o', 'a.out', '-O2'] },
    ctx: WS,
    outside: [],
  },
  { name: 'key=value words', args: { q: 'a=b c=d', filter: 'name=web' }, ctx: WS, outside: [] },
  // dd's `if=/etc/x`, `--mount src=/x`: a server reads the value of a name=value word as it reads a flag's.
  { name: 'a name=value word whose value is absolute', args: { filter: 'name=/etc' }, ctx: WS, outside: [['/filter', '/etc']] },
  // Words a program reads on its own, and JSON a lenient reader reads.
  { name: "curl's @file", args: { args: ['-d', '@/etc/passwd'] }, ctx: WS, outside: [['/args/1', '/etc/passwd']] },
  { name: "a flag's value in the next word", args: { line: '-v -f /etc/passwd' }, ctx: WS, outside: [['/line', '/etc/passwd']] },
  { name: 'one line of YAML', args: { q: 'path: ~/.ssh/id_rsa' }, ctx: WS, outside: [['/q', '/home/me/.ssh/id_rsa']] },
  { name: 'one line of TOML', args: { q: 'path = "/etc/passwd"' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  { name: 'JSON5 with a comment and a trailing comma', args: { q: "{/* c */ path: '../x',}" }, ctx: WS, outside: [['/q', '/x']] },
  {
    // Python's b64decode drops what is not of the alphabet; Node's reads `_` as URL-safe base64 (bytes that are no text).
    name: 'a base64 data: URL with characters a decoder drops',
    args: {
      input: `data:text/plain;base64,${((b) => `${b.slice(0, 8)}____${b.slice(8)}`)(Buffer.from('/etc/passwd').toString('base64'))}`,
    },
    ctx: WS,
    outside: [['/input', '/etc/passwd']],
  },
  {
    name: 'a file: URL inside git+file:',
    args: { repo: 'git+file:///etc/secret-repo' },
    ctx: WS,
    outside: [['/repo', '/etc/secret-repo']],
  },
  { name: 'a file: URL inside jar:', args: { ref: 'jar:file:/etc/app.jar!/META-INF/x' }, ctx: WS, outside: [['/ref', '/etc/app.jar']] },
  { name: 'JSON naming a key twice', args: { q: '{"path": "/etc/passwd", "path": "a.txt"}' }, ctx: WS, outside: [['/q', '/etc/passwd']] },
  {
    name: 'sentences and words stay allowed',
    args: { q: 'Note: see the docs', r: 'use -v for more', s: '@octo/hello', t: 'Error: not found', u: '{a} and {b}' },
    ctx: WS,
    outside: [],
  },
  { name: 'JSON without paths', args: { text: '{"a": 1, "b": ["hello", "and/or"]}', list: '[1, 2, 3]', s: '"hi"' }, ctx: WS, outside: [] },
  { name: 'JSON with a path inside', args: { q: '{"path": "src/a.ts"}' }, ctx: WS, outside: [] },
  {
    name: 'an image as a data: URL',
    args: {
      image: `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x2f, 0x2e, 0x2e, 0xff]).toString('base64')}`,
    },
    ctx: WS,
    outside: [],
  },
  { name: 'a data: URL of text', args: { q: 'data:,hello%20world', h: `data:text/html;base64,${b64('<p>hi</p>')}` }, ctx: WS, outside: [] },
  { name: 'lines inside, under a path name', args: { paths: 'a.txt\nsrc/b.txt\n' }, ctx: WS, outside: [] },
  { name: 'a tilde that names no user', args: { q: '~5 minutes', r: 'x ~ y', s: '~~' }, ctx: WS, outside: [] },
  { name: 'a made-up scheme without ..', args: { uri: 'ab:/x/y', q: 'note://one/two' }, ctx: WS, outside: [] },
  { name: 'a web URL with .. under an ordinary name', args: { q: 'ht\ntps://example.com/../../x' }, ctx: WS, outside: [] },
];

describe('roots fence (core/policy/fence)', () => {
  it('has a table of at least 30 cases', () => assert.ok(cases.length >= 30, String(cases.length)));

  for (const c of [...cases, ...adversarial, ...strings, ...harmlessStrings, ...otherReadings]) {
    it(c.name, async () => {
      const found = await pathsOutsideRoots(c.args, c.ctx, c.schema);
      assert.deepEqual(
        found.map((f) => [f.pointer, f.resolved]),
        c.outside,
      );
    });
  }

  it('keeps the value as given', async () => {
    const [found] = await pathsOutsideRoots({ path: '../../../etc/passwd' }, WS);
    assert.equal(found.value, '../../../etc/passwd');
  });

  it('knows which property names mean a path', () => {
    for (const name of ['path', 'filePath', 'source_dir', 'output-file', 'fileName', 'FILENAMES', 'directories', 'rootDir', 'cwd', 'uris'])
      assert.ok(isPathName(name), name);
    for (const name of ['content', 'fileContent', 'sourceCode', 'pathological', 'text', 'name']) assert.ok(!isPathName(name), name);
  });

  it('checks a resource URI: file: outside, file: inside, other schemes never', async () => {
    assert.deepEqual(
      (await resourceOutsideRoots('file:///etc/shadow', WS)).map((f) => [f.pointer, f.resolved]),
      [['', '/etc/shadow']],
    );
    assert.deepEqual(await resourceOutsideRoots('file:///ws/a.txt', WS), []);
    assert.deepEqual(await resourceOutsideRoots('test://static/resource/1', WS), []);
    // A server's own scheme is its namespace, wherever the server runs; a file: URI behind it is not.
    assert.deepEqual(await resourceOutsideRoots('note://one', { ...WS, cwd: '/srv' }), []);
    assert.equal((await resourceOutsideRoots(' file:///etc/passwd', WS)).length, 1);
    assert.equal((await resourceOutsideRoots('%66ile:///etc/passwd', WS)).length, 1);
    assert.equal((await resourceOutsideRoots('/etc/passwd', WS)).length, 1);
  });

  it('never shows the value of a variable that is not a path', async () => {
    const found = await pathsOutsideRoots({ q: '$DB_PASSWORD', path: '${DB_PASSWORD}/x', home: '$HOME/x' }, WS_ENV);
    assert.deepEqual(
      found.map((f) => [f.pointer, f.resolved]),
      [
        ['/q', '(where $DB_PASSWORD lead: not shown)'],
        ['/path', '(where $DB_PASSWORD lead: not shown)'],
        // A value that is a path is shown.
        ['/home', '/home/me/x'],
      ],
    );
    assert.doesNotMatch(JSON.stringify(found), /hunter2/);
  });

  it('refuses JSON inside a string nested too deep to read, and strings inside strings too many to read', async () => {
    const deep = await pathsOutsideRoots({ q: `${'['.repeat(100_000)}"/etc"${']'.repeat(100_000)}` }, WS);
    assert.deepEqual(
      deep.map((f) => [f.pointer, f.resolved]),
      [['/q', '(JSON nested deeper than 64 levels: not read)']],
    );
    const lines = await pathsOutsideRoots({ path: Array.from({ length: 20_000 }, (_, i) => `f${i}`).join('\n') }, WS);
    assert.deepEqual(
      lines.map((f) => f.pointer),
      ['/path'],
    );
    assert.match(lines[0].resolved, /more than 10000 strings inside strings/);
  });

  it('reads a path of 100,000 components, and variables that expand to megabytes, in bounded time', async () => {
    // A path longer than PATH_MAX cannot be opened: such a reading is not walked (it was, one join per component).
    assert.deepEqual(await pathsOutsideRoots({ path: 'a/'.repeat(100_000) }, WS), []);
    const bomb = await pathsOutsideRoots({ q: '$PATH'.repeat(800_000) }, { ...WS, env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
    assert.deepEqual(
      bomb.map((f) => [f.pointer, f.resolved]),
      [['/q', '(its variables expand to more than 1048576 characters: not read)']],
    );
  });

  it('reads made-up schemes with .. and data: URLs as resource URIs; a server’s own names stay its own', async () => {
    for (const uri of [
      'ab:/../../secret',
      'ab:/x/../../../secret',
      'note://one/%2e%2e/%2e%2e/x',
      'data:,/etc/passwd',
      'fi\nle:///etc/passwd',
    ])
      assert.equal((await resourceOutsideRoots(uri, WS)).length, 1, uri);
    for (const uri of ['ab:/x/y', 'note://one', 'ui://app/view.html', 'ab:/x/../y'])
      assert.deepEqual(await resourceOutsideRoots(uri, WS), [], uri);
  });

  describe('symlinks (a real temporary directory)', () => {
    let dir: string;
    let ctx: FenceContext;
    before(() => {
      dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'mcp-fence-')));
      mkdirSync(path.join(dir, 'ws'));
      mkdirSync(path.join(dir, 'secret'));
      symlinkSync(path.join(dir, 'secret'), path.join(dir, 'ws', 'link'), 'dir');
      symlinkSync(path.join(dir, 'ws'), path.join(dir, 'ws-link'), 'dir');
      ctx = {
        ...thisMachine(),
        home: dir,
        roots: [{ uri: pathToFileURL(path.join(dir, 'ws')).href }],
      };
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('a link inside the root that points out is outside', async () => {
      const found = await pathsOutsideRoots({ path: 'link/passwords.txt' }, ctx);
      assert.deepEqual(
        found.map((f) => f.resolved),
        [path.join(dir, 'secret', 'passwords.txt')],
      );
    });

    it('a path that does not exist yet is resolved through its longest existing prefix', async () => {
      assert.deepEqual(await pathsOutsideRoots({ path: path.join(dir, 'ws', 'new', 'deeper', 'file.txt') }, ctx), []);
      const found = await pathsOutsideRoots({ path: path.join(dir, 'ws', 'link', 'new', 'file.txt') }, ctx);
      assert.equal(found.length, 1);
    });

    it('a link outside the root that points into it is inside', async () => {
      assert.deepEqual(await pathsOutsideRoots({ path: path.join(dir, 'ws-link', 'a.txt') }, ctx), []);
    });

    it('looks the roots up once a second, and what a server names inside them on every call', async () => {
      const asked: string[] = [];
      const machine = thisMachine();
      const counted: FenceContext = {
        ...ctx,
        lstat: (p) => {
          asked.push(p);
          return machine.lstat(p);
        },
      };
      assert.deepEqual(await pathsOutsideRoots({ path: 'made-later/x.txt' }, counted), []);
      assert.ok(asked.includes(path.join(dir, 'ws')), 'the first call looks the root up');
      // A link the server makes inside the root after that call is seen on the next one, at once.
      symlinkSync(path.join(dir, 'secret'), path.join(dir, 'ws', 'made-later'), 'dir');
      asked.length = 0;
      const found = await pathsOutsideRoots({ path: 'made-later/x.txt' }, counted);
      assert.deepEqual(
        found.map((f) => f.resolved),
        [path.join(dir, 'secret', 'x.txt')],
      );
      assert.ok(
        !asked.includes(path.join(dir, 'ws')) && !asked.includes(dir),
        `the root's folders are not asked again: ${asked.join(', ')}`,
      );
      assert.ok(asked.includes(path.join(dir, 'ws', 'made-later')));
    });
  });
});
