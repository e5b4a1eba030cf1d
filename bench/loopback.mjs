// The HTTP side both benchmark servers share (fixture-server.mjs, v2-fixture-server.mjs): listen on
// 127.0.0.1 at a free port, say "LISTENING <port>" for startHttpFixture, keep connections alive as the
// clients do, and exit when the parent closes stdin.
export function serveOnLoopback(server) {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${server.address().port}\n`));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}
