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
import { retryDelayMs } from '../src/modules/webhooks/schedule.ts';
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
      recordEvent(tx, { clientId, userId: '6f1a2b3c-0000-4000-8000-000000000001', type: 'invoice.created', object: { id: `inv-${n}`, total: '12.40' } }, ctx.clock.now()),
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
      assert.equal(retryDelayMs(i + 1, () => 0.5), step);
      assert.equal(retryDelayMs(i + 1, () => 0), Math.round(step * 0.9));
      assert.equal(retryDelayMs(i + 1, () => 1), Math.round(step * 1.1));
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
    assert.deepEqual(failed?.attempt_log.map((a) => a.error), ['connection refused']);
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
    rx.answer = (_request, index) => (index === 0 ? { status: 200, delayMs: 1_500 } : 200);
    const { client, endpoint } = await clientWithEndpoint(rx.url);
    const worker = deliveryOf(ctx, { timeoutMs: 300 });
    const event = await invoiceEvent(client.clientId);
    const started = performance.now();
    assert.equal(await worker.runDue(), 1);
    assert.ok(performance.now() - started < 1_200, 'the attempt was cut off at the timeout');
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
