import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { runCli } from '../../src/cli/main';
import { verifyAuditFile } from '../../src/core/policy/auditVerify';
import {
  LOCKABLE_SETTINGS,
  managedPolicyFile,
  readManagedPolicy,
  vscodeMcpPolicyOf,
  type LockableSetting,
} from '../../src/core/gateway/managedPolicy';
import { UPSTREAM } from '../helpers/gateway';
import { ROOT } from '../helpers/servers';

type Property = { default?: unknown; scope?: string; policy?: { name: string; category: string; minimumVersion: string } };
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, Property> } | Array<{ properties: Record<string, Property> }> };
};
const sections = manifest.contributes.configuration;
const properties: Record<string, Property> = Object.assign(
  {},
  ...(Array.isArray(sections) ? sections : [sections]).map((c) => c.properties),
);

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-org-'));
}

function policyFile(values: Record<string, unknown>): string {
  const file = path.join(scratch(), 'policy.json');
  fs.writeFileSync(file, JSON.stringify(values));
  return file;
}

/** Runs the CLI in this process against `policy`, collecting what it writes. */
async function cli(args: string[], policy: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        append(chunk.toString());
        done();
      },
    });
  const code = await runCli(
    args,
    sink((s) => (stdout += s)) as unknown as typeof process.stdout,
    sink((s) => (stderr += s)) as unknown as typeof process.stderr,
    { managedPolicyFile: policy },
  );
  return { code, stdout, stderr };
}

const upstream = ['--stdio', `${JSON.stringify(process.execPath)} ${JSON.stringify(UPSTREAM)}`];

describe("an organisation's policy", function () {
  this.timeout(30_000);

  it('every lockable setting has its policy in the manifest, machine-scoped, under the name docs/teams.md gives', () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'teams.md'), 'utf8');
    for (const [setting, name] of Object.entries(LOCKABLE_SETTINGS)) {
      const property = properties[setting];
      assert.ok(property, `${setting} is contributed`);
      assert.equal(property.policy?.name, name, setting);
      assert.equal(property.policy?.category, 'Extensions');
      assert.match(property.policy?.minimumVersion ?? '', /^1\.\d+$/);
      assert.equal(property.scope, 'machine', `${setting}: no workspace can set it`);
      assert.ok(docs.includes(`| \`${setting}\` | \`${name}\` |`), `docs/teams.md lists ${setting}`);
    }
  });

  it("the editor's defaults of the lockable settings are the manifest's", async () => {
    // src/vscode/common/organisation.ts imports vscode: its table is read as text.
    const source = fs.readFileSync(path.join(ROOT, 'src', 'vscode', 'common', 'organisation.ts'), 'utf8');
    for (const setting of Object.keys(LOCKABLE_SETTINGS) as LockableSetting[]) {
      const line = new RegExp(`'${setting.replace(/\./g, '\\.')}': (.+),`).exec(source);
      assert.ok(line, setting);
      assert.deepEqual(
        line[1] === 'undefined' ? undefined : JSON.parse(line[1].replace(/'/g, '"').replace(/([{,]\s*)(\w+):/g, '$1"$2":')),
        properties[setting].default,
        setting,
      );
    }
  });

  it("the managed file: VS Code's own on Linux; a missing file locks nothing, a malformed one is named", () => {
    assert.equal(managedPolicyFile('linux'), '/etc/vscode/policy.json');
    assert.match(managedPolicyFile('win32', { ProgramData: 'D:\\PD' }), /^D:\\PD\\MCP Host\\policy\.json$/);
    assert.deepEqual(readManagedPolicy(path.join(scratch(), 'none.json')).values, {});
    const bad = path.join(scratch(), 'bad.json');
    fs.writeFileSync(bad, '[1,2]');
    assert.match(readManagedPolicy(bad).problem ?? '', /not a JSON object/);
  });

  it("VS Code's MCP lists from the file: JSON text or arrays, the managed list only where it says so, none for shared-only", () => {
    const lists = vscodeMcpPolicyOf(
      readManagedPolicy(
        policyFile({ ChatDeniedMcpServers: JSON.stringify([{ serverName: 'bad' }]), ChatAllowManagedMcpServersOnly: true }),
      ),
    );
    assert.deepEqual(lists, { access: true, allowed: [], denied: [{ serverName: 'bad' }] });
    assert.equal(vscodeMcpPolicyOf(readManagedPolicy(policyFile({ ChatMCP: 'none', McpHostVscodeMcpPolicy: 'sharedServers' }))), undefined);
    assert.equal(vscodeMcpPolicyOf(readManagedPolicy(policyFile({ ChatMCP: 'registry' })))?.access, false);
  });

  describe('the CLI under a managed file', () => {
    it('a server the deny list names is not started, and the refusal names the policy', async () => {
      const log = path.join(scratch(), 'calls.jsonl');
      process.env.GATEWAY_UPSTREAM_CALL_LOG = log;
      try {
        const r = await cli(
          [...upstream, 'call', 'echo', '{"text":"x"}'],
          policyFile({ ChatDeniedMcpServers: [{ serverCommand: [process.execPath, UPSTREAM] }] }),
        );
        assert.equal(r.code, 1);
        assert.match(r.stderr, /does not allow this server \(ChatDeniedMcpServers/);
        assert.equal(fs.existsSync(log), false, 'nothing reached the server');
        const allowed = await cli(
          [...upstream, 'call', 'echo', '{"text":"x"}'],
          policyFile({ ChatAllowedMcpServers: JSON.stringify([{ serverName: 'node' }]) }),
        );
        assert.equal(allowed.code, 0, allowed.stderr);
      } finally {
        delete process.env.GATEWAY_UPSTREAM_CALL_LOG;
      }
    });

    it('a locked fence holds without --root and refuses --fence off; a locked audit file is where records go', async () => {
      const audit = path.join(scratch(), 'org-audit.jsonl');
      const policy = policyFile({ McpHostRootsFence: 'block', McpHostAuditFile: audit });
      const off = await cli([...upstream, '--fence', 'off', 'call', 'read_file', '{"path":"/etc/passwd"}'], policy);
      assert.equal(off.code, 2);
      assert.match(off.stderr, /keeps the fence on \(McpHostRootsFence/);
      const fenced = await cli([...upstream, 'call', 'read_file', '{"path":"/etc/passwd"}'], policy);
      assert.equal(fenced.code, 1);
      assert.match(fenced.stderr, /refused \(nothing was sent\): outside the roots/);
      const elsewhere = await cli([...upstream, '--audit', path.join(scratch(), 'mine.jsonl'), 'call', 'echo', '{"text":"x"}'], policy);
      assert.equal(elsewhere.code, 2);
      assert.match(elsewhere.stderr, /your organisation's audit file is/);
      const verdict = await verifyAuditFile(audit);
      assert.ok(verdict.ok);
      assert.equal(verdict.records.length, 1, "the fenced call was audited in the organisation's file");
    });
  });
});
