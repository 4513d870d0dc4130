// The stop list (src/platform/lifecycle.ts): last started first, each step bounded, and one grace for the whole stop:
// a step that lets work in flight finish is told what is left of it, so two such steps never take twice the grace.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createStopList } from '../src/platform/lifecycle.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stop list', () => {
  it('stops last started first and reports a step that fails or hangs without stopping the others', async () => {
    const stops = createStopList({ stepTimeoutMs: 100 });
    const order: string[] = [];
    stops.add('first', () => {
      order.push('first');
    });
    stops.add('hangs', () => new Promise<void>(() => order.push('hangs')));
    stops.add('fails', () => {
      order.push('fails');
      throw new Error('boom');
    });
    const reported: string[] = [];
    await stops.stopAll((name, error) => reported.push(`${name}: ${error.message}`));
    assert.deepEqual(order, ['fails', 'hangs', 'first']);
    assert.deepEqual(reported, ['fails: boom', 'hangs: did not stop within 100 ms']);
  });

  it('gives each step what is left of the one grace, counted from the first stop', async () => {
    const stops = createStopList({ stepTimeoutMs: 5_000, graceMs: 400 });
    const given: number[] = [];
    // Two steps that each wait for their work in flight as long as they are allowed.
    stops.add('webhook delivery', async (remainingMs) => {
      given.push(remainingMs);
      await sleep(remainingMs);
    });
    stops.add('HTTP server', async (remainingMs) => {
      given.push(remainingMs);
      await sleep(300);
    });
    await stops.stopAll((name, error) => assert.fail(`${name}: ${error.message}`));
    assert.ok((given[0] ?? 0) > 350, `the first step has about the whole grace (${given[0]} ms)`);
    assert.ok((given[1] ?? Number.POSITIVE_INFINITY) <= 100, `the second only what is left (${given[1]} ms)`);
  });
});
