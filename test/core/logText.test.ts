import { strict as assert } from 'node:assert';
import { oneLine } from '../../src/core';

// Everything that starts a new line, or rewrites one, in an editor, a terminal or a log viewer.
const breakers = [
  '\n',
  '\r',
  '\r\n',
  '\u000b',
  '\u000c',
  '\u001b[2K',
  '\u001b]8;;x\u0007',
  '\u0085',
  '\u009b2K',
  '\u2028',
  '\u2029',
  '\u0000',
  '\u007f',
  '\u202e',
  '\u2066',
];

describe('oneLine: server text written to the trace and logs', () => {
  it('turns every line break and control character into a visible escape', () => {
    for (const b of breakers) {
      const out = oneLine(`before${b}12:00:00.000 [victim] ← tools/call #1 result`);
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(out, /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/, JSON.stringify(out));
      assert.ok(out.startsWith('before\\') && out.endsWith('[victim] ← tools/call #1 result'), out);
    }
    assert.equal(oneLine('a\nb\r\nc'), 'a\\nb\\r\\nc');
    assert.equal(oneLine('\u001b[31mred'), '\\u001b[31mred');
    assert.equal(oneLine('x\u2028y\u0085z'), 'x\\u2028y\\u0085z');
  });

  it('leaves ordinary text alone, tabs and non-Latin scripts included', () => {
    for (const text of ['plain', 'tab\tseparated', 'héllo wörld ✓ 😀', '中文日志', 'C:\\path\\n-not-a-newline', ''])
      assert.equal(oneLine(text), text);
  });

  it('is stable: escaping twice changes nothing more', () => {
    const once = oneLine(breakers.join('|'));
    assert.equal(oneLine(once), once);
  });

  it('keeps JSON text valid and equal, so verbose bodies stay JSON', () => {
    const value = { [`key${breakers.join('')}`]: breakers.join(''), list: breakers, n: 1 };
    const json = oneLine(JSON.stringify(value, null, 2).split('\n').join(' '));
    assert.deepEqual(JSON.parse(json), value);
    assert.doesNotMatch(json, /[\u2028\u2029\u0085]/);
  });
});
