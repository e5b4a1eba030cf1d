#!/usr/bin/env node
// The one server program every benchmark talks to, whichever client is measured. Deliberately
// minimal (no SDK, no validation) so the figures are the clients' and not the server's.
//
//   node fixture-server.mjs stdio   MCP over newline-delimited JSON on stdin/stdout
//   node fixture-server.mjs http    MCP over Streamable HTTP (JSON replies, no GET stream) on
//                                   127.0.0.1, port 0; prints "LISTENING <port>" on stdout
//   node fixture-server.mjs echo    no MCP at all: every line read is written back as it is
//   node fixture-server.mjs flood   stdio MCP that also floods notifications (for the soak):
//                                   a log message and, when asked, progress before every answer,
//                                   and a log message on a timer; and three more tools:
//                                   burst {count} (count log messages and progress notifications,
//                                   then the answer), hold (progress at once, then no answer until
//                                   notifications/cancelled names it) and held (how many are held)
import http from 'node:http';
import { serveOnLoopback } from './loopback.mjs';

const mode = process.argv[2] ?? 'stdio';
const BLOB_BYTES = 10 * 1024 * 1024;
let textResource;
let blobResource;

const ECHO_TOOL = {
  name: 'echo',
  description: 'Echoes its text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
};
const SOAK_TOOLS = [
  {
    name: 'burst',
    description: 'Sends count log messages and progress notifications, then echoes its text',
    inputSchema: { type: 'object', properties: { count: { type: 'integer' }, text: { type: 'string' } } },
  },
  { name: 'hold', description: 'Answers only by being cancelled', inputSchema: { type: 'object' } },
  { name: 'held', description: 'How many hold calls wait for their cancellation', inputSchema: { type: 'object' } },
];

function answer(msg) {
  switch (msg.method) {
    case 'initialize':
      return {
        protocolVersion: msg.params?.protocolVersion ?? '2025-11-25',
        capabilities: { tools: {}, resources: {}, logging: {} },
        serverInfo: { name: 'bench-fixture', version: '1.0.0' },
      };
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: mode === 'flood' ? [ECHO_TOOL, ...SOAK_TOOLS] : [ECHO_TOOL] };
    case 'tools/call':
      return { content: [{ type: 'text', text: String(msg.params?.arguments?.text ?? '') }] };
    case 'resources/read': {
      const uri = msg.params?.uri;
      if (uri === 'bench://text') {
        textResource ??= 'The quick brown fox jumps over the lazy dog.\n'.repeat(Math.ceil(BLOB_BYTES / 45)).slice(0, BLOB_BYTES);
        return { contents: [{ uri, mimeType: 'text/plain', text: textResource }] };
      }
      if (uri === 'bench://blob') {
        if (!blobResource) {
          const bytes = Buffer.alloc(BLOB_BYTES);
          for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
          blobResource = bytes.toString('base64');
        }
        return { contents: [{ uri, mimeType: 'application/octet-stream', blob: blobResource }] };
      }
      return undefined;
    }
    case 'logging/setLevel':
      return {};
    default:
      return undefined;
  }
}

/** The reply to one message, or undefined for notifications and answers. */
function reply(msg) {
  if (msg.id === undefined || msg.id === null || typeof msg.method !== 'string') return undefined;
  const result = answer(msg);
  if (result === undefined) return { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Unknown method ${msg.method}` } };
  return { jsonrpc: '2.0', id: msg.id, result };
}

/** Splits stdin into lines, whatever the chunking. */
function onLines(handle) {
  let partial = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop();
    for (const line of lines) if (line) handle(line);
  });
  process.stdin.on('end', () => process.exit(0));
}

if (mode === 'echo') {
  // Raw bytes through, line for line: the physical floor of a round trip through a pipe.
  process.stdin.on('data', (chunk) => process.stdout.write(chunk));
  process.stdin.on('end', () => process.exit(0));
} else if (mode === 'stdio' || mode === 'flood') {
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  let logs = 0;
  /** The ids of hold calls, which wait for notifications/cancelled. */
  const held = new Set();
  const log = (level, data) => send({ jsonrpc: '2.0', method: 'notifications/message', params: { level, data } });
  const progress = (progressToken, n, total) =>
    progressToken !== undefined &&
    send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: n, total } });
  /** The flood's extras; true when the message is dealt with. */
  const floodCall = (msg) => {
    if (msg.method === 'notifications/cancelled') {
      held.delete(msg.params?.requestId);
      return true;
    }
    if (msg.method !== 'tools/call') return false;
    const progressToken = msg.params?._meta?.progressToken;
    const args = msg.params?.arguments ?? {};
    switch (msg.params?.name) {
      case 'hold':
        held.add(msg.id);
        progress(progressToken, 0, 1);
        return true;
      case 'held':
        send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: String(held.size) }] } });
        return true;
      case 'burst':
        for (let n = 1; n <= args.count; n++) {
          log('info', `burst ${msg.id} ${n}`);
          progress(progressToken, n, args.count);
        }
        return false;
      default:
        log('info', `call ${msg.id}`);
        progress(progressToken, 1, 1);
        return false;
    }
  };
  if (mode === 'flood') {
    const timer = setInterval(() => log('debug', `tick ${++logs}`), 1);
    timer.unref();
  }
  onLines((line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    if (mode === 'flood' && floodCall(msg)) return;
    const out = reply(msg);
    if (out) send(out);
  });
} else if (mode === 'http') {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      // No GET stream and no session to delete: server messages come only in replies.
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let msg;
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res
          .writeHead(400, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
        return;
      }
      const out = reply(msg);
      if (!out) {
        res.writeHead(202).end();
        return;
      }
      const body = JSON.stringify(out);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
    });
  });
  serveOnLoopback(server);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
