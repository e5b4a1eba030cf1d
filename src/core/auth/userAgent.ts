import { OAuthFlowError } from './errors';

/**
 * The user-facing step of the authorization-code grant, supplied by the host: send the person to
 * the authorization URL and hand back what arrived at the redirect URI. The editor opens a
 * browser and listens for the callback; the command line follows the redirect itself.
 */
export interface OAuthUserAgent {
  /** Registered with the authorization server; the callback arrives here. */
  readonly redirectUri: string;
  /** Resolves with the query parameters of the callback (`code`, `state`, or `error`). */
  authorize(authorizationUrl: URL, signal?: AbortSignal): Promise<URLSearchParams>;
}

/**
 * For headless use (the CLI, the conformance suite, tests): fetches the authorization URL without
 * following redirects and reads `code` and `state` from the `Location` of the answer. Works with
 * authorization servers that approve without a person, as test servers do.
 */
export class HeadlessRedirectUserAgent implements OAuthUserAgent {
  constructor(
    readonly redirectUri = 'http://127.0.0.1:33418/callback',
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  async authorize(authorizationUrl: URL, signal?: AbortSignal): Promise<URLSearchParams> {
    let response: Response;
    try {
      response = await this.fetchFn(authorizationUrl.href, { redirect: 'manual', signal });
    } catch (error) {
      const e = error as { message?: string; cause?: { message?: string } };
      throw new OAuthFlowError(`Could not reach the authorization endpoint: ${e?.cause?.message ?? e?.message ?? String(error)}`);
    }
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) {
      throw new OAuthFlowError(
        `The authorization endpoint answered HTTP ${response.status} without a redirect; it needs a person at a browser`,
      );
    }
    const target = new URL(location, authorizationUrl);
    const expected = new URL(this.redirectUri);
    if (target.origin !== expected.origin || target.pathname !== expected.pathname) {
      throw new OAuthFlowError(`The authorization endpoint redirected to ${target.origin}${target.pathname}, not to the redirect URI`);
    }
    return target.searchParams;
  }
}
