#!/usr/bin/env node
// The least a Streamable HTTP call can cost with a given client: an endpoint on 127.0.0.1 that
// answers initialize, tools/list (one read-only echo) and every tools/call at once with a fixed JSON
// body (no MCP server behind it).
// Prints `listening <port>` on stdout. bench/gateway.ts puts it beside the gateway and the direct paths.
import { createServer } from 'node:http';

const ECHO = {
  name: 'echo',
  description: 'Echoes text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};

const http = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (message.id === undefined) return void res.writeHead(202).end();
    const result =
      message.method === 'initialize'
        ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '1.0.0' } }
        : message.method === 'tools/list'
          ? { tools: [ECHO] }
          : { content: [{ type: 'text', text: String(message.params?.arguments?.text ?? '') }] };
    const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'floor' }).end(body);
  });
});
http.keepAliveTimeout = 60_000;
http.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${http.address().port}\n`));
