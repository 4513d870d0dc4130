// Wire shapes of webhook endpoints and their delivery log: validation,
// TypeScript types and the OpenAPI document come from these definitions.
import { type Static, Type } from 'typebox';
import { Nullable } from '../../platform/http/schema.ts';
import { ALL_EVENTS, EVENT_TYPES } from '../events/outbox.ts';

export const EndpointParams = Type.Object({ endpoint_id: Type.String({ description: 'Webhook endpoint id (UUID).' }) });
export const DeliveryParams = Type.Object({
  endpoint_id: Type.String({ description: 'Webhook endpoint id (UUID).' }),
  delivery_id: Type.String({ description: 'Delivery id (UUID).' }),
});

const Url = Type.String({
  minLength: 1,
  maxLength: 2_048,
  description:
    'Where events are POSTed. https only (plain http only to localhost, 127.0.0.0/8 or [::1], and not in production); no credentials (user:password@). In production the host must be public: private, loopback, link-local, unique-local, CGNAT and unspecified addresses are refused, both as literals and as what the host name resolves to at delivery time.',
});
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: `Event types to receive (${EVENT_TYPES.join(', ')}), or ["${ALL_EVENTS}"] for all of them, including types added later.`,
});
const Description = Nullable(Type.String({ maxLength: 500, description: 'Your own note on the endpoint.' }));

export const EndpointCreate = Type.Object({ url: Url, events: Events, description: Type.Optional(Description) }, { additionalProperties: false });
export type EndpointCreateBody = Static<typeof EndpointCreate>;

export const EndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'false pauses deliveries (pending ones wait and resume when enabled again; events meanwhile are not queued for it); true re-enables an endpoint, also one the service disabled, and clears its failure state.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EndpointPatchBody = Static<typeof EndpointPatch>;

export const Endpoint = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  enabled: Type.Boolean({ description: 'Whether events are delivered to it.' }),
  disabled_reason: Nullable(
    Type.String({
      description:
        'Why the service disabled the endpoint (it answered 410 Gone, or every attempt failed for 3 days); null when enabled or disabled through this API.',
    }),
  ),
  disabled_at: Nullable(Type.String({ format: 'date-time' })),
  failing_since: Nullable(
    Type.String({ format: 'date-time', description: 'First failed attempt since the last successful one; the endpoint is disabled 3 days after it.' }),
  ),
  previous_secret_expires_at: Nullable(
    Type.String({ format: 'date-time', description: 'After a rotation: until when the previous secret signs too (a second v1 signature).' }),
  ),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type EndpointView = Static<typeof Endpoint>;

const Secret = Type.String({
  description: 'The signing secret, whsec_<base64>: shown only here (on creation and rotation). Give it to a Standard Webhooks library to verify deliveries.',
});
export const EndpointWithSecret = Type.Object({ ...Endpoint.properties, secret: Secret });
export type EndpointWithSecretView = Static<typeof EndpointWithSecret>;

export const TestEvent = Type.Object({
  event_id: Type.String({ format: 'uuid', description: 'The ping event’s id: the webhook-id header of its delivery.' }),
});

const Attempt = Type.Object({
  attempt: Type.Integer({ description: '1 for the first attempt.' }),
  started_at: Type.String({ format: 'date-time' }),
  finished_at: Nullable(Type.String({ format: 'date-time', description: 'null while the attempt is in flight.' })),
  status_code: Nullable(Type.Integer({ description: 'The HTTP status the endpoint answered; null when it did not answer.' })),
  error: Nullable(Type.String({ description: 'Why the attempt failed when the endpoint did not answer (timeout, connection refused, ...).' })),
  duration_ms: Nullable(Type.Integer()),
});

export const Delivery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  event_id: Type.String({ format: 'uuid', description: 'The event delivered: the webhook-id header, the same on every attempt.' }),
  event_type: Type.String(),
  status: Type.String({
    enum: ['pending', 'delivered', 'failed'],
    description:
      'pending: an attempt is due or in flight; delivered: a 2xx came back; failed: given up (3 days of failures, 410 Gone, or the endpoint disabled).',
  }),
  attempts: Type.Integer({ description: 'Attempts made (or started).' }),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  last_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  next_retry_at: Nullable(Type.String({ format: 'date-time', description: 'When the next attempt is due; null when none is.' })),
  delivered_at: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
  attempt_log: Type.Array(Attempt, { description: 'Every attempt, oldest first.' }),
});
export type DeliveryView = Static<typeof Delivery>;
