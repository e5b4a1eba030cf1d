// The entry of dist/auth.js. OAuth (discovery, client registration, tokens, the browser sign-in)
// is needed only by HTTP servers, so dist/extension.js requires this bundle when the first HTTP
// server asks for a header, not at activation (see LazyOAuth in ../host/host.ts).
import type * as vscode from 'vscode';
import { OAuthProvider } from '../../core/auth/oauthProvider';
import type { Redact } from '../../core/render/shownText';
import { BrowserUserAgent } from './browserUserAgent';

/** `redact`: the host's, for the sign-in question (the authorization server's host is the server's to name). */
export function createOAuthProvider(
  server: string,
  store: vscode.SecretStorage,
  log: (message: string) => void,
  redact: Redact,
): OAuthProvider {
  return new OAuthProvider({
    grant: { type: 'authorization_code', userAgent: new BrowserUserAgent(server, redact) },
    store,
    clientName: 'MCP Host for VS Code',
    log,
  });
}
