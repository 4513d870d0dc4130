// Webhook delivery against a real HTTP receiver on loopback, on a real
// PostgreSQL, with the test's clock: every request is verified with the
// official `standardwebhooks` library. A receiver that is down, answers 500,
// answers too slowly or answers 410: each attempt follows the documented
// schedule and shows in the delivery log, the same webhook-id every time,
// nothing lost, nothing delivered under another id. 3 days of failures
// disable the endpoint; a rotated secret signs beside the new one for 24 h;
// a delivery can be retried; shutdown cuts off a hung attempt within its
// grace and gives the delivery back; in production a host name resolving to
// a private address is not connected to.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { type EventBody, recordEvent } from '../src/modules/events/outbox.ts';
import { LEASE_MARGIN_MS } from '../src/modules/webhooks/delivery.ts';
import { CLAIM_LOCK } from '../src/modules/webhooks/repository.ts';
import { retryDelayMs } from '../src/modules/webhooks/schedule.ts';
import { createDatabase } from '../src/platform/db.ts';
import { startDatabaseProxy } from './database-proxy-support.ts';
import { freePort, setupTestApp, type TestContext } from './helpers.ts';
import { createEndpoint, deliveriesOf, deliveryOf, ENDPOINTS, type Receiver, startReceiver, verifies, verify } from './webhooks-support.ts';

let ctx: TestContext;
const receivers: Receiver[] = [];

before(async () => {
  ctx = await setupTestApp();
});
after(async () => {
  for (const receiver of receivers) await receiver.close();
  await ctx.close();
});
// Each test's endpoints (and their deliveries) go with it: a later test's worker must not find them due.
afterEach(async () => {
  await ctx.db.query('DELETE FROM webhook_endpoints');
});

const SECOND = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** The schedule README.md and schedule.ts document: when each attempt starts, from the event (without jitter). */
const DOCUMENTED_ATTEMPTS_MS = [
  0,
  5 * SECOND,
  5 * MINUTE + 5 * SECOND,
  35 * MINUTE + 5 * SECOND,
  2 * HOUR + 35 * MINUTE + 5 * SECOND,
  7 * HOUR + 35 * MINUTE + 5 * SECOND,
  17 * HOUR + 35 * MINUTE + 5 * SECOND,
  27 * HOUR + 35 * MINUTE + 5 * SECOND,
  37 * HOUR + 35 * MINUTE + 5 * SECOND,
  47 * HOUR + 35 * MINUTE + 5 * SECOND,
  57 * HOUR + 35 * MINUTE + 5 * SECOND,
  67 * HOUR + 35 * MINUTE + 5 * SECOND,
  72 * HOUR,
];

/** Moves the test clock to when the delivery's next attempt is due. */
function toNextRetry(delivery: { next_retry_at: string | null }): void {
  assert.ok(delivery.next_retry_at, 'a retry is scheduled');
  ctx.clock.set(new Date(delivery.next_retry_at));
}

async function receiver(): Promise<Receiver> {
  const made = await startReceiver();
  receivers.push(made);
  return made;
}

/** A client with an endpoint (subscribed to `events`) pointing at `url`. */
async function clientWithEndpoint(url: string, events: string[] = ['*']) {
  const client = await ctx.newClient();
  const endpoint = await createEndpoint(ctx, client.token, { url, events });
  return { client, endpoint };
}

async function invoiceEvent(clientId: string, n = 1): Promise<EventBody> {
  return (
    await ctx.db.transaction((tx) =>
      recordEvent(
        tx,
        { clientId, userId: '6f1a2b3c-0000-4000-8000-000000000001', type: 'invoice.created', object: { id: `inv-${n}`, total: '12.40' } },
        ctx.clock.now(),
      ),
    )
  ).body;
}

describe('delivery to a receiver that answers 2xx', () => {
  test('each event is POSTed once, signed (verified by standardwebhooks), with the stored body and the event id as webhook-id', async () => {
    const rx = await receiver();
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx);
    const events = [await invoiceEvent(client.clientId, 1), await invoiceEvent(client.clientId, 2)];
    assert.equal(await worker.runDue(), 2);
    assert.equal(rx.requests.length, 2);
    for (const request of rx.requests) {
      assert.equal(request.method, 'POST');
      assert.equal(request.path, '/hooks');
      assert.equal(request.headers['content-type'], 'application/json');
      const verified = verify(endpoint.secret, request, ctx.clock) as EventBody;
      const event = events.find((e) => e.id === request.headers['webhook-id']);
      assert.ok(event, 'the webhook-id is the id of an event');
      assert.deepEqual(verified, event);
      assert.equal(request.headers['webhook-timestamp'], String(Math.floor(ctx.clock.now().getTime() / 1000)));
      assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/, 'one signature');
    }
    const log = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.equal(log.length, 2);
    for (const delivery of log) {
      assert.equal(delivery.status, 'delivered');
      assert.equal(delivery.attempts, 1);
      assert.equal(delivery.last_status_code, 200);
      assert.equal(delivery.next_retry_at, null);
      assert.equal(delivery.attempt_log.length, 1);
      assert.equal(delivery.attempt_log[0]?.status_code, 200);
    }
    assert.equal(await worker.runDue(), 0, 'nothing is sent twice');
    assert.equal(rx.requests.length, 2);
  });
});

describe('retries', () => {
  test('the delays are 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h, each jittered by at most ±10 %', () => {
    const steps = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR, 10 * HOUR];
    steps.forEach((step, i) => {
      assert.equal(
        retryDelayMs(i + 1, () => 0.5),
        step,
      );
      assert.equal(
        retryDelayMs(i + 1, () => 0),
        Math.round(step * 0.9),
      );
      assert.equal(
        retryDelayMs(i + 1, () => 1),
        Math.round(step * 1.1),
      );
    });
  });

  test('a receiver answering 500 gets each attempt on schedule, with the same webhook-id, until it answers 200; the log shows every attempt', async () => {
    const rx = await receiver();
    rx.answer = (_request, index) => (index < 3 ? 500 : 204);
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx);
    const start = ctx.clock.now().getTime();
    const event = await invoiceEvent(client.clientId);
    assert.equal(await worker.runDue(), 1);
    for (const offset of DOCUMENTED_ATTEMPTS_MS.slice(1, 4)) {
      const [delivery] = await deliveriesOf(ctx, client.token, endpoint.id);
      assert.equal(delivery?.status, 'pending');
      assert.equal(delivery?.last_status_code, 500);
      assert.equal(Date.parse(delivery?.next_retry_at ?? ''), start + offset, 'due on schedule');
      ctx.clock.set(new Date(start + offset - 1));
      assert.equal(await worker.runDue(), 0, 'not before it is due');
      toNextRetry(delivery as { next_retry_at: string });
      assert.equal(await worker.runDue(), 1);
    }
    assert.equal(rx.requests.length, 4);
    for (const request of rx.requests) {
      assert.equal(request.headers['webhook-id'], event.id, 'the same webhook-id on every attempt');
      assert.equal(request.body, rx.requests[0]?.body, 'the same body');
    }
    assert.ok(verifies(endpoint.secret, rx.requests[3] as (typeof rx.requests)[number], ctx.clock));
    const [delivery] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.equal(delivery?.status, 'delivered');
    assert.equal(delivery?.attempts, 4);
    assert.deepEqual(
      delivery?.attempt_log.map((a) => [a.attempt, a.status_code, Date.parse(a.started_at) - start]),
      [
        [1, 500, 0],
        [2, 500, DOCUMENTED_ATTEMPTS_MS[1]],
        [3, 500, DOCUMENTED_ATTEMPTS_MS[2]],
        [4, 204, DOCUMENTED_ATTEMPTS_MS[3]],
      ],
    );
    assert.equal(await worker.runDue(), 0);
  });

  test('a receiver that is down: "connection refused" in the log, then delivered once it listens', async () => {
    const port = await freePort();
    const { client, endpoint } = await clientWithEndpoint(`http://127.0.0.1:${port}/hooks`);
    const worker = deliveryOf(ctx);
    const event = await invoiceEvent(client.clientId);
    assert.equal(await worker.runDue(), 1);
    const [failed] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.equal(failed?.status, 'pending');
    assert.equal(failed?.last_status_code, null);
    assert.equal(failed?.last_error, 'connection refused');
    assert.deepEqual(
      failed?.attempt_log.map((a) => a.error),
      ['connection refused'],
    );
    const rx = await startReceiver(port);
    receivers.push(rx);
    toNextRetry(failed as { next_retry_at: string });
    assert.equal(await worker.runDue(), 1);
    assert.equal(rx.requests.length, 1);
    assert.equal(rx.requests[0]?.headers['webhook-id'], event.id);
    assert.deepEqual(verify(endpoint.secret, rx.requests[0] as (typeof rx.requests)[number], ctx.clock), event);
    assert.equal((await deliveriesOf(ctx, client.token, endpoint.id))[0]?.status, 'delivered');
  });

  test('a receiver answering too slowly: the attempt times out, is logged as such and retried', async () => {
    const rx = await receiver();
    rx.answer = (_request, index) => (index === 0 ? { status: 200, delayMs: 3_000 } : 200);
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx, { timeoutMs: 300 });
    const event = await invoiceEvent(client.clientId);
    const started = performance.now();
    assert.equal(await worker.runDue(), 1);
    assert.ok(performance.now() - started < 2_500, 'the attempt was cut off at the timeout');
    const [slow] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.equal(slow?.last_error, 'timed out: no answer within 300 ms');
    assert.equal(slow?.status, 'pending');
    toNextRetry(slow as { next_retry_at: string });
    assert.equal(await worker.runDue(), 1);
    assert.deepEqual(
      rx.requests.map((r) => r.headers['webhook-id']),
      [event.id, event.id],
    );
    assert.equal((await deliveriesOf(ctx, client.token, endpoint.id))[0]?.status, 'delivered');
  });
});

describe('disabling', () => {
  test('410 Gone disables the endpoint (reason in the API) and stops its pending deliveries; re-enabled, a retry delivers', async () => {
    const rx = await receiver();
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx);
    rx.answer = () => 503;
    const first = await invoiceEvent(client.clientId, 1);
    assert.equal(await worker.runDue(), 1);
    rx.answer = () => 410;
    ctx.clock.advance(SECOND);
    await invoiceEvent(client.clientId, 2);
    assert.equal(await worker.runDue(), 1);
    const shown = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.equal(shown.body.enabled, false);
    assert.match(shown.body.disabled_reason, /410 Gone/);
    assert.equal(shown.body.disabled_at, ctx.clock.now().toISOString());
    const log = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.deepEqual(
      log.map((d) => [d.status, d.last_status_code, d.next_retry_at]),
      [
        ['failed', 410, null],
        ['failed', 503, null],
      ],
    );
    ctx.clock.advance(HOUR);
    assert.equal(await worker.runDue(), 0, 'no further attempt');
    await invoiceEvent(client.clientId, 3);
    assert.equal((await deliveriesOf(ctx, client.token, endpoint.id)).length, 2, 'no delivery for events while disabled');
    const retried = log[1] as (typeof log)[number];
    const refused = await ctx.call('POST', `${ENDPOINTS}/${endpoint.id}/deliveries/${retried.id}/retry/`, { token: client.token });
    assert.equal(refused.status, 409, refused.text);

    const enabled = await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { enabled: true } });
    assert.equal(enabled.status, 200, enabled.text);
    assert.deepEqual([enabled.body.enabled, enabled.body.disabled_reason, enabled.body.disabled_at, enabled.body.failing_since], [true, null, null, null]);
    rx.answer = () => 200;
    const retry = await ctx.call('POST', `${ENDPOINTS}/${endpoint.id}/deliveries/${retried.id}/retry/`, { token: client.token });
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.body.status, 'pending');
    assert.equal(await worker.runDue(), 1);
    assert.equal(rx.requests.at(-1)?.headers['webhook-id'], first.id);
    const after = (await deliveriesOf(ctx, client.token, endpoint.id)).find((d) => d.id === retried.id);
    assert.deepEqual([after?.status, after?.attempts, after?.last_status_code], ['delivered', 2, 200]);
  });

  test('an endpoint failing for 3 days: 13 attempts on the documented schedule, then disabled, and its other pending deliveries stop', async () => {
    const rx = await receiver();
    rx.answer = () => 500;
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx);
    const start = ctx.clock.now().getTime();
    const event = await invoiceEvent(client.clientId, 1);
    let later: EventBody | undefined;
    for (;;) {
      assert.ok((await worker.runDue()) >= 1);
      const delivery = (await deliveriesOf(ctx, client.token, endpoint.id)).find((d) => d.event_id === event.id);
      if (!delivery?.next_retry_at) break;
      // A second event on day 2: still pending when the endpoint is disabled.
      if (!later && Date.parse(delivery.next_retry_at) - start > 48 * HOUR) {
        later = await invoiceEvent(client.clientId, 2);
        assert.equal(await worker.runDue(), 1);
      }
      toNextRetry(delivery);
    }
    const log = await deliveriesOf(ctx, client.token, endpoint.id);
    const first = log.find((d) => d.event_id === event.id);
    assert.deepEqual(
      first?.attempt_log.map((a) => Date.parse(a.started_at) - start),
      DOCUMENTED_ATTEMPTS_MS,
    );
    assert.equal(first?.status, 'failed');
    assert.equal(first?.attempts, 13);
    const second = log.find((d) => d.event_id === later?.id);
    assert.equal(second?.status, 'failed', 'the pending delivery of the later event stopped');
    assert.equal(second?.next_retry_at, null);
    const shown = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.equal(shown.body.enabled, false);
    assert.match(shown.body.disabled_reason, /failed for 3 days/);
    assert.equal(shown.body.failing_since, new Date(start).toISOString());
    assert.ok(rx.requests.every((r) => r.headers['webhook-id'] === event.id || r.headers['webhook-id'] === later?.id));
    ctx.clock.advance(30 * 24 * HOUR);
    assert.equal(await worker.runDue(), 0);
  });

  test('a 2xx ends the failing run: failing_since is cleared and the endpoint stays enabled', async () => {
    const rx = await receiver();
    rx.answer = (_request, index) => (index === 0 ? 500 : 200);
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx);
    await invoiceEvent(client.clientId);
    await worker.runDue();
    const failing = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.equal(failing.body.failing_since, ctx.clock.now().toISOString());
    toNextRetry((await deliveriesOf(ctx, client.token, endpoint.id))[0] as { next_retry_at: string });
    await worker.runDue();
    const fine = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.deepEqual([fine.body.enabled, fine.body.failing_since], [true, null]);
  });
});

describe('signing secrets', () => {
  test('after a rotation both secrets verify for 24 h (two signatures), then only the new one', async () => {
    const rx = await receiver();
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx);
    const rotated = await ctx.call('POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret/`, { token: client.token });
    assert.equal(rotated.status, 200, rotated.text);
    const secret = rotated.body.secret as string;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(secret, endpoint.secret);
    assert.equal(rotated.body.previous_secret_expires_at, new Date(ctx.clock.now().getTime() + 24 * HOUR).toISOString());

    await invoiceEvent(client.clientId, 1);
    ctx.clock.advance(24 * HOUR - SECOND);
    await invoiceEvent(client.clientId, 2);
    await worker.runDue();
    assert.equal(rx.requests.length, 2);
    for (const request of rx.requests) {
      assert.equal(String(request.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
      assert.ok(verifies(secret, request, ctx.clock), 'the new secret verifies');
      assert.ok(verifies(endpoint.secret, request, ctx.clock), 'the previous secret verifies');
    }

    ctx.clock.advance(2 * SECOND);
    await invoiceEvent(client.clientId, 3);
    await worker.runDue();
    const last = rx.requests[2] as (typeof rx.requests)[number];
    assert.equal(String(last.headers['webhook-signature']).split(' ').length, 1);
    assert.ok(verifies(secret, last, ctx.clock), 'the new secret verifies');
    assert.equal(verifies(endpoint.secret, last, ctx.clock), false, 'the previous secret no longer does');
    const shown = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.equal(shown.body.secret, undefined, 'the secret is shown only on creation and rotation');
  });

  test('a signature made with another secret, or over another body, does not verify (the verifier is not lenient)', async () => {
    const rx = await receiver();
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const other = await createEndpoint(ctx, client.token, { url: rx.url, events: ['debt.paid'] });
    await invoiceEvent(client.clientId);
    await deliveryOf(ctx).runDue();
    const request = rx.requests[0] as (typeof rx.requests)[number];
    assert.ok(verifies(endpoint.secret, request, ctx.clock));
    assert.equal(verifies(other.secret, request, ctx.clock), false);
    assert.equal(verifies(endpoint.secret, { ...request, body: request.body.replace('12.40', '12.41') }, ctx.clock), false);
  });
});

describe('the retry endpoint', () => {
  test('a delivered delivery is sent again with the same webhook-id; one in flight is 409', async () => {
    const rx = await receiver();
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx, { timeoutMs: 1_000 });
    const event = await invoiceEvent(client.clientId);
    await worker.runDue();
    const [delivered] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.equal(delivered?.status, 'delivered');
    const path = `${ENDPOINTS}/${endpoint.id}/deliveries/${delivered?.id}/retry/`;

    rx.answer = () => 'hang';
    const retried = await ctx.call('POST', path, { token: client.token });
    assert.equal(retried.status, 202, retried.text);
    assert.deepEqual([retried.body.status, retried.body.next_retry_at], ['pending', ctx.clock.now().toISOString()]);
    const running = worker.runDue();
    await rx.waitFor(2);
    const busy = await ctx.call('POST', path, { token: client.token });
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.headers['retry-after'], '10');
    await running;
    rx.answer = () => 200;
    const again = await ctx.call('POST', path, { token: client.token });
    assert.equal(again.status, 202, again.text);
    await worker.runDue();
    assert.deepEqual(
      rx.requests.map((r) => r.headers['webhook-id']),
      [event.id, event.id, event.id],
    );
    const [after] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.deepEqual([after?.status, after?.attempts], ['delivered', 3]);
    assert.deepEqual(
      after?.attempt_log.map((a) => [a.status_code, a.error]),
      [
        [200, null],
        [null, 'timed out: no answer within 1 s'],
        [200, null],
      ],
    );
  });
});

describe('the worker in the background', () => {
  test('woken by the event’s NOTIFY, not by its poll', async () => {
    const rx = await receiver();
    const { client } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx, { pollMs: 60_000 });
    worker.start();
    try {
      // LISTEN is issued in the background: events are recorded until one arrives.
      const deadline = Date.now() + 5_000;
      while (rx.requests.length === 0 && Date.now() < deadline) {
        await invoiceEvent(client.clientId);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const started = performance.now();
      const event = await invoiceEvent(client.clientId, 99);
      const arrived = await (async () => {
        for (;;) {
          const found = rx.requests.find((r) => r.headers['webhook-id'] === event.id);
          if (found) return found;
          if (performance.now() - started > 5_000) throw new Error('not delivered within 5 s');
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      assert.ok(arrived.at - started < 3_000, `delivered ${Math.round(arrived.at - started)} ms after the commit (the poll is every 60 s)`);
    } finally {
      await worker.stop();
    }
  });

  test('at most 4 in flight per endpoint across two workers; a hung endpoint does not hold up another endpoint', async () => {
    const hung = await receiver();
    hung.answer = () => 'hang';
    const fine = await receiver();
    const slow = await clientWithEndpoint(hung.url);
    const other = await clientWithEndpoint(fine.url);
    const workers = [deliveryOf(ctx, { timeoutMs: 3_000, pollMs: 50 }), deliveryOf(ctx, { timeoutMs: 3_000, pollMs: 50 })];
    for (const worker of workers) worker.start();
    try {
      for (let i = 0; i < 10; i++) await invoiceEvent(slow.client.clientId, i);
      await hung.waitFor(4);
      const started = performance.now();
      const event = await invoiceEvent(other.client.clientId);
      await fine.waitFor(1, 2_000);
      assert.ok(performance.now() - started < 2_000, 'the other endpoint is served before the hung attempts time out (3 s)');
      assert.equal(fine.requests[0]?.headers['webhook-id'], event.id);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(hung.requests.length, 4, 'no more than 4 in flight to the hung endpoint');
      const inFlight = await ctx.db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND leased_until IS NOT NULL', [
        slow.endpoint.id,
      ]);
      assert.equal(inFlight.rows[0]?.n, 4);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });

  test('with nothing due a claim is one probe: no walk over the endpoints, no wait for the claim lock another process holds', async () => {
    const rx = await receiver();
    const { client } = await clientWithEndpoint(rx.url);
    for (let i = 0; i < 20; i++) await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx);
    const other = await ctx.db.checkOut();
    try {
      // Another process in the middle of a claim: it holds the lock every claim with something due takes.
      await other.client.query('SELECT pg_advisory_lock($1)', [CLAIM_LOCK]);
      const idle = await Promise.race([worker.runDue(), sleep(3_000).then(() => 'waited for the claim lock')]);
      assert.equal(idle, 0, 'nothing due: answered without the lock');
      const event = await invoiceEvent(client.clientId);
      const claiming = worker.runDue();
      await sleep(200);
      assert.equal(rx.requests.length, 0, 'something due: the claim waits for the other process');
      await other.client.query('SELECT pg_advisory_unlock($1)', [CLAIM_LOCK]);
      assert.equal(await claiming, 1);
      assert.equal(rx.requests[0]?.headers['webhook-id'], event.id);
    } finally {
      await other.client.query('SELECT pg_advisory_unlock_all()');
      other.release();
    }
  });

  test('a paused endpoint’s due delivery is not something due: the claim stays one probe, and the delivery goes once it is enabled again', async () => {
    const rx = await receiver();
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const event = await invoiceEvent(client.clientId);
    const paused = await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { enabled: false } });
    assert.equal(paused.status, 200, paused.text);
    const worker = deliveryOf(ctx);
    const other = await ctx.db.checkOut();
    try {
      await other.client.query('SELECT pg_advisory_lock($1)', [CLAIM_LOCK]);
      const idle = await Promise.race([worker.runDue(), sleep(3_000).then(() => 'waited for the claim lock')]);
      assert.equal(idle, 0, 'only a paused endpoint’s delivery due: answered without the lock');
      await other.client.query('SELECT pg_advisory_unlock($1)', [CLAIM_LOCK]);
    } finally {
      await other.client.query('SELECT pg_advisory_unlock_all()');
      other.release();
    }
    assert.equal(rx.requests.length, 0);
    const resumed = await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { enabled: true } });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(await worker.runDue(), 1);
    assert.deepEqual(
      rx.requests.map((r) => r.headers['webhook-id']),
      [event.id],
    );
  });

  test('stop() cuts off a hung attempt within its grace period and gives the delivery back, due at once', async () => {
    const rx = await receiver();
    rx.answer = () => 'hang';
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx, { timeoutMs: 30_000, graceMs: 300, pollMs: 50 });
    worker.start();
    const event = await invoiceEvent(client.clientId);
    await rx.waitFor(1);
    const stopping = performance.now();
    await worker.stop();
    const took = performance.now() - stopping;
    assert.ok(took >= 250 && took < 3_000, `stopped in ${Math.round(took)} ms`);
    const [given] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.equal(given?.status, 'pending');
    assert.equal(given?.next_retry_at, ctx.clock.now().toISOString());
    assert.match(given?.attempt_log[0]?.error ?? '', /^interrupted: the service shut down/);
    rx.answer = () => 200;
    assert.equal(await deliveryOf(ctx).runDue(), 1);
    assert.deepEqual(
      rx.requests.map((r) => r.headers['webhook-id']),
      [event.id, event.id],
    );
    assert.equal((await deliveriesOf(ctx, client.token, endpoint.id))[0]?.status, 'delivered');
  });
});

describe('outcomes that cannot be recorded as they came', () => {
  test('an attempt whose lease expired (another worker took the delivery over) has its late outcome discarded: the other worker’s stands', async () => {
    const rx = await receiver();
    // The first attempt's answer comes late, and is a failure; the second attempt is delivered at once.
    rx.answer = (_request, index) => (index === 0 ? { status: 500, delayMs: 500 } : 200);
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const logged: string[] = [];
    const slow = deliveryOf(ctx, { timeoutMs: 2_000, log: (level, message) => logged.push(`${level}: ${message}`) });
    const event = await invoiceEvent(client.clientId);
    const late = slow.runDue();
    await rx.waitFor(1);
    // Its lease (timeout + margin) runs out on the clock: to another worker the delivery is due, its attempt interrupted.
    ctx.clock.advance(2_000 + LEASE_MARGIN_MS + 1);
    assert.equal(await deliveryOf(ctx).runDue(), 1);
    assert.equal(await late, 1);
    assert.ok(
      logged.some((line) => line.startsWith('warn: webhook delivery outcome discarded: its lease expired')),
      logged.join('\n'),
    );
    assert.deepEqual(
      rx.requests.map((r) => r.headers['webhook-id']),
      [event.id, event.id],
    );
    const [delivery] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.deepEqual(
      [delivery?.status, delivery?.attempts, delivery?.last_status_code, delivery?.next_retry_at],
      ['delivered', 2, 200, null],
      'the late 500 neither undid the delivery nor scheduled a retry',
    );
    assert.deepEqual(
      delivery?.attempt_log.map((a) => [a.attempt, a.status_code, a.error]),
      [
        [1, null, 'interrupted: the process sending it stopped before the answer was recorded'],
        [2, 200, null],
      ],
    );
    const shown = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.equal(shown.body.failing_since, null, 'the late failure does not start a failing run');
  });

  test('outcomes of one endpoint recorded at once, one of them disabling it (410): each is recorded, none fails on a deadlock', async () => {
    const rx = await receiver();
    rx.answer = () => 410;
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const logged: string[] = [];
    const worker = deliveryOf(ctx, { log: (level, message) => logged.push(`${level}: ${message}`) });
    for (let i = 0; i < 4; i++) await invoiceEvent(client.clientId, i);
    // The endpoint's row is held (as by the client's PATCH) until the four outcomes all wait to record.
    const holder = await ctx.db.checkOut();
    let running: Promise<number> | undefined;
    try {
      await holder.client.query('BEGIN');
      await holder.client.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpoint.id]);
      running = worker.runDue();
      const waiting = async () =>
        (
          await ctx.db.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
          )
        ).rows[0]?.n ?? 0;
      const deadline = Date.now() + 10_000;
      while ((await waiting()) < 4 && Date.now() < deadline) await sleep(20);
      assert.equal(await waiting(), 4, 'the four outcomes wait for the endpoint');
    } finally {
      await holder.client.query('COMMIT');
      holder.release();
    }
    assert.equal(await running, 4);
    assert.deepEqual(
      logged.filter((line) => line.includes('recording a webhook delivery outcome failed')),
      [],
    );
    const log = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.deepEqual(
      log.map((d) => [d.status, d.last_status_code, d.attempt_log.map((a) => [a.status_code, a.finished_at !== null])]),
      Array.from({ length: 4 }, () => ['failed', 410, [[410, true]]]),
    );
    const { rows } = await ctx.db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND leased_until IS NOT NULL', [endpoint.id]);
    assert.equal(rows[0]?.n, 0, 'no lease left to expire (and no delivery sent twice)');
    const shown = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.match(shown.body.disabled_reason, /410 Gone/);
  });

  test('an outcome the database cannot take (cut off while the receiver answered): the lease is kept, then the delivery is sent again with the same webhook-id', async () => {
    const rx = await receiver();
    rx.answer = (_request, index) => (index === 0 ? { status: 200, delayMs: 400 } : 200);
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const proxy = await startDatabaseProxy(ctx.databaseUrl);
    const proxied = createDatabase(proxy.url, { max: 2 });
    const logged: string[] = [];
    const cutOff = deliveryOf(ctx, { db: proxied, timeoutMs: 2_000, pollMs: 50, log: (level, message) => logged.push(`${level}: ${message}`) });
    try {
      const event = await invoiceEvent(client.clientId);
      cutOff.start();
      await rx.waitFor(1);
      proxy.cut();
      const deadline = Date.now() + 5_000;
      while (!logged.some((line) => line.startsWith('warn: recording a webhook delivery outcome failed')) && Date.now() < deadline) await sleep(10);
      assert.ok(
        logged.some((line) => line.startsWith('warn: recording a webhook delivery outcome failed') && line.endsWith('the database is unavailable; retrying')),
        logged.join('\n'),
      );
      await cutOff.stop();
      const { rows } = await ctx.db.query<{ leased_until: Date | null; delivered_at: Date | null }>(
        'SELECT leased_until, delivered_at FROM webhook_deliveries WHERE endpoint_id = $1',
        [endpoint.id],
      );
      assert.ok((rows[0]?.leased_until?.getTime() ?? 0) > ctx.clock.now().getTime(), 'still leased');
      assert.equal(rows[0]?.delivered_at, null, 'its 200 was not recorded');
      const other = deliveryOf(ctx);
      assert.equal(await other.runDue(), 0, 'not sent again while the lease holds');
      ctx.clock.advance(2_000 + LEASE_MARGIN_MS);
      assert.equal(await other.runDue(), 1);
      assert.deepEqual(
        rx.requests.map((r) => r.headers['webhook-id']),
        [event.id, event.id],
      );
      const [delivery] = await deliveriesOf(ctx, client.token, endpoint.id);
      assert.deepEqual([delivery?.status, delivery?.attempts], ['delivered', 2]);
      assert.deepEqual(
        delivery?.attempt_log.map((a) => [a.attempt, a.status_code, a.error]),
        [
          [1, null, 'interrupted: the process sending it stopped before the answer was recorded'],
          [2, 200, null],
        ],
      );
    } finally {
      await cutOff.stop();
      await proxied.close();
      await proxy.close();
    }
  });
});
