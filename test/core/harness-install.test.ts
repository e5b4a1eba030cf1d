// What a person who cannot install Debian packages learns from the harness's installer, and from the
// plain-Node tests' (bubblewrap and socat, scripts/install-test-packages.sh): one message naming the
// packages and the command, instead of apt-get's own failure or failing sandbox tests. The user id and
// the apt-get command are played through HARNESS_EUID and HARNESS_APT_GET; the harness's package cannot
// exist and the tests' programs are kept off PATH, so nothing is ever installed.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SCRIPT = path.join(__dirname, '..', 'harness', 'debian-packages.sh');
const ABSENT = 'mcp-host-no-such-package';

function ensure(env: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-apt-'));
  try {
    // The same call install.sh makes, with a package no system has.
    const r = spawnSync(
      'bash',
      [
        '-euo',
        'pipefail',
        '-c',
        `source "$0"; ensure_debian_packages "$1" chromium ${ABSENT}; echo went-on`,
        SCRIPT,
        path.join(dir, 'apt.log'),
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, HARNESS_SKIP_APT: '', ...env },
      },
    );
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, aptLog: fs.existsSync(path.join(dir, 'apt.log')) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('the harness installer without root or apt-get', () => {
  it('as a normal user: stops before apt-get and says which sudo command to run', () => {
    const r = ensure({ HARNESS_EUID: '1000' });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '', 'it went on past the check');
    assert.equal(r.aptLog, false, 'apt-get ran');
    assert.match(
      r.stderr,
      new RegExp(`installing them needs root:\\n  sudo apt-get install -y --no-install-recommends (chromium )?${ABSENT}\\n`),
    );
    assert.match(r.stderr, /npm run package, then install the \.vsix/);
  });

  it('without apt-get: says the harness is for Debian and Ubuntu, what to install, and how to go on', () => {
    const r = ensure({ HARNESS_EUID: '0', HARNESS_APT_GET: 'mcp-host-no-such-apt-get' });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`need these Debian packages: (chromium )?${ABSENT}\\n`));
    assert.match(r.stderr, /no apt-get: the harness is written for Debian and Ubuntu/);
    assert.match(r.stderr, /HARNESS_SKIP_APT=1/);
  });

  it('with HARNESS_SKIP_APT=1 (the packages installed some other way): goes on without asking', () => {
    const r = ensure({ HARNESS_EUID: '1000', HARNESS_SKIP_APT: '1' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'went-on');
  });
});

const TEST_PACKAGES = path.join(__dirname, '..', '..', 'scripts', 'install-test-packages.sh');
/** Where this machine's PATH has a program. */
const onPath = (program: string) => spawnSync('bash', ['-c', `command -v ${program}`], { encoding: 'utf8' }).stdout.trim();

/**
 * scripts/install-test-packages.sh with a PATH of its own: the few programs it runs, and `present`
 * (bwrap, socat, apt-get) as stand-ins that say when they run; `uname` may say another system.
 */
function installTestPackages(env: Record<string, string>, present: string[], system = 'Linux') {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-path-'));
  try {
    for (const tool of ['dirname', 'mktemp', 'rm', 'id', 'flock', 'tail']) fs.symlinkSync(onPath(tool), path.join(bin, tool));
    fs.writeFileSync(path.join(bin, 'uname'), `#!/bin/sh\necho ${system}\n`, { mode: 0o755 });
    for (const program of present) fs.writeFileSync(path.join(bin, program), `#!/bin/sh\necho "ran ${program}" >&2\n`, { mode: 0o755 });
    const r = spawnSync(onPath('bash'), [TEST_PACKAGES], {
      encoding: 'utf8',
      env: { HOME: os.tmpdir(), PATH: bin, HARNESS_SKIP_APT: '', ...env },
    });
    return { status: r.status, stderr: r.stderr };
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
}

describe("the plain-Node tests' installer of bubblewrap and socat", () => {
  it('as a normal user without them: stops with the one sudo command that installs what is missing', () => {
    const r = installTestPackages({ HARNESS_EUID: '1000' }, ['socat', 'apt-get']);
    assert.equal(r.status, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /ran /);
    assert.match(r.stderr, /installing them needs root:\n {2}sudo apt-get install -y --no-install-recommends bubblewrap\n/);
  });

  it('without apt-get: names both packages and HARNESS_SKIP_APT=1, and says nothing of Chromium', () => {
    const r = installTestPackages({ HARNESS_EUID: '0', HARNESS_APT_GET: 'mcp-host-no-such-apt-get' }, []);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /need these Debian packages: bubblewrap socat\n/);
    assert.match(r.stderr, /Install the same\nprograms another way, then run again with HARNESS_SKIP_APT=1/);
    assert.doesNotMatch(r.stderr, /Chromium/);
  });

  it('with HARNESS_SKIP_APT=1, with both on PATH, or off Linux: goes on at once', () => {
    for (const [env, present, system] of [
      [{ HARNESS_EUID: '1000', HARNESS_SKIP_APT: '1' }, [], 'Linux'],
      [{ HARNESS_EUID: '1000' }, ['bwrap', 'socat'], 'Linux'],
      [{ HARNESS_EUID: '1000' }, [], 'Darwin'],
    ] as const) {
      const r = installTestPackages(env, [...present], system);
      assert.deepEqual([r.status, r.stderr], [0, ''], JSON.stringify({ env, present, system }));
    }
  });
});
