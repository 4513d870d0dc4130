// sharedPasses (src/platform/shared-passes.ts), what the Stripe sandbox's due work, the sandbox CPO's outbox and the
// station catalogue's reload rely on: calls during a pass share the one pass after it, each pass has a promise of its
// own (a steady stream of calls never keeps one promise pending), and a failed pass does not stop the next.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sharedPasses } from '../src/platform/shared-passes.ts';

/** A pass the test ends by hand: each started pass waits for `finish(i)` (or `fail(i)`). */
function manualPasses() {
  const ends: { resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
  const passes = sharedPasses(
    () =>
      new Promise<number>((resolve, reject) => {
        const n = ends.length;
        ends.push({ resolve: () => resolve(n), reject });
      }),
  );
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    passes,
    started: () => ends.length,
    finish: (i: number) => ends[i]?.resolve(i),
    fail: (i: number) => ends[i]?.reject(new Error(`pass ${i} failed`)),
    settle,
  };
}

describe('sharedPasses', () => {
  it('calls during a pass share the one pass after it; that pass has a promise of its own', async () => {
    const m = manualPasses();
    const first = m.passes.run();
    const during = [m.passes.run(), m.passes.run(), m.passes.run()];
    assert.equal(m.started(), 1);
    assert.notEqual(during[0], first);
    assert.ok(
      during.every((p) => p === during[0]),
      'the three share one promise',
    );
    assert.equal(m.passes.current(), during[0], 'current() is the pass asked for after the one under way');
    m.finish(0);
    assert.equal(await first, 0);
    await m.settle();
    assert.equal(m.started(), 2, 'the second pass started when the first ended');
    m.finish(1);
    assert.deepEqual(await Promise.all(during), [1, 1, 1]);
    await m.settle();
    assert.equal(m.started(), 2, 'no pass runs without a call');
    assert.equal(m.passes.current(), undefined);
  });

  it('a failed pass rejects its callers; the pass asked for during it still runs', async () => {
    const m = manualPasses();
    const first = m.passes.run();
    const second = m.passes.run();
    m.fail(0);
    await assert.rejects(first, /pass 0 failed/);
    await m.settle();
    m.finish(1);
    assert.equal(await second, 1);
  });
});
