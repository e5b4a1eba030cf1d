import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  checkElicitationContent,
  choicesOf,
  describeFieldValue,
  formDefaults,
  formFields,
  McpError,
  multiSelectProblem,
  parsePropertyInput,
  pickedValues,
  type ElicitationWait,
  type JsonSchemaObject,
  type PropertySchema,
  type UrlElicitation,
} from '../../src/core';
import { closeAll, connect, nextEvent, ROOT } from '../helpers/servers';

const fixture = { command: process.execPath, args: [path.join(ROOT, 'test', 'fixtures', 'elicitation-server.mjs')] };

/** Every field kind of the 2025-11-25 `requestedSchema`, as server-everything's form has them. */
const everyField: JsonSchemaObject = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 2, maxLength: 20 },
    email: { type: 'string', format: 'email' },
    homepage: { type: 'string', format: 'uri' },
    birthdate: { type: 'string', format: 'date' },
    meeting: { type: 'string', format: 'date-time' },
    integer: { type: 'integer', minimum: 1, maximum: 100, default: 42 },
    number: { type: 'number', minimum: 0, maximum: 1000, default: 3.14 },
    check: { type: 'boolean', default: true },
    friend: { type: 'string', enum: ['Monica', 'Rachel'], default: 'Monica' },
    hero: {
      type: 'string',
      oneOf: [
        { const: 'hero-1', title: 'Superman' },
        { const: 'hero-2', title: 'Wonder Woman' },
      ],
      default: 'hero-1',
    },
    pet: { type: 'string', enum: ['pet-1', 'pet-2'], enumNames: ['Cats', 'Dogs'], default: 'pet-2' },
    instruments: {
      type: 'array',
      minItems: 1,
      maxItems: 2,
      items: { type: 'string', enum: ['Guitar', 'Piano', 'Drums'] },
      default: ['Guitar'],
    },
    fish: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'fish-1', title: 'Tuna' },
          { const: 'fish-2', title: 'Salmon' },
        ],
      },
      default: ['fish-1'],
    },
  },
  required: ['name'],
};

describe('elicitation forms (plain Node)', () => {
  it('gives every field the kind the spec allows, with titled choices and the legacy enumNames', () => {
    const fields = Object.fromEntries(formFields(everyField).map((f) => [f.name, f]));
    assert.deepEqual(Object.fromEntries(Object.entries(fields).map(([n, f]) => [n, f.kind])), {
      name: 'string',
      email: 'string',
      homepage: 'string',
      birthdate: 'string',
      meeting: 'string',
      integer: 'integer',
      number: 'number',
      check: 'boolean',
      friend: 'choice',
      hero: 'choice',
      pet: 'choice',
      instruments: 'multi',
      fish: 'multi',
    });
    assert.equal(fields.name.title, 'Name');
    assert.equal(fields.email.title, 'email', 'an untitled field is named by its property');
    assert.deepEqual(choicesOf(everyField.properties!.pet as PropertySchema), [
      { label: 'Cats', value: 'pet-1' },
      { label: 'Dogs', value: 'pet-2' },
    ]);
    const hero = fields.hero;
    assert.ok(hero.kind === 'choice');
    assert.deepEqual(
      hero.choices.map((c) => c.label),
      ['Superman', 'Wonder Woman'],
    );
    const fish = fields.fish;
    assert.ok(fish.kind === 'multi');
    assert.deepEqual(fish.choices, [
      { label: 'Tuna', value: 'fish-1' },
      { label: 'Salmon', value: 'fish-2' },
    ]);
    const instruments = fields.instruments;
    assert.ok(instruments.kind === 'multi');
    assert.equal(instruments.minItems, 1);
    assert.equal(instruments.maxItems, 2);
    assert.equal(multiSelectProblem(instruments, 0), 'pick at least 1');
    assert.equal(multiSelectProblem(instruments, 3), 'pick at most 2');
    assert.equal(multiSelectProblem(instruments, 2), undefined);
    assert.deepEqual(pickedValues(instruments, undefined), ['Guitar'], 'the default starts picked');
    assert.deepEqual(pickedValues(instruments, ['Piano']), ['Piano'], 'an earlier answer wins over the default');
    assert.equal(describeFieldValue(fish, ['fish-1', 'fish-2']), 'Tuna, Salmon');
    assert.equal(describeFieldValue(fields.pet, 'pet-1'), 'Cats');
  });

  it('pre-fills every default the form gives', () => {
    assert.deepEqual(formDefaults(formFields(everyField)), {
      integer: 42,
      number: 3.14,
      check: true,
      friend: 'Monica',
      hero: 'hero-1',
      pet: 'pet-2',
      instruments: ['Guitar'],
      fish: ['fish-1'],
    });
  });

  it('checks typed strings by length and format, and numbers by their bounds', () => {
    const p = everyField.properties as Record<string, PropertySchema>;
    assert.ok('error' in parsePropertyInput(p.name, 'A'));
    assert.ok('error' in parsePropertyInput(p.name, 'A'.repeat(21)));
    assert.deepEqual(parsePropertyInput(p.name, 'Ada'), { value: 'Ada' });
    assert.ok('error' in parsePropertyInput(p.email, 'not an address'));
    assert.ok('value' in parsePropertyInput(p.email, 'ada@example.com'));
    assert.ok('error' in parsePropertyInput(p.homepage, 'no scheme'));
    assert.ok('value' in parsePropertyInput(p.homepage, 'https://example.com/ada'));
    assert.ok('error' in parsePropertyInput(p.birthdate, '1815-13-10'));
    assert.ok('value' in parsePropertyInput(p.birthdate, '1815-12-10'));
    assert.ok('error' in parsePropertyInput(p.meeting, '2025-11-25 10:00'));
    assert.ok('value' in parsePropertyInput(p.meeting, '2025-11-25T10:00:00Z'));
    assert.ok('error' in parsePropertyInput(p.integer, '101'));
    assert.ok('error' in parsePropertyInput(p.integer, '4.5'));
    assert.deepEqual(parsePropertyInput(p.integer, '7'), { value: 7 });
    assert.ok('error' in parsePropertyInput(p.number, '-1'));
  });

  it('validates the whole answer against requestedSchema before it is sent', () => {
    const good = { ...formDefaults(formFields(everyField)), name: 'Ada' };
    assert.deepEqual(checkElicitationContent(everyField, good), { ok: true });
    const missing = checkElicitationContent(everyField, { integer: 42 });
    assert.ok(!missing.ok && /name/.test(missing.message), 'a missing required field fails');
    const tooMany = checkElicitationContent(everyField, { ...good, instruments: ['Guitar', 'Piano', 'Drums'] });
    assert.ok(!tooMany.ok && /instruments/.test(tooMany.message));
    const wrongChoice = checkElicitationContent(everyField, { ...good, hero: 'hero-9' });
    assert.ok(!wrongChoice.ok);
    const nested = checkElicitationContent({ type: 'object' }, { deep: { not: 'flat' } } as never);
    assert.ok(!nested.ok, 'only flat values may be sent');
  });
});

describe('URL elicitation required (-32042) against a fixture server', function () {
  this.timeout(20_000);
  afterEach(closeAll);

  type Seen = { pages: UrlElicitation[]; method: string; completedAtOnce: boolean };
  /** A client whose -32042 handler waits for the server's completion, then retries. */
  async function client(decide: (wait: ElicitationWait) => Promise<'retry' | 'stop'> = async (w) => (await w.allCompleted, 'retry')) {
    const seen: Seen[] = [];
    const t = await connect(fixture, {
      handlers: {
        urlElicitationRequired: async (pages, wait, request) => {
          seen.push({ pages, method: request.method, completedAtOnce: pages.every((p) => wait.isCompleted(p.elicitationId)) });
          return decide(wait);
        },
      },
    });
    return { ...t, seen };
  }

  it('retries a tool call once the server reports the page complete', async () => {
    const { client: c, seen } = await client();
    const { result } = await c.callTool('needs-page', { key: 'tool-1' });
    assert.equal((result.content[0] as { text: string }).text, 'done after the page');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].method, 'tools/call');
    assert.match(seen[0].pages[0].url, /^https:\/\/example\.test\/finish\//);
  });

  it('retries any request, not only tools/call: prompts/get', async () => {
    const { client: c, seen } = await client();
    const prompt = await c.getPrompt('gated', { key: 'prompt-1' });
    assert.equal((prompt.messages[0].content as { text: string }).text, 'the gated prompt');
    assert.deepEqual(
      seen.map((s) => s.method),
      ['prompts/get'],
    );
  });

  it('surfaces notifications/elicitation/complete as an event, and knows a completion that came first', async () => {
    const { client: c, seen } = await client(async () => {
      // Wait here until the completion has certainly arrived: the wait must still report it.
      await nextEvent(c.onElicitationComplete);
      return 'retry';
    });
    const done = c.callTool('needs-page', { key: 'tool-2' });
    await done;
    assert.equal(seen.length, 1);
    // The handler is still busy when the completion arrives (it waits for the client's own event
    // of it, subscribed before the call, so it cannot miss one that came first): the wait must know it.
    let completion: Promise<unknown> = Promise.resolve();
    const late = await client(async (wait) => {
      await completion;
      assert.ok(wait.isCompleted(late.seen[0].pages[0].elicitationId), 'the completion arrived while the person was busy');
      await wait.allCompleted;
      return 'retry';
    });
    completion = nextEvent(late.client.onElicitationComplete);
    await late.client.callTool('needs-page', { key: 'tool-3', completeAfterMs: 0 });
  });

  it('throws the -32042 when the person stops, and without a handler', async () => {
    const { client: c } = await client(async () => 'stop');
    await assert.rejects(
      c.callTool('needs-page', { key: 'tool-4', completeAfterMs: -1 }),
      (e: unknown) => e instanceof McpError && e.code === -32042,
    );
    const plain = await connect(fixture);
    await assert.rejects(
      plain.client.callTool('needs-page', { key: 'tool-5' }),
      (e: unknown) => e instanceof McpError && e.code === -32042,
    );
  });
});
