import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** test/harness/bind-loopback.cjs, the preload that keeps the servers the tests start on 127.0.0.1. */
const PRELOAD = path.join(__dirname, '..', 'harness', 'bind-loopback.cjs');

// Each listen() form; address() is read right after listen() returns, as a listen without host allows.
const SCRIPT = `
const net = require('node:net');
const http = require('node:http');
const [ipc] = process.argv.slice(1);
const seen = {};
const servers = [];
const at = (name, server, ...args) => { servers.push(server); server.listen(...args); seen[name] = server.address(); };
at('port', net.createServer(), 0);
at('options', net.createServer(), { port: 0 });
at('any IPv4', net.createServer(), 0, '0.0.0.0');
at('any IPv6, backlog', net.createServer(), 0, '::', 5);
at('callback only', http.createServer(), () => {});
at('port, backlog, callback', net.createServer(), 0, 5, () => {});
at('ipc', net.createServer(), ipc);
const named = net.createServer();
servers.push(named);
named.listen(0, 'localhost', () => {
  seen['named host'] = named.address().address;
  console.log(JSON.stringify(seen));
  for (const s of servers) s.close();
});
`;

describe('test/harness/bind-loopback.cjs', function () {
  it('turns a listen on every interface into one on 127.0.0.1, and leaves named hosts and IPC paths alone', function () {
    assert.ok(fs.existsSync(PRELOAD), 'the repository carries its loopback preload');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-loopback-'));
    try {
      const ipc = path.join(dir, 'server.sock');
      const out = execFileSync(process.execPath, ['--require', PRELOAD, '-e', SCRIPT, ipc], { encoding: 'utf8', timeout: 20_000 });
      const seen = JSON.parse(out) as Record<string, { address: string; port: number } | string | null>;
      for (const name of ['port', 'options', 'any IPv4', 'any IPv6, backlog', 'callback only', 'port, backlog, callback']) {
        const address = seen[name];
        assert.ok(address && typeof address === 'object', `${name}: address() right after listen() is ${JSON.stringify(address)}`);
        assert.equal(address.address, '127.0.0.1', name);
        assert.ok(address.port > 0, name);
      }
      assert.equal(seen.ipc, ipc);
      assert.equal(seen['named host'], '127.0.0.1');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
