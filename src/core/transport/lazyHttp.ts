import type * as HttpModule from './http';
import type { HttpServerParams } from './httpRequest';
import type { Transport } from './transport';

/**
 * The HTTP transports (Streamable HTTP and the older HTTP+SSE), required when the first HTTP server
 * starts: the editor's bundle loads them from dist/http.js then (esbuild.js), so a window with stdio
 * servers only never does.
 */
export function httpTransport(params: HttpServerParams): Transport {
  return new (require('./http') as typeof HttpModule).HttpTransport(params);
}
