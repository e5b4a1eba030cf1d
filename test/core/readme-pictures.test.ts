// The README's pictures are the Playwright tests' screenshots: every one it shows must exist, and
// every command in its command list has a picture or says it has none ("—").
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

describe('README pictures', () => {
  it('shows only screenshots that exist', () => {
    const pictures = [...readme.matchAll(/\((media\/[^)\s]+\.png)\)/g)].map((m) => m[1]);
    assert.ok(pictures.length > 10, `only ${pictures.length} pictures`);
    const missing = pictures.filter((p) => !fs.existsSync(path.join(root, p)));
    assert.deepEqual(missing, []);
  });

  it('gives every listed command a picture column', () => {
    const start = readme.indexOf('## Commands');
    const rows = readme
      .slice(start, readme.indexOf('\n## ', start + 1))
      .split('\n')
      .filter((l) => l.startsWith('| **'));
    assert.ok(rows.length > 10);
    for (const row of rows) {
      const cells = row.split(' | ');
      assert.equal(cells.length, 3, row);
      assert.match(cells[2], /^(\[.+\]\(media\/screenshots\/.+\.png\)|—) \|$/, row);
    }
  });
});
