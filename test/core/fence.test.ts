import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isPathName, pathsOutsideRoots, resourceOutsideRoots, type FenceContext } from '../../src/core/policy/fence';

/** A simulated machine where every path exists as written (no symlinks). */
const everythingExists = async (p: string) => p;

const posix = (roots: string[], platform: NodeJS.Platform = 'linux'): FenceContext => ({
  platform,
  realpath: everythingExists,
  home: '/home/me',
  roots: roots.map((r) => ({ uri: `file://${r}` })),
});
const windows = (roots: string[]): FenceContext => ({
  platform: 'win32',
  realpath: everythingExists,
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
  { name: 'pointer escapes ~ and /', args: { 'a/b': { '~c': '/etc' } }, ctx: WS, outside: [['/a~1b/~0c', '/etc']] },
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

describe('roots fence (core/policy/fence)', () => {
  it('has a table of at least 30 cases', () => assert.ok(cases.length >= 30, String(cases.length)));

  for (const c of cases) {
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
        platform: process.platform,
        realpath: (p) => realpath(p),
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
  });
});
