#!/usr/bin/env node
// The server of the modern-era (2026-07-28) workloads, on the v2 SDK (@modelcontextprotocol/server):
// the fixture-server.mjs one is hand-written and speaks only the initialize era. One echo tool that
// gives its text back as it came, so both clients check the same thing.
//
//   node v2-fixture-server.mjs stdio   serveStdio, 2026-07-28 only (legacy 'reject')
//   node v2-fixture-server.mjs http    createMcpHandler, 2026-07-28 only (legacy 'reject'), stateless
//                                      Streamable HTTP on 127.0.0.1, port 0; prints "LISTENING <port>"
import http from 'node:http';
import { serveOnLoopback } from './loopback.mjs';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const mode = process.argv[2] ?? 'stdio';

// Stateless HTTP builds a fresh server for every request; the schema is built once, which halves the
// server's CPU per request (measured: about 2 ms to 1 ms), so the figures are more the clients'.
const ECHO_SCHEMA = fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });

function createServer() {
  const server = new McpServer({ name: 'bench-v2-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'Echoes its text', inputSchema: ECHO_SCHEMA }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

if (mode === 'stdio') {
  serveStdio(createServer, { legacy: 'reject' });
} else if (mode === 'http') {
  const handler = createMcpHandler(createServer, { legacy: 'reject' });
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    // The body parsed once here (the documented parsedBody, as express.json() would), so the handler
    // reads no request stream; a body that is not JSON goes on as it came, for the handler to refuse.
    let parsedBody;
    try {
      parsedBody = body.length ? JSON.parse(body.toString('utf8')) : undefined;
    } catch {
      parsedBody = undefined;
    }
    const raw = parsedBody === undefined && body.length && req.method !== 'GET' ? body : undefined;
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: raw }),
      parsedBody === undefined ? undefined : { parsedBody },
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return void res.end();
    // JSON replies and short SSE streams alike: the whole body, then the end.
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
  serveOnLoopback(server);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
