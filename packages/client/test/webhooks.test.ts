// The SDK's webhook verifier on real deliveries: an endpoint made through the SDK, its test ping delivered by the
// service's delivery worker to a real HTTP receiver, verified as received; refused when the body is tampered with,
// the timestamp is old (or ahead), the secret is another; after a rotation either secret verifies. The official
// standardwebhooks library agrees on every verdict (test/webhooks-support.ts). The ping is what the OpenAPI
// document's `webhooks` section (the source of the SDK's event types) says a ping is.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setupTestApp, type TestContext } from '../../../test/helpers.ts';
import { deliveryOf, documentedEvents, type ReceivedRequest, type Receiver, startReceiver, verifies } from '../../../test/webhooks-support.ts';
import { type Client, createClient, verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from '../src/index.ts';

let ctx: TestContext;
let rx: Receiver;

before(async () => {
  ctx = await setupTestApp({ listen: 0 });
  rx = await startReceiver();
});
after(async () => {
  await rx.close();
  await ctx.close();
});

/** A ping delivered to `endpointId` through the service: the request as the receiver got it. */
async function deliveredPing(api: Client, endpointId: string): Promise<ReceivedRequest> {
  const count = rx.requests.length;
  await api.post('/api/v1/webhook-endpoints/{endpoint_id}/test/', { path: { endpoint_id: endpointId } });
  await deliveryOf(ctx).runDue();
  return (await rx.waitFor(count + 1))[count] as ReceivedRequest;
}

async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationReason | 'accepted'> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    assert.ok(error instanceof WebhookVerificationError, String(error));
    return error.reason;
  }
}

test('a real delivery verifies; a tampered body, an old or future timestamp, another secret do not', async () => {
  const { token } = await ctx.newClient();
  const api = createClient({ baseUrl: ctx.address as string, token });
  const endpoint = await api.post('/api/v1/webhook-endpoints/', { body: { url: rx.url, events: ['*'] } });
  const request = await deliveredPing(api, endpoint.id);
  const now = ctx.clock.now().getTime();

  const event = await verifyWebhook({ secret: endpoint.secret, headers: request.headers, body: request.body, now });
  assert.equal(event.type, 'ping');
  assert.equal(event.id, request.headers['webhook-id']);
  if (event.type === 'ping') assert.equal(event.data.object.endpoint_id, endpoint.id);
  // The body as bytes, and the headers as fetch's Headers, verify the same.
  const headers = new Headers(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
  assert.equal((await verifyWebhook({ secret: endpoint.secret, headers, body: new TextEncoder().encode(request.body), now })).id, event.id);
  assert.ok(verifies(endpoint.secret, request, ctx.clock), 'the official library agrees');
  documentedEvents((await ctx.call('GET', '/api/v1/openapi.json')).body).assertDocumented(JSON.parse(request.body));

  const tampered = request.body.replace('"ping"', '"ping" ');
  assert.equal(await refusal(verifyWebhook({ secret: endpoint.secret, headers: request.headers, body: tampered, now })), 'invalid_signature');
  assert.equal(verifies(endpoint.secret, { ...request, body: tampered }, ctx.clock), false);
  assert.equal(
    await refusal(verifyWebhook({ secret: endpoint.secret, headers: request.headers, body: request.body, now: now + 301_000 })),
    'timestamp_too_old',
  );
  assert.equal(
    await refusal(verifyWebhook({ secret: endpoint.secret, headers: request.headers, body: request.body, now: now - 301_000 })),
    'timestamp_too_new',
  );
  assert.equal(await refusal(verifyWebhook({ secret: endpoint.secret, headers: request.headers, body: request.body, now: now + 299_000 })), 'accepted');
  assert.equal(
    await refusal(verifyWebhook({ secret: endpoint.secret, headers: request.headers, body: request.body, now: now + 60_000, toleranceSeconds: 30 })),
    'timestamp_too_old',
  );

  const other = await api.post('/api/v1/webhook-endpoints/', { body: { url: rx.url, events: ['ping'] } });
  assert.equal(await refusal(verifyWebhook({ secret: other.secret, headers: request.headers, body: request.body, now })), 'invalid_signature');
  const { 'webhook-signature': _, ...unsigned } = request.headers;
  assert.equal(await refusal(verifyWebhook({ secret: endpoint.secret, headers: unsigned, body: request.body, now })), 'missing_header');
  const forged = { ...request.headers, 'webhook-timestamp': String(Number(request.headers['webhook-timestamp']) + 1) };
  assert.equal(await refusal(verifyWebhook({ secret: endpoint.secret, headers: forged, body: request.body, now })), 'invalid_signature');
});

test('after a rotation the delivery carries two signatures: the new and the previous secret both verify', async () => {
  const { token } = await ctx.newClient();
  const api = createClient({ baseUrl: ctx.address as string, token });
  const endpoint = await api.post('/api/v1/webhook-endpoints/', { body: { url: rx.url, events: ['*'] } });
  const rotated = await api.post('/api/v1/webhook-endpoints/{endpoint_id}/rotate-secret/', { path: { endpoint_id: endpoint.id } });
  const request = await deliveredPing(api, endpoint.id);
  const now = ctx.clock.now().getTime();
  assert.equal(String(request.headers['webhook-signature']).split(' ').length, 2);
  for (const secret of [rotated.secret, endpoint.secret]) {
    assert.equal((await verifyWebhook({ secret, headers: request.headers, body: request.body, now })).type, 'ping');
  }
  assert.equal(
    (await verifyWebhook({ secret: ['whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', rotated.secret], headers: request.headers, body: request.body, now }))
      .type,
    'ping',
  );
});

test('wrong arguments are clear errors: a parsed body, a secret that is not whsec_<base64>', async () => {
  const headers = { 'webhook-id': 'e', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' };
  await assert.rejects(verifyWebhook({ secret: 'whsec_AAAA', headers, body: { id: 'e' } as unknown as string }), /raw request body/);
  await assert.rejects(verifyWebhook({ secret: 'whsec_***', headers, body: '{}' }), /whsec_<base64>/);
});
