import type * as JsoncParser from './jsoncParser';

/**
 * jsonc-parser, required on first use: reading JSON with comments happens on demand (importing
 * servers, a tool's arguments edited as JSON, the names in a restricted workspace's settings), never
 * while the extension activates, so the editor's bundle loads it from dist/jsonc.js then (esbuild.js).
 */
export function jsonc(): typeof JsoncParser {
  return require('./jsoncParser') as typeof JsoncParser;
}
