import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The real-VS-Code harness's reading of --grep (test/harness/run-vscode-tests.js), without VS Code. */
const harness = require('../harness/run-vscode-tests.js') as {
  testTitles(files: string[]): string[];
  grepRegExp(pattern: string): RegExp;
  listTests(dir: string, re: RegExp): string[];
  PHASES: Record<string, { dir: string; re: RegExp }>;
};

describe('harness --grep: which phases have a matching test', () => {
  it('reads full titles as Mocha builds them: nested describes, template titles without their substitutions, no .skip', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-titles-'));
    try {
      const file = path.join(dir, 'a.test.ts');
      fs.writeFileSync(
        file,
        [
          "describe('outer', () => {",
          "  it('one', () => {});",
          '  describe(`inner ${version}`, function () {',
          '    it("two", async () => {});',
          "    it.skip('skipped', () => {});",
          '  });',
          "  describe.skip('gone', () => { it('three', () => {}); });",
          '  for (const n of [1, 2]) it(`case ${n} works`, () => {});',
          '});',
          "it('top', () => {});",
        ].join('\n'),
      );
      assert.deepEqual(harness.testTitles([file]), ['outer one', 'outer inner  two', 'outer case  works', 'top']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads --grep as Mocha does: a regular expression's source, or /re/flags", () => {
    assert.ok(harness.grepRegExp('show.log').test('show log'), 'a pattern, not a literal string');
    assert.ok(harness.grepRegExp('/ACTIVATION/i').test('activation opens the fixture workspace'));
    assert.ok(!harness.grepRegExp('ACTIVATION').test('activation opens the fixture workspace'));
  });

  it('finds the tests of the documented narrow run (--grep activation) in the extension-host phase only', () => {
    const matching = (phase: string) => {
      const { dir, re } = harness.PHASES[phase];
      return harness.testTitles(harness.listTests(dir, re)).filter((t) => harness.grepRegExp('activation').test(t));
    };
    assert.ok(matching('exthost').length > 0, 'test/vscode/activation.test.ts has tests titled "activation …"');
    assert.deepEqual(matching('e2e'), []);
    assert.deepEqual(matching('smoke'), []);
    // Every phase has tests to read: an empty list would skip a phase for the wrong reason.
    for (const phase of Object.keys(harness.PHASES)) {
      const { dir, re } = harness.PHASES[phase];
      assert.ok(harness.testTitles(harness.listTests(dir, re)).length > 0, `no test titles read in ${dir}`);
    }
  });
});
