// jsonc-parser as a module of our own, so the editor's bundle can leave it out and load it later (./jsonc.ts, esbuild.js).
export { findNodeAtLocation, parse, parseTree, printParseErrorCode, visit } from 'jsonc-parser';
