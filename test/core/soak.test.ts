import { strict as assert } from 'node:assert';
import { deterministicChecks, runSoak } from '../../bench/soakEngine';

// The short run of the soak (`npm run soak` is the long one, with the heap judged by its slope):
// the same servers, registry and mix of bursts, cancellations, restarts and crashes, for seconds.
// It asserts only what comes out exact on any machine: how every call ended, the counts of what was
// done, and that nothing is left over. No memory figure and no time.
describe('soak, short run (npm run soak is the long one)', function () {
  // A bound for a loaded machine, not an expectation: a few seconds on an idle one.
  this.timeout(180_000);

  it('3 servers × 1,500 calls with bursts, cancellations, restarts and crashes: every call ends as it should and nothing is left over', async () => {
    const servers = 3;
    const callsPerServer = 1500;
    const report = await runSoak({
      servers,
      callsPerServer,
      lanes: 8,
      every: { burst: 100, cancel: 50, restart: 600, crash: 500 },
      burstSize: 20,
    });
    for (const [text, ok] of deterministicChecks(report))
      assert.ok(ok, `${text}${report.unexpectedSamples.length ? `\n${report.unexpectedSamples.join('\n')}` : ''}`);
    assert.equal(report.calls, servers * callsPerServer);
    // Restarts at calls 300 and 900 of each server, crashes at 500 and 1000: each one a launch of its own.
    assert.equal(report.restarts, servers * 2);
    assert.equal(report.crashes, servers * 2);
    assert.equal(report.launches, servers + report.restarts + report.crashes);
    // A cancellation or a burst may end with its connection instead, but not every one of them.
    assert.ok(report.outcomes.cancelled > 0, 'some calls were cancelled mid-call');
    assert.ok(report.bursts.answered > 0 && report.bursts.messagesExpected > 0, 'some bursts were answered');
  });
});
