import { strict as assert } from 'node:assert';
import { createMasker, describeFindings } from '../../src/core/scan/mask';

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
  // camelCase, kebab and snake keys, in JSON text, env lines and headers.
  ['JSON accessToken', '{"accessToken": "abc.def-1"}', ['token'], '{"accessToken": [masked: token]}'],
  ['JSON clientSecret', '{"clientSecret":"s3cr3t"}', ['secret'], '{"clientSecret":[masked: secret]}'],
  ['refreshToken', 'refreshToken=rt-123', ['token'], 'refreshToken=[masked: token]'],
  ['sessionToken', '"sessionToken": "FwoGZXIvYXdz"', ['token'], '"sessionToken": [masked: token]'],
  ['client_secret in a query', '?client_id=app&client_secret=xyz&x=1', ['secret'], '?client_id=app&client_secret=[masked: secret]&x=1'],
  ['privateKey', "privateKey: 'MIIEvQIBADAN'", ['private-key'], 'privateKey: [masked: private-key]'],
  ['x-api-key header', 'x-api-key: k-123456', ['api-key'], 'x-api-key: [masked: api-key]'],
  ['X-Auth-Token header', 'X-Auth-Token: 0a1b2c', ['token'], 'X-Auth-Token: [masked: token]'],
  ['APIKey', 'APIKey=abc', ['api-key'], 'APIKey=[masked: api-key]'],
  ['id_token', '"id_token":"x.y.z"', ['token'], '"id_token":[masked: token]'],
  ['an Authorization value without a scheme', 'Authorization: 0a1b2c3d', ['authorization'], 'Authorization: [masked: authorization]'],
  ['a dotted key', 'spring.datasource.password=pw1', ['password'], 'spring.datasource.password=[masked: password]'],
  ['auth', '{"auth": "ann:hunter2"}', ['secret'], '{"auth": [masked: secret]}'],
  ['credentials', 'credentials = "ann:hunter2"', ['secret'], 'credentials = [masked: secret]'],
  ['passphrase', 'PASSPHRASE=correct-horse', ['password'], 'PASSPHRASE=[masked: password]'],
  ['a password that is not a path', 'pwd=hunter2', ['password'], 'pwd=[masked: password]'],
  ['a password that starts with $', 'password=$ecret1', ['password'], 'password=[masked: password]'],
  // Command lines.
  ['--token VALUE', 'node server.js --token abc123 --port 3000', ['token'], 'node server.js --token [masked: token] --port 3000'],
  ['--password VALUE', 'psql --password hunter2', ['password'], 'psql --password [masked: password]'],
  ['--api-key=VALUE', 'tool --api-key=xyz789 run', ['api-key'], 'tool --api-key=[masked: api-key] run'],
  ['a quoted flag and value', '"node" "s.js" "--token" "abc123"', ['token'], '"node" "s.js" "--token" [masked: token]'],
  ['--client-secret VALUE', 'login --client-secret "a b"', ['secret'], 'login --client-secret [masked: secret]'],
  // URL user-info, any scheme.
  [
    'https user-info',
    'clone https://ann:hunter2@git.example.com/r.git',
    ['url-password'],
    'clone https://ann:[masked: url-password]@git.example.com/r.git',
  ],
  ['postgres user-info', 'postgres://app:pa55w0rd@db:5432/main', ['url-password'], 'postgres://app:[masked: url-password]@db:5432/main'],
  [
    'mongodb+srv user-info',
    'mongodb+srv://u:p%40ss@cluster0.example.net/db',
    ['url-password'],
    'mongodb+srv://u:[masked: url-password]@cluster0.example.net/db',
  ],
  ['a password with an unencoded @', 'postgres://u:p@ss@db/x', ['url-password'], 'postgres://u:[masked: url-password]@db/x'],
  ['redis user-info without a user', 'redis://:s3cret@cache:6379', ['url-password'], 'redis://:[masked: url-password]@cache:6379'],
  // Stripe.
  ['Stripe live secret key', `sk_live_${chars(24)}`, ['stripe-key']],
  ['Stripe test secret key', `key sk_test_${chars(24)} end`, ['stripe-key'], 'key [masked: stripe-key] end'],
  ['Stripe restricted key', `rk_live_${chars(24)}`, ['stripe-key']],
  // Private keys: PGP, and a PEM block cut short (no END line).
  [
    'PGP private key block',
    ['-----BEGIN PGP PRIVATE KEY BLOCK-----', '', chars(64), '=abcd', '-----END PGP PRIVATE KEY BLOCK-----', 'after'].join('\n'),
    ['private-key'],
    '[masked: private-key]\nafter',
  ],
  [
    'PEM block without its END line',
    `before\n-----BEGIN PRIVATE KEY-----\n${chars(64)}\n${chars(20)}`,
    ['private-key'],
    'before\n[masked: private-key]',
  ],
  // Issue 45: shapes that were missed, or masked with their secret part left beside the mark.
  [
    'Authorization: Bot',
    `Authorization: Bot ${chars(24)}.${chars(6)}.${chars(27)}`,
    ['authorization'],
    'Authorization: Bot [masked: authorization]',
  ],
  ['Authorization: ApiKey', `Authorization: ApiKey ${chars(32)}`, ['authorization'], 'Authorization: ApiKey [masked: authorization]'],
  ['Authorization: SSWS', `authorization: SSWS 00${chars(40)}`, ['authorization'], 'authorization: SSWS [masked: authorization]'],
  [
    'an Authorization of a scheme no one knows',
    `Authorization: Custom ${chars(20)}`,
    ['authorization'],
    'Authorization: [masked: authorization]',
  ],
  ['a short credential after a scheme', 'X-Auth: Bearer abc12', ['secret'], 'X-Auth: [masked: secret]'],
  ["PHP's =>", `$db = ['password' => '${chars(12)}'];`, ['password'], "$db = ['password' => [masked: password]];"],
  ["Go's :=", `password := "${chars(12)}"`, ['password'], 'password := [masked: password]'],
  ['an unquoted passphrase with spaces', 'passphrase: correct horse battery staple', ['password'], 'passphrase: [masked: password]'],
  [
    'a YAML passphrase with spaces',
    'db:\n  password: correct horse battery staple\n  user: ann',
    ['password'],
    'db:\n  password: [masked: password]\n  user: ann',
  ],
  [
    'a YAML block scalar',
    'db:\n  password: |\n    s3cr3t line one\n\n    line two\n  user: ann',
    ['password'],
    'db:\n  password: [masked: password]\n  user: ann',
  ],
  ['PGPASSWORD', 'PGPASSWORD=s3cr3t-pg psql', ['password'], 'PGPASSWORD=[masked: password] psql'],
  ['SECRET_KEY_BASE', `SECRET_KEY_BASE=${chars(64)}`, ['secret'], 'SECRET_KEY_BASE=[masked: secret]'],
  ['AUTHTOKEN', 'AUTHTOKEN=tok-123', ['token'], 'AUTHTOKEN=[masked: token]'],
  ['DB_PASSWORD_PROD', 'DB_PASSWORD_PROD=pw-prod-1', ['password'], 'DB_PASSWORD_PROD=[masked: password]'],
  ['password2', 'password2=hunter3', ['password'], 'password2=[masked: password]'],
  ['API_KEY_2', '"API_KEY_2": "k2"', ['api-key'], '"API_KEY_2": [masked: api-key]'],
  [
    'XML <password>',
    '<config><user>ann</user><password>hunter2</password></config>',
    ['password'],
    '<config><user>ann</user><password>[masked: password]</password></config>',
  ],
  ['XML with a namespace and attributes', '<ns:token type="x">tk-1</ns:token>', ['token'], '<ns:token type="x">[masked: token]</ns:token>'],
  [
    'PuTTY private key',
    [
      'PuTTY-User-Key-File-3: ssh-ed25519',
      'Encryption: none',
      'Comment: eddsa-key',
      'Public-Lines: 2',
      chars(64),
      chars(20),
      'Private-Lines: 1',
      chars(44),
      `Private-MAC: ${'0f'.repeat(32)}`,
      'after',
    ].join('\n'),
    ['private-key'],
    '[masked: private-key]\nafter',
  ],
  [
    'SSH2 (SECSH) private key',
    [
      '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----',
      'Comment: "rsa-key"',
      chars(64),
      chars(30),
      '---- END SSH2 ENCRYPTED PRIVATE KEY ----',
      'after',
    ].join('\n'),
    ['private-key'],
    '[masked: private-key]\nafter',
  ],
  ['JWE', `token ${'eyJ' + chars(30)}.${chars(40)}.${chars(16)}.${chars(50)}.${chars(22)} end`, ['jwt'], 'token [masked: jwt] end'],
  ['JWE without an encrypted key', `${'eyJ' + chars(30)}..${chars(16)}.${chars(50)}.${chars(22)}`, ['jwt'], '[masked: jwt]'],
  [
    'Slack webhook URL',
    `post to https://hooks.slack.com/services/T${chars(8)}/B${chars(8)}/${chars(24)} now`,
    ['slack-webhook'],
    'post to https://hooks.slack.com/services/[masked: slack-webhook] now',
  ],
  ['a password with a slash', 'postgres://app:pa/ss9word@db/main', ['url-password'], 'postgres://app:[masked: url-password]@db/main'],
  ['a key over 64 characters', `${'A'.repeat(70)}_PASSWORD=hunter2`, ['password'], `${'A'.repeat(70)}_PASSWORD=[masked: password]`],
  ['a quoted value over 1,024 characters', `{"password": "${chars(2000)}"}`, ['password'], '{"password": [masked: password]}'],
  [
    'an STS answer, its braces kept',
    `{"Credentials": {"AccessKeyId": "${awsId}", "SecretAccessKey": "${awsSecret}", "SessionToken": "FwoG${chars(40)}", "Expiration": "2026-01-01T00:00:00Z"}}`,
    ['aws-access-key', 'secret', 'token'],
    '{"Credentials": {"AccessKeyId": "[masked: aws-access-key]", "SecretAccessKey": [masked: secret], "SessionToken": [masked: token], "Expiration": "2026-01-01T00:00:00Z"}}',
  ],
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
  // Things that look like secrets to a careless pattern and are ordinary output.
  ['PWD, the working directory', 'PWD=/home/me\nOLDPWD=/tmp'],
  ['PWD on Windows', 'PWD=C:\\Users\\me'],
  ['a pagination cursor next_token', '{"items": [], "next_token": "b2Zmc2V0PTIw"}'],
  ['a pagination cursor nextToken', 'nextToken=abc123'],
  ['a pagination cursor pageToken', '"pageToken": "CAoQAA"'],
  ['a pagination cursor nextPageToken', 'nextPageToken: CAoQAA'],
  ['a cursor', '{"cursor": "eyJvZmZzZXQiOjEwfQ"}'],
  ['a progress token', '"progressToken": "p-17"'],
  ['a cancellation token', 'cancellationToken: tok-1'],
  ['token counts', 'tokens: 123, maxTokens: 4096, max_tokens=10, token_count=5, total_tokens: 9'],
  ['a tokenizer', 'tokenizer: cl100k_base'],
  ['a password policy', 'passwordPolicy: "min 8", password_length=12, passwordRequired: true'],
  ['a secret reference', 'secretName: prod-db, secret_ref=vault/kv'],
  ['flags without a value', 'password: required, token: optional, auth: none'],
  ['fetch credentials mode', "{ credentials: 'include' }"],
  ['a token type', '"token_type": "Bearer", "token_endpoint": "https://as.example/token"'],
  ['a public key', "publicKey: 'MIIBIjAN', key: value"],
  ['a flag followed by another flag', 'cli --token --verbose'],
  ['the word password in prose', 'Enter your password below and press Enter'],
  ['a Stripe publishable key', `pk_live_${chars(24)}`],
  ['a Stripe-like word', 'task_live_update and desk_test_run'],
  ['a URL with a port and no user-info', 'https://example.com:8443/path@v2'],
  ['a URL with only a user', 'ssh://git@github.com/org/repo.git'],
  ['a file named like a key, then a colon', 'cat: /etc/passwd: Permission denied; C:\\keys\\token: missing'],
  ['40 characters with no access key id beside them', `id: ${chars(36)}/K7+`],
  [
    'where a secret comes from, not the secret',
    [
      'GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}',
      'password: {{ vault_password }}',
      'API_KEY=$API_KEY',
      'token=$(cat ~/.token)',
      'set PASSWORD=%PASSWORD%',
      'apiKey: "<your-api-key>"',
      'const token = process.env.TOKEN;',
      'password = os.environ["DB_PASSWORD"]',
      'secret: ***',
      'password := os.Getenv("DB_PASSWORD")',
      "'password' => env('DB_PASSWORD'),",
      'token = ENV["API_TOKEN"]',
    ].join('\n'),
  ],
  ['a PGP public key block', '-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQENBF\n-----END PGP PUBLIC KEY BLOCK-----'],
  ['an SSH2 public key', '---- BEGIN SSH2 PUBLIC KEY ----\nAAAAB3Nz\n---- END SSH2 PUBLIC KEY ----'],
  ['credentials holding an object', '{"credentials": {"user": "ann"}, "auth": [1, 2]}'],
  ['XML about a secret', '<passwordPolicy>min 8</passwordPolicy><token_count>5</token_count><password/>'],
  ['a cursor written as one word', 'nexttoken=abc, pagetoken: def'],
  ['a password hint and a key id', 'password_hint: your pet, AccessKeyId: none, PGHOST=db'],
  ['two dots that are no JWE', `eyJ${chars(30)}.abc.def`],
  ['a URL with a port, a path and an @', 'https://example.com:8443/a/b@v2 and https://registry.example/@scope/pkg'],
  ['a Slack URL that is no webhook', 'https://hooks.slack.com/ and https://api.slack.com/methods'],
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

  it('masks a secret standing alone, with no separator or dash anywhere in the text', () => {
    // A text without `:`, `=` or `-` skips the key=value detector: each other detector's own mark must still let it run.
    const bare: Array<[string, string]> = [
      [awsId, 'aws-access-key'],
      [`ghp_${chars(36)}`, 'github-token'],
      [`github_pat_${chars(40)}`, 'github-token'],
      [`AIza${chars(35)}`, 'google-api-key'],
      [`sk_live_${chars(24)}`, 'stripe-key'],
      [jwt, 'jwt'],
      [`curl with Bearer ${chars(24)}`, 'authorization'],
    ];
    for (const [text, kind] of bare) {
      assert.doesNotMatch(text, /[:=-]/);
      const out = masker.maskText(`the value ${text} here`);
      assert.deepEqual(
        out.found.map((f) => f.kind),
        [kind],
        text,
      );
    }
  });

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

  it('masks values under camelCase, kebab and snake secret keys, and leaves cursors, counts and the working directory', () => {
    const out = masker.maskValue({
      accessToken: 'at-1',
      clientSecret: 'cs-1',
      'x-api-key': 'k-1',
      refresh_token: 'rt-1',
      headers: { Authorization: 'Basic dXNlcjpwYXNz' },
      nextToken: 'page-2',
      next_token: 'page-2',
      pageToken: 'page-2',
      cursor: 'page-2',
      maxTokens: 4096,
      tokenizer: 'o200k',
      env: { PWD: '/home/me', DB_PASSWORD: 'hunter2' },
    });
    assert.deepEqual(out.value, {
      accessToken: '[masked: token]',
      clientSecret: '[masked: secret]',
      'x-api-key': '[masked: api-key]',
      refresh_token: '[masked: token]',
      headers: { Authorization: '[masked: authorization]' },
      nextToken: 'page-2',
      next_token: 'page-2',
      pageToken: 'page-2',
      cursor: 'page-2',
      maxTokens: 4096,
      tokenizer: 'o200k',
      env: { PWD: '/home/me', DB_PASSWORD: '[masked: password]' },
    });
  });

  it('masks a PEM key split into an array of lines, and leaves other arrays of strings their items', () => {
    const out = masker.maskValue({ lines: pem.split('\n'), words: ['password', 'is', 'required'], mixed: ['a', 1, 'b'] });
    assert.deepEqual(out.value, {
      lines: ['[masked: private-key]', '', '', ''],
      words: ['password', 'is', 'required'],
      mixed: ['a', 1, 'b'],
    });
    assert.equal(describeFindings(out.found), '1 × private-key');
  });

  it('masks a secret under a secret key after a scheme or with spaces, never leaving its secret part beside the mark', () => {
    for (const text of [
      `Authorization: Bot ${chars(30)}`,
      `Authorization: Weird ${chars(30)}`,
      `X-Api-Key: Bearer ${chars(30)}`,
      `passphrase: ${chars(8)} ${chars(9)} ${chars(10)}`,
      `authorization=Unknown ${chars(30)}&x=1`,
    ]) {
      const out = masker.maskText(text).text;
      assert.doesNotMatch(out, new RegExp(chars(8)), `${text} → ${out}`);
    }
  });

  it('masks a secret named beside it (name/value pairs, header tuples), a list and a number under a secret key', () => {
    const secret = 'hunter2Xq9Zp';
    const out = masker.maskValue({
      env: [
        { name: 'DB_PASSWORD', value: secret },
        { name: 'LOG_LEVEL', value: 'debug' },
      ],
      headers: [{ Name: 'Authorization', Value: `Bearer ${secret}` }, ['X-Api-Key', secret], ['Accept', 'text/plain']],
      tags: [{ Key: 'api_token', Value: secret }],
      tokens: [secret, `${secret}b`],
      pin: 123456,
      password: 98765432,
      maxTokens: 100,
    });
    assert.doesNotMatch(JSON.stringify(out.value), /hunter2|98765432/, JSON.stringify(out.value));
    assert.deepEqual(out.value, {
      env: [
        { name: 'DB_PASSWORD', value: '[masked: password]' },
        { name: 'LOG_LEVEL', value: 'debug' },
      ],
      headers: [{ Name: 'Authorization', Value: '[masked: authorization]' }, ['X-Api-Key', '[masked: api-key]'], ['Accept', 'text/plain']],
      tags: [{ Key: 'api_token', Value: '[masked: token]' }],
      tokens: ['[masked: token]', '[masked: token]'],
      pin: 123456,
      password: '[masked: password]',
      maxTokens: 100,
    });
  });

  it('masks a secret used as an object key, keeping two such keys apart', () => {
    const a = `ghp_${chars(36)}`;
    const b = `ghp_${chars(40)}`;
    const out = masker.maskValue({ [a]: { scope: 'repo' }, [b]: 1, plain: 2 });
    assert.ok(!JSON.stringify(out.value).includes('ghp_'), JSON.stringify(out.value));
    assert.deepEqual(Object.values(out.value as object), [{ scope: 'repo' }, 1, 2]);
    assert.equal(Object.keys(out.value as object).length, 3);
    assert.equal(describeFindings(out.found), '2 × github-token');
  });

  it('keeps a __proto__ key a key, and keeps the order of keys', () => {
    const value = JSON.parse('{"a": 1, "__proto__": {"password": "x"}, "z": 2}') as object;
    const out = masker.maskValue(value).value as Record<string, unknown>;
    assert.deepEqual(Object.keys(out), ['a', '__proto__', 'z']);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { password: '[masked: password]' });
  });

  it('walks a value nested 3,000 deep without overflowing the stack', () => {
    let deep: unknown = { token: `ghp_${chars(36)}` };
    for (let i = 0; i < 3000; i++) deep = i % 2 ? { next: deep } : [deep];
    const out = masker.maskValue(deep);
    let inner: unknown = out.value;
    for (let i = 0; i < 3000; i++) inner = Array.isArray(inner) ? inner[0] : (inner as { next: unknown }).next;
    assert.deepEqual(inner, { token: '[masked: token]' });
  });

  it('masks a secret split across parts where it lies, and keeps the number of parts', () => {
    const token = `ghp_${chars(36)}`;
    const out = masker.maskParts([`key ${token.slice(0, 10)}`, token.slice(10), ' then password=', 'hunter2 end', 'x']);
    assert.deepEqual(out.parts, ['key [masked: github-token]', '', ' then password=', '[masked: password] end', 'x']);
    // Each part alone too: a secret that follows a word character of the part before.
    assert.deepEqual(masker.maskParts(['x', token]).parts, ['x', '[masked: github-token]']);
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
      'a:'.repeat(50000),
      '--token '.repeat(10000),
      'x://'.repeat(20000) + 'a:b',
      'https://u:' + 'p'.repeat(100000),
      '-----BEGIN PGP PRIVATE KEY BLOCK-----'.repeat(2000),
      'sk_live_'.repeat(10000),
      `${'"accessToken":'.repeat(10000)}`,
      '<password>'.repeat(20000),
      `${'<a>'.repeat(30000)}x`,
      '<password>a'.repeat(20000),
      'PuTTY-User-Key-File-2:'.repeat(5000),
      '---- BEGIN SSH2 PRIVATE KEY ----'.repeat(2000),
      'eyJaaaaa.'.repeat(20000),
      'eyJaaaaaaaa.a.aaaaaaaaaa.a.'.repeat(5000),
      'https://hooks.slack.com/services/'.repeat(5000),
      `postgres://a:${'b/'.repeat(100000)}`,
      'x://a:b@'.repeat(20000),
      `x://a:${'b@'.repeat(50000)}`,
      `password: ${'a '.repeat(100000)}`,
      `"password": "${'a'.repeat(200000)}`,
      'password="a '.repeat(20000),
      "'password' => 'a ".repeat(20000),
      `${'a'.repeat(100000)}=x`,
      `${'A_'.repeat(50000)}PASSWORD=x`,
      'Authorization: Bot '.repeat(10000),
      'password := '.repeat(20000),
      'password: |'.repeat(20000),
      `password: |${'\n '.repeat(100000)}`,
      'password: |\n'.repeat(20000),
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
