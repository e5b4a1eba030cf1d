import * as http from 'node:http';
import * as vscode from 'vscode';
import type { OAuthUserAgent } from '../../core';
import { forDisplay, fromTemplate, type Redact } from '../../core/render/shownText';
import { askModal } from '../window/notifications';

const CALLBACK_PATH = '/callback';
const WAIT_MS = 5 * 60_000;

/**
 * The authorization step in the person's browser: the URL is opened with `openExternal`, and the
 * redirect comes back to a loopback listener that exists only while a sign-in is under way.
 */
export class BrowserUserAgent implements OAuthUserAgent {
  readonly redirectUri: string;

  constructor(
    private readonly server: string,
    private readonly redact: Redact,
    port = 33418,
  ) {
    this.redirectUri = `http://127.0.0.1:${port}${CALLBACK_PATH}`;
  }

  async authorize(authorizationUrl: URL, signal?: AbortSignal): Promise<URLSearchParams> {
    const signIn = vscode.l10n.t('Sign In');
    const pick = await askModal(
      'info',
      fromTemplate(
        vscode.l10n.t('The MCP server "{0}" needs you to sign in at {1}.'),
        forDisplay(this.server, this.redact),
        forDisplay(authorizationUrl.host, this.redact),
      ),
      fromTemplate(
        vscode.l10n.t(
          'Your browser opens the sign-in page; MCP Host receives the answer on 127.0.0.1 and keeps the tokens in the secret storage.',
        ),
      ),
      signIn,
    );
    if (pick !== signIn) throw new Error(vscode.l10n.t('sign-in to {0} was cancelled', authorizationUrl.host));
    const redirect = new URL(this.redirectUri);
    return new Promise<URLSearchParams>((resolve, reject) => {
      const listener = http.createServer((req, res) => {
        const url = new URL(req.url ?? '/', this.redirectUri);
        if (url.pathname !== CALLBACK_PATH) {
          res.writeHead(404).end();
          return;
        }
        const failed = url.searchParams.get('error');
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        const text = failed
          ? vscode.l10n.t('Sign-in failed. You can close this tab.')
          : vscode.l10n.t('Signed in. You can close this tab and return to VS Code.');
        res.end(`<!doctype html><meta charset="utf-8"><title>MCP Host</title><p>${text}</p>`);
        finish(() => resolve(url.searchParams));
      });
      const timer = setTimeout(
        () => finish(() => reject(new Error(vscode.l10n.t('no answer from the browser within 5 minutes')))),
        WAIT_MS,
      );
      const onAbort = () => finish(() => reject(new Error(vscode.l10n.t('sign-in cancelled'))));
      signal?.addEventListener('abort', onAbort, { once: true });
      let done = false;
      const finish = (settle: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        listener.close();
        settle();
      };
      listener.once('error', (e) =>
        finish(() => reject(new Error(vscode.l10n.t('cannot listen on {0} for the sign-in answer: {1}', redirect.host, e.message)))),
      );
      listener.listen(Number(redirect.port), '127.0.0.1', () => {
        void vscode.env.openExternal(vscode.Uri.parse(authorizationUrl.toString(), true)).then((opened) => {
          if (!opened) finish(() => reject(new Error(vscode.l10n.t('the browser could not be opened'))));
        });
      });
    });
  }
}
