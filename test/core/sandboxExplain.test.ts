import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  describeReach,
  hiddenPathsIn,
  previewReach,
  sandboxAvailability,
  sandboxedOnlyByDefault,
  sandboxedParams,
  withSandboxDefault,
  type SandboxMachine,
  type SandboxReach,
  type ServerDefinition,
} from '../../src/core';

/** A machine whose files are a table: `/home/p` the home, `/home/p/ws` the root, a script's project in /srv. */
function simulated(files: Record<string, 'file' | 'dir'>, links: Record<string, string> = {}): SandboxMachine {
  return {
    platform: 'linux',
    home: '/home/p',
    kind: (p) => files[links[p] ?? p] ?? 'none',
    realpath: (p) => links[p] ?? p,
    readlink: () => undefined,
    notWorldReadable: () => [],
    uid: 1000,
    probe: () => ({ ok: true, stderr: '' }),
  };
}

const FILES: Record<string, 'file' | 'dir'> = {
  '/usr/bin/node': 'file',
  '/usr/bin/bwrap': 'file',
  '/srv/mcp': 'dir',
  '/srv/mcp/package.json': 'file',
  '/srv/mcp/server.js': 'file',
  '/home/p': 'dir',
  '/home/p/ws': 'dir',
  '/home/p/ws/a.txt': 'file',
  '/home/p/ws/.env': 'file',
  '/home/p/notes': 'dir',
  '/home/p/notes/a.md': 'file',
  '/home/p/.ssh': 'dir',
  '/home/p/.ssh/id_ed25519': 'file',
  '/tmp': 'dir',
  '/tmp/shared.txt': 'file',
  '/var/lib/x': 'file',
};
const machine = simulated(FILES, { '/home/p/ws/link-to-notes': '/home/p/notes' });
const server = { command: 'node', args: ['/srv/mcp/server.js'], cwd: '/home/p/ws', env: { PATH: '/usr/bin' } };

describe('the sandbox as the person sees it', () => {
  it('the reach is computed without starting the server, and is the one the launch uses', () => {
    const settings = { filesystem: { denyRead: ['./.env'] } };
    const preview = previewReach(server, ['/home/p/ws'], settings, machine);
    const launched = sandboxedParams(server, ['/home/p/ws'], settings, machine, sandboxAvailability(machine));
    assert.deepEqual(preview, launched.reach);
    assert.equal(
      describeReach(preview, (p) => p.replace('/home/p', '~')),
      'sandboxed: reads and writes ~/ws/, also reads /srv/mcp, never reads ~/ws/.env, network: none',
    );
  });

  describe('the paths a failing server names', () => {
    const reach: SandboxReach = previewReach(server, ['/home/p/ws'], { filesystem: { denyRead: ['./.env'] } }, machine);
    const hidden = (text: string) => hiddenPathsIn(text, reach, machine, '/tmp');

    it('a file of the home outside the roots, named in an ENOENT: hidden, the folder to add is its own', () => {
      assert.deepEqual(hidden("ENOENT: no such file or directory, open '/home/p/notes/a.md'"), [
        { path: '/home/p/notes/a.md', folder: '/home/p/notes', cause: { kind: 'outside' } },
      ]);
    });

    it("a ~/ path and a folder; the host's /tmp (the sandbox has a private one); each once", () => {
      const found = hidden('cannot read ~/notes: EACCES\n    at open (/tmp/shared.txt)\nagain: ~/notes.');
      assert.deepEqual(
        found.map((h) => [h.path, h.folder]),
        [
          ['/home/p/notes', '/home/p/notes'],
          ['/tmp/shared.txt', '/tmp'],
        ],
      );
    });

    it("in a result's JSON (escaped quotes and newlines) the path ends where its string does", () => {
      const json = JSON.stringify({ content: [{ type: 'text', text: "ENOENT: open '/home/p/notes/a.md'\nat x" }], isError: true });
      assert.deepEqual(
        hidden(json).map((h) => h.path),
        ['/home/p/notes/a.md'],
      );
      assert.deepEqual(
        hidden(JSON.stringify({ text: 'ENOENT /home/p/notes\nagain' })).map((h) => h.path),
        ['/home/p/notes'],
      );
    });

    it('denyRead: named with the rule that hides it, even inside the roots', () => {
      assert.deepEqual(hidden('Error: ENOENT: /home/p/ws/.env'), [
        { path: '/home/p/ws/.env', folder: '/home/p/ws', cause: { kind: 'denyRead', rule: '/home/p/ws/.env' } },
      ]);
    });

    it('a hostile server naming a path inside its reach, one that does not exist, or one elsewhere gets no message', () => {
      assert.deepEqual(hidden('ENOENT /home/p/ws/a.txt and "/srv/mcp/server.js"'), []);
      assert.deepEqual(hidden('ENOENT /home/p/ws/../nothing/here.txt ~/.ssh/missing /home/p/ws/../ws/a.txt'), []);
      assert.deepEqual(hidden('ENOENT /var/lib/x'), []);
      // A link inside the roots is judged by where it leads: the sandbox mounts real paths.
      assert.deepEqual(
        hidden('open /home/p/ws/link-to-notes').map((h) => h.path),
        ['/home/p/notes'],
      );
    });

    it('on the real disk: a file outside a real root is found, one inside is not', () => {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-explain-'));
      try {
        const ws = path.join(home, 'ws');
        fs.mkdirSync(ws);
        fs.writeFileSync(path.join(ws, 'in.txt'), 'in');
        fs.writeFileSync(path.join(home, 'out.txt'), 'out');
        const real: SandboxReach = {
          readWrite: [ws],
          readOnly: [],
          denyRead: [],
          denyWrite: [],
          allowedDomains: [],
          deniedDomains: [],
          launcherDomains: [],
          protected: [],
          cwd: ws,
          home,
          notes: [],
        };
        const text = `EACCES '${path.join(home, 'out.txt')}' and '${path.join(ws, 'in.txt')}'`;
        assert.deepEqual(
          hiddenPathsIn(text, real).map((h) => h.path),
          [fs.realpathSync(path.join(home, 'out.txt'))],
        );
      } finally {
        fs.rmSync(home, { recursive: true, force: true });
      }
    });
  });

  describe('a machine with no sandbox (asked once)', () => {
    const def = (name: string, scope: 'user' | 'workspace', sandboxEnabled?: boolean): ServerDefinition =>
      ({
        type: 'stdio',
        name,
        command: 'node',
        args: [],
        env: {},
        roots: [],
        origin: { scope },
        ...(sandboxEnabled !== undefined ? { sandboxEnabled } : {}),
      }) as unknown as ServerDefinition;
    const defs = [def('mine', 'user'), def('repo', 'workspace'), def('asks', 'workspace', true), def('off', 'workspace', false)];

    it('only the servers the default alone would sandbox are in the question; an entry that asks for one is not', () => {
      assert.deepEqual(
        sandboxedOnlyByDefault(defs, 'workspace').map((d) => d.name),
        ['repo'],
      );
      assert.deepEqual(
        sandboxedOnlyByDefault(defs, 'all').map((d) => d.name),
        ['mine', 'repo'],
      );
      assert.deepEqual(sandboxedOnlyByDefault(defs, 'off'), []);
      // The entry that asks still asks with the default off (the answer "start unsandboxed" turns the default off).
      assert.equal((withSandboxDefault(defs[2], 'off') as { sandboxEnabled?: boolean }).sandboxEnabled, true);
    });

    it('a simulated machine without bubblewrap: unavailable, with what to install', () => {
      const none = simulated({ ...FILES, '/usr/bin/bwrap': 'dir' });
      const saved = process.env.PATH;
      process.env.PATH = '/usr/bin';
      try {
        const availability = sandboxAvailability(none);
        assert.equal(availability.ok, false);
        assert.match(availability.ok ? '' : availability.reason, /apt install bubblewrap/);
      } finally {
        process.env.PATH = saved;
      }
    });
  });
});
