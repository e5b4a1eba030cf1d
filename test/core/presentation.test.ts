import { strict as assert } from 'node:assert';
import {
  choicesOf,
  defaultArguments,
  expandTemplate,
  orderedProperties,
  parsePropertyInput,
  promptText,
  renderPrompt,
  renderToolResult,
  templateVariables,
  type JsonSchemaObject,
} from '../../src/core';

const schema: JsonSchemaObject = {
  type: 'object',
  properties: {
    note: { type: 'string', description: 'optional' },
    count: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
    mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
    flag: { type: 'boolean' },
    email: { type: 'string', format: 'email' },
    code: { type: 'string', pattern: '^[A-Z]{3}$' },
    tags: { type: 'array', items: { type: 'string' } },
    level: {
      oneOf: [
        { const: 'lo', title: 'Low' },
        { const: 'hi', title: 'High' },
      ],
    },
  },
  required: ['mode', 'count'],
};

describe('tool arguments from inputSchema', () => {
  it('orders required properties first, each group in schema order', () => {
    assert.deepEqual(
      orderedProperties(schema).map((p) => `${p.name}${p.required ? '!' : ''}`),
      ['count!', 'mode!', 'note', 'flag', 'email', 'code', 'tags', 'level'],
    );
  });
  it('collects defaults', () => {
    assert.deepEqual(defaultArguments(schema), { count: 3, mode: 'fast' });
  });
  it('offers enums, titled enums and booleans as choices', () => {
    const p = Object.fromEntries(orderedProperties(schema).map((s) => [s.name, s.schema]));
    assert.deepEqual(
      choicesOf(p.mode)?.map((c) => c.value),
      ['fast', 'slow'],
    );
    assert.deepEqual(choicesOf(p.level), [
      { label: 'Low', value: 'lo' },
      { label: 'High', value: 'hi' },
    ]);
    assert.deepEqual(
      choicesOf(p.flag)?.map((c) => c.value),
      [true, false],
    );
    assert.equal(choicesOf(p.note), undefined);
  });
  it('parses and validates typed input', () => {
    const p = Object.fromEntries(orderedProperties(schema).map((s) => [s.name, s.schema]));
    assert.deepEqual(parsePropertyInput(p.count, ' 7 '), { value: 7 });
    assert.match((parsePropertyInput(p.count, '11') as { error: string }).error, /must be <= 10/);
    assert.match((parsePropertyInput(p.count, '2.5') as { error: string }).error, /must be integer/);
    assert.match((parsePropertyInput(p.count, 'abc') as { error: string }).error, /whole number/);
    assert.deepEqual(parsePropertyInput(p.email, 'a@b.co'), { value: 'a@b.co' });
    assert.match((parsePropertyInput(p.email, 'nope') as { error: string }).error, /format "email"/);
    assert.match((parsePropertyInput(p.code, 'abc') as { error: string }).error, /must match pattern/);
    assert.deepEqual(parsePropertyInput(p.tags, '["a","b"]'), { value: ['a', 'b'] });
    assert.match((parsePropertyInput(p.tags, '[1]') as { error: string }).error, /must be string/);
    assert.match((parsePropertyInput(p.tags, '[oops') as { error: string }).error, /Enter JSON/);
  });
});

describe('rendering results and prompts', () => {
  const link = (uri: string) => `link:${uri}`;

  it('renders every content block, binaries as attachments, and the outputSchema verdict', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64');
    const r = renderToolResult(
      'srv › t',
      { a: 1 },
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: png, mimeType: 'image/png' },
          { type: 'audio', data: png, mimeType: 'audio/wav' },
          { type: 'resource_link', uri: 'demo://x/1', name: 'one' },
          { type: 'resource', resource: { uri: 'demo://x/2', text: 'embedded text', mimeType: 'text/plain' } },
          { type: 'resource', resource: { uri: 'demo://x/3', blob: png, mimeType: 'image/png' } },
        ],
        structuredContent: { n: 1 },
      },
      { ok: false, message: '/n must be string' },
      link,
    );
    assert.match(r.markdown, /^# srv › t\n/);
    assert.match(r.markdown, /\n> ```text\n> hello\n> ```\n/);
    assert.match(r.markdown, /🖼 \[content-1\.png\]\(content-1\.png\) — image\/png, 4 bytes/);
    assert.match(r.markdown, /🔊 \[content-2\.wav\]\(content-2\.wav\) — audio\/wav, 4 bytes/);
    assert.doesNotMatch(r.markdown, /base64/, 'binaries are linked, not inlined');
    assert.match(r.markdown, /\[one\]\(link:demo:\/\/x\/1\)/);
    assert.match(r.markdown, /> ```text\n> embedded text\n> ```/);
    assert.match(r.markdown, /does NOT match the outputSchema: \/n must be string/);
    assert.deepEqual(
      r.attachments.map((a) => [a.fileName, a.mimeType, a.data.length]),
      [
        ['content-1.png', 'image/png', 4],
        ['content-2.wav', 'audio/wav', 4],
        ['content-3.png', 'image/png', 4],
      ],
    );
  });

  it('marks isError results', () => {
    const r = renderToolResult('t', {}, { content: [{ type: 'text', text: 'boom' }], isError: true }, undefined, link);
    assert.match(r.markdown, /# t — failed/);
    assert.match(r.markdown, /## Error reported by the tool\n\n> ```text\n> boom\n> ```/);
  });

  it('renders a prompt with role headings and copies it as text', () => {
    const result = {
      description: 'd',
      messages: [
        { role: 'user' as const, content: { type: 'text' as const, text: 'Hi' } },
        { role: 'assistant' as const, content: { type: 'text' as const, text: 'Yo' } },
      ],
    };
    const r = renderPrompt('p', { city: 'Oslo' }, result, link);
    assert.match(
      r.markdown,
      /# Prompt: p\n\n> ```text\n> d\n> ```\n\nArguments: city = "Oslo"\n\n## 1\. user\n\n> ```text\n> Hi\n> ```\n\n## 2\. assistant\n\n> ```text\n> Yo\n> ```/,
    );
    assert.equal(promptText(result), 'user: Hi\n\nassistant: Yo');
  });
});

describe('URI templates', () => {
  it('finds variables and expands the operators servers use', () => {
    assert.deepEqual(templateVariables('demo://resource/dynamic/text/{resourceId}'), ['resourceId']);
    assert.deepEqual(templateVariables('x://{a}/{+b}{?c,d}{&e}'), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(expandTemplate('demo://r/{id}', { id: '12' }), 'demo://r/12');
    assert.equal(expandTemplate('x://{a}', { a: 'a b/c' }), 'x://a%20b%2Fc');
    assert.equal(expandTemplate('x://{+path}', { path: 'a b/c' }), 'x://a%20b/c');
    assert.equal(expandTemplate('x://s{?q,lang}', { q: 'hi there', lang: 'en' }), 'x://s?q=hi%20there&lang=en');
    assert.equal(expandTemplate('x://s{?q,lang}', { q: 'hi' }), 'x://s?q=hi');
    assert.equal(expandTemplate('x://{/seg}', { seg: 'p' }), 'x:///p');
  });
});
