// The entry of dist/agents.js: Connect an Agent… and Disconnect an Agent…, loaded when one of them first runs
// (./agents.ts): the JSON and TOML editing of the agents' files, and smol-toml, stay out of dist/extension.js.
export { connectAgent, disconnectAgent } from './connectAgent';
