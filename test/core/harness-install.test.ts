// What a person who cannot install Debian packages learns from the harness's installer: one message
// naming the packages and the command, instead of apt-get's own failure. The user id and the apt-get
// command are played through HARNESS_EUID and HARNESS_APT_GET; the package cannot exist, so the check
// always finds it missing and never installs anything.
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
