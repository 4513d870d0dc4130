// The events a client receives, for the OpenAPI document's `webhooks` section: one entry per event type with its
// body (the JSON a webhook delivery POSTs, byte for byte the `data` of the session stream's Server-Sent Event) and
// the Standard Webhooks headers. The objects are the API's own schemas: an event carries the object as the API
// shows it. Documentation only: events are written by events/outbox.ts.
import { type TSchema, Type } from 'typebox';
import { ChargingSession } from '../charging/schemas.ts';
import { EVENT_TYPES, type EventType } from '../events/outbox.ts';
import { Debt, Invoice } from '../invoicing/schemas.ts';
import { PaymentMethod } from '../payments/schemas.ts';

const UserDeleted = Type.Object({
  id: Type.String({ format: 'uuid' }),
  external_id: Type.Optional(Type.String({ description: 'The user’s custom_properties.external_id, when it had one.' })),
  deleted_at: Type.String({ format: 'date-time' }),
});

const Ping = Type.Object({ endpoint_id: Type.String({ format: 'uuid' }), message: Type.String() });

/** The object each event type carries (`data.object`). */
const OBJECTS: Record<EventType, TSchema> = {
  'charging_session.pending': ChargingSession,
  'charging_session.active': ChargingSession,
  'charging_session.stopping': ChargingSession,
  'charging_session.completed': ChargingSession,
  'charging_session.failed': ChargingSession,
  'charging_session.progress': ChargingSession,
  'invoice.created': Invoice,
  'payment_method.attached': PaymentMethod,
  'payment_method.detached': PaymentMethod,
  'debt.created': Debt,
  'debt.paid': Debt,
  'user.deleted': UserDeleted,
  ping: Ping,
};

function eventBody(type: EventType): TSchema {
  return Type.Object({
    id: Type.String({ format: 'uuid', description: 'The event id: the webhook-id header, the same on every retry (deduplicate on it).' }),
    type: Type.Literal(type),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Object({ object: OBJECTS[type] }),
    user_id: type === 'ping' ? Type.Null() : Type.String({ format: 'uuid', description: 'The user the event is about.' }),
  });
}

const SIGNATURE_HEADERS = [
  { in: 'header', name: 'webhook-id', required: true, schema: { type: 'string' }, description: 'The event id (the same on every attempt).' },
  { in: 'header', name: 'webhook-timestamp', required: true, schema: { type: 'string' }, description: 'Unix seconds of the attempt.' },
  {
    in: 'header',
    name: 'webhook-signature',
    required: true,
    schema: { type: 'string' },
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours.',
  },
];

/** The `webhooks` of the OpenAPI document: what the service POSTs to a client's endpoint, per event type. */
export function eventWebhooks(): Record<EventType, object> {
  const entries = EVENT_TYPES.map((type) => [
    type,
    {
      post: {
        summary: `${type} event`,
        tags: ['Webhooks'],
        parameters: SIGNATURE_HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: eventBody(type) } } },
        responses: { '200': { description: 'Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff.' } },
      },
    },
  ]);
  return Object.fromEntries(entries) as Record<EventType, object>;
}
