import { strict as assert } from 'node:assert';
import { checkJsonArguments, McpError, renderServerInfo, SchemaValidator, suggestServerName, templateArguments } from '../../src/core';

describe('McpError.toString', () => {
  it('does not repeat the code name a message starts with', () => {
    assert.equal(McpError.connectionClosed('Command not found: nope').toString(), 'Connection closed (-32000): Command not found: nope');
    assert.equal(McpError.connectionClosed().toString(), 'Connection closed (-32000)');
    assert.equal(McpError.invalidParams('a must be a number').toString(), 'Invalid params (-32602): a must be a number');
    assert.equal(new McpError(7, 'odd').toString(), 'Error 7 (7): odd');
  });
});

describe('suggestServerName', () => {
  it('names a script after its package folder, not its generic entry file', () => {
    assert.equal(
      suggestServerName('stdio', 'node /home/dev/project/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio'),
      'everything',
    );
    assert.equal(suggestServerName('stdio', 'node ./server-foo/dist/index.js stdio'), 'foo');
    assert.equal(suggestServerName('stdio', 'node "C:\\code\\weather-tools\\build\\main.mjs"'), 'weather-tools');
    assert.equal(suggestServerName('stdio', 'node --inspect ~/src/github-mcp/src/index.ts'), 'github');
    assert.equal(suggestServerName('stdio', 'python3 -m weather.py'), 'weather');
    assert.equal(suggestServerName('stdio', 'node index.js'), 'index', 'nothing better to say');
    assert.equal(suggestServerName('stdio', 'uvx mcp-server-git'), 'git');
  });
  it('names a package after the package, without scope or version', () => {
    assert.equal(suggestServerName('npm', '@scope/server-foo'), 'foo');
    assert.equal(suggestServerName('npm', '@modelcontextprotocol/server-everything@2025.1.1 stdio'), 'everything');
    assert.equal(suggestServerName('npm', 'tavily-mcp@latest'), 'tavily');
  });
  it('names a URL after its host', () => {
    assert.equal(suggestServerName('http', 'https://mcp.example.com/mcp'), 'example');
    assert.equal(suggestServerName('http', 'http://127.0.0.1:3001/mcp'), 'local');
  });
});

describe('templateArguments', () => {
  it('starts from every required key, with defaults, examples and empty values of the right type', () => {
    const schema = {
      type: 'object' as const,
      properties: {
        message: { type: 'string' },
        count: { type: 'integer', minimum: 1 },
        level: { type: 'string', enum: ['debug', 'info'] },
        city: { type: 'string', examples: ['Berlin'] },
        flag: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        optional: { type: 'string' },
        withDefault: { type: 'number', default: 3 },
      },
      required: ['message', 'count', 'level', 'city', 'flag', 'tags'],
    };
    assert.deepEqual(templateArguments(schema), {
      message: '',
      count: 1,
      level: 'debug',
      city: 'Berlin',
      flag: false,
      tags: [],
      withDefault: 3,
    });
    assert.deepEqual(templateArguments(undefined), {});
  });
});

describe('renderServerInfo', () => {
  it('shows who the server is, its capabilities and its instructions in full, as data', () => {
    const long = `Use the tools wisely: see [the guide](command:workbench.action.openSettings).\n${'x'.repeat(3000)}`;
    const md = renderServerInfo({
      name: 'everything',
      reachedBy: 'stdio: node index.js',
      scope: 'user settings',
      state: 'running',
      serverInfo: { name: 'mcp-servers/everything', title: 'Everything', version: '2.0.0' },
      protocolVersion: '2025-11-25',
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions: long,
    });
    assert.match(md, /^# everything$/m);
    assert.match(md, /Everything \(mcp-servers\/everything\)/);
    assert.match(md, /\*\*Version:\*\* 2\.0\.0/);
    assert.match(md, /^- tools \(listChanged\)$/m);
    assert.match(md, /^- logging$/m);
    assert.ok(md.includes(`> ${'x'.repeat(3000)}`), 'the instructions are not cut');
    assert.match(md, /^> Use the tools wisely/m, 'quoted, so no line of the server looks like one of ours');
    assert.ok(!md.includes('(command:'), 'no link in them acts');
  });
  it('says a stopped server reports nothing yet', () => {
    assert.match(renderServerInfo({ name: 's', reachedBy: 'https://x.test', scope: 'user settings', state: 'stopped' }), /not running/);
  });
});

describe('checkJsonArguments', () => {
  const schema = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
  const validator = new SchemaValidator();
  const check = (v: unknown) => validator.check(schema, v);
  it('passes a valid object through', () => {
    assert.deepEqual(checkJsonArguments('{"a": 1, "b": 2}', check), { value: { a: 1, b: 2 } });
  });
  it('marks a schema error at the value it is about, and a missing key at its object', () => {
    const text = '{\n  "a": "one"\n}';
    const r = checkJsonArguments(text, check);
    assert.ok('problems' in r);
    const wrongType = r.problems.find((p) => p.message.startsWith('/a'))!;
    assert.equal(text.slice(wrongType.offset, wrongType.offset + wrongType.length), '"one"');
    const missing = r.problems.find((p) => /must have required property 'b'/.test(p.message))!;
    assert.equal(missing.offset, 0);
  });
  it('marks a syntax error where it is', () => {
    const text = '{"a": 1,, "b": 2}';
    const r = checkJsonArguments(text, check);
    assert.ok('problems' in r);
    assert.match(r.problems[0].message, /not JSON/);
    assert.equal(r.problems[0].offset, 8);
  });
  it('refuses an array', () => {
    const r = checkJsonArguments('[1]', check);
    assert.ok('problems' in r && /must be a JSON object/.test(r.problems[0].message));
  });
});
