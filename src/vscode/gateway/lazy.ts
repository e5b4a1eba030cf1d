// The entry of dist/gateway.js, loaded on the first server shared with VS Code's chat
// (./chatSharing.ts): the SDK's server and Streamable HTTP transport, and the forwarding through the gate.
export { ChatGateway, removeStaleSockets } from '../../core/gateway/sdkGateway';
export { Forwarder } from '../../core/gateway/forward';
export { Catalog } from '../../core/gateway/catalog';
