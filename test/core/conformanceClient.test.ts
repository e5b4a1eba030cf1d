import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { runConformance } from '../../src/cli/conformance';

/**
 * `mcp-host conformance` against a small MCP server on loopback, for what the client must do in a
 * scenario of the official suite; the suite itself runs in conformance.test.ts.
 */

/** A JSON Schema 2020-12 inputSchema with the keywords a careless client would drop ($schema, $defs, $anchor, composition, conditionals). */
const RICH_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' } } } },
  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' }, phone: { type: 'string' }, email: { type: 'string' } },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { required: ['phone'] },
  then: { properties: { email: false } },
  else: { required: ['email'] },
  additionalProperties: false,
};

interface ToolsCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Streamable HTTP with JSON replies, 2025-11-25: initialize, tools/list, tools/call; records every tools/call. */
async function startServer(tools: unknown[]): Promise<{ url: string; calls: ToolsCall[]; close(): Promise<void> }> {
  const calls: ToolsCall[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const message = JSON.parse(body) as { id?: number; method: string; params?: Record<string, unknown> };
      if (message.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      switch (message.method) {
        case 'initialize':
          return reply({
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'schema-fixture', version: '1.0.0' },
          });
        case 'tools/list':
          return reply({ tools });
        case 'tools/call':
          calls.push(message.params as unknown as ToolsCall);
          return reply({ content: [{ type: 'text', text: 'ok' }] });
        default:
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    calls,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('conformance client: what a scenario asks of mcp-host conformance', () => {
  it('json-schema-2020-12-preservation: sends the tool schema back exactly as the server gave it, every keyword kept', async () => {
    const server = await startServer([
      { name: 'json_schema_2020_12_tool', description: 'Tool with JSON Schema 2020-12 features', inputSchema: RICH_SCHEMA },
      {
        name: 'json_schema_echo',
        description: 'Echoes a schema',
        inputSchema: { type: 'object', properties: { schema: { type: 'object' } }, required: ['schema'] },
      },
    ]);
    try {
      const out = new PassThrough();
      const err = new PassThrough();
      let log = '';
      err.on('data', (chunk: Buffer) => (log += chunk.toString()));
      out.resume();
      const env = { MCP_CONFORMANCE_SCENARIO: 'json-schema-2020-12-preservation', MCP_CONFORMANCE_PROTOCOL_VERSION: '2025-11-25' };
      assert.equal(await runConformance([server.url], env, out, err), 0, log);
      const echo = server.calls.find((call) => call.name === 'json_schema_echo');
      assert.ok(echo, `the echo tool was not called:\n${log}`);
      assert.deepEqual(echo.arguments, { schema: RICH_SCHEMA });
      assert.ok(
        server.calls.some((call) => call.name === 'json_schema_2020_12_tool'),
        'the focal tool is called too, as in any scenario',
      );
    } finally {
      await server.close();
    }
  });
});
