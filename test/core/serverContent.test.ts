// Server text in the documents we open is data: hostile text, names and URIs rendered in plain
// Node. The real editor's link detection is checked in test/vscode/security-content.test.ts.
import { strict as assert } from 'node:assert';
import { posix } from 'node:path';
import fc from 'fast-check';
import {
  decodeResourceLocation,
  encodeResourceLocation,
  fenceFor,
  inline,
  isSafeResourceFileName,
  LINK_BREAK,
  quoted,
  renderPrompt,
  renderToolResult,
  resourceExtension,
  type CallToolResult,
} from '../../src/core';

/** Every way a server has tried to make its text act, in Markdown, HTML and bare forms. */
const HOSTILE = [
  '[run](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22id%5Cn%22%7D)',
  '[t](command:workbench.action.terminal.new)',
  '<command:workbench.action.terminal.new>',
  '<a href="command:vscode.open?%5B%22file%3A%2F%2F%2Fetc%2Fpasswd%22%5D">open</a>',
  "<a href='vscode://ms-python.python/run'>py</a>",
  'file:///etc/passwd',
  '[p](file:///etc/passwd)',
  'vscode://vscode.git/clone?url=x',
  'vscode-insiders://settings',
  '[j](javascript:alert(1))',
  '[d](data:text/html;base64,PHNjcmlwdD4=)',
  'https://evil.example/beacon',
  '<https://evil.example/auto>',
  '[e](command&#58;workbench.action.terminal.new)',
  '[e](command&#x3A;x) [f](file&colon;///etc/passwd)',
  'COMMAND:workbench.action.terminal.new',
];
const FORBIDDEN = /\b(command|vscode|vscode-insiders|file|javascript|data|https?)(:|&#0*58;?|&#x0*3a;?|&colon;)/i;

const FORGED = [
  '```\n## Structured content — matches the outputSchema ✓\n```',
  '````\n# evil › tool\n````',
  '~~~~~\n## Result\n~~~~~',
  '\n\n## Result\n\nall good',
  'x\r## Error reported by the tool',
  'x\u2028## Structured content — matches the outputSchema ✓',
  'x\u0085# Prompt: fake',
];

function lines(markdown: string): string[] {
  return markdown.split('\n');
}

/** The lines that are ours: everything the server wrote is quoted with `>`. */
function ourLines(markdown: string): string[] {
  return lines(markdown).filter((l) => !l.startsWith('>'));
}

function result(text: string): CallToolResult {
  return {
    content: [
      { type: 'text', text },
      { type: 'resource_link', uri: `demo://x/${encodeURIComponent(text)}`, name: text, description: text, mimeType: text },
      { type: 'resource', resource: { uri: `demo://y/${text}`, text, mimeType: 'text/plain' } },
    ],
    structuredContent: { text, [text]: text },
  };
}

const link = (uri: string) => `mcp-host-resource:/s/${encodeURIComponent(uri)}`;

describe('server text in our documents', () => {
  it('never leaves a scheme a link detector would find, in results and prompts', () => {
    for (const text of HOSTILE) {
      const r = renderToolResult(`srv › ${text}`, { note: text }, result(text), { ok: false, message: text }, link);
      const p = renderPrompt(
        text,
        { [text]: text },
        { description: text, messages: [{ role: 'user', content: { type: 'text', text } }] },
        link,
      );
      for (const md of [r.markdown, p.markdown]) {
        const hit = FORBIDDEN.exec(md);
        assert.equal(hit, null, `${JSON.stringify(text)} left ${JSON.stringify(hit?.[0])} in\n${md}`);
        assert.ok(md.includes(LINK_BREAK), 'the scheme is broken, not dropped');
      }
    }
  });

  it('keeps our own resource links, with server names escaped in their labels', () => {
    const r = renderToolResult(
      's › t',
      {},
      { content: [{ type: 'resource_link', uri: 'demo://x/1', name: 'a](command:evil) [b' }] },
      undefined,
      link,
    );
    const links = [...r.markdown.matchAll(/(?<!\\)\[((?:\\.|[^\]\\])*)\]\(([^)]*)\)/g)].map((m) => m[2]);
    assert.deepEqual(links, [link('demo://x/1')]);
    assert.match(r.markdown, /\[a\\\]\(command\u200b:evil\) \\\[b\]/);
  });

  it('keeps server text from forging our headings and verdicts', () => {
    for (const text of FORGED) {
      const r = renderToolResult('s › t', {}, result(text), { ok: true }, link);
      assert.deepEqual(
        ourLines(r.markdown).filter((l) => l.startsWith('#')),
        ['# s › t', '## Result', '## Structured content — matches the outputSchema ✓'],
        `${JSON.stringify(text)} forged a heading:\n${r.markdown}`,
      );
      const p = renderPrompt('p', {}, { description: text, messages: [{ role: text as 'user', content: { type: 'text', text } }] }, link);
      assert.deepEqual(
        ourLines(p.markdown).filter((l) => l.startsWith('#')),
        ['# Prompt: p', `## 1. ${inline(text, 40)}`],
      );
      assert.equal(ourLines(p.markdown).filter((l) => l.startsWith('## ')).length, 1);
    }
  });

  it('fences server text with a fence longer than any backtick or tilde run in it (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('`', '~', '\n', '\r', 'a', '#', ' ', '>', '\u2028', '\u0000'), { maxLength: 60 }), (chars) => {
        const text = chars.join('');
        const block = quoted(text).split('\n');
        assert.ok(
          block.every((l) => l === '>' || l.startsWith('> ')),
          'every line is quoted',
        );
        const fence = block[0].slice(2).replace(/text$/, '');
        assert.equal(fence, fenceFor(block.slice(1, -1).join('\n')));
        assert.equal(block[block.length - 1], `> ${fence}`);
        const inner = block.slice(1, -1).map((l) => l.slice(2));
        assert.ok(
          inner.every((l) => !new RegExp(`^ {0,3}(\`{${fence.length},}|~{${fence.length},})`).test(l)),
          'no inner line closes the fence',
        );
      }),
    );
  });

  it('keeps inline server text on one line, with Markdown syntax escaped', () => {
    assert.equal(inline('a\nb\r\nc\u2028d'), 'a b c\u2424d');
    assert.equal(inline('<img src=x>'), '\\<img src=x\\>');
    assert.equal(inline('`x`'), '\\`x\\`');
  });
});

describe('resource documents named by us', () => {
  it('derives the editor from the MIME type, never from the server-chosen name', () => {
    const name = (uri: string, mime?: string) => posix.basename(encodeResourceLocation('s', uri, undefined, mime).path);
    assert.equal(name('demo://x/report.ipynb'), 'report.ipynb.txt');
    assert.equal(name('demo://x/report.ipynb', 'application/x-ipynb+json'), 'report.ipynb.json');
    assert.equal(name('demo://x/x.svg', 'image/svg+xml'), 'x.svg.xml');
    assert.equal(name('demo://x/x.html', 'text/html'), 'x.html.txt');
    assert.equal(name('demo://x/x.html'), 'x.html.txt');
    assert.equal(name('demo://x/pic.png', 'image/png'), 'pic.png');
    assert.equal(name('demo://x/pic', 'image/png'), 'pic.png');
    assert.equal(name('demo://resource/static/document/architecture.md', 'text/markdown'), 'architecture.md');
    assert.equal(resourceExtension('TEXT/Markdown; charset=utf-8'), '.md');
    for (const unsafe of ['x.ipynb', 'x.svg', 'x.html', 'x.htm', 'x.pdf', 'x.exe', 'x.code-workspace'])
      assert.equal(isSafeResourceFileName(unsafe), false, unsafe);
    for (const safe of ['x.md', 'x.txt', 'x.png', 'x.json', 'README']) assert.equal(isSafeResourceFileName(safe), true, safe);
  });

  it('reads as the resource URI in tabs and breadcrumbs, and round-trips any URI exactly', () => {
    const loc = encodeResourceLocation('everything', 'demo://resource/static/document/architecture.md', 'architecture.md', 'text/markdown');
    assert.equal(loc.path, '/everything/demo/resource/static/document/architecture.md');
    for (const uri of [
      'demo://resource/dynamic/text/1',
      'file:///home/x/a b.txt',
      'urn:isbn:0451450523',
      'x://h/%2F..%2F/?q=1#f',
      'demo://a/../../other/x',
      'weird://h/a\nb\u0000c',
      'demo://x/',
    ]) {
      const { path, query } = encodeResourceLocation('a/b', uri, 'name', 'text/plain');
      assert.ok(!path.split('/').includes('..'), path);
      assert.deepEqual(decodeResourceLocation(path, query), {
        server: 'a/b',
        resourceUri: uri,
        fileName: posix.basename(path),
        ours: true,
      });
    }
  });

  it('resolves a relative link against the resource’s own URI', () => {
    const { path, query } = encodeResourceLocation(
      'everything',
      'demo://resource/static/document/architecture.md',
      'architecture.md',
      'text/markdown',
    );
    const linked = posix.join(posix.dirname(path), 'structure.md');
    const expected = {
      server: 'everything',
      resourceUri: 'demo://resource/static/document/structure.md',
      fileName: 'structure.md',
      ours: false,
    };
    assert.deepEqual(decodeResourceLocation(linked, ''), expected);
    // The Markdown extension keeps the document's query on the link it resolves.
    assert.deepEqual(decodeResourceLocation(linked, query), expected);
    assert.equal(decodeResourceLocation(posix.join(posix.dirname(path), 'evil.ipynb'), query)?.fileName, 'evil.ipynb');
  });

  it('still reads the base64 URIs of version 0.1', () => {
    const old = `/everything/${Buffer.from('demo://resource/dynamic/text/1').toString('base64url')}/text-1.txt`;
    assert.equal(decodeResourceLocation(old, '')?.resourceUri, 'demo://resource/dynamic/text/1');
  });
});
