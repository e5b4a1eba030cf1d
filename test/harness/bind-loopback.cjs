// A preload (`node --require test/harness/bind-loopback.cjs`) for servers the tests start but do not
// configure: server-everything over HTTP and the conformance suite's mock servers. A TCP listen() on
// every interface (no host, '0.0.0.0' or '::') is made a listen on 127.0.0.1, so nothing a test starts
// is reachable from another machine. Listens on a named host or an IPC path are left alone.
'use strict';
const dns = require('node:dns');
const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const EVERY_INTERFACE = new Set([undefined, null, '', '0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']);
const isPort = (value) => typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));

/** listen()'s arguments with the host set to loopback where they would listen on every interface. */
function onLoopback(args) {
  const [first, second] = args;
  // listen(), listen(callback)
  if (first === undefined || typeof first === 'function') return [0, LOOPBACK, ...args.slice(first === undefined ? 1 : 0)];
  // listen(port[, host][, backlog][, callback])
  if (isPort(first)) {
    if (typeof second === 'string' || second === null || second === undefined)
      return EVERY_INTERFACE.has(second) ? [first, LOOPBACK, ...args.slice(2)] : args;
    return [first, LOOPBACK, ...args.slice(1)];
  }
  // listen(options[, callback]); not a handle ({ fd }, a server or socket) nor an IPC path
  if (
    typeof first === 'object' &&
    !('fd' in first) &&
    !('_handle' in first) &&
    first.path === undefined &&
    EVERY_INTERFACE.has(first.host)
  ) {
    return [{ ...first, host: LOOPBACK }, ...args.slice(1)];
  }
  return args;
}

// With a host, net.Server#listen() asks dns.lookup() for its address, which answers on a later tick even
// for an IP literal, so server.address() would be null right after listen() returns. While listen() runs,
// the literal this preload put in is answered at once, as a listen without host would be.
const lookup = dns.lookup;
let inListen = false;
dns.lookup = function (hostname, options, callback) {
  if (inListen && hostname === LOOPBACK) {
    const done = typeof options === 'function' ? options : callback;
    const all = typeof options === 'object' && options !== null && options.all;
    return all ? done(null, [{ address: LOOPBACK, family: 4 }]) : done(null, LOOPBACK, 4);
  }
  return lookup.apply(this, arguments);
};

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const outer = inListen;
  inListen = true;
  try {
    return listen.apply(this, onLoopback(args));
  } finally {
    inListen = outer;
  }
};
