// What the bundles take from vscode-jsonrpc at run time, without the rest of it. `vscode-jsonrpc/node`
// loads the whole library (MessageConnection, its cancellation, the socket and pipe transports), about
// 40 KB of the extension bundle that nothing calls: McpConnection dispatches messages itself. The
// package's `exports` keeps lib/ private, so the files are named by path; bundle-options.js points
// the `vscode-jsonrpc/node` import here. Type imports still come from the package itself.
'use strict';
const ral = require('../node_modules/vscode-jsonrpc/lib/common/ral.js');
const events = require('../node_modules/vscode-jsonrpc/lib/common/events.js');
const disposable = require('../node_modules/vscode-jsonrpc/lib/common/disposable.js');
const reader = require('../node_modules/vscode-jsonrpc/lib/common/messageReader.js');
const writer = require('../node_modules/vscode-jsonrpc/lib/common/messageWriter.js');
// The typed request and notification definitions of src/core/protocol/methods.ts.
const messages = require('../node_modules/vscode-jsonrpc/lib/common/messages.js');

// Emitter reports a listener that throws through the runtime layer's console; the abstract reader and
// writer need nothing else of it (message buffers and timers belong to the stream readers).
ral.default.install({ console });

module.exports = {
  Emitter: events.Emitter,
  Event: events.Event,
  Disposable: disposable.Disposable,
  AbstractMessageReader: reader.AbstractMessageReader,
  AbstractMessageWriter: writer.AbstractMessageWriter,
  RequestType: messages.RequestType,
  NotificationType: messages.NotificationType,
};
