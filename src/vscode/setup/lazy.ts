/**
 * The entry of dist/setup.js: Add, Import and Remove Server and Edit Server Settings, which the
 * main bundle loads when one of those commands first runs (see ./serverSetup.ts).
 */
export { addServer } from './addServer';
export { editServerSettings, removeServer } from './editServers';
export { importServers } from './importServers';
