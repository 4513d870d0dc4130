// charging_session.progress on the sandbox CPO network (a Session update every 150 ms): the first update that
// changes the energy or cost makes one, then none until EVENTS_PROGRESS_INTERVAL_MS has passed on the injectable
// clock (the throttle is a column of the session row, so every process sees it), however many updates come.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CpoSandbox } from '../src/sandbox/cpo/index.ts';
import { newDriver, scenarioEvse, startCpoNetwork } from './charging-support.ts';
import { openSse, type SseClient, storedOnceReceived } from './events-support.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { eventually, USERS } from './payments-support.ts';

let ctx: TestContext;
let cpo: CpoSandbox;
let sse: SseClient | undefined;
const INTERVAL_MS = 30_000;

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true }, env: { EVENTS_PROGRESS_INTERVAL_MS: String(INTERVAL_MS) } });
  cpo = await startCpoNetwork(ctx);
});
after(async () => {
  sse?.close();
  await cpo?.close();
  await ctx?.close();
});

describe('progress events', () => {
  it('at most one per session per EVENTS_PROGRESS_INTERVAL_MS of the clock, each the session with more energy and a higher version', async () => {
    const d = await newDriver(ctx);
    const started = await ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, {
      token: d.token,
      body: { payment_method_id: d.pm, evse_id: scenarioEvse(cpo, 'NORMAL') },
    });
    assert.equal(started.status, 201, started.text);
    const id = started.body.id as string;
    sse = await openSse(`${ctx.address}${USERS}/${d.userId}/charging-sessions/${id}/events`, d.token);
    const stream = sse;
    const progress = () => stream.events.filter((e) => e.event === 'charging_session.progress').map((e) => JSON.parse(e.data));
    /** How many progress events were stored for the session, once the stream has received every stored event. */
    const progressStored = async () => (await storedOnceReceived(ctx.db, stream, id)).filter((r) => r.type === 'charging_session.progress').length;
    const version = async () => (await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/${id}/`, { token: d.token })).body.version as number;
    /** Lets the CPO push `n` more updates (the session's version moves on by n). */
    const updates = async (n: number) => {
      const from = await version();
      await eventually(async () => ((await version()) >= from + n ? true : undefined), `${n} more Session updates`, 10_000);
    };

    await eventually(async () => (progress().length > 0 ? true : undefined), 'a first progress event', 10_000);
    await updates(5);
    assert.equal(await progressStored(), 1, 'the clock has not moved: no second one');
    assert.equal(progress().length, 1);
    const { rows } = await ctx.db.query<{ progress_event_at: Date }>('SELECT progress_event_at FROM charging_sessions WHERE id = $1', [id]);
    assert.equal(rows[0]?.progress_event_at.getTime(), ctx.clock.now().getTime());

    ctx.clock.advance(INTERVAL_MS - 1);
    await updates(3);
    assert.equal(await progressStored(), 1, 'not before the interval is over');
    assert.equal(progress().length, 1);

    ctx.clock.advance(1);
    await eventually(async () => (progress().length === 2 ? true : undefined), 'a second progress event', 10_000);
    await updates(5);
    assert.equal(await progressStored(), 2);
    assert.equal(progress().length, 2);

    const [first, second] = progress();
    assert.equal(first.type, 'charging_session.progress');
    assert.equal(first.data.object.status, 'active');
    assert.ok(second.data.object.version > first.data.object.version);
    assert.ok(Number(second.data.object.consumed_energy) > Number(first.data.object.consumed_energy));
    assert.deepEqual(Object.keys(first.data.object).sort(), Object.keys(started.body).sort(), 'the session as the API shows it');
    // The status events are all there, once: pending, active (the stream is in order).
    assert.deepEqual(
      stream.events.map((e) => e.event).filter((t) => t !== 'charging_session.progress'),
      ['charging_session.pending', 'charging_session.active'],
    );
    assert.ok(stream.events.findIndex((e) => e.event === 'charging_session.active') < stream.events.findIndex((e) => e.event === 'charging_session.progress'));
  });
});
