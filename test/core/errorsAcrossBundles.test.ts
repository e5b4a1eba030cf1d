// The editor loads parts of the core lazily from bundles of their own (dist/http.js: the HTTP
// transports), each with its own copy of src/core/protocol/errors.ts. An McpError one of them makes
// must still be an McpError to the main bundle, and an error response it made up must give back
// the very error (its kind included) when the client reads it.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import * as esbuild from 'esbuild';
import { McpError } from '../../src/core/protocol/errors';

const require = createRequire(__filename);
const repo = path.join(__dirname, '..', '..');

describe('McpError across bundles', () => {
  let other: { McpError: typeof McpError };
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-bundle-'));
    const entry = path.join(dir, 'entry.ts');
    fs.writeFileSync(entry, `export { McpError } from ${JSON.stringify(path.join(repo, 'src', 'core', 'protocol', 'errors.ts'))};\n`);
    await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: path.join(dir, 'other.js'),
      logLevel: 'error',
    });
    other = require(path.join(dir, 'other.js')) as typeof other;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is a copy of its own, as a lazily loaded bundle is', () => {
    assert.notEqual(other.McpError, McpError);
  });

  it('an McpError of the other copy is an McpError here, and keeps its code, data and kind', () => {
    const made = new other.McpError(-32000, 'the reply stream ended', { at: 1 }, { type: 'replyLost' });
    assert.ok(made instanceof McpError);
    assert.equal(McpError.from(made), made);
    assert.deepEqual([made.code, made.data, made.kind], [-32000, { at: 1 }, { type: 'replyLost' }]);
  });

  it('an error response the other copy made up gives back its error here', () => {
    const made = new other.McpError(-32000, 'connection closed', undefined, { type: 'replyLost' });
    const wire = made.toResponseError();
    assert.equal(McpError.from({ ...wire }).kind, undefined, 'a copy of the wire object is not the one made up');
    assert.equal(McpError.from(wire), made);
  });

  it('nothing else is an McpError', () => {
    for (const value of [new Error('x'), { code: -32000, message: 'x' }, null, 'McpError', Object.create(null)])
      assert.ok(!(value instanceof McpError), typeof value);
  });
});
