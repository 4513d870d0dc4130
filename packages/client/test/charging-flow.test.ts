// The whole charging flow through the SDK, as packages/client/README.md shows it, against the real service on the
// sandbox CPO network and the payment sandbox (real HTTP, real PostgreSQL): a user, billing details, a card through
// the sandbox, a station, start, the session's live stream until its invoice, stop, the invoice. The SDK talks to
// the service through a small proxy that cuts the first event stream after its first event, so the stream has to
// reconnect with Last-Event-ID and go on without losing or repeating an event.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import type { CpoSandbox } from '../../../src/sandbox/cpo/index.ts';
import { scenarioEvse, startCpoNetwork } from '../../../test/charging-support.ts';
import { setupTestApp, type TestContext } from '../../../test/helpers.ts';
import { type ClientEvent, createClient, isApiError } from '../src/index.ts';

let ctx: TestContext;
let cpo: CpoSandbox;
let proxy: { url: string; streamRequests: { lastEventId: string | undefined }[]; close(): Promise<void> };

/** Forwards everything to `target`; the first event stream is cut once its first event has passed. */
async function startProxy(target: string): Promise<typeof proxy> {
  const streamRequests: { lastEventId: string | undefined }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const isStream = /\/events\/?$/.test(req.url ?? '');
    if (isStream) streamRequests.push({ lastEventId: req.headers['last-event-id'] as string | undefined });
    const cutAfterFirstEvent = isStream && streamRequests.length === 1;
    const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (chunk: Buffer) => {
        res.write(chunk);
        if (cutAfterFirstEvent && chunk.toString().includes('\nevent: ')) {
          // Once the chunk has reached the client: a connection lost mid-stream, as a network would lose it.
          answer.pause();
          setTimeout(() => {
            answer.destroy();
            res.socket?.destroy();
          }, 100);
        }
      });
      answer.on('end', () => res.end());
    });
    upstream.on('error', () => res.socket?.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    streamRequests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true } });
  cpo = await startCpoNetwork(ctx);
  ctx.jobs.start();
  proxy = await startProxy(ctx.address as string);
});
after(async () => {
  await proxy?.close();
  await cpo?.close();
  await ctx?.close();
});

test('user, billing details, card, station, start, live events until the invoice, stop, invoice: all through the SDK', async () => {
  const { token } = await ctx.newClient();
  const api = createClient({ baseUrl: proxy.url, token, retry: { baseDelayMs: 50 } });
  const evseId = scenarioEvse(cpo, 'NORMAL');

  const user = await api.post('/api/v1/users/', { body: { email: 'driver@example.com', locale: 'en' } });
  const path = { user_id: user.id };
  await api.put('/api/v1/users/{user_id}/billing-details/', {
    path,
    body: { account_type: 'personal', first_name: 'Ada', last_name: 'Lovelace', country: 'DE' },
  });

  // A card, confirmed on the payment sandbox as Stripe.js would do it in the app; the processor's webhook brings it in.
  const intent = await api.get('/api/v1/users/{user_id}/setup-intents/', { path, query: { pm_type: 'card' } });
  const confirmed = await fetch(`${ctx.address}/sandbox/setup_intents/${intent.id}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_secret: intent.client_secret, card_number: '4242424242424242' }),
  });
  assert.equal(confirmed.status, 200, await confirmed.clone().text());
  let card: string | undefined;
  for (let i = 0; i < 100 && !card; i++) {
    for await (const method of api.paginate('/api/v1/users/{user_id}/payment-methods/', { path })) card ??= method.id;
    if (!card) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(card, 'the card arrived');

  const station = await api.get('/api/v1/stations/details/', { query: { id: evseId, type: 'evse_id' } });
  assert.ok(station.evses.some((e) => e.evse_id === evseId && e.status === 'AVAILABLE'));

  const session = await api.post('/api/v1/users/{user_id}/charging/start/', { path, body: { payment_method_id: card, evse_id: evseId } });
  assert.equal(session.status, 'pending');

  const seen: { id: string; event: ClientEvent }[] = [];
  for await (const streamed of api.sessionEvents(user.id, session.id, { signal: AbortSignal.timeout(60_000) })) {
    seen.push(streamed);
    const { event } = streamed;
    if (event.type === 'charging_session.active') {
      assert.equal(event.data.object.id, session.id, 'typed: the session object');
      await api.post('/api/v1/users/{user_id}/charging/stop/{session_id}/', { path: { ...path, session_id: session.id } });
    }
    if (event.type === 'invoice.created') break;
  }

  const types = seen.map((s) => s.event.type).filter((t) => t !== 'charging_session.progress');
  assert.deepEqual(types, [
    'charging_session.pending',
    'charging_session.active',
    'charging_session.stopping',
    'charging_session.completed',
    'invoice.created',
  ]);
  const ids = seen.map((s) => Number(s.id));
  assert.deepEqual(
    ids,
    [...new Set(ids)].sort((a, b) => a - b),
    'each event once, in order',
  );

  // The first stream was cut after its first event: the SDK reconnected, resuming after the last event it had.
  assert.ok(proxy.streamRequests.length >= 2, `reconnected (${proxy.streamRequests.length} stream requests)`);
  assert.equal(proxy.streamRequests[0]?.lastEventId, undefined);
  const resumedAfter = proxy.streamRequests[1]?.lastEventId;
  assert.ok(resumedAfter && seen.some((s) => s.id === resumedAfter), `Last-Event-ID ${resumedAfter} is an event received`);

  const invoiceEvent = seen.at(-1)?.event;
  assert.ok(invoiceEvent?.type === 'invoice.created');
  const invoices = [];
  for await (const invoice of api.paginate('/api/v1/users/{user_id}/invoices/', { path })) invoices.push(invoice);
  assert.deepEqual(invoices, [invoiceEvent.data.object]);
  assert.equal(invoices[0]?.charging_session_id, session.id);

  const done = await api.get('/api/v1/users/{user_id}/charging-sessions/{session_id}/', { path: { ...path, session_id: session.id } });
  assert.equal(done.status, 'completed');
  // Stopping it again is the typed 409 already_stopped.
  const again = await api.post('/api/v1/users/{user_id}/charging/stop/{session_id}/', { path: { ...path, session_id: session.id } }).catch((e: unknown) => e);
  assert.ok(isApiError(again, 'already_stopped') && again.status === 409, String(again));
});

test('the stream of another user’s session is a typed 404, thrown at once (not retried)', async () => {
  const { token } = await ctx.newClient();
  const api = createClient({ baseUrl: proxy.url, token });
  const user = await api.post('/api/v1/users/', { body: {} });
  const before = proxy.streamRequests.length;
  const stream = api.sessionEvents(user.id, '00000000-0000-4000-8000-000000000000');
  const error = await stream.next().catch((e: unknown) => e);
  assert.ok(isApiError(error, 'not_found'), String(error));
  assert.equal(proxy.streamRequests.length - before, 1);
});
