import { createHash, randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small authorization server and protected-resource metadata host on 127.0.0.1, for the OAuth
 * unit tests. It records every request, approves every authorization without a person (redirecting
 * straight back with a code), and checks PKCE for real. Where metadata is served is configurable,
 * so discovery order can be observed.
 */
export interface OAuthFixtureOptions {
  /** Where the protected-resource metadata is served: path-aware, at the root, or not at all. */
  prm?: 'path' | 'root' | 'none';
  /** The issuer's path, e.g. '/tenant1' ('' for the origin). */
  issuerPath?: string;
  /** Where the authorization-server metadata is served. */
  asMetadata?: 'oauth' | 'oidc-inserted' | 'oidc-appended' | 'none';
  /** The `resource` the metadata declares; the MCP URL by default. */
  prmResource?: string;
  prmScopes?: string[];
  scopesSupported?: string[];
  tokenEndpointAuthMethods?: string[];
  registration?: boolean;
  refreshTokens?: boolean;
  expiresIn?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  form?: URLSearchParams;
  json?: Record<string, unknown>;
}

interface IssuedCode {
  challenge: string;
  method: string;
  resource: string | null;
  scope: string | null;
  clientId: string;
}

export class OAuthFixture {
  readonly requests: RecordedRequest[] = [];
  /** The issuer the protected-resource metadata names; set it to another fixture's to move the resource there (SEP-2352). */
  authorizationServer: string | undefined;
  private server: http.Server | undefined;
  private base = '';
  private readonly codes = new Map<string, IssuedCode>();
  private readonly refreshTokens = new Set<string>();
  private issued = 0;

  constructor(private readonly options: OAuthFixtureOptions = {}) {}

  get origin(): string {
    return this.base;
  }
  /** The protected MCP endpoint (nothing answers there: the tests drive the provider directly). */
  get mcpUrl(): URL {
    return new URL(`${this.base}/mcp`);
  }
  get issuer(): string {
    return `${this.base}${this.options.issuerPath ?? ''}`;
  }
  get prmUrl(): string {
    return this.options.prm === 'root'
      ? `${this.base}/.well-known/oauth-protected-resource`
      : `${this.base}/.well-known/oauth-protected-resource/mcp`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** Paths of the GET requests, in order. */
  get getPaths(): string[] {
    return this.requests.filter((r) => r.method === 'GET').map((r) => r.path);
  }
  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    const body = await readBody(req);
    const type = req.headers['content-type'] ?? '';
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers };
    if (type.includes('application/x-www-form-urlencoded')) recorded.form = new URLSearchParams(body);
    if (type.includes('application/json') && body) recorded.json = JSON.parse(body) as Record<string, unknown>;
    this.requests.push(recorded);

    const o = this.options;
    const prefix = o.issuerPath ?? '';
    const route = `${recorded.method} ${url.pathname}`;
    if (recorded.method === 'GET' && url.pathname === new URL(this.prmUrl).pathname && (o.prm ?? 'path') !== 'none') {
      return json(res, 200, {
        resource: o.prmResource ?? this.mcpUrl.href,
        authorization_servers: [this.authorizationServer ?? this.issuer],
        ...(o.prmScopes ? { scopes_supported: o.prmScopes } : {}),
      });
    }
    if (recorded.method === 'GET' && url.pathname === this.metadataPath()) return json(res, 200, this.metadata());
    if (route === `GET ${prefix}/authorize`) return this.authorize(url.searchParams, res);
    if (route === `POST ${prefix}/token`) return this.token(recorded, res);
    if (route === `POST ${prefix}/register` && o.registration !== false) {
      const requested = recorded.json ?? {};
      const method =
        typeof requested.token_endpoint_auth_method === 'string' ? requested.token_endpoint_auth_method : 'client_secret_basic';
      return json(res, 201, {
        ...requested,
        client_id: `dyn-${randomUUID()}`,
        ...(method === 'none' ? {} : { client_secret: 'dyn-secret', client_secret_expires_at: 0 }),
        token_endpoint_auth_method: method,
      });
    }
    json(res, 404, { error: 'not_found' });
  }

  private metadataPath(): string | undefined {
    const p = this.options.issuerPath ?? '';
    switch (this.options.asMetadata ?? 'oauth') {
      case 'oauth':
        return `/.well-known/oauth-authorization-server${p}`;
      case 'oidc-inserted':
        return `/.well-known/openid-configuration${p}`;
      case 'oidc-appended':
        return `${p}/.well-known/openid-configuration`;
      case 'none':
        return undefined;
    }
  }

  private metadata(): Record<string, unknown> {
    const o = this.options;
    return {
      issuer: this.issuer,
      authorization_endpoint: `${this.issuer}/authorize`,
      token_endpoint: `${this.issuer}/token`,
      ...(o.registration === false ? {} : { registration_endpoint: `${this.issuer}/register` }),
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: o.tokenEndpointAuthMethods ?? ['none', 'client_secret_basic', 'client_secret_post'],
      ...(o.scopesSupported ? { scopes_supported: o.scopesSupported } : {}),
    };
  }

  private authorize(q: URLSearchParams, res: http.ServerResponse): void {
    const redirect = new URL(q.get('redirect_uri') ?? '');
    const code = `code-${randomUUID()}`;
    this.codes.set(code, {
      challenge: q.get('code_challenge') ?? '',
      method: q.get('code_challenge_method') ?? '',
      resource: q.get('resource'),
      scope: q.get('scope'),
      clientId: q.get('client_id') ?? '',
    });
    redirect.searchParams.set('code', code);
    const state = q.get('state');
    if (state) redirect.searchParams.set('state', state);
    res.writeHead(302, { location: redirect.href }).end();
  }

  private token(req: RecordedRequest, res: http.ServerResponse): void {
    const form = req.form ?? new URLSearchParams();
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const issued = this.codes.get(form.get('code') ?? '');
      if (!issued) return json(res, 400, { error: 'invalid_grant' });
      this.codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const computed = createHash('sha256').update(verifier).digest('base64url');
      if (issued.method !== 'S256' || computed !== issued.challenge)
        return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
      if (form.get('resource') !== issued.resource)
        return json(res, 400, { error: 'invalid_target', error_description: 'resource differs from the authorization request' });
      return this.issue(res, issued.scope);
    }
    if (grant === 'refresh_token') {
      const token = form.get('refresh_token') ?? '';
      if (!this.refreshTokens.has(token)) return json(res, 400, { error: 'invalid_grant' });
      this.refreshTokens.delete(token);
      return this.issue(res, form.get('scope'));
    }
    json(res, 400, { error: 'unsupported_grant_type' });
  }

  private issue(res: http.ServerResponse, scope: string | null): void {
    const n = ++this.issued;
    const refresh = this.options.refreshTokens ? `rt-${n}-${randomUUID()}` : undefined;
    if (refresh) this.refreshTokens.add(refresh);
    json(res, 200, {
      access_token: `at-${n}`,
      token_type: 'Bearer',
      expires_in: this.options.expiresIn ?? 3600,
      ...(refresh ? { refresh_token: refresh } : {}),
      ...(scope ? { scope } : {}),
    });
  }
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
