import * as oauth from 'oauth4webapi';
import { isLoopbackUrl } from '../net/loopback';
import { parseBearerChallenge, type BearerChallenge } from './challenge';
import { chooseAuthMethod, clientAuthentication, type ClientPrivateKey, type TokenEndpointAuthMethod } from './clientAuth';
import { canonicalResource, discoverAuthorization, requestOptions, type AuthorizationTarget, type DiscoveryContext } from './discovery';
import { OAuthFlowError } from './errors';
import type { AuthChallenge, HttpAuthProvider } from './provider';
import { AuthRecords, MemorySecretStore, type SecretStore, type StoredClient, type StoredTokens } from './storage';
import type { OAuthUserAgent } from './userAgent';

/** How tokens are obtained. */
export type OAuthGrant =
  /** A person approves in a browser (the host's user agent); PKCE S256 always. */
  | { type: 'authorization_code'; userAgent: OAuthUserAgent }
  /** A machine client with its own credentials (pre-registered secret or private key). */
  | { type: 'client_credentials' }
  /**
   * Enterprise-managed authorization: the identity provider exchanges the user's ID token for an
   * identity assertion grant (RFC 8693), which the authorization server takes as a JWT bearer
   * grant (RFC 7523).
   */
  | { type: 'identity_assertion'; identityProvider: { tokenEndpoint: string; issuer?: string; clientId?: string; idToken: string } };

/** A client registered out of band, from configuration. */
export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** For private_key_jwt. */
  privateKey?: ClientPrivateKey;
}

export interface OAuthProviderOptions {
  grant: OAuthGrant;
  /** Used first when present. */
  client?: PreRegisteredClient;
  /** A client ID metadata document URL, used as the client id when the server supports it. */
  clientMetadataUrl?: string;
  /** Name sent in dynamic client registration. */
  clientName?: string;
  /** Where tokens and registrations live; memory otherwise. */
  store?: SecretStore;
  fetch?: typeof fetch;
  /** Whether plain http may be used for a URL; loopback hosts only by default. */
  allowHttp?(url: URL): boolean;
  /** Authorization attempts in a row (each within retryWindowMs of the last grant) before giving up: 3. */
  maxAttempts?: number;
  retryWindowMs?: number;
  /** Ask for `offline_access` when the authorization server lists it (refresh tokens): true. */
  requestOfflineAccess?: boolean;
  /** Progress lines for the server's log; never given a token or a secret. */
  log?(message: string): void;
  now?(): number;
}

/** A token within this much of its expiry is refreshed before use. */
const EXPIRY_SKEW_MS = 30_000;

interface ServerAuthState {
  target?: AuthorizationTarget;
  /** The metadata URL the cached target came from, to notice when a challenge points elsewhere. */
  targetFrom?: string;
  inFlight?: Promise<boolean>;
  attempts: number;
  lastGrantAt?: number;
}

/**
 * OAuth 2.1 for MCP servers behind HTTP (the 2025-11-25 authorization spec, with the 2025-03-26
 * fallbacks): discovery, client identity (pre-registered, metadata document, or dynamic
 * registration), PKCE S256 and the resource indicator, scope selection and step-up, refresh.
 */
export class OAuthProvider implements HttpAuthProvider {
  private readonly records: AuthRecords;
  private readonly states = new Map<string, ServerAuthState>();
  private readonly fetchFn: typeof fetch;
  private readonly now: () => number;
  private readonly log: (message: string) => void;

  constructor(private readonly options: OAuthProviderOptions) {
    this.records = new AuthRecords(options.store ?? new MemorySecretStore());
    this.fetchFn = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => undefined);
  }

  async authorizationHeader(serverUrl: URL): Promise<string | undefined> {
    const key = canonicalResource(serverUrl);
    const state = this.states.get(key);
    // A request sent while authorization is under way would only be refused.
    if (state?.inFlight) await state.inFlight.catch(() => undefined);
    let tokens = await this.records.getTokens(key);
    if (!tokens) return undefined;
    if (this.isExpired(tokens) && tokens.refreshToken && state?.target && state.target.as.issuer === tokens.issuer) {
      tokens =
        (await this.refresh(key, state.target, tokens).catch((error: Error) => {
          this.log(`token refresh failed: ${error.message}`);
          return undefined;
        })) ?? tokens;
    }
    return `Bearer ${tokens.accessToken}`;
  }

  onChallenge(challenge: AuthChallenge): Promise<boolean> {
    const key = canonicalResource(challenge.serverUrl);
    const state = this.stateOf(key);
    // Concurrent requests (a POST and the GET stream) challenged together share one flow.
    if (state.inFlight) return state.inFlight;
    const flow = this.handleChallenge(key, challenge, state)
      .catch((error: unknown) => {
        throw describe('Authorization failed', error);
      })
      .finally(() => {
        state.inFlight = undefined;
      });
    state.inFlight = flow;
    return flow;
  }

  /** Forgets the tokens of a server (sign out); the next challenge starts over. */
  async signOut(serverUrl: URL): Promise<void> {
    const key = canonicalResource(serverUrl);
    this.states.delete(key);
    await this.records.deleteTokens(key);
  }

  private async handleChallenge(key: string, challenge: AuthChallenge, state: ServerAuthState): Promise<boolean> {
    const bearer = parseBearerChallenge(challenge.wwwAuthenticate);
    if (challenge.status === 403 && bearer?.error !== 'insufficient_scope') return false;

    // A challenge soon after a grant means the grant did not satisfy the server: count it, and
    // stop after maxAttempts so a server that is never content cannot loop us.
    const now = this.now();
    const window = this.options.retryWindowMs ?? 30_000;
    state.attempts = state.lastGrantAt !== undefined && now - state.lastGrantAt <= window ? state.attempts + 1 : 1;
    const max = this.options.maxAttempts ?? 3;
    if (state.attempts > max) {
      this.log(`giving up: the server still refuses after ${max} authorization attempts`);
      return false;
    }

    const previous = await this.records.getTokens(key);
    // A refused token may mean the server moved to another authorization server (SEP-2352): read its metadata again.
    const tokenRefused = challenge.status === 401 && previous !== undefined;
    const target = await this.discover(challenge.serverUrl, bearer, state, tokenRefused);
    const scopes = this.chooseScopes(target, bearer, previous, challenge.status);

    const isFirstTry = state.attempts === 1;
    // A refresh token is only good at the server that issued it; another one gets nothing of the previous one's.
    const sameIssuer = previous?.issuer === target.as.issuer;
    if (challenge.status === 401 && isFirstTry && sameIssuer && previous?.refreshToken && covers(previous.scopes, scopes)) {
      try {
        await this.refresh(key, target, previous);
        state.lastGrantAt = this.now();
        return true;
      } catch (error) {
        this.log(`token refresh failed, authorizing again: ${(error as Error).message}`);
      }
    }

    await this.obtainTokens(key, target, scopes);
    state.lastGrantAt = this.now();
    return true;
  }

  private stateOf(key: string): ServerAuthState {
    let state = this.states.get(key);
    if (!state) {
      state = { attempts: 0 };
      this.states.set(key, state);
    }
    return state;
  }

  private async discover(
    serverUrl: URL,
    bearer: BearerChallenge | undefined,
    state: ServerAuthState,
    tokenRefused: boolean,
  ): Promise<AuthorizationTarget> {
    const from = bearer?.resourceMetadata ?? '';
    if (state.target && !tokenRefused && (from === '' || from === state.targetFrom)) return state.target;
    const target = await discoverAuthorization(serverUrl, bearer, this.discoveryContext());
    const before = state.target?.as.issuer;
    // Registrations are kept per issuer, so the new server gets a registration of its own.
    if (before !== undefined && before !== target.as.issuer)
      this.log(`the authorization server changed from ${before} to ${target.as.issuer}: authorizing there anew`);
    else if (before === undefined) this.log(`authorization server ${target.as.issuer} (${target.source}), resource ${target.resource}`);
    state.target = target;
    state.targetFrom = from;
    return target;
  }

  /**
   * The 2025-11-25 scope selection: the challenge's scope, else every scope of the resource
   * metadata, else none; a step-up keeps what was already granted. `offline_access` joins when the
   * authorization server offers it, so a refresh token comes back.
   */
  private chooseScopes(
    target: AuthorizationTarget,
    bearer: BearerChallenge | undefined,
    previous: StoredTokens | undefined,
    status: 401 | 403,
  ): string[] {
    const scopes = new Set(bearer?.scopes ?? target.resourceScopes ?? []);
    if (status === 403 && previous) for (const s of previous.scopes) scopes.add(s);
    const offline =
      this.options.grant.type === 'authorization_code' &&
      (this.options.requestOfflineAccess ?? true) &&
      scopes.size > 0 &&
      Array.isArray(target.as.scopes_supported) &&
      target.as.scopes_supported.includes('offline_access');
    if (offline) scopes.add('offline_access');
    return [...scopes];
  }

  private async obtainTokens(key: string, target: AuthorizationTarget, scopes: string[]): Promise<void> {
    const grant = this.options.grant;
    switch (grant.type) {
      case 'authorization_code':
        return this.authorizationCodeGrant(key, target, scopes, grant.userAgent);
      case 'client_credentials':
        return this.clientCredentialsGrant(key, target, scopes);
      case 'identity_assertion':
        return this.identityAssertionGrant(key, target, scopes, grant.identityProvider);
    }
  }

  private async authorizationCodeGrant(
    key: string,
    target: AuthorizationTarget,
    scopes: string[],
    userAgent: OAuthUserAgent,
  ): Promise<void> {
    const { as, resource } = target;
    if (!as.authorization_endpoint) throw new OAuthFlowError(`${as.issuer} has no authorization endpoint`);
    // Servers found through metadata must say they do PKCE with S256; the 2025-03-26 defaults cannot say anything.
    if (target.source !== 'legacy-defaults' && !as.code_challenge_methods_supported?.includes('S256')) {
      throw new OAuthFlowError(`${as.issuer} does not advertise PKCE with S256; refusing to authorize without it`);
    }
    const endpoint = new URL(as.authorization_endpoint);
    if (endpoint.protocol !== 'https:' && !(endpoint.protocol === 'http:' && this.allowHttp(endpoint))) {
      throw new OAuthFlowError(`Refusing to send the user to ${endpoint.origin}: the authorization endpoint must use https`);
    }
    const client = await this.clientFor(target, userAgent.redirectUri);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(endpoint.href);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', client.clientId);
    url.searchParams.set('redirect_uri', userAgent.redirectUri);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);
    url.searchParams.set('resource', resource);
    if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
    this.log(`authorizing at ${as.issuer}${scopes.length ? ` for scope "${scopes.join(' ')}"` : ''}`);

    const callback = await userAgent.authorize(url);
    const oauthClient = toOAuthClient(client);
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(as, oauthClient, callback, state);
    } catch (error) {
      throw describe('The authorization was refused', error);
    }
    const auth = await this.authenticationFor(client, as);
    const response = await oauth.authorizationCodeGrantRequest(as, oauthClient, auth, params, userAgent.redirectUri, verifier, {
      ...this.httpOptions(as.token_endpoint ?? as.issuer),
      additionalParameters: { resource },
    });
    const tokens = await processOrDescribe('The token request failed', () =>
      oauth.processAuthorizationCodeResponse(as, oauthClient, response),
    );
    await this.saveTokens(key, as, tokens, scopes);
  }

  private async clientCredentialsGrant(key: string, target: AuthorizationTarget, scopes: string[]): Promise<void> {
    const { as, resource } = target;
    const configured = this.options.client;
    if (!configured) throw new OAuthFlowError('The client-credentials grant needs a pre-registered client id and secret or key');
    const client: StoredClient = {
      clientId: configured.clientId,
      clientSecret: configured.clientSecret,
      tokenEndpointAuthMethod: configured.tokenEndpointAuthMethod,
    };
    const oauthClient = toOAuthClient(client);
    const parameters: Record<string, string> = { resource };
    if (scopes.length > 0) parameters.scope = scopes.join(' ');
    this.log(`requesting a client-credentials token from ${as.issuer}`);
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      oauthClient,
      await this.authenticationFor(client, as),
      parameters,
      this.httpOptions(as.token_endpoint ?? as.issuer),
    );
    const tokens = await processOrDescribe('The client-credentials token request failed', () =>
      oauth.processClientCredentialsResponse(as, oauthClient, response),
    );
    await this.saveTokens(key, as, tokens, scopes);
  }

  private async identityAssertionGrant(
    key: string,
    target: AuthorizationTarget,
    scopes: string[],
    idp: { tokenEndpoint: string; issuer?: string; clientId?: string; idToken: string },
  ): Promise<void> {
    const { as, resource } = target;
    const configured = this.options.client;
    if (!configured) throw new OAuthFlowError('The identity-assertion grant needs a pre-registered client at the authorization server');
    const idpServer: oauth.AuthorizationServer = {
      issuer: idp.issuer ?? new URL(idp.tokenEndpoint).origin,
      token_endpoint: idp.tokenEndpoint,
    };
    const idpClient: oauth.Client = { client_id: idp.clientId ?? configured.clientId };
    const exchangeParams: Record<string, string> = {
      subject_token: idp.idToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      audience: as.issuer,
      resource,
    };
    if (scopes.length > 0) exchangeParams.scope = scopes.join(' ');
    this.log(`exchanging the identity token at ${idpServer.issuer} for an authorization grant`);
    const exchange = await oauth.genericTokenEndpointRequest(
      idpServer,
      idpClient,
      oauth.None(),
      'urn:ietf:params:oauth:grant-type:token-exchange',
      exchangeParams,
      this.httpOptions(idp.tokenEndpoint),
    );
    // The identity assertion is not an access token: its token_type is N_A (RFC 8693 §2.2.1).
    const assertion = await processOrDescribe('The token exchange at the identity provider failed', () =>
      oauth.processGenericTokenEndpointResponse(idpServer, idpClient, exchange, { recognizedTokenTypes: { n_a: () => undefined } }),
    );
    if (assertion.issued_token_type !== 'urn:ietf:params:oauth:token-type:id-jag') {
      throw new OAuthFlowError(`The identity provider issued ${String(assertion.issued_token_type)}, not an identity assertion grant`);
    }

    const client: StoredClient = {
      clientId: configured.clientId,
      clientSecret: configured.clientSecret,
      tokenEndpointAuthMethod: configured.tokenEndpointAuthMethod,
    };
    const oauthClient = toOAuthClient(client);
    const grantParams: Record<string, string> = { assertion: assertion.access_token, resource };
    if (scopes.length > 0) grantParams.scope = scopes.join(' ');
    const response = await oauth.genericTokenEndpointRequest(
      as,
      oauthClient,
      await this.authenticationFor(client, as),
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      grantParams,
      this.httpOptions(as.token_endpoint ?? as.issuer),
    );
    const tokens = await processOrDescribe('The JWT bearer grant failed', () =>
      oauth.processGenericTokenEndpointResponse(as, oauthClient, response),
    );
    await this.saveTokens(key, as, tokens, scopes);
  }

  private async refresh(key: string, target: AuthorizationTarget, previous: StoredTokens): Promise<StoredTokens> {
    const { as, resource } = target;
    if (!previous.refreshToken) throw new OAuthFlowError('no refresh token');
    const redirectUri = this.options.grant.type === 'authorization_code' ? this.options.grant.userAgent.redirectUri : '';
    const client = await this.clientFor(target, redirectUri);
    const oauthClient = toOAuthClient(client);
    this.log(`refreshing the access token at ${as.issuer}`);
    const response = await oauth.refreshTokenGrantRequest(
      as,
      oauthClient,
      await this.authenticationFor(client, as),
      previous.refreshToken,
      {
        ...this.httpOptions(as.token_endpoint ?? as.issuer),
        additionalParameters: { resource },
      },
    );
    const tokens = await processOrDescribe('The refresh was refused', () => oauth.processRefreshTokenResponse(as, oauthClient, response));
    return this.saveTokens(key, as, tokens, previous.scopes, previous.refreshToken);
  }

  /** Client identity, in order: pre-registered, client ID metadata document, earlier registration, dynamic registration. */
  private async clientFor(target: AuthorizationTarget, redirectUri: string): Promise<StoredClient> {
    const { as } = target;
    const configured = this.options.client;
    if (configured)
      return {
        clientId: configured.clientId,
        clientSecret: configured.clientSecret,
        tokenEndpointAuthMethod: configured.tokenEndpointAuthMethod,
      };
    if (this.options.clientMetadataUrl && as.client_id_metadata_document_supported === true) {
      return { clientId: this.options.clientMetadataUrl, tokenEndpointAuthMethod: 'none' };
    }
    const saved = await this.records.getClient(as.issuer, redirectUri);
    if (saved) return saved;
    if (!as.registration_endpoint) {
      throw new OAuthFlowError(`${as.issuer} offers no dynamic client registration; configure a client id for this server`);
    }
    const supported = as.token_endpoint_auth_methods_supported;
    // A host on the user's machine cannot keep a secret: register as a public client where allowed.
    const method: TokenEndpointAuthMethod =
      !supported || supported.includes('none') ? 'none' : chooseAuthMethod(undefined, true, false, supported);
    this.log(`registering a client with ${as.issuer}`);
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: this.options.clientName ?? 'MCP Host',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
        // MCP 2026-07-28 (SEP-837): an editor on the person's machine, redirected to loopback or its own scheme, is a native application.
        application_type: 'native',
      },
      this.httpOptions(as.registration_endpoint),
    );
    const registered = await processOrDescribe('Dynamic client registration failed', async () =>
      oauth.processDynamicClientRegistrationResponse(await withSecretExpiry(response)),
    );
    const client: StoredClient = {
      clientId: registered.client_id,
      clientSecret: typeof registered.client_secret === 'string' ? registered.client_secret : undefined,
      // RFC 7591 §3.2.1 echoes the registered metadata; a server that leaves the method out registered the one we asked for.
      tokenEndpointAuthMethod: typeof registered.token_endpoint_auth_method === 'string' ? registered.token_endpoint_auth_method : method,
      redirectUris: [redirectUri],
    };
    await this.records.setClient(as.issuer, redirectUri, client);
    return client;
  }

  private authenticationFor(client: StoredClient, as: oauth.AuthorizationServer): Promise<oauth.ClientAuth> {
    const key = this.options.client?.clientId === client.clientId ? this.options.client.privateKey : undefined;
    const method = chooseAuthMethod(client.tokenEndpointAuthMethod, !!client.clientSecret, !!key, as.token_endpoint_auth_methods_supported);
    return clientAuthentication(method, client.clientSecret, key);
  }

  private async saveTokens(
    key: string,
    as: oauth.AuthorizationServer,
    response: oauth.TokenEndpointResponse,
    requested: string[],
    keepRefresh?: string,
  ): Promise<StoredTokens> {
    const tokens: StoredTokens = {
      accessToken: response.access_token,
      tokenType: 'Bearer',
      refreshToken: response.refresh_token ?? keepRefresh,
      expiresAt: typeof response.expires_in === 'number' ? this.now() + response.expires_in * 1000 : undefined,
      scopes: typeof response.scope === 'string' && response.scope.trim() ? response.scope.trim().split(/\s+/) : requested,
      issuer: as.issuer,
    };
    await this.records.setTokens(key, tokens);
    this.log(`access token obtained${tokens.refreshToken ? ' (with refresh token)' : ''}`);
    return tokens;
  }

  private isExpired(tokens: StoredTokens): boolean {
    return tokens.expiresAt !== undefined && tokens.expiresAt - EXPIRY_SKEW_MS <= this.now();
  }

  private discoveryContext(): DiscoveryContext {
    return { fetch: this.fetchFn, allowHttp: (url) => this.allowHttp(url), log: this.log };
  }

  private allowHttp(url: URL): boolean {
    return this.options.allowHttp ? this.options.allowHttp(url) : isLoopbackUrl(url);
  }

  /** oauth4webapi request options for a call to `endpoint`. */
  private httpOptions<T>(endpoint: string): T {
    return requestOptions(new URL(endpoint), this.discoveryContext()) as T;
  }
}

/**
 * RFC 7591 §3.2.1 requires `client_secret_expires_at` with a secret, and oauth4webapi enforces it;
 * servers in the wild (and the conformance suite's) leave it out. Missing, it is read as 0, the
 * RFC's "does not expire", rather than failing the whole registration.
 */
async function withSecretExpiry(response: Response): Promise<Response> {
  if (response.status !== 201) return response;
  let body: Record<string, unknown>;
  try {
    body = (await response.clone().json()) as Record<string, unknown>;
  } catch {
    return response;
  }
  if (typeof body?.client_secret !== 'string' || body.client_secret_expires_at !== undefined) return response;
  const patched = new Response(JSON.stringify({ ...body, client_secret_expires_at: 0 }), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  return patched;
}

function toOAuthClient(client: StoredClient): oauth.Client {
  return {
    client_id: client.clientId,
    ...(client.tokenEndpointAuthMethod ? { token_endpoint_auth_method: client.tokenEndpointAuthMethod } : {}),
  };
}

function covers(granted: string[], wanted: string[]): boolean {
  return wanted.every((s) => granted.includes(s));
}

async function processOrDescribe<T>(what: string, process: () => Promise<T>): Promise<T> {
  try {
    return await process();
  } catch (error) {
    throw describe(what, error);
  }
}

/** An OAuthFlowError with the server's error code and description, and nothing else from the response (which may hold tokens). */
function describe(what: string, error: unknown): OAuthFlowError {
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError) {
    return new OAuthFlowError(`${what}: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`);
  }
  if (error instanceof OAuthFlowError) return error;
  // fetch reports "fetch failed" and keeps the reason (ECONNREFUSED, a timeout) one level down.
  const e = error as { message?: string; cause?: { message?: string } };
  const detail = e?.cause?.message ? `${e.message}: ${e.cause.message}` : (e?.message ?? String(error));
  return new OAuthFlowError(`${what}: ${detail}`);
}
