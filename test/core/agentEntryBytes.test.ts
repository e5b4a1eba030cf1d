// Disconnect gives every file back byte for byte: MCP Host's entry written into, and taken out of, many generated
// layouts of each format the agents' files come in (JSON with and without comments and trailing commas, line ends,
// indentation, a byte-order mark, empty objects, `mcpServers` first, last, alone or missing; Codex's TOML with and
// without a final line break, comments, tables before the block and tables the person added after it).
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { addEntry, hasContainer, readEntry, removeEntry } from '../../src/core/agents/jsonEntry';
import { ENTRY_NAME, entryValue, TARGETS } from '../../src/core/agents/targets';
import { addTomlEntry, readTomlEntry, removeTomlEntry } from '../../src/core/agents/tomlEntry';

const LAUNCHER = '/home/someone/.mcp-host/bin/mcp-host-relay';
const RUNS = 400;

// ---- JSON ------------------------------------------------------------------------------------------------------

interface JsonStyle {
  eol: string;
  unit: string;
  /** Everything on one line. */
  compact: boolean;
  /** `"k": v` or `"k":v` (compact files). */
  space: boolean;
  trailingCommas: boolean;
  comments: boolean;
}

/** A value as text, and whether it is an object (printed in the file's style). */
type Value = { kind: 'scalar'; text: string } | { kind: 'object'; members: Member[]; empty: string };
interface Member {
  key: string;
  value: Value;
  commentBefore?: string;
  commentAfter?: string;
}

const keyArb = fc.constantFrom('theme', 'numStartups', 'projects', 'security', 'notes', 'x-y', 'ünï', 'with "quote"', 'a/b');
const scalarArb: fc.Arbitrary<Value> = fc
  .oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom('dark', 'é ✓ 漢字', 'tab\there', 'C:\\path', '// not a comment', '/* nor this */', '{ not an object, }'),
    fc.array(fc.constantFrom('--port', '0', 'x'), { maxLength: 3 }),
  )
  .map((v) => ({ kind: 'scalar', text: JSON.stringify(v) }));
const commentArb = fc.option(fc.constantFrom('// note', '/* note */', '// "mcpServers": {', '/* , } */'), { nil: undefined });
/** How an empty object is written. */
const emptyArb = fc.constantFrom('{}', '{ }', '{\n}', '{ /* none yet */ }');

const memberArb = (value: fc.Arbitrary<Value>): fc.Arbitrary<Member> =>
  fc.record({ key: keyArb, value, commentBefore: commentArb, commentAfter: commentArb });
const objectArb = (member: fc.Arbitrary<Member>, maxLength: number): fc.Arbitrary<Value> =>
  fc
    .record({ members: fc.uniqueArray(member, { maxLength, selector: (m) => m.key }), empty: emptyArb })
    .map((o) => ({ kind: 'object', ...o }));
/** Another server of the person's: an object, sometimes with an object inside. */
const serverArb = objectArb(memberArb(fc.oneof(scalarArb, objectArb(memberArb(scalarArb), 2))), 3);

function print(value: Value, style: JsonStyle, indent: string): string {
  if (value.kind === 'scalar') return value.text;
  if (!value.members.length) return value.empty.replace(/\n/g, style.compact ? '' : style.eol + indent);
  const inner = indent + style.unit;
  const colon = style.space ? ': ' : ':';
  if (style.compact) {
    const items = value.members.map(
      (m) =>
        `${style.comments && m.commentBefore?.startsWith('/*') ? `${m.commentBefore} ` : ''}${JSON.stringify(m.key)}${colon}${print(m.value, style, inner)}`,
    );
    return `{${items.join(style.space ? ', ' : ',')}${style.trailingCommas ? ',' : ''}}`;
  }
  const lines = value.members.map((m, i) => {
    const comma = i < value.members.length - 1 || style.trailingCommas ? ',' : '';
    const before = style.comments && m.commentBefore ? `${inner}${m.commentBefore}${style.eol}` : '';
    const after = style.comments && m.commentAfter ? ` ${m.commentAfter}` : '';
    return `${before}${inner}${JSON.stringify(m.key)}${colon}${print(m.value, style, inner)}${comma}${after}${style.eol}`;
  });
  return `{${style.eol}${lines.join('')}${indent}}`;
}

interface JsonFile {
  text: string;
  hadContainer: boolean;
}

const jsonFileArb: fc.Arbitrary<JsonFile> = fc
  .record({
    style: fc.record({
      eol: fc.constantFrom('\n', '\r\n'),
      unit: fc.constantFrom('  ', '    ', '\t'),
      compact: fc.boolean(),
      space: fc.boolean(),
      trailingCommas: fc.boolean(),
      comments: fc.boolean(),
    }),
    bom: fc.boolean(),
    leadingComment: commentArb,
    finalEol: fc.boolean(),
    /** The root's other members, and where `mcpServers` goes among them (or whether it is missing). */
    others: fc.uniqueArray(memberArb(fc.oneof(scalarArb, objectArb(memberArb(scalarArb), 2))), { maxLength: 4, selector: (m) => m.key }),
    container: fc.option(
      fc.record({
        at: fc.nat(),
        servers: objectArb(memberArb(serverArb), 3),
        commentBefore: commentArb,
        commentAfter: commentArb,
      }),
      { nil: undefined },
    ),
    emptyRoot: emptyArb,
  })
  .map(({ style, bom, leadingComment, finalEol, others, container, emptyRoot }) => {
    const members = others.filter((m) => m.key !== 'mcpServers');
    if (container) {
      members.splice(container.at % (members.length + 1), 0, {
        key: 'mcpServers',
        value: container.servers,
        commentBefore: container.commentBefore,
        commentAfter: container.commentAfter,
      });
    }
    const root = print({ kind: 'object', members, empty: emptyRoot }, style, '');
    const head = style.comments && leadingComment ? `${leadingComment}${style.eol}` : '';
    return {
      text: `${bom ? '\uFEFF' : ''}${head}${root}${finalEol ? style.eol : ''}`,
      hadContainer: container !== undefined,
    };
  });

function parsedJson(text: string): unknown {
  const errors: ParseError[] = [];
  const value = parseJsonc(text.replace(/^\uFEFF/, ''), errors, { allowTrailingComma: true });
  assert.deepEqual(errors, [], `not valid JSON with comments:\n${text}`);
  return value;
}

describe('Disconnect gives an agent’s file back byte for byte (generated layouts)', () => {
  for (const target of TARGETS.filter((t) => t.format === 'json')) {
    it(`JSON (${target.id}): the entry in, read back as written, the rest unchanged, and out again byte for byte`, () => {
      const value = entryValue(target, LAUNCHER);
      fc.assert(
        fc.property(jsonFileArb, ({ text, hadContainer }) => {
          // As Connect an Agent tells whether it adds `mcpServers` (a comment that names it does not count).
          assert.equal(hasContainer(text), hadContainer);
          const added = addEntry(text, ENTRY_NAME, value);
          assert.deepEqual(readEntry(added, ENTRY_NAME).value, value);
          // The entry is the only difference, and the file is still what its agent can read.
          const before = parsedJson(text) as { mcpServers?: Record<string, unknown> };
          const after = parsedJson(added) as { mcpServers: Record<string, unknown> };
          assert.deepEqual(after.mcpServers, { ...(before.mcpServers ?? {}), [ENTRY_NAME]: value });
          assert.deepEqual({ ...after, mcpServers: undefined }, { ...before, mcpServers: undefined });
          assert.equal(added.startsWith('\uFEFF'), text.startsWith('\uFEFF'));
          assert.equal(removeEntry(added, ENTRY_NAME, { addedContainer: !hadContainer }), text);
        }),
        { numRuns: RUNS },
      );
    });
  }

  it('JSON: a file MCP Host created comes out empty, whatever the entry', () => {
    for (const target of TARGETS.filter((t) => t.format === 'json')) {
      assert.equal(removeEntry(addEntry('', ENTRY_NAME, entryValue(target, LAUNCHER)), ENTRY_NAME, { createdFile: true }), '');
    }
  });

  // ---- TOML ------------------------------------------------------------------------------------------------------

  const tomlLine = fc.constantFrom(
    '# a comment',
    'model = "o4-mini"  # the fast one',
    'approval_policy = "never"',
    'args = ["--port", "0"]',
    'env = { A = "1" }',
    "path = 'C:\\Users\\x'",
    'multi = """',
    '',
  );
  const tomlHeader = fc.constantFrom(
    '[mcp_servers.docs]',
    '[mcp_servers.docs.env]',
    '[profiles.fast]',
    '[[notes]]',
    '[mcp_servers."with space"]',
    '# [mcp_servers.mcp-host]',
  );
  /** A section: a header (or none, for the top) and its lines, valid TOML once the lines are checked below. */
  const tomlFileArb = fc
    .record({
      eol: fc.constantFrom('\n', '\r\n'),
      sections: fc.array(fc.tuple(fc.option(tomlHeader, { nil: undefined }), fc.array(tomlLine, { maxLength: 4 })), { maxLength: 4 }),
      finalEol: fc.constantFrom('', 'eol', 'blank'),
      bom: fc.boolean(),
    })
    .map(({ eol, sections, finalEol, bom }) => {
      const seen = new Set<string>();
      const lines: string[] = [];
      sections.forEach(([header, body], i) => {
        // A table is defined once, keys once per table; a header-less section only first. Keeps the file valid TOML.
        if (header && !header.startsWith('#') && !header.startsWith('[[')) {
          if (seen.has(header)) return;
          seen.add(header);
        }
        if (header) lines.push(header);
        else if (i > 0) return;
        const keys = new Set<string>();
        for (const line of body) {
          if (line === 'multi = """') {
            if (keys.has('multi')) continue;
            keys.add('multi');
            lines.push(line, 'two', 'lines"""');
            continue;
          }
          const key = /^(\w+) =/.exec(line)?.[1];
          if (key && keys.has(key)) continue;
          if (key) keys.add(key);
          lines.push(line);
        }
      });
      const body = lines.join(eol);
      const ending = !body ? '' : finalEol === 'eol' ? eol : finalEol === 'blank' ? eol + eol : '';
      return `${bom ? '\uFEFF' : ''}${body}${ending}`;
    })
    .filter((text) => {
      try {
        parseToml(text);
        return true;
      } catch {
        return false;
      }
    });
  /** What a person adds after MCP Host's block, later: a table, after a blank line or not. */
  const addedLaterArb = fc.constantFrom('', '[profiles.late]\nmodel = "x"\n', '\n[tui]\nnotifications = true\n', '\n# my notes\n');

  it('TOML (Codex): the block in, read back as written, and out again byte for byte; what the person added after it stays', () => {
    const value = entryValue(
      TARGETS.find((t) => t.id === 'codex-user')!,
      LAUNCHER,
    ) as { command: string; args: string[] };
    fc.assert(
      fc.property(tomlFileArb, addedLaterArb, (text, later) => {
        const added = addTomlEntry(text, ENTRY_NAME, value);
        assert.deepEqual({ ...(readTomlEntry(added, ENTRY_NAME) as object) }, value);
        assert.ok(added.startsWith(text));
        assert.equal(removeTomlEntry(added, ENTRY_NAME), text);
        const eol = text.includes('\r\n') ? '\r\n' : '\n';
        const laterText = later.replace(/\n/g, eol);
        // A table added right after the block keeps the line break before it, so it does not join the file's last line.
        const kept = laterText === '' || laterText.startsWith(eol) || text === '' ? '' : eol;
        assert.equal(removeTomlEntry(added + laterText, ENTRY_NAME), text + kept + laterText);
      }),
      { numRuns: RUNS },
    );
  });
});

// The layouts the generated ones first found broken, as plain cases.
describe('Disconnect gives an agent’s file back byte for byte (known cases)', () => {
  const json = entryValue(
    TARGETS.find((t) => t.id === 'mcp-json')!,
    LAUNCHER,
  );
  const toml = entryValue(
    TARGETS.find((t) => t.id === 'codex-user')!,
    LAUNCHER,
  ) as { command: string; args: string[] };
  const roundTrip = (text: string): string =>
    removeEntry(addEntry(text, ENTRY_NAME, json), ENTRY_NAME, { addedContainer: !hasContainer(text) });

  it('TOML: a Codex config without a final line break gets none', () => {
    const text = 'model = "o4-mini"\n[mcp_servers.docs]\ncommand = "docs"';
    const added = addTomlEntry(text, ENTRY_NAME, toml);
    assert.ok(added.startsWith(`${text}\n# Written by MCP Host`), added);
    assert.equal(removeTomlEntry(added, ENTRY_NAME), text);
  });

  it('TOML: a final line break, a blank line at the end, and Windows line ends are kept', () => {
    for (const text of ['model = "o4-mini"\n', 'model = "o4-mini"\n\n', 'model = "o4-mini"\r\n', 'model = "o4-mini"\r\n\r\n'])
      assert.equal(removeTomlEntry(addTomlEntry(text, ENTRY_NAME, toml), ENTRY_NAME), text);
  });

  it('JSON: the last server’s trailing comma stays, on one line and on many', () => {
    for (const text of [
      '{\n  "mcpServers": {\n    "docs": { "command": "docs" },\n  },\n}\n',
      '{"mcpServers": {"docs": {"command": "docs"},}}',
      '{\r\n\t"mcpServers": {\r\n\t\t"docs": {},\r\n\t},\r\n}',
    ])
      assert.equal(roundTrip(text), text);
  });

  it('JSON: `{ }` and an object holding only a comment keep their inside', () => {
    for (const text of [
      '{ "mcpServers": { } }',
      '{\n  "mcpServers": { /* none yet */ }\n}\n',
      '{\n  "mcpServers": {\n    // none yet\n  }\n}\n',
      '{ }',
      '{ /* settings */ }\n',
    ])
      assert.equal(roundTrip(text), text);
  });

  it('JSON: a file that starts with a byte-order mark is connected, and keeps the mark', () => {
    const text = '\uFEFF{\n  "theme": "dark"\n}\n';
    const added = addEntry(text, ENTRY_NAME, json);
    assert.ok(added.startsWith('\uFEFF{'));
    assert.deepEqual(readEntry(added, ENTRY_NAME).value, json);
    assert.equal(removeEntry(added, ENTRY_NAME, { addedContainer: true }), text);
  });

  it('JSON: a comment naming "mcpServers" is not the member, so Disconnect takes out the one it added', () => {
    const text = '{\n  // "mcpServers": { soon }\n  "theme": "dark"\n}\n';
    assert.equal(hasContainer(text), false);
    assert.equal(roundTrip(text), text);
  });
});
