// The entry of dist/auth.js. OAuth (discovery, client registration, tokens, the browser sign-in)
// is needed only by HTTP servers, so dist/extension.js requires this bundle when the first HTTP
// server asks for a header, not at activation (see LazyOAuth in ../host.ts).
import type * as vscode from 'vscode';
import { OAuthProvider } from '../../core/auth/oauthProvider';
import { BrowserUserAgent } from './browserUserAgent';

export function createOAuthProvider(server: string, store: vscode.SecretStorage, log: (message: string) => void): OAuthProvider {
  return new OAuthProvider({
    grant: { type: 'authorization_code', userAgent: new BrowserUserAgent(server) },
    store,
    clientName: 'MCP Host for VS Code',
    log,
  });
}
