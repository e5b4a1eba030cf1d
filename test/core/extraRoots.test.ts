import { strict as assert } from 'node:assert';
import { parseExtraRoots } from '../../src/core/policy/roots';

describe('mcpHost.roots.extra: the folders the person adds to every server roots', () => {
  it('takes absolute paths, ~ and file: URIs, and names every entry it cannot use', () => {
    const { roots, problems } = parseExtraRoots(
      ['/data/shared', '~/notes', 'file:///srv/a%20b', '/data/../etc/', 'relative/dir', '', 42, 'file://%zz'],
      '/home/ada',
      'linux',
    );
    assert.deepEqual(roots, [
      { uri: 'file:///data/shared', name: 'shared' },
      { uri: 'file:///home/ada/notes', name: 'notes' },
      { uri: 'file:///srv/a%20b', name: 'a b' },
      { uri: 'file:///etc/', name: 'etc' },
    ]);
    assert.deepEqual(problems, [
      '"relative/dir" is neither an absolute path nor a file: URI',
      '"" is not a folder',
      '42 is not a folder',
      '"file://%zz" is not a usable file: URI',
    ]);
  });

  it('reads Windows drive and UNC paths on Windows, and nothing when unset', () => {
    const { roots } = parseExtraRoots(['C:\\Work\\repo', '\\\\server\\share\\docs'], 'C:\\Users\\ada', 'win32');
    assert.deepEqual(
      roots.map((r) => r.uri),
      ['file:///C:/Work/repo', 'file://server/share/docs'],
    );
    assert.deepEqual(parseExtraRoots(undefined, '/home/ada', 'linux'), { roots: [], problems: [] });
  });
});
