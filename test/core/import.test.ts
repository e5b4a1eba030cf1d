import { strict as assert } from 'node:assert';
import {
  definitionProblem,
  describeEntry,
  inputDefinitionsFor,
  knownImportSources,
  parseImportFile,
  parseServerDefinitions,
  planImport,
  type ImportCandidate,
} from '../../src/core';

const byName = (candidates: ImportCandidate[]) => Object.fromEntries(candidates.map((c) => [c.name, c]));

describe('importing servers from other clients', () => {
  it("reads VS Code's mcp.json: stdio, http and sse servers, inputs as ${input:} secrets, comments allowed", () => {
    const text = `{
      // VS Code allows comments and trailing commas here
      "inputs": [
        { "type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true },
        { "type": "pickString", "id": "region", "description": "Region", "options": ["eu", "us"], "default": "eu" },
      ],
      "servers": {
        "github": { "type": "stdio", "command": "github-mcp", "args": ["--region", "\${input:region}"], "env": { "TOKEN": "\${input:gh-token}", "PORT": 8080 }, "dev": { "watch": "src/**" } },
        "remote": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${input:gh-token}" } },
        "legacy": { "type": "sse", "url": "https://example.com/sse" },
      },
    }`;
    const { candidates, error } = parseImportFile(text, 'app/.vscode/mcp.json', definitionProblem);
    assert.equal(error, undefined);
    const c = byName(candidates);
    assert.deepEqual(Object.keys(c), ['github', 'remote', 'legacy']);

    assert.deepEqual(c.github.entry, {
      type: 'stdio',
      command: 'github-mcp',
      args: ['--region', '${input:region}'],
      env: { TOKEN: '${input:gh-token}', PORT: '8080' },
    });
    assert.equal(c.github.problem, undefined);
    assert.deepEqual(c.github.notes, [
      { kind: 'dropped', field: 'dev' },
      { kind: 'input', id: 'region', inputType: 'pickString', description: 'Region', options: ['eu', 'us'], defaultValue: 'eu' },
      { kind: 'input', id: 'gh-token', inputType: 'promptString', description: 'GitHub token', password: true },
    ]);
    assert.equal(c.github.source, 'app/.vscode/mcp.json');

    assert.deepEqual(c.remote.entry, {
      type: 'http',
      url: 'https://example.com/mcp',
      headers: { Authorization: 'Bearer ${input:gh-token}' },
    });
    assert.deepEqual(c.remote.notes, [
      { kind: 'input', id: 'gh-token', inputType: 'promptString', description: 'GitHub token', password: true },
    ]);

    // How to ask for each input goes to mcpHost.inputs; a pickString keeps its description only.
    assert.deepEqual(inputDefinitionsFor(candidates, {}), {
      region: { description: 'Region' },
      'gh-token': { description: 'GitHub token', password: true },
    });
    assert.deepEqual(
      inputDefinitionsFor(candidates, { 'gh-token': {} }),
      { region: { description: 'Region' } },
      'an input described already is kept',
    );
    assert.deepEqual(c.legacy.entry, { type: 'http', url: 'https://example.com/sse' });
    assert.deepEqual(c.legacy.notes, [{ kind: 'sse' }]);

    // Every mapped entry is one our own settings parser accepts.
    const parsed = parseServerDefinitions(Object.fromEntries(candidates.map((x) => [x.name, x.entry])), { scope: 'workspace' });
    assert.deepEqual(parsed.diagnostics, []);
    assert.equal(parsed.definitions.length, 3);
  });

  it("reads Claude Desktop's and Cursor's mcpServers and reports each field it drops", () => {
    const text = JSON.stringify({
      globalShortcut: 'Ctrl+Space',
      mcpServers: {
        files: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
          env: { A: '1' },
          disabled: true,
          alwaysAllow: ['read_file'],
          timeout: 60,
          transportType: 'stdio',
        },
        web: { url: 'https://example.com/mcp', headers: { 'X-Key': 'k' } },
        'a/b': { command: 'srv' },
      },
    });
    const c = byName(parseImportFile(text, 'Claude Desktop', definitionProblem).candidates);
    assert.deepEqual(c.files.entry, {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
      env: { A: '1' },
      enabled: false,
      autoApprove: ['read_file'],
    });
    assert.deepEqual(c.files.notes, [
      { kind: 'dropped', field: 'timeout' },
      { kind: 'dropped', field: 'transportType' },
    ]);
    assert.deepEqual(c.web.entry, { type: 'http', url: 'https://example.com/mcp', headers: { 'X-Key': 'k' } });
    assert.deepEqual(c['a-b'].notes, [{ kind: 'renamed', from: 'a/b' }]);
  });

  it('reports variables MCP Host does not resolve, and entries that stay invalid', () => {
    const text = JSON.stringify({
      servers: {
        odd: { command: 'node', args: ['${workspaceFolderBasename}/s.js', '${workspaceFolder}', '${env:HOME}'] },
        nocommand: { args: ['x'] },
        badurl: { type: 'http', url: 'ftp://example.com' },
        notobject: 3,
      },
    });
    const c = byName(parseImportFile(text, 'x', definitionProblem).candidates);
    assert.deepEqual(c.odd.notes, [{ kind: 'variable', variable: '${workspaceFolderBasename}' }]);
    assert.equal(c.odd.problem, undefined);
    assert.match(c.nocommand.problem!, /command/);
    assert.match(c.badurl.problem!, /url/);
    assert.match(c.notobject.problem!, /not an object/);
  });

  it('says what is wrong with a file it cannot use', () => {
    assert.match(parseImportFile('{ "servers": ', 'x', definitionProblem).error!, /not valid JSON/);
    assert.match(parseImportFile('[1]', 'x', definitionProblem).error!, /not a JSON object/);
    assert.match(parseImportFile('{"other": {}}', 'x', definitionProblem).error!, /no "servers" or "mcpServers"/);
  });

  it('knows where each client keeps its file on each system', () => {
    const folders = [{ name: 'app', path: '/w/app' }];
    const linux = knownImportSources({ platform: 'linux', home: '/home/me', folders });
    assert.deepEqual(linux, [
      { label: 'app/.vscode/mcp.json', path: '/w/app/.vscode/mcp.json' },
      { label: 'app/.cursor/mcp.json', path: '/w/app/.cursor/mcp.json' },
      { label: 'Claude Desktop', path: '/home/me/.config/Claude/claude_desktop_config.json' },
      { label: 'Cursor (user)', path: '/home/me/.cursor/mcp.json' },
    ]);
    assert.equal(
      knownImportSources({ platform: 'linux', home: '/home/me', xdgConfigHome: '/cfg', folders: [] })[0].path,
      '/cfg/Claude/claude_desktop_config.json',
    );
    const mac = knownImportSources({ platform: 'darwin', home: '/Users/me', folders: [] });
    assert.equal(mac[0].path, '/Users/me/Library/Application Support/Claude/claude_desktop_config.json');
    const win = knownImportSources({ platform: 'win32', home: 'C:\\Users\\me', appData: 'C:\\Users\\me\\AppData\\Roaming', folders: [] });
    assert.equal(win[0].path, 'C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json');
    assert.equal(win[1].path, 'C:\\Users\\me\\.cursor\\mcp.json');
  });

  it('renames or skips taken names, and skips a server already configured the same way', () => {
    const cand = (name: string, command: string, source = 's'): ImportCandidate => ({ name, source, entry: { command }, notes: [] });
    const existing = { same: { command: 'a' }, taken: { command: 'old' }, 'taken-2': { command: 'x' } };
    const picked = [cand('same', 'a'), cand('taken', 'new'), cand('fresh', 'f'), cand('fresh', 'g', 'other')];

    const renamed = planImport(picked, existing, 'rename');
    assert.deepEqual(renamed.entries, { 'taken-3': { command: 'new' }, fresh: { command: 'f' }, 'fresh-2': { command: 'g' } });
    assert.deepEqual(renamed.renamed, [
      { from: 'taken', to: 'taken-3', source: 's' },
      { from: 'fresh', to: 'fresh-2', source: 'other' },
    ]);
    assert.deepEqual(renamed.skipped, [{ name: 'same', source: 's', reason: 'identical' }]);

    const skipped = planImport(picked, existing, 'skip');
    assert.deepEqual(skipped.entries, { fresh: { command: 'f' } });
    assert.deepEqual(
      skipped.skipped.map((s) => `${s.name}:${s.reason}`),
      ['same:identical', 'taken:taken', 'fresh:taken'],
    );
  });

  it('skips a server configured the same way under another name, in the settings or earlier in the same import', () => {
    const cand = (name: string, command: string, source = 's'): ImportCandidate => ({
      name,
      source,
      entry: { command, args: ['--x'] },
      notes: [],
    });
    const existing = { mine: { command: 'a', args: ['--x'] } };
    const plan = planImport([cand('theirs', 'a'), cand('b-one', 'b', 'claude'), cand('b-two', 'b', 'cursor')], existing, 'rename');
    assert.deepEqual(plan.entries, { 'b-one': { command: 'b', args: ['--x'] } });
    assert.deepEqual(plan.skipped, [
      { name: 'theirs', source: 's', reason: 'identical' },
      { name: 'b-two', source: 'cursor', reason: 'identical' },
    ]);
  });

  it('summarises an entry as its command line or URL', () => {
    assert.equal(describeEntry({ command: 'npx', args: ['-y', 'pkg', 'a b'] }), 'npx -y pkg "a b"');
    assert.equal(describeEntry({ type: 'http', url: 'https://e.com/mcp' }), 'https://e.com/mcp');
  });
});

describe("importing VS Code's sandbox", () => {
  it("copies mcp.json's top-level sandbox into each stdio entry, keeps sandboxEnabled, and leaves HTTP servers alone", () => {
    const sandbox = { filesystem: { allowWrite: ['~/notes'], denyRead: ['.env'] }, network: { allowedDomains: ['api.example.com'] } };
    const text = JSON.stringify({
      sandbox,
      servers: {
        boxed: { command: 'node', args: ['a.js'], sandboxEnabled: true },
        plain: { command: 'node', args: ['b.js'] },
        remote: { type: 'http', url: 'https://example.com/mcp' },
      },
    });
    const found = byName(parseImportFile(text, '.vscode/mcp.json', definitionProblem).candidates);
    assert.deepEqual(found.boxed.entry, { command: 'node', args: ['a.js'], sandboxEnabled: true, sandbox });
    assert.equal(found.boxed.problem, undefined);
    assert.deepEqual(found.plain.entry, { command: 'node', args: ['b.js'], sandbox });
    assert.deepEqual(found.remote.entry, { type: 'http', url: 'https://example.com/mcp' });
    const def = parseServerDefinitions({ boxed: found.boxed.entry }, { scope: 'user' }).definitions[0];
    assert.ok(def.type === 'stdio' && def.sandboxEnabled && def.sandbox?.filesystem?.allowWrite?.[0] === '~/notes');
  });
});
