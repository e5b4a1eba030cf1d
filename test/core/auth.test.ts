import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import {
  HeadlessRedirectUserAgent,
  MemorySecretStore,
  OAuthProvider,
  authorizationServerMetadataUrls,
  parseBearerChallenge,
  resourceMatches,
  type OAuthProviderOptions,
} from '../../src/core';
import { OAuthFixture, type OAuthFixtureOptions } from '../harness/oauth-fixture';

/**
 * The OAuth pieces against a real authorization server on loopback, for what the conformance suite
 * does not pin down: the exact discovery order, PKCE and the resource parameter end to end,
 * registration metadata, refresh, the step-up bound, and how a client secret is sent.
 */
describe('OAuth: challenge parsing and metadata locations', () => {
  it('reads resource_metadata, scope and error from a Bearer challenge among others', () => {
    const c = parseBearerChallenge(
      'Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", error_description="need \\"b\\""',
    );
    assert.deepEqual(c, {
      resourceMetadata: 'https://h/.well-known/oauth-protected-resource/mcp',
      scopes: ['a', 'b'],
      error: 'insufficient_scope',
      errorDescription: 'need "b"',
    });
    assert.equal(parseBearerChallenge('Basic realm="x"'), undefined);
    assert.equal(parseBearerChallenge(null), undefined);
    assert.deepEqual(parseBearerChallenge('Bearer'), {
      resourceMetadata: undefined,
      scopes: undefined,
      error: undefined,
      errorDescription: undefined,
    });
  });

  it('lists authorization-server metadata locations path-aware, never the root for an issuer with a path', () => {
    assert.deepEqual(
      authorizationServerMetadataUrls(new URL('https://as.example/tenant1')).map((u) => u.href),
      [
        'https://as.example/.well-known/oauth-authorization-server/tenant1',
        'https://as.example/.well-known/openid-configuration/tenant1',
        'https://as.example/tenant1/.well-known/openid-configuration',
      ],
    );
    assert.deepEqual(
      authorizationServerMetadataUrls(new URL('https://as.example')).map((u) => u.href),
      ['https://as.example/.well-known/oauth-authorization-server', 'https://as.example/.well-known/openid-configuration'],
    );
  });

  it('accepts a metadata resource only on the same origin and as a whole-segment prefix', () => {
    const server = new URL('https://mcp.example/api/mcp');
    assert.ok(resourceMatches('https://mcp.example/api/mcp', server));
    assert.ok(resourceMatches('https://mcp.example/api', server));
    assert.ok(resourceMatches('https://mcp.example', server));
    assert.ok(!resourceMatches('https://mcp.example/ap', server));
    assert.ok(!resourceMatches('https://evil.example/api/mcp', server));
    assert.ok(!resourceMatches('http://mcp.example/api/mcp', server));
  });
});

describe('OAuth: the provider against a loopback authorization server', () => {
  let fixture: OAuthFixture;
  const redirectUri = 'http://127.0.0.1:33418/callback';
  let clock = 1_000_000;
  const logs: string[] = [];

  async function setup(fixtureOptions: OAuthFixtureOptions, providerOptions: Partial<OAuthProviderOptions> = {}) {
    fixture = await new OAuthFixture(fixtureOptions).start();
    const provider = new OAuthProvider({
      grant: { type: 'authorization_code', userAgent: new HeadlessRedirectUserAgent(redirectUri) },
      store: new MemorySecretStore(),
      now: () => clock,
      log: (line) => logs.push(line),
      ...providerOptions,
    });
    return provider;
  }
  const unauthorized = (wwwAuthenticate: string | null = null) => ({ serverUrl: fixture.mcpUrl, status: 401 as const, wwwAuthenticate });

  beforeEach(() => {
    logs.length = 0;
    clock = 1_000_000;
  });
  afterEach(async () => {
    await fixture?.close();
  });

  it('discovers in order: path-aware then root resource metadata, then the three issuer-path locations', async () => {
    const provider = await setup({ prm: 'root', issuerPath: '/tenant1', asMetadata: 'oidc-appended' });
    assert.equal(await provider.onChallenge(unauthorized('Bearer error="invalid_token"')), true);
    assert.deepEqual(fixture.getPaths.slice(0, 5), [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server/tenant1',
      '/.well-known/openid-configuration/tenant1',
      '/tenant1/.well-known/openid-configuration',
    ]);
    assert.ok(!fixture.getPaths.includes('/.well-known/oauth-authorization-server'), 'the root location belongs to another issuer');
    assert.equal(fixture.getPaths[5], '/tenant1/authorize');
  });

  it('goes straight to the resource_metadata of the challenge', async () => {
    const provider = await setup({ prm: 'path' });
    assert.equal(await provider.onChallenge(unauthorized(`Bearer resource_metadata="${fixture.prmUrl}"`)), true);
    assert.deepEqual(fixture.getPaths.slice(0, 2), [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
    ]);
    assert.equal(fixture.requestsTo('/.well-known/oauth-protected-resource').length, 0);
  });

  it('falls back to the 2025-03-26 endpoints at the origin when there is no metadata at all', async () => {
    const provider = await setup({ prm: 'none', asMetadata: 'none' });
    assert.equal(await provider.onChallenge(unauthorized()), true);
    assert.deepEqual(fixture.getPaths.slice(0, 3), [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
    ]);
    assert.equal(fixture.requestsTo('/register').length, 1);
    assert.equal(fixture.requestsTo('/authorize').length, 1);
    assert.equal(await provider.authorizationHeader(fixture.mcpUrl), 'Bearer at-1');
  });

  it('sends PKCE S256 and the resource to both endpoints, and the verifier matches the challenge', async () => {
    const provider = await setup({});
    await provider.onChallenge(unauthorized());
    const [authorize] = fixture.requestsTo('/authorize');
    const [token] = fixture.requestsTo('/token');
    assert.equal(authorize.query.get('code_challenge_method'), 'S256');
    assert.equal(authorize.query.get('resource'), fixture.mcpUrl.href);
    assert.equal(authorize.query.get('redirect_uri'), redirectUri);
    assert.ok(authorize.query.get('state'));
    assert.equal(token.form?.get('resource'), fixture.mcpUrl.href);
    const verifier = token.form?.get('code_verifier') ?? '';
    assert.ok(verifier.length >= 43);
    assert.equal(createHash('sha256').update(verifier).digest('base64url'), authorize.query.get('code_challenge'));
    assert.equal(await provider.authorizationHeader(fixture.mcpUrl), 'Bearer at-1');
  });

  it('registers dynamically as a public client asking for refresh tokens, and registers once', async () => {
    const provider = await setup({ refreshTokens: true });
    await provider.onChallenge(unauthorized());
    clock += 60_000; // past the step-up window: a fresh challenge, not a repeat
    await provider.onChallenge(unauthorized());
    const registrations = fixture.requestsTo('/register');
    assert.equal(registrations.length, 1);
    const body = registrations[0].json ?? {};
    assert.deepEqual(body.redirect_uris, [redirectUri]);
    assert.equal(body.application_type, 'native');
    assert.deepEqual(body.grant_types, ['authorization_code', 'refresh_token']);
    assert.equal(body.token_endpoint_auth_method, 'none');
    const [authorize] = fixture.requestsTo('/authorize');
    assert.match(authorize.query.get('client_id') ?? '', /^dyn-/);
  });

  it('uses the challenge scope, else the resource scopes, adds offline_access when offered, else omits scope', async () => {
    let provider = await setup({ prmScopes: ['read', 'write'], scopesSupported: ['read', 'write', 'offline_access'] });
    await provider.onChallenge(unauthorized('Bearer scope="read"'));
    assert.equal(fixture.requestsTo('/authorize')[0].query.get('scope'), 'read offline_access');
    await fixture.close();

    provider = await setup({ prmScopes: ['read', 'write'], scopesSupported: ['read', 'write'] });
    await provider.onChallenge(unauthorized());
    assert.equal(fixture.requestsTo('/authorize')[0].query.get('scope'), 'read write');
    await fixture.close();

    provider = await setup({});
    await provider.onChallenge(unauthorized());
    assert.equal(fixture.requestsTo('/authorize')[0].query.has('scope'), false);
  });

  it('refreshes an expired token before use, with the resource, and refreshes again on a 401', async () => {
    const provider = await setup({ refreshTokens: true, expiresIn: 60 });
    await provider.onChallenge(unauthorized());
    assert.equal(await provider.authorizationHeader(fixture.mcpUrl), 'Bearer at-1');

    clock += 3_600_000;
    assert.equal(await provider.authorizationHeader(fixture.mcpUrl), 'Bearer at-2');
    const refresh = fixture.requestsTo('/token').filter((r) => r.form?.get('grant_type') === 'refresh_token');
    assert.equal(refresh.length, 1);
    assert.equal(refresh[0].form?.get('resource'), fixture.mcpUrl.href);

    clock += 60_000;
    assert.equal(await provider.onChallenge(unauthorized('Bearer error="invalid_token"')), true);
    assert.equal(await provider.authorizationHeader(fixture.mcpUrl), 'Bearer at-3');
    assert.equal(fixture.requestsTo('/authorize').length, 1, 'a refresh token spares the user a second sign-in');
  });

  it('follows the resource to a new authorization server: registers there, and takes no token or client of the old one there', async () => {
    const provider = await setup({ refreshTokens: true });
    const moved = await new OAuthFixture({ refreshTokens: true }).start();
    try {
      await provider.onChallenge(unauthorized(`Bearer resource_metadata="${fixture.prmUrl}"`));
      const oldClient = fixture.requestsTo('/authorize')[0].query.get('client_id');
      assert.equal(await provider.authorizationHeader(fixture.mcpUrl), 'Bearer at-1');

      fixture.authorizationServer = moved.issuer;
      clock += 60_000;
      assert.equal(await provider.onChallenge(unauthorized(`Bearer error="invalid_token", resource_metadata="${fixture.prmUrl}"`)), true);
      assert.equal(moved.requestsTo('/register').length, 1, 'a client registration at the new authorization server');
      const [authorize] = moved.requestsTo('/authorize');
      assert.ok(authorize, 'the person signs in at the new authorization server');
      assert.notEqual(authorize.query.get('client_id'), oldClient);
      assert.ok(
        moved
          .requestsTo('/token')
          .every((r) => r.form?.get('grant_type') === 'authorization_code' && r.form.get('client_id') !== oldClient),
        'no refresh token nor client id of the old server sent to the new one',
      );
      assert.equal(fixture.requestsTo('/token').length, 1, 'the old server is not asked for a refresh either');
      assert.equal(await provider.authorizationHeader(fixture.mcpUrl), 'Bearer at-1', "the new server's first token");
      assert.ok(logs.some((line) => line.includes(`changed from ${fixture.issuer} to ${moved.issuer}`)));
    } finally {
      await moved.close();
    }
  });

  it('steps up on 403 insufficient_scope keeping granted scopes, and gives up after 3 attempts in a row', async () => {
    const provider = await setup({});
    const forbidden = {
      serverUrl: fixture.mcpUrl,
      status: 403 as const,
      wwwAuthenticate: 'Bearer error="insufficient_scope", scope="admin"',
    };
    assert.equal(await provider.onChallenge(unauthorized('Bearer scope="basic"')), true);
    assert.equal(await provider.onChallenge(forbidden), true);
    assert.equal(fixture.requestsTo('/authorize')[1].query.get('scope'), 'admin basic');
    assert.equal(await provider.onChallenge(forbidden), true);
    assert.equal(await provider.onChallenge(forbidden), false);
    assert.equal(await provider.onChallenge(forbidden), false);
    assert.equal(fixture.requestsTo('/authorize').length, 3);

    // Later (outside the window) the server may ask again, and is answered.
    clock += 60_000;
    assert.equal(await provider.onChallenge(forbidden), true);
  });

  it('does not answer a 403 that is not about scope', async () => {
    const provider = await setup({});
    assert.equal(
      await provider.onChallenge({ serverUrl: fixture.mcpUrl, status: 403, wwwAuthenticate: 'Bearer error="invalid_token"' }),
      false,
    );
    assert.equal(fixture.requests.length, 0);
  });

  it('sends a pre-registered secret with client_secret_basic, the id unescaped', async () => {
    const provider = await setup(
      { tokenEndpointAuthMethods: ['client_secret_basic'] },
      { client: { clientId: 'my-client.v1', clientSecret: 's3cret:x' } },
    );
    await provider.onChallenge(unauthorized());
    const [token] = fixture.requestsTo('/token');
    const basic = String(token.headers.authorization);
    assert.match(basic, /^Basic /);
    assert.equal(Buffer.from(basic.slice(6), 'base64').toString('utf8'), 'my-client.v1:s3cret%3Ax');
    assert.equal(token.form?.has('client_secret'), false);
    assert.equal(fixture.requestsTo('/register').length, 0);
  });

  it('sends a pre-registered secret with client_secret_post when that is all the server takes', async () => {
    const provider = await setup(
      { tokenEndpointAuthMethods: ['client_secret_post'] },
      { client: { clientId: 'my-client', clientSecret: 'shh' } },
    );
    await provider.onChallenge(unauthorized());
    const [token] = fixture.requestsTo('/token');
    assert.equal(token.headers.authorization, undefined);
    assert.equal(token.form?.get('client_id'), 'my-client');
    assert.equal(token.form?.get('client_secret'), 'shh');
  });

  it('refuses metadata whose resource is another server, before any authorization request', async () => {
    const provider = await setup({ prmResource: 'https://evil.example/mcp' });
    await assert.rejects(provider.onChallenge(unauthorized()), /does not cover/);
    assert.equal(fixture.requestsTo('/authorize').length, 0);
  });

  it('never puts a token or secret in its log', async () => {
    const provider = await setup(
      { refreshTokens: true, expiresIn: 60, tokenEndpointAuthMethods: ['client_secret_basic'] },
      { client: { clientId: 'c', clientSecret: 'top-secret' } },
    );
    await provider.onChallenge(unauthorized());
    clock += 3_600_000;
    await provider.authorizationHeader(fixture.mcpUrl);
    const text = logs.join('\n');
    assert.ok(logs.length > 0);
    assert.doesNotMatch(text, /at-\d|rt-\d|top-secret|code-/);
  });
});
