// Every Markdown page of the repository renders as it is written: the README is also the extension's
// page in VS Code's Extensions view and on the Marketplace, and a fence left open turns the rest of a
// page into one code block. The pages are parsed with markdown-it (test/helpers/markdown.ts), the
// parser of VS Code's Markdown preview and of vsce.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, anchors, headings, links, parseMarkdown, readMarkdown, type MarkdownDoc } from '../helpers/markdown';

/** Every .md file of the repository, outside dependencies, build output and dot-folders. */
function markdownFiles(dir = ''): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const name = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) return e.name.startsWith('.') || ['node_modules', 'dist', 'out'].includes(e.name) ? [] : markdownFiles(name);
    return e.name.endsWith('.md') ? [name] : [];
  });
}

/** A fence line: up to three spaces, then three or more backticks or tildes, and what follows. */
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
/** An ATX heading as Markdown reads it outside code. */
const ATX_HEADING = /^ {0,3}#{1,6}[ \t]+\S/;
/** A table's delimiter row: `| --- | :---: |`. */
const TABLE_DELIMITER = /^ {0,3}\|?(\s*:?-+:?\s*\|)+(\s*:?-+:?\s*)?$/;
/** Languages in which a line may start with `#` (a comment, a heading): such lines in them prove nothing. */
const HASH_LINES = new Set([
  '',
  'sh',
  'bash',
  'zsh',
  'shell',
  'console',
  'shellsession',
  'powershell',
  'ps1',
  'python',
  'py',
  'ruby',
  'rb',
  'perl',
  'r',
  'yaml',
  'yml',
  'toml',
  'ini',
  'conf',
  'dockerfile',
  'make',
  'makefile',
  'text',
  'txt',
  'plaintext',
  'diff',
  'md',
  'markdown',
]);
/** Languages whose blocks may show a table or a fence as text. */
const SHOWS_MARKDOWN = new Set(['md', 'markdown', 'text', 'txt', 'plaintext']);

/**
 * The fenced code blocks of a page that do not end where their author meant them to, each as a
 * sentence with its line. Three signs, none of which real code in a well-formed page shows:
 * - the block is not ended by a closing fence of its own (it runs to the end of the page or of the
 *   list item or quote it is in);
 * - a line inside it opens a fence with a language (```` ```sh ````): a closing fence cannot carry
 *   one, so the block above it was never closed, and the fence meant to close the next block
 *   closes this one instead, with everything between inside it;
 * - a line inside it is a Markdown heading or a table's delimiter row, in a language where such a
 *   line cannot be code (JSON, TypeScript, …).
 * Every fence must name its language: so a bare fence line is always a closing one, and a block
 * left open is always caught by one of the first two signs.
 */
function unclosedFences(doc: MarkdownDoc): string[] {
  const problems: string[] = [];
  for (const t of doc.tokens) {
    if (t.type !== 'fence') continue;
    const [first, end] = t.map!;
    const where = `${doc.name}:${first + 1}`;
    const info = t.info.trim().split(/\s+/)[0].toLowerCase();
    if (!info) problems.push(`${where}: the fence names no language (\`\`\`sh, \`\`\`json, …)`);
    const last = FENCE.exec(doc.lines[end - 1]);
    if (end - first < 2 || !last || last[2].trim() !== '' || last[1][0] !== t.markup[0] || last[1].length < t.markup.length)
      problems.push(`${where}: the ${t.markup}${t.info} block is never closed: it runs to line ${end}`);
    doc.lines.slice(first + 1, end - 1).forEach((line, i) => {
      const at = `${doc.name}:${first + 2 + i}`;
      const fence = FENCE.exec(line);
      if (fence && fence[2].trim() !== '' && !SHOWS_MARKDOWN.has(info))
        problems.push(
          `${at}: "${line.trim()}" opens a fence inside the ${t.markup}${t.info} block of line ${first + 1}: close that block first`,
        );
      else if (ATX_HEADING.test(line) && !HASH_LINES.has(info))
        problems.push(`${at}: the heading "${line.trim()}" is inside the ${t.markup}${t.info} block of line ${first + 1}`);
      else if (TABLE_DELIMITER.test(line) && !SHOWS_MARKDOWN.has(info))
        problems.push(`${at}: a table is inside the ${t.markup}${t.info} block of line ${first + 1}`);
    });
  }
  return problems;
}

/** Lines that look like a table's row but are not in a table as the page renders. */
function strayTableRows(doc: MarkdownDoc): string[] {
  const inBlock = new Array<boolean>(doc.lines.length).fill(false);
  const inTable = new Array<boolean>(doc.lines.length).fill(false);
  for (const t of doc.tokens) {
    if (!t.map) continue;
    const mark = t.type === 'table_open' ? inTable : ['fence', 'code_block', 'html_block'].includes(t.type) ? inBlock : undefined;
    for (let l = t.map[0]; mark && l < t.map[1]; l++) mark[l] = true;
  }
  return doc.lines
    .map((line, i) => ({ line, i }))
    .filter(({ line, i }) => /^\s*\|.*\|\s*$/.test(line) && !inBlock[i] && !inTable[i])
    .map(({ line, i }) => `${doc.name}:${i + 1}: "${line.length > 60 ? `${line.slice(0, 60)}…` : line}" is not part of a table`);
}

/** Relative links and images whose file, or whose heading in a Markdown file, does not exist. */
function brokenLinks(doc: MarkdownDoc): string[] {
  const broken: string[] = [];
  for (const { kind, target, line } of links(doc)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
    const where = `${doc.name}:${line + 1}: ${kind} ${target}`;
    const [file, anchor] = target.split('#');
    let page = doc;
    if (file) {
      const resolved = path.resolve(ROOT, path.dirname(doc.name), decodeURIComponent(file));
      if (!resolved.startsWith(ROOT + path.sep) || !fs.existsSync(resolved)) {
        broken.push(`${where}: no such file in the repository`);
        continue;
      }
      if (kind === 'image' && !fs.statSync(resolved).isFile()) broken.push(`${where}: not a file`);
      if (!resolved.endsWith('.md')) continue;
      page = readMarkdown(path.relative(ROOT, resolved).split(path.sep).join('/'));
    }
    if (anchor !== undefined && !anchors(page).has(decodeURIComponent(anchor)))
      broken.push(`${where}: ${page.name} has no heading with that anchor`);
  }
  return broken;
}

const pages = markdownFiles();

describe('every Markdown page renders as written', () => {
  it('finds the pages', () => {
    for (const name of ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'docs/security.md']) assert.ok(pages.includes(name), name);
  });

  it('closes every fenced code block before the next heading, table or block', () => {
    assert.deepEqual(
      pages.flatMap((p) => unclosedFences(readMarkdown(p))),
      [],
    );
  });

  it('renders every table-shaped line as part of a table', () => {
    assert.deepEqual(
      pages.flatMap((p) => strayTableRows(readMarkdown(p))),
      [],
    );
  });

  it('writes every heading with #, none by underlining a line with --- or ===', () => {
    const underlined = pages.flatMap((p) => {
      const doc = readMarkdown(p);
      return headings(doc)
        .filter((h) => !/^ {0,3}#/.test(doc.lines[h.line]))
        .map((h) => `${p}:${h.line + 1}: "${h.source}" is a heading only because the line under it is --- or ===`);
    });
    assert.deepEqual(underlined, []);
  });

  it('links only to files and headings that exist', () => {
    assert.deepEqual(
      pages.flatMap((p) => brokenLinks(readMarkdown(p))),
      [],
    );
  });
});

describe('the Markdown checks themselves', () => {
  const page = parseMarkdown;

  it('sees a block left open that a later fence closes, with the headings and tables between', () => {
    const doc = page(
      'open.md',
      '# T\n\n```jsonc\n{ "a": 1 }\n\n## Commands\n\n| a | b |\n| --- | --- |\n\n## More\n\n```sh\nnpm test\n```\n\nText.\n',
    );
    const problems = unclosedFences(doc).map((p) => p.replace(/^[^:]+:/, ''));
    assert.deepEqual(problems, [
      '6: the heading "## Commands" is inside the ```jsonc block of line 3',
      '9: a table is inside the ```jsonc block of line 3',
      '11: the heading "## More" is inside the ```jsonc block of line 3',
      '13: "```sh" opens a fence inside the ```jsonc block of line 3: close that block first',
    ]);
  });

  it('sees a block that runs to the end of the page', () => {
    const problems = unclosedFences(page('end.md', '# T\n\n```sh\nnpm test\n\n## Next\n')).map((p) => p.replace(/^[^:]+:/, ''));
    assert.deepEqual(problems, ['3: the ```sh block is never closed: it runs to line 6']);
  });

  it('takes a shell comment, a Python comment and a Markdown example for what they are', () => {
    const doc = page(
      'fine.md',
      '# T\n\n```sh\n# install\n\nnpm ci\n```\n\n```python\n## section\nx = 1\n```\n\n````md\n## A heading\n\n```sh\nls\n```\n\n| a |\n| --- |\n````\n',
    );
    assert.deepEqual(unclosedFences(doc), []);
  });

  it('sees a table row that does not render as a table', () => {
    const doc = page('rows.md', '# T\n\nText\n| a | b |\n\n| x | y |\n| --- | --- |\n| 1 | 2 |\n');
    assert.deepEqual(
      strayTableRows(doc).map((p) => p.replace(/^[^:]+:/, '')),
      ['4: "| a | b |" is not part of a table'],
    );
  });

  it('sees a link to a file or a heading that does not exist, and takes the ones that do', () => {
    const doc = page(
      'links.md',
      '# T\n\n[a](docs/no-such.md) [b](README.md#no-such-heading) ![c](media/none.png) [d](docs/usage.md#variables-and-inputs) [e](#t) [f](https://example.com/x.md)\n\n| x |\n| --- |\n| [g](nope.md) |\n',
    );
    assert.deepEqual(
      brokenLinks(doc).map((p) => p.replace(/^[^:]+:/, '')),
      [
        '3: link docs/no-such.md: no such file in the repository',
        '3: link README.md#no-such-heading: README.md has no heading with that anchor',
        '3: image media/none.png: no such file in the repository',
        '7: link nope.md: no such file in the repository',
      ],
    );
  });
});
