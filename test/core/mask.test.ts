import { strict as assert } from 'node:assert';
import { createMasker, describeFindings } from '../../src/core/policy/mask';

// Secret-shaped strings are built here, never written out whole, so no scanner mistakes the repo for a leak.
const chars = (n: number, alphabet = 'aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z') =>
  Array.from({ length: n }, (_, i) => alphabet[(i * 7 + 3) % alphabet.length]).join('');
const awsId = 'AKIA' + 'IOSFODNN7EXAMPLE';
const awsSecret = chars(36) + '/K7+';
const jwt = 'eyJ' + chars(20) + '.eyJ' + chars(30) + '.' + chars(43);
const pem = ['-----BEGIN RSA PRIVATE KEY-----', chars(64), chars(64), '-----END RSA PRIVATE KEY-----'].join('\n');

const { masker } = createMasker();

/** [what, text, the kinds found (in order), what must remain] */
const masked: Array<[string, string, string[], string?]> = [
  ['PEM private key block', `key:\n${pem}\nafter`, ['private-key'], 'key:\n[masked: private-key]\nafter'],
  ['OpenSSH private key block', `-----BEGIN OPENSSH PRIVATE KEY-----\n${chars(70)}\n-----END OPENSSH PRIVATE KEY-----`, ['private-key']],
  ['AWS access key id', `id ${awsId} here`, ['aws-access-key'], 'id [masked: aws-access-key] here'],
  ['AWS temporary key id', `ASIA${'Y'.repeat(16)}`, ['aws-access-key']],
  [
    'AWS secret next to its id',
    `${awsId},${awsSecret}`,
    ['aws-secret-key', 'aws-access-key'],
    '[masked: aws-access-key],[masked: aws-secret-key]',
  ],
  [
    'AWS secret under its name',
    `aws_secret_access_key = ${awsSecret}`,
    ['aws-secret-key'],
    'aws_secret_access_key = [masked: aws-secret-key]',
  ],
  ['GitHub classic token', `ghp_${chars(36)}`, ['github-token']],
  ['GitHub OAuth token', `gho_${chars(36)}`, ['github-token']],
  ['GitHub user token', `ghu_${chars(36)}`, ['github-token']],
  ['GitHub server token', `ghs_${chars(36)}`, ['github-token']],
  ['GitHub refresh token', `ghr_${chars(36)}`, ['github-token']],
  ['GitHub fine-grained token', `github_pat_${chars(22)}_${chars(59)}`, ['github-token']],
  ['GitLab token', `glpat-${chars(20)}`, ['gitlab-token']],
  ['Slack bot token', `xoxb-${'1'.repeat(12)}-${chars(24)}`, ['slack-token']],
  ['Slack user token', `xoxp-${'2'.repeat(12)}-${chars(24)}`, ['slack-token']],
  ['Google API key', `AIza${chars(35)}`, ['google-api-key']],
  ['OpenAI key', `sk-${chars(48)}`, ['api-key']],
  ['OpenAI project key', `sk-proj-${chars(40)}`, ['api-key']],
  ['Anthropic key', `sk-ant-api03-${chars(40)}`, ['api-key']],
  ['JWT', `token ${jwt} end`, ['jwt'], 'token [masked: jwt] end'],
  ['Authorization: Bearer', `Authorization: Bearer ${chars(12)}`, ['authorization'], 'Authorization: Bearer [masked: authorization]'],
  ['Authorization: Basic', `authorization: Basic ${chars(16)}==`, ['authorization'], 'authorization: Basic [masked: authorization]'],
  ['a bare Bearer value', `curl -H "X: Bearer ${chars(24)}"`, ['authorization']],
  ['password= pair', 'login password=hunter2 ok', ['password'], 'login password=[masked: password] ok'],
  ['secret: pair', 'client_secret: s3cr3t-value', ['secret'], 'client_secret: [masked: secret]'],
  ['token= pair', 'url?token=abc123&x=1', ['token'], 'url?token=[masked: token]&x=1'],
  ['api_key= pair', 'API_KEY=abcdef', ['api-key'], 'API_KEY=[masked: api-key]'],
  ['JSON text pair', '{"password": "p\\"w", "user": "ann"}', ['password'], '{"password": [masked: password], "user": "ann"}'],
  ['quoted single pair', "apikey: 'x y z'", ['api-key'], 'apikey: [masked: api-key]'],
];

/** [what, text]: must come out unchanged. */
const untouched: Array<[string, string]> = [
  ['a sentence about private keys', 'Never paste a PRIVATE KEY into chat; BEGIN with the public one.'],
  ['a PEM public key', '-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----'],
  ['AKIA too short', 'AKIA1234'],
  ['AKIA inside a longer word', `X${awsId}X`],
  ['lower-case akia', `akia${'y'.repeat(16)}`],
  ['ghp_ too short', 'ghp_abc123'],
  ['a word starting with gh', 'ghost_writer and ghp-style names'],
  ['glpat too short', 'glpat-short'],
  ['xox with another letter', `xoxz-${chars(20)}`],
  ['AIza too short', 'AIzaSyShort'],
  ['sk- in a word', `task-${chars(30)} and risk-${chars(30)}`],
  ['sk- too short', 'sk-learn is a library'],
  ['base64 that starts with eyJ only once', `eyJ${chars(40)}`],
  ['a dotted version', 'v1.2.3 and a.b.c'],
  ['Bearer as a word', 'the bearer of bad news'],
  ['Authorization without a value', 'Authorization: required'],
  ['a key whose value is on another line', 'password=\ntoken:'],
  ['a key that only contains the word', 'tokens=5, maxTokens: 100, passwordless=true'],
  ['an empty JSON value', '{"password": ""}'],
  ['a path with slashes', '/home/user/secret/notes.txt'],
];

describe('masking: built-in shapes', () => {
  for (const [what, text, kinds, expected] of masked) {
    it(`masks ${what}`, () => {
      const out = masker.maskText(text);
      assert.deepEqual(
        out.found.map((f) => f.kind),
        kinds,
      );
      assert.ok(out.text.includes('[masked: '), out.text);
      if (expected !== undefined) assert.equal(out.text, expected);
    });
  }
  for (const [what, text] of untouched) {
    it(`leaves ${what} alone`, () => {
      const out = masker.maskText(text);
      assert.equal(out.text, text);
      assert.deepEqual(out.found, []);
    });
  }

  it('counts repeats and says what was masked', () => {
    const out = masker.maskText(`ghp_${chars(36)} and ghp_${chars(40)} and ${jwt}`);
    assert.equal(describeFindings(out.found), '2 × github-token, 1 × jwt');
  });

  it('masking twice changes nothing more', () => {
    for (const [, text] of masked) {
      const once = masker.maskText(text).text;
      assert.equal(masker.maskText(once).text, once);
    }
  });

  it('masks every string of a JSON value, and values under secret-named keys, without changing the original', () => {
    const original = { q: `use ghp_${chars(36)}`, nested: [{ password: 'plain' }, { apiKey: 'k', api_key: 'v' }], n: 3 };
    const copy = structuredClone(original);
    const out = masker.maskValue(original);
    assert.deepEqual(original, copy);
    assert.deepEqual(out.value, {
      q: 'use [masked: github-token]',
      nested: [{ password: '[masked: password]' }, { apiKey: '[masked: api-key]', api_key: '[masked: api-key]' }],
      n: 3,
    });
    assert.equal(describeFindings(out.found), '1 × github-token, 1 × password, 2 × api-key');
  });

  it('stays linear on long adversarial text (no catastrophic backtracking)', () => {
    const parts = [
      'eyJ'.repeat(20000),
      'eyJa.'.repeat(20000),
      'password='.repeat(20000),
      'a'.repeat(100000),
      '-----BEGIN PRIVATE KEY-----'.repeat(2000),
      'Authorization: Bearer '.repeat(5000),
      `${'AKIA' + 'A'.repeat(16)} `.repeat(5000),
      '_'.repeat(100000) + 'token',
    ];
    // Not a wall-clock assertion: an exponential pattern would not finish at all within mocha's timeout.
    for (const text of parts) masker.maskText(text);
  });
});

describe('masking: the person’s own patterns', () => {
  it('adds patterns with and without a kind, and reports invalid ones instead of throwing', () => {
    const { masker: own, problems } = createMasker(['EMP-\\d{6}', { kind: 'ticket', pattern: 'TCK#[0-9]+' }, '(unclosed', '', 'a*']);
    assert.equal(problems.length, 3);
    assert.match(problems[0], /\(unclosed/);
    assert.match(problems[2], /empty/);
    const out = own.maskText('EMP-123456 filed TCK#42');
    assert.equal(out.text, '[masked: custom] filed [masked: ticket]');
  });
});
