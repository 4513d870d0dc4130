// The client events the modules emit, through the API on the sandbox CPO network and the payment sandbox (real
// HTTP, real PostgreSQL): a full session's status events in order on its live stream (each session object equal to
// the session GET at its version, versions increasing) and its invoice.created, and the same events at a webhook
// receiver, verified with the official standardwebhooks library; a failed start's pending and failed;
// payment_method.attached/detached, debt.created/debt.paid and user.deleted once each by their action. Every event
// body the tests read (streamed, stored, delivered) is held against its type's schema in the OpenAPI document's
// `webhooks` section, which the SDK's event types are generated from.
// The CPO pushes no progress between a session's status changes here (a long update interval), so that the
// session GET can be caught at an event's version; test/events-progress.test.ts has the progress events.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EVENT_TYPES } from '../src/modules/events/outbox.ts';
import type { CpoSandbox, Scenario } from '../src/sandbox/cpo/index.ts';
import { type Driver, newDriver, scenarioEvse, startCpoNetwork } from './charging-support.ts';
import { openSse, type SseClient, type SseEvent, storedOnceReceived } from './events-support.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { CARDS, connectCard, eventually, newOwner, type Owner, USERS } from './payments-support.ts';
import { createEndpoint, type DocumentedEvents, deliveryOf, documentedEvents, startReceiver, verify } from './webhooks-support.ts';

let ctx: TestContext;
let cpo: CpoSandbox;
let documented: DocumentedEvents;
const streams: SseClient[] = [];

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true }, env: { OCPI_REQUEST_TIMEOUT_MS: '1500' } });
  cpo = await startCpoNetwork(ctx, { sessionUpdateIntervalMs: 600_000 });
  documented = documentedEvents((await ctx.call('GET', '/api/v1/openapi.json')).body);
});
after(async () => {
  for (const s of streams) s.close();
  await cpo?.close();
  await ctx?.close();
});

const evse = (scenario: Scenario) => scenarioEvse(cpo, scenario);

const start = (d: Driver, evseId: string) =>
  ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, { token: d.token, body: { payment_method_id: d.pm, evse_id: evseId } });

const getSession = async (d: Owner, id: string) => {
  const res = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/${id}/`, { token: d.token });
  assert.equal(res.status, 200, res.text);
  return res.body;
};

async function streamOf(d: Owner, sessionId: string): Promise<SseClient> {
  const sse = await openSse(`${ctx.address}${USERS}/${d.userId}/charging-sessions/${sessionId}/events`, d.token);
  assert.equal(sse.status, 200);
  streams.push(sse);
  return sse;
}

interface Body {
  id: string;
  type: string;
  created_at: string;
  data: { object: Record<string, unknown> & { version?: number; status?: string } };
  user_id: string | null;
}
/** An event body, once it is found to be what the document says. */
function asDocumented(body: Body): Body {
  documented.assertDocumented(body);
  return body;
}
const bodyOf = (e: SseEvent) => asDocumented(JSON.parse(e.data) as Body);

/** The stream's events until one of `type` arrived (that one included). */
async function until(sse: SseClient, type: string, timeoutMs = 15_000): Promise<Body> {
  const found = await eventually(async () => sse.events.find((e) => e.event === type), `a ${type} event`, timeoutMs);
  return bodyOf(found);
}

/** The user's events of a type, as stored. */
async function stored(userId: string, type: string): Promise<Body[]> {
  const { rows } = await ctx.db.query<{ body: Body }>('SELECT body FROM client_events WHERE user_id = $1 AND type = $2 ORDER BY seq', [userId, type]);
  return rows.map((r) => asDocumented(r.body));
}

/** Waits until the payment processor's webhook of `type` about `objectId` has been applied (recorded as handled). */
async function processorWebhookHandled(type: string, objectId: string): Promise<void> {
  await eventually(async () => {
    const { rows } = await ctx.db.query<{ handled: boolean }>(
      `SELECT count(*) > 0 AND bool_and(h.event_id IS NOT NULL) AS handled
         FROM stripe_sandbox.events e LEFT JOIN payment_webhook_events h ON h.event_id = e.id
        WHERE e.type = $1 AND e.data->'data'->'object'->>'id' = $2`,
      [type, objectId],
    );
    return rows[0]?.handled ? true : undefined;
  }, `the processor's ${type} webhook handled`);
}

/** Runs due jobs (billing) until `check` holds. */
async function runJobsUntil<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  return eventually(
    async () => {
      await ctx.jobs.runDue();
      return check();
    },
    what,
    15_000,
  );
}

const without = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

it("the OpenAPI document's webhooks are the event types the service records, each with its body", () => {
  assert.deepEqual(documented.types, [...EVENT_TYPES]);
});

describe('charging session events', () => {
  it('a full session: pending, active, stopping, completed in order on its stream, each the session GET at its version; then invoice.created', async () => {
    const d = await newDriver(ctx);
    const started = await start(d, evse('NORMAL'));
    assert.equal(started.status, 201, started.text);
    const id = started.body.id as string;
    const sse = await streamOf(d, id);

    // pending: the session as its row was inserted; the start's later steps (hold, command) moved it on by the answer.
    const pending = await until(sse, 'charging_session.pending');
    assert.equal(pending.user_id, d.userId);
    assert.equal(pending.data.object.version, 1);
    assert.equal(pending.data.object.status, 'pending');
    assert.deepEqual((pending.data.object.pre_authorization as { status: string }).status, 'pending', 'no hold yet when the row was written');
    const changedSince = ['version', 'updated_at', 'pre_authorization'];
    assert.deepEqual(without(pending.data.object, changedSince), without(started.body, changedSince));
    assert.ok((started.body.version as number) > 1);

    // Equal to the session GET when the GET is at the event's version (nothing else changes the session here).
    const sameAsGet = async (event: Body) => {
      const now = await getSession(d, id);
      assert.equal(now.version, event.data.object.version, `nothing changed the session since its ${event.type}`);
      assert.deepEqual(event.data.object, now);
    };
    await sameAsGet(await until(sse, 'charging_session.active'));

    const stop = await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token });
    assert.equal(stop.status, 204, stop.text);
    const completed = await until(sse, 'charging_session.completed');
    await sameAsGet(completed);
    assert.equal(completed.data.object.session_cost && (completed.data.object.session_cost as { invoice_download: null }).invoice_download, null);

    // The bill job invoices the session: invoice.created on the session's stream, the invoice as the API lists it.
    const invoice = await runJobsUntil(async () => sse.events.find((e) => e.event === 'invoice.created'), 'invoice.created');
    const invoiceBody = bodyOf(invoice);
    const listed = await ctx.call('GET', `${USERS}/${d.userId}/invoices/`, { token: d.token });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(invoiceBody.data.object, listed.body.results[0]);
    assert.equal(invoiceBody.data.object.charging_session_id, id);
    assert.equal(invoiceBody.user_id, d.userId);

    // In order: one event per status change; progress (the CPO's final report while stopping) only between them.
    const types = sse.events.map((e) => e.event);
    assert.deepEqual(
      types.filter((t) => t !== 'charging_session.progress'),
      ['charging_session.pending', 'charging_session.active', 'charging_session.stopping', 'charging_session.completed', 'invoice.created'],
    );
    const sessionEvents = sse.events.filter((e) => e.event.startsWith('charging_session.')).map(bodyOf);
    const versions = sessionEvents.map((b) => b.data.object.version as number);
    assert.deepEqual(
      versions,
      [...versions].sort((a, b) => a - b),
    );
    assert.equal(new Set(versions).size, versions.length, 'versions strictly increase');
    const ids = sse.events.map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );
    // The stream is exactly what was recorded for the session, and a stream opened now replays the same.
    const { rows } = await ctx.db.query<{ seq: number; body: string }>('SELECT seq, body::text AS body FROM client_events WHERE session_id = $1 ORDER BY seq', [
      id,
    ]);
    assert.deepEqual(
      sse.events.map((e) => [Number(e.id), e.data]),
      rows.map((r) => [r.seq, r.body]),
    );
    const replay = await streamOf(d, id);
    assert.deepEqual(
      (await replay.waitForEvents(rows.length)).map((e) => e.data),
      rows.map((r) => r.body),
    );
    replay.close();
  });

  it('a full session at a webhook receiver: its card’s attachment and the events of its stream, each once, signed (standardwebhooks verifies them)', async () => {
    const receiver = await startReceiver();
    const worker = deliveryOf(ctx);
    worker.start();
    try {
      const owner = await newOwner(ctx);
      const endpoint = await createEndpoint(ctx, owner.token, { url: receiver.url, events: ['*'] });
      const d = await newDriver(ctx, { owner });
      const attached = await eventually(async () => (await stored(d.userId, 'payment_method.attached'))[0], 'payment_method.attached');
      const started = await start(d, evse('NORMAL'));
      assert.equal(started.status, 201, started.text);
      const id = started.body.id as string;
      const sse = await streamOf(d, id);
      await until(sse, 'charging_session.active');
      assert.equal((await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token })).status, 204);
      await until(sse, 'charging_session.completed');
      await runJobsUntil(async () => sse.events.find((e) => e.event === 'invoice.created'), 'invoice.created');
      const expected = [
        {
          id: attached.id,
          body: (await ctx.db.query<{ body: string }>('SELECT body::text AS body FROM client_events WHERE id = $1', [attached.id])).rows[0]?.body,
        },
        ...sse.events.map((e) => ({ id: bodyOf(e).id, body: e.data })),
      ];
      const received = await receiver.waitFor(expected.length, 15_000);
      // Once every delivery of the endpoint is recorded as delivered (none in flight), nothing more is sent.
      await eventually(async () => {
        const { rows } = await ctx.db.query<{ open: number }>(
          'SELECT count(*) FILTER (WHERE delivered_at IS NULL OR leased_until IS NOT NULL)::int AS open FROM webhook_deliveries WHERE endpoint_id = $1',
          [endpoint.id],
        );
        return rows[0]?.open === 0 ? true : undefined;
      }, 'every delivery recorded');
      assert.equal(receiver.requests.length, expected.length, `each event once: ${receiver.requests.map((r) => JSON.parse(r.body).type).join(', ')}`);
      // Per endpoint the order is not promised: the same bodies, byte for byte, each under its own webhook-id.
      const byId = new Map(received.map((r) => [String(r.headers['webhook-id']), r]));
      for (const event of expected) {
        const request = byId.get(event.id);
        assert.ok(request, `${event.body} reached the receiver`);
        assert.equal(request.body, event.body);
        assert.deepEqual(verify(endpoint.secret, request, ctx.clock), JSON.parse(event.body ?? ''));
        asDocumented(JSON.parse(request.body));
      }
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  it('a start the operator rejects: pending, then failed, and nothing else', async () => {
    const d = await newDriver(ctx);
    const refused = await start(d, evse('REJECT'));
    assert.equal(refused.status, 424, refused.text);
    const [session] = (await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/`, { token: d.token })).body.results;
    assert.equal(session.status, 'failed');
    const sse = await streamOf(d, session.id);
    const [pending, failed] = (await sse.waitForEvents(2)).map(bodyOf);
    assert.equal(pending?.type, 'charging_session.pending');
    assert.equal(failed?.type, 'charging_session.failed');
    assert.equal(failed?.data.object.failure_reason, 'rejected_by_operator');
    assert.ok((failed?.data.object.version as number) > (pending?.data.object.version as number));
    assert.deepEqual(failed?.data.object, await getSession(d, session.id));
    const stored = await storedOnceReceived(ctx.db, sse, session.id);
    assert.deepEqual(
      stored.map((r) => r.type),
      ['charging_session.pending', 'charging_session.failed'],
    );
    assert.deepEqual(
      sse.events.map((e) => Number(e.id)),
      stored.map((r) => r.seq),
    );
  });
});

describe('other client events, once each by their action', () => {
  it('payment_method.attached when a card is connected, payment_method.detached when it is removed', async () => {
    const owner = await newOwner(ctx);
    const pm = await connectCard(ctx, owner, CARDS.visa);
    const listed = await ctx.call('GET', `${USERS}/${owner.userId}/payment-methods/`, { token: owner.token });
    const view = listed.body.results.find((m: { id: string }) => m.id === pm);
    const attached = await eventually(async () => {
      const found = await stored(owner.userId, 'payment_method.attached');
      return found.length > 0 ? found : undefined;
    }, 'payment_method.attached');
    // The processor's webhook and the list both bring the mirror in line: one event all the same.
    await processorWebhookHandled('payment_method.attached', pm);
    assert.equal((await stored(owner.userId, 'payment_method.attached')).length, 1);
    assert.deepEqual(attached[0]?.data.object, view);
    assert.equal(attached[0]?.user_id, owner.userId);

    const removed = await ctx.call('DELETE', `${USERS}/${owner.userId}/payment-methods/${pm}/`, { token: owner.token });
    assert.equal(removed.status, 204, removed.text);
    const detached = await eventually(async () => {
      const found = await stored(owner.userId, 'payment_method.detached');
      return found.length > 0 ? found : undefined;
    }, 'payment_method.detached');
    await ctx.call('GET', `${USERS}/${owner.userId}/payment-methods/`, { token: owner.token });
    await processorWebhookHandled('payment_method.detached', pm);
    assert.equal((await stored(owner.userId, 'payment_method.detached')).length, 1);
    assert.deepEqual(detached[0]?.data.object, view);
  });

  it('user.deleted when a user is deleted: its id, external id and when', async () => {
    const owner = await newOwner(ctx);
    const named = await ctx.call('POST', `${USERS}/`, { token: owner.token, body: { custom_properties: { external_id: 'crm-42' } } });
    for (const [userId, externalId] of [
      [owner.userId, undefined],
      [named.body.id as string, 'crm-42'],
    ] as const) {
      const deleted = await ctx.call('DELETE', `${USERS}/${userId}/`, { token: owner.token });
      assert.equal(deleted.status, 204, deleted.text);
      const events = await stored(userId, 'user.deleted');
      assert.equal(events.length, 1);
      const { rows } = await ctx.db.query<{ deleted_at: Date }>('SELECT deleted_at FROM users WHERE id = $1', [userId]);
      assert.deepEqual(events[0]?.data.object, {
        id: userId,
        ...(externalId ? { external_id: externalId } : {}),
        deleted_at: rows[0]?.deleted_at.toISOString(),
      });
      assert.equal(events[0]?.user_id, userId);
    }
  });

  it('a user deletion that rolls back leaves no event (and the user)', async () => {
    const owner = await newOwner(ctx);
    await assert.rejects(
      ctx.db.transaction(async (tx) => {
        await ctx.modules.users.remove(tx, owner.clientId, owner.userId);
        assert.equal((await tx.query('SELECT 1 FROM client_events WHERE user_id = $1', [owner.userId])).rowCount, 1, 'recorded in the transaction');
        throw new Error('what came after the deletion failed');
      }),
      /came after/,
    );
    assert.deepEqual(await stored(owner.userId, 'user.deleted'), []);
    assert.equal((await ctx.call('GET', `${USERS}/${owner.userId}/`, { token: owner.token })).status, 200);
  });

  it('debt.created when the final charge fails, debt.paid when the user pays it; both on the session’s stream', async () => {
    const d = await newDriver(ctx, { card: CARDS.authenticateAlways });
    // This card wants authentication for every off-session payment: the first start answers a client secret.
    const first = await start(d, evse('NORMAL'));
    assert.equal(first.status, 402, first.text);
    const holdSecret = first.body.error.payment_intent_client_secret as string;
    const authenticate = (secret: string) =>
      ctx.call('POST', `/sandbox/payment_intents/${secret.slice(0, secret.indexOf('_secret_'))}/authenticate`, {
        body: { client_secret: secret, outcome: 'approve' },
      });
    assert.equal((await authenticate(holdSecret)).status, 200);
    const started = await start(d, evse('NORMAL'));
    assert.equal(started.status, 201, started.text);
    const id = started.body.id as string;
    const sse = await streamOf(d, id);
    await until(sse, 'charging_session.active');
    // Eight days on: the authorization lapses, so the bill cannot capture, and the off-session charge needs the customer.
    ctx.clock.advance(8 * 86_400_000);
    await ctx.sandbox.runDueWork();
    await eventually(async () => {
      // The hold of the first attempt, which this start took over.
      const { rows } = await ctx.db.query<{ status: string }>(
        'SELECT h.status FROM payment_holds h JOIN charging_sessions s ON s.hold_reference = h.reference WHERE s.id = $1',
        [id],
      );
      return rows[0]?.status === 'expired' ? true : undefined;
    }, 'the hold expired');
    assert.equal((await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token })).status, 204);
    await until(sse, 'charging_session.completed');
    const created = bodyOf(await runJobsUntil(async () => sse.events.find((e) => e.event === 'debt.created'), 'debt.created'));
    const debts = await ctx.call('GET', `${USERS}/${d.userId}/charging/debts/`, { token: d.token });
    assert.equal(debts.body.count, 1);
    assert.deepEqual(created.data.object, debts.body.results[0]);
    assert.equal(created.user_id, d.userId);

    assert.equal((await authenticate(debts.body.results[0].payment_intent_client_secret)).status, 200);
    const paid = await until(sse, 'debt.paid');
    assert.deepEqual(paid.data.object, created.data.object);
    // Listing the debts (which also re-reads them from the processor) records nothing more.
    assert.equal((await ctx.call('GET', `${USERS}/${d.userId}/charging/debts/`, { token: d.token })).body.count, 0);
    await until(sse, 'invoice.created');
    assert.equal((await stored(d.userId, 'debt.created')).length, 1);
    assert.equal((await stored(d.userId, 'debt.paid')).length, 1);
  });
});
