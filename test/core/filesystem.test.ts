import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Root, TextContent } from '../../src/core';
import { closeAll, connect, eventually, filesystemServer } from '../helpers/servers';

const text = (block: unknown) => (block as TextContent).text;

describe('server-filesystem: roots replace its allowed directories', function () {
  this.timeout(30_000);
  let base: string;
  let dirA: string;
  let dirB: string;
  let dirArg: string;

  before(() => {
    base = realpathSync(mkdtempSync(path.join(tmpdir(), 'mcp-host-roots-')));
    [dirA, dirB, dirArg] = ['a', 'b', 'start'].map((n) => {
      const d = path.join(base, n);
      mkdirSync(d);
      writeFileSync(path.join(d, `${n}.txt`), `contents of ${n}`);
      return d;
    });
  });
  after(async () => {
    await closeAll();
    rmSync(base, { recursive: true, force: true });
  });

  it('uses our roots instead of its arguments, and re-reads them after roots/list_changed', async () => {
    let roots: Root[] = [{ uri: pathToFileURL(dirA).href, name: 'A' }];
    let asked = 0;
    const t = await connect(filesystemServer(dirArg), {
      handlers: {
        listRoots: () => {
          asked++;
          return roots;
        },
      },
    });
    const allowed = async () =>
      text((await t.client.callTool('list_allowed_directories', {})).result.content[0])
        .split('\n')
        .slice(1);

    await eventually(async () => ((await allowed()).includes(dirA) ? true : undefined));
    assert.deepEqual(await allowed(), [dirA], 'the command-line directory was replaced');
    const readA = await t.client.callTool('read_text_file', { path: path.join(dirA, 'a.txt') });
    assert.equal(text(readA.result.content[0]), 'contents of a');

    roots = [{ uri: pathToFileURL(dirB).href, name: 'B' }];
    const before = asked;
    await t.client.sendRootsListChanged();
    await eventually(async () => ((await allowed()).includes(dirB) ? true : undefined));
    assert.ok(asked > before, 'the server asked for roots again');
    assert.deepEqual(await allowed(), [dirB]);

    const readB = await t.client.callTool('read_text_file', { path: path.join(dirB, 'b.txt') });
    assert.equal(text(readB.result.content[0]), 'contents of b');
    const deniedA = await t.client.callTool('read_text_file', { path: path.join(dirA, 'a.txt') });
    assert.equal(deniedA.result.isError, true);
    assert.match(text(deniedA.result.content[0]), /outside allowed directories|Access denied/i);
  });
});
