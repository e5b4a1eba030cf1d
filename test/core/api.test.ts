import { strict as assert } from 'node:assert';
import { EventEmitter } from 'node:events';
import { parseServerDefinitions, Redactor, type ServerState } from '../../src/core';
import { createApi, extensionExports, TEST_SEAM_ENV, type ServerSource } from '../../src/vscode/api';

/** The host's side of the API: definitions as settings parse them, states as a host sets them. */
function source(states: Record<string, ServerState>, secret: string) {
  const user = parseServerDefinitions({ alpha: { command: 'node' } }, { scope: 'user' }).definitions;
  const workspace = parseServerDefinitions({ beta: { type: 'http', url: 'http://127.0.0.1:1/mcp' } }, { scope: 'workspace' }).definitions;
  const changes = new EventEmitter();
  const redactor = new Redactor();
  redactor.add(secret);
  const host: ServerSource = {
    servers: [...user, ...workspace].map((definition) => ({ definition, state: states[definition.name] })),
    onDidChange: (listener) => {
      changes.on('change', listener);
      return { dispose: () => changes.off('change', listener) };
    },
    redact: (text) => redactor.redact(text),
  };
  return { host, fire: () => changes.emit('change') };
}

describe('the API other extensions get (src/vscode/api.ts)', () => {
  const secret = 'sk-live-0123456789abcdef';

  it('lists the servers with scope and state, and an error without its secret', () => {
    const { host } = source(
      { alpha: { kind: 'running' } as ServerState, beta: { kind: 'error', message: `401 for token ${secret}` } },
      secret,
    );
    const api = createApi(host);
    assert.equal(api.apiVersion, 1);
    const listed = api.servers();
    assert.deepEqual(
      listed.map(({ name, scope, state }) => ({ name, scope, state })),
      [
        { name: 'alpha', scope: 'user', state: 'running' },
        { name: 'beta', scope: 'workspace', state: 'error' },
      ],
    );
    assert.equal(listed[0].message, undefined);
    assert.ok(listed[1].message?.includes('401 for token'), listed[1].message);
    assert.ok(!listed[1].message?.includes(secret), listed[1].message);
  });

  it('fires onDidChangeServers when the host changes, until disposed', () => {
    const { host, fire } = source({ alpha: { kind: 'stopped' }, beta: { kind: 'starting' } }, secret);
    let seen = 0;
    const subscription = createApi(host).onDidChangeServers(() => seen++);
    fire();
    subscription.dispose();
    fire();
    assert.equal(seen, 1);
  });

  it('carries nothing but its three members', () => {
    const { host } = source({ alpha: { kind: 'stopped' }, beta: { kind: 'stopped' } }, secret);
    assert.deepEqual(Object.keys(extensionExports(createApi(host), { host: 'internals' }, {})).sort(), [
      'apiVersion',
      'onDidChangeServers',
      'servers',
    ]);
  });

  it(`adds the internals as "testing" only when ${TEST_SEAM_ENV} is 1, as the test harness sets it`, () => {
    const { host } = source({ alpha: { kind: 'stopped' }, beta: { kind: 'stopped' } }, secret);
    const internals = { host: 'internals' };
    for (const value of [undefined, '', '0', 'true', 'yes']) {
      assert.equal(
        'testing' in extensionExports(createApi(host), internals, { [TEST_SEAM_ENV]: value }),
        false,
        `with ${TEST_SEAM_ENV}=${value}`,
      );
    }
    const exported = extensionExports(createApi(host), internals, { [TEST_SEAM_ENV]: '1' });
    assert.equal('testing' in exported && exported.testing, internals);
    assert.equal(typeof exported.servers, 'function');
  });
});
