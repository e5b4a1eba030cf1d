import { strict as assert } from 'node:assert';
import { parseServerDefinitions } from '../../src/core';
import { identityOf, orgVerdict, rulesOf, type ServerIdentity } from '../../src/core/gateway/orgPolicy';

const stdio: ServerIdentity = { name: 'files', command: ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/repo'] };
const remote: ServerIdentity = { name: 'tickets', url: 'https://mcp.tickets.example.com/v1/mcp?team=a#frag' };

describe("VS Code's organisation lists of MCP servers, applied to the server behind the gateway", () => {
  it('reads the rules of a setting: unset allows everything, a rule names exactly one thing', () => {
    assert.equal(rulesOf(undefined), undefined);
    assert.equal(rulesOf(null), undefined);
    assert.deepEqual(rulesOf('files'), [], 'a malformed list names nothing');
    assert.deepEqual(
      rulesOf([
        { serverName: 'files' },
        { serverUrl: 'https://*.example.com/*' },
        { serverCommand: ['node', 'x.js'] },
        { serverName: 'a', serverUrl: 'https://b' },
        { serverCommand: [] },
        { serverCommand: ['node', 3] },
        { serverName: '' },
        'files',
        null,
      ]),
      [{ serverName: 'files' }, { serverUrl: 'https://*.example.com/*' }, { serverCommand: ['node', 'x.js'] }],
    );
  });

  it("takes a server's identity from its entry: its name and its URL, or its command line", () => {
    const { definitions } = parseServerDefinitions(
      { files: { command: 'npx', args: ['-y', 'pkg', '/repo'] }, tickets: { type: 'http', url: 'https://example.com/mcp' } },
      { scope: 'user' },
    );
    assert.deepEqual(definitions.map(identityOf), [
      { name: 'files', command: ['npx', '-y', 'pkg', '/repo'] },
      { name: 'tickets', url: 'https://example.com/mcp' },
    ]);
  });

  it('denies by name, by command line (exactly) and by URL (wildcards, case, fragment); deny wins over allow', () => {
    assert.deepEqual(orgVerdict(stdio, undefined, [{ serverName: 'files' }]), {
      allowed: false,
      why: 'denied',
      rule: { serverName: 'files' },
    });
    assert.equal(orgVerdict(stdio, undefined, [{ serverName: 'Files' }]).allowed, true, 'names are exact');
    assert.equal(orgVerdict(stdio, undefined, [{ serverCommand: [...stdio.command!] }]).allowed, false);
    assert.equal(
      orgVerdict(stdio, undefined, [{ serverCommand: stdio.command!.slice(0, 3) }]).allowed,
      true,
      'a prefix is not the command',
    );
    assert.equal(orgVerdict(stdio, undefined, [{ serverUrl: '*' }]).allowed, true, 'a stdio server has no URL');
    assert.equal(orgVerdict(remote, undefined, [{ serverUrl: 'https://MCP.tickets.example.com/v1/mcp?team=a' }]).allowed, false);
    assert.equal(
      orgVerdict(remote, undefined, [{ serverUrl: 'https://mcp.tickets.example.com/v1/mcp' }]).allowed,
      true,
      'the query counts',
    );
    assert.equal(orgVerdict(remote, undefined, [{ serverUrl: 'https://*.example.com/*' }]).allowed, false);
    assert.equal(orgVerdict(remote, undefined, [{ serverUrl: 'https://*.other.com/*' }]).allowed, true);
    // A host wildcard stays in the host: it does not reach across into the path.
    assert.equal(
      orgVerdict({ name: 'x', url: 'https://evil.test/a.example.com/mcp' }, undefined, [{ serverUrl: 'https://*.example.com/*' }]).allowed,
      true,
    );
    assert.equal(orgVerdict(remote, [{ serverName: 'tickets' }], [{ serverUrl: 'https://*.example.com/*' }]).allowed, false, 'deny wins');
  });

  it('offers only what an allow list names, once one is set (an empty one allows nothing)', () => {
    assert.deepEqual(orgVerdict(stdio, [{ serverName: 'tickets' }], undefined), { allowed: false, why: 'not-allowed' });
    assert.equal(orgVerdict(remote, [{ serverName: 'tickets' }], undefined).allowed, true);
    assert.equal(orgVerdict(stdio, [{ serverCommand: [...stdio.command!] }], []).allowed, true);
    assert.equal(orgVerdict(stdio, [], undefined).allowed, false);
  });
});
