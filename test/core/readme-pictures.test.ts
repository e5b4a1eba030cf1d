// The README's pictures are the Playwright tests' screenshots: every one it shows must exist, and
// every command in its command list has a picture or says it has none ("—").
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, links, readMarkdown, section } from '../helpers/markdown';

const readme = readMarkdown('README.md');

describe('README pictures', () => {
  it('shows only screenshots that exist', () => {
    const pictures = links(readme)
      .map((l) => l.target)
      .filter((t) => /^media\/.+\.png$/.test(t));
    assert.ok(pictures.length > 10, `only ${pictures.length} pictures`);
    const missing = pictures.filter((p) => !fs.existsSync(path.join(ROOT, decodeURIComponent(p))));
    assert.deepEqual(missing, []);
  });

  it('gives every listed command a picture column', () => {
    const rows = section(readme, '## Commands').rows.filter((cells) => cells[0].startsWith('**'));
    assert.ok(rows.length > 10);
    for (const cells of rows) {
      assert.equal(cells.length, 3, cells.join(' | '));
      assert.match(cells[2], /^(\[.+\]\(media\/screenshots\/.+\.png\)|—)$/, cells.join(' | '));
    }
  });
});
