/**
 * What an HTTP transport asks of authorization. The transport knows nothing of OAuth: it asks for
 * a header before each request and reports challenges; the provider does discovery, tokens and
 * the user-facing step.
 */
export interface HttpAuthProvider {
  /** The `Authorization` header value for requests to `serverUrl`, or undefined for none. */
  authorizationHeader(serverUrl: URL): Promise<string | undefined>;
  /**
   * Called when the server answered 401, or 403 with `insufficient_scope`. Resolves true when
   * fresh credentials were obtained and the request should be sent again, false to give up.
   */
  onChallenge(challenge: AuthChallenge): Promise<boolean>;
}

export interface AuthChallenge {
  serverUrl: URL;
  status: 401 | 403;
  /** The raw `WWW-Authenticate` header, if any. */
  wwwAuthenticate: string | null;
}
