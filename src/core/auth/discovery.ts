import * as oauth from 'oauth4webapi';
import type { BearerChallenge } from './challenge';
import { OAuthFlowError } from './errors';

/** What discovery found: where to get tokens, and for which resource. */
export interface AuthorizationTarget {
  /** The resource indicator (RFC 8707) sent with every authorization and token request. */
  resource: string;
  /** Authorization-server metadata; synthesized from the 2025-03-26 defaults when the server has none. */
  as: oauth.AuthorizationServer;
  /** `scopes_supported` of the protected-resource metadata. */
  resourceScopes?: string[];
  /** How the authorization server was found (the 2025-03-26 conventions skip some checks). */
  source: 'protected-resource-metadata' | 'legacy-metadata' | 'legacy-defaults';
}

export interface DiscoveryContext {
  fetch: typeof fetch;
  /** Whether a plain-http URL may be used (loopback only, unless the host says otherwise). */
  allowHttp(url: URL): boolean;
  log(message: string): void;
  signal?: AbortSignal;
}

/**
 * Finds the authorization server of an MCP server, in the order of the 2025-11-25 authorization
 * spec: protected-resource metadata (RFC 9728) from the challenge's `resource_metadata`, else the
 * path-aware then the root well-known location; then that server's metadata (RFC 8414 and OpenID
 * locations). Without protected-resource metadata, the 2025-03-26 conventions: metadata at the
 * MCP server's origin, else `/authorize`, `/token`, `/register` there.
 */
export async function discoverAuthorization(
  serverUrl: URL,
  challenge: BearerChallenge | undefined,
  ctx: DiscoveryContext,
): Promise<AuthorizationTarget> {
  const prm = await fetchResourceMetadata(serverUrl, challenge?.resourceMetadata, ctx);
  if (prm) {
    if (!resourceMatches(prm.resource, serverUrl)) {
      throw new OAuthFlowError(
        `The protected-resource metadata names the resource ${prm.resource}, which does not cover ${serverUrl.href}; not authorizing`,
      );
    }
    const issuer = prm.authorization_servers?.[0];
    if (!issuer) throw new OAuthFlowError(`The protected-resource metadata of ${serverUrl.href} names no authorization server`);
    const as = await fetchAuthorizationServerMetadata(new URL(issuer), ctx);
    if (!as) throw new OAuthFlowError(`No authorization-server metadata found for ${issuer}`);
    return { resource: prm.resource, as, resourceScopes: prm.scopes_supported, source: 'protected-resource-metadata' };
  }
  return discoverLegacy(serverUrl, ctx);
}

/** RFC 9728 §3.3 and the MCP spec: the metadata's resource must be the server URL or a path prefix of it, on the same origin. */
export function resourceMatches(resource: string, serverUrl: URL): boolean {
  let r: URL;
  try {
    r = new URL(resource);
  } catch {
    return false;
  }
  if (r.origin !== serverUrl.origin) return false;
  const prefix = r.pathname.endsWith('/') ? r.pathname : `${r.pathname}/`;
  const path = serverUrl.pathname.endsWith('/') ? serverUrl.pathname : `${serverUrl.pathname}/`;
  return path.startsWith(prefix);
}

/** The server URL as a resource indicator: absolute, no fragment. */
export function canonicalResource(serverUrl: URL): string {
  const u = new URL(serverUrl.href);
  u.hash = '';
  return u.href;
}

async function fetchResourceMetadata(
  serverUrl: URL,
  fromChallenge: string | undefined,
  ctx: DiscoveryContext,
): Promise<oauth.ResourceServer | undefined> {
  const candidates: Array<() => Promise<Response>> = [];
  if (fromChallenge) candidates.push(() => get(new URL(fromChallenge, serverUrl), ctx));
  // oauth4webapi inserts the well-known segment before the path (RFC 9728 §3.1); on the origin it gives the root location.
  const pathAware = serverUrl.pathname !== '/' && serverUrl.pathname !== '';
  if (pathAware) candidates.push(() => oauth.resourceDiscoveryRequest(serverUrl, requestOptions(serverUrl, ctx)));
  candidates.push(() => oauth.resourceDiscoveryRequest(new URL(serverUrl.origin), requestOptions(serverUrl, ctx)));

  for (const request of candidates) {
    let response: Response;
    try {
      response = await request();
    } catch (error) {
      // Only an answer ("not here") moves on to the next location; an unreachable server is not a server without metadata.
      throw unreachable('protected-resource metadata', error);
    }
    if (response.status !== 200) {
      ctx.log(`protected-resource metadata not at ${response.url || 'a candidate location'} (HTTP ${response.status})`);
      await response.body?.cancel();
      continue;
    }
    const declared = await declaredValue(response, 'resource');
    if (typeof declared !== 'string') throw new OAuthFlowError(`The protected-resource metadata at ${response.url} has no resource`);
    let expected: URL;
    try {
      expected = new URL(declared);
    } catch {
      throw new OAuthFlowError(`The protected-resource metadata names an invalid resource: ${declared}`);
    }
    // The match against the server URL is checked by the caller; here oauth4webapi validates the document.
    const metadata = await oauth.processResourceDiscoveryResponse(expected, response);
    return { ...metadata, resource: declared };
  }
  return undefined;
}

/**
 * RFC 8414 §3.1 and OpenID Connect Discovery, path-aware: for an issuer with a path, the OAuth
 * location with the path after the well-known segment, the OpenID one likewise, then the OpenID
 * one appended to the path; never the origin's root, which belongs to another issuer.
 */
export function authorizationServerMetadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/+$/, '');
  const origin = issuer.origin;
  if (!path) return [new URL(`${origin}/.well-known/oauth-authorization-server`), new URL(`${origin}/.well-known/openid-configuration`)];
  return [
    new URL(`${origin}/.well-known/oauth-authorization-server${path}`),
    new URL(`${origin}/.well-known/openid-configuration${path}`),
    new URL(`${origin}${path}/.well-known/openid-configuration`),
  ];
}

async function fetchAuthorizationServerMetadata(issuer: URL, ctx: DiscoveryContext): Promise<oauth.AuthorizationServer | undefined> {
  for (const url of authorizationServerMetadataUrls(issuer)) {
    let response: Response;
    try {
      response = await get(url, ctx);
    } catch (error) {
      throw unreachable(`authorization-server metadata at ${url.href}`, error);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    return oauth.processDiscoveryResponse(issuer, response);
  }
  return undefined;
}

async function discoverLegacy(serverUrl: URL, ctx: DiscoveryContext): Promise<AuthorizationTarget> {
  const base = new URL(serverUrl.origin);
  const resource = canonicalResource(serverUrl);
  ctx.log('no protected-resource metadata; using the 2025-03-26 discovery at the server origin');
  let response: Response;
  try {
    response = await oauth.discoveryRequest(base, { ...requestOptions<oauth.DiscoveryRequestOptions>(base, ctx), algorithm: 'oauth2' });
  } catch (error) {
    throw unreachable('authorization-server metadata', error);
  }
  if (response.status === 200) {
    // The 2025-03-26 revision put the metadata at the origin whatever the issuer's path, so the
    // issuer it declares is taken as the one expected rather than compared with the origin.
    const declared = await declaredValue(response, 'issuer');
    const as = await oauth.processDiscoveryResponse(new URL(typeof declared === 'string' ? declared : base.href), response);
    return { resource, as, source: 'legacy-metadata' };
  }
  await response.body?.cancel();
  const as: oauth.AuthorizationServer = {
    issuer: base.href.replace(/\/$/, ''),
    authorization_endpoint: new URL('/authorize', base).href,
    token_endpoint: new URL('/token', base).href,
    registration_endpoint: new URL('/register', base).href,
  };
  return { resource, as, source: 'legacy-defaults' };
}

function get(url: URL, ctx: DiscoveryContext): Promise<Response> {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && ctx.allowHttp(url))) {
    return Promise.reject(new OAuthFlowError(`Refusing to fetch ${url.href}: authorization metadata must come over https`));
  }
  return ctx.fetch(url.href, { headers: { accept: 'application/json' }, redirect: 'manual', signal: ctx.signal });
}

/** Options shared by oauth4webapi requests: our fetch, our signal, http only where allowed. */
export function requestOptions<T = oauth.HttpRequestOptions<'GET'>>(
  url: URL,
  ctx: Pick<DiscoveryContext, 'fetch' | 'allowHttp' | 'signal'>,
): T {
  const options = {
    signal: ctx.signal,
    [oauth.customFetch]: (input: string, init: oauth.CustomFetchOptions<'GET' | 'POST', unknown>) => ctx.fetch(input, init as RequestInit),
    // oauth4webapi insists on https; plain http is let through only where the host allows it (loopback by default).
    [oauth.allowInsecureRequests]: url.protocol === 'http:' && ctx.allowHttp(url),
  };
  return options as T;
}

async function declaredValue(response: Response, key: string): Promise<unknown> {
  try {
    const json = (await response.clone().json()) as Record<string, unknown>;
    return json?.[key];
  } catch {
    return undefined;
  }
}

function unreachable(what: string, error: unknown): OAuthFlowError {
  if (error instanceof OAuthFlowError) return error;
  const e = error as { message?: string; cause?: { message?: string } };
  return new OAuthFlowError(`Could not fetch the ${what}: ${e?.cause?.message ?? e?.message ?? String(error)}`);
}
