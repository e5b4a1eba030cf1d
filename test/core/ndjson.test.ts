import { strict as assert } from 'node:assert';
import { PassThrough } from 'node:stream';
import { NdjsonMessageReader, NdjsonMessageWriter } from '../../src/core';

function harness(maxLineBytes?: number) {
  const stream = new PassThrough();
  const reader = new NdjsonMessageReader(stream, maxLineBytes);
  const messages: unknown[] = [];
  const errors: Error[] = [];
  reader.onError((e) => errors.push(e));
  reader.listen((m) => messages.push(m));
  return { stream, reader, messages, errors };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('NdjsonMessageReader', () => {
  it('reads one message per line', async () => {
    const h = harness();
    h.stream.write('{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","method":"b"}\n');
    await tick();
    assert.deepEqual(h.messages, [
      { jsonrpc: '2.0', method: 'a' },
      { jsonrpc: '2.0', method: 'b' },
    ]);
  });

  it('joins chunks split anywhere, byte by byte, UTF-8 sequences included', async () => {
    const h = harness();
    const text = '{"jsonrpc":"2.0","method":"x","params":{"s":"é✓😀中"}}\n';
    for (const byte of Buffer.from(text + text, 'utf8')) h.stream.write(Buffer.from([byte]));
    await tick();
    assert.equal(h.messages.length, 2);
    assert.deepEqual((h.messages[1] as { params: { s: string } }).params.s, 'é✓😀中');
    assert.deepEqual(h.errors, []);
  });

  it('accepts \\r\\n and ignores blank lines', async () => {
    const h = harness();
    h.stream.write('\n\r\n  \n{"jsonrpc":"2.0","method":"a"}\r\n\n');
    await tick();
    assert.deepEqual(h.messages, [{ jsonrpc: '2.0', method: 'a' }]);
    assert.deepEqual(h.errors, []);
  });

  it('holds a line without newline until it completes', async () => {
    const h = harness();
    h.stream.write('{"jsonrpc":"2.0",');
    await tick();
    assert.equal(h.messages.length, 0);
    h.stream.write('"method":"late"}\n');
    await tick();
    assert.deepEqual(h.messages, [{ jsonrpc: '2.0', method: 'late' }]);
  });

  it('reports a line that is not JSON as -32700 and reads on', async () => {
    const h = harness();
    h.stream.write('hello\n{"jsonrpc":"2.0","method":"after"}\n');
    await tick();
    assert.equal(h.errors.length, 1);
    assert.equal((h.errors[0] as unknown as { code: number }).code, -32700);
    assert.match(h.errors[0].message, /Not JSON.*hello/);
    assert.deepEqual(h.messages, [{ jsonrpc: '2.0', method: 'after' }]);
  });

  it('drops a line over the limit, in pieces or whole, and reads the next one', async () => {
    const h = harness(64);
    h.stream.write(`{"jsonrpc":"2.0","method":"${'x'.repeat(40)}`);
    h.stream.write(`${'y'.repeat(40)}"}\n{"jsonrpc":"2.0","method":"ok"}\n`);
    h.stream.write(`{"jsonrpc":"2.0","method":"${'z'.repeat(100)}"}\n{"jsonrpc":"2.0","method":"ok2"}\n`);
    await tick();
    assert.equal(h.errors.length, 2);
    assert.match(h.errors[0].message, /exceeds the limit of 64 bytes/);
    assert.deepEqual(h.messages, [
      { jsonrpc: '2.0', method: 'ok' },
      { jsonrpc: '2.0', method: 'ok2' },
    ]);
  });

  it('closes when the stream ends', async () => {
    const h = harness();
    let closed = false;
    h.reader.onClose(() => (closed = true));
    h.stream.end();
    h.stream.resume();
    await tick();
    assert.ok(closed);
  });
});

describe('NdjsonMessageWriter', () => {
  it('writes one compact JSON line per message, in order', async () => {
    const stream = new PassThrough();
    const writer = new NdjsonMessageWriter(stream);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    await Promise.all([
      writer.write({ jsonrpc: '2.0', method: 'a', params: { text: 'line\nbreak' } } as never),
      writer.write({ jsonrpc: '2.0', id: 1, result: {} } as never),
    ]);
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    assert.deepEqual(lines, [
      '{"jsonrpc":"2.0","method":"a","params":{"text":"line\\nbreak"}}',
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '',
    ]);
  });

  it('rejects writes after the stream ended', async () => {
    const stream = new PassThrough();
    const writer = new NdjsonMessageWriter(stream);
    writer.end();
    await assert.rejects(writer.write({ jsonrpc: '2.0', method: 'a' } as never), /closed/);
  });

  it('rejects, and does not throw, a message JSON cannot write; later messages still go out', async () => {
    const stream = new PassThrough();
    const writer = new NdjsonMessageWriter(stream);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    let written: Promise<void> | undefined;
    assert.doesNotThrow(() => (written = writer.write({ jsonrpc: '2.0', method: 'a', params: { n: 1n } } as never)));
    await assert.rejects(written!, /BigInt/);
    await writer.write({ jsonrpc: '2.0', method: 'b' } as never);
    assert.equal(Buffer.concat(chunks).toString('utf8'), '{"jsonrpc":"2.0","method":"b"}\n');
  });
});
