import { strict as assert } from 'node:assert';
import type { TextContent } from '../../src/core';
import { closeAll, connect } from '../helpers/servers';

/**
 * A stdio server that speaks 2026-07-28 and still sends a request of its own (which the revision
 * forbids: it must ask inside an input_required result): on tools/call it asks us for sampling and
 * answers the call with what it got back.
 */
const ASKING_SERVER = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const write = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let call;
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'server/discover') return write({ jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'asking', version: '1' } } });
  if (m.method === 'tools/list') return write({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'ask', inputSchema: { type: 'object' } }] } });
  if (m.method === 'tools/call') {
    call = m.id;
    return write({ jsonrpc: '2.0', id: 'server-asks', method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } });
  }
  if (m.id === 'server-asks') return write({ jsonrpc: '2.0', id: call, result: { content: [{ type: 'text', text: JSON.stringify(m.error ?? m.result) }] } });
});
`;

describe('a 2026-07-28 server over stdio that sends a request of its own', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  it('gets -32601 saying why, and no handler (no consent, no model) is asked', async () => {
    let sampled = 0;
    const t = await connect(
      { command: process.execPath, args: ['-e', ASKING_SERVER] },
      {
        protocol: 'auto',
        handlers: {
          createMessage: async () => {
            sampled++;
            return { role: 'assistant', content: { type: 'text', text: 'no' }, model: 'm' };
          },
        },
      },
    );
    assert.equal(t.client.era, 'modern');
    const { result } = await t.client.callTool('ask', {});
    const answer = JSON.parse((result.content[0] as TextContent).text) as { code: number; message: string };
    assert.equal(answer.code, -32601);
    assert.match(answer.message, /sampling\/createMessage refused: in protocol 2026-07-28 servers send no requests/);
    assert.equal(sampled, 0);
    assert.ok(t.logs.some((l) => l.level === 'warning' && /refused the server's request sampling\/createMessage/.test(l.message)));
  });
});
