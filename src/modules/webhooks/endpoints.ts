// A client's webhook endpoints: the rules. Every function takes the caller's
// client id; another client's endpoint is "not found". `db` is the request's
// transaction for changes (the Idempotency-Key's), the pool for reads.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import type { Queryable } from '../../platform/db.ts';
import { AppError, type FieldError, notFound } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { ALL_EVENTS, EVENT_TYPES, recordEvent } from '../events/outbox.ts';
import * as repo from './repository.ts';
import type { EndpointCreateBody, EndpointPatchBody, EndpointView, EndpointWithSecretView } from './schemas.ts';
import { formatSecret, newSecret, PREVIOUS_SECRET_TTL_MS } from './signing.ts';
import { type UrlPolicy, urlProblem } from './url-rules.ts';

interface EndpointsContext {
  db: Queryable;
  clock: Clock;
  policy: UrlPolicy;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function endpointView(row: repo.EndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    disabled_at: iso(row.disabled_at),
    failing_since: iso(row.failing_since),
    previous_secret_expires_at: iso(row.previous_secret_expires_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function refuse(errors: FieldError[]): AppError {
  return new AppError('validation_error', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

/** The events list as stored (duplicates dropped), or the fields naming what is wrong with it. */
function checkEvents(events: string[], errors: FieldError[]): string[] {
  const known = new Set<string>(EVENT_TYPES);
  events.forEach((type, i) => {
    if (type === ALL_EVENTS) {
      if (events.length > 1) errors.push({ field: `events.${i}`, message: `"${ALL_EVENTS}" means every event type and must be the only entry` });
    } else if (!known.has(type)) {
      errors.push({ field: `events.${i}`, message: `unknown event type "${type}"; known types: ${EVENT_TYPES.join(', ')}, or "${ALL_EVENTS}"` });
    }
  });
  return [...new Set(events)];
}

function checkUrl(url: string, policy: UrlPolicy, errors: FieldError[]): string {
  const trimmed = url.trim();
  const problem = urlProblem(trimmed, policy);
  if (problem) errors.push({ field: 'url', message: problem });
  return trimmed;
}

/** Empty or whitespace-only text carries nothing: stored as null. */
function clean(text: string | null | undefined): string | null {
  const trimmed = text?.trim();
  return trimmed ? trimmed : null;
}

export async function requireEndpoint(ctx: Pick<EndpointsContext, 'db'>, clientId: string, endpointId: string, options: { forUpdate?: boolean } = {}) {
  const row = isUuid(endpointId) ? await repo.findEndpointForClient(ctx.db, clientId, endpointId, options) : undefined;
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

/** A new endpoint, enabled, with its secret: the only answer (besides a rotation) that shows it. */
export async function createEndpoint(ctx: EndpointsContext, clientId: string, body: EndpointCreateBody): Promise<EndpointWithSecretView> {
  const errors: FieldError[] = [];
  const url = checkUrl(body.url, ctx.policy, errors);
  const events = checkEvents(body.events, errors);
  if (errors.length > 0) throw refuse(errors);
  const secret = newSecret();
  const row = await repo.insertEndpoint(ctx.db, {
    id: randomUUID(),
    client_id: clientId,
    url,
    events,
    description: clean(body.description),
    secret,
    created_at: ctx.clock.now(),
  });
  return { ...endpointView(row), secret: formatSecret(secret) };
}

export async function listEndpoints(ctx: Pick<EndpointsContext, 'db'>, clientId: string, page: { limit: number; offset: number }) {
  const { count, rows } = await repo.listEndpointsForClient(ctx.db, clientId, page);
  return { count, results: rows.map(endpointView) };
}

export async function getEndpoint(ctx: Pick<EndpointsContext, 'db'>, clientId: string, endpointId: string): Promise<EndpointView> {
  return endpointView(await requireEndpoint(ctx, clientId, endpointId));
}

export async function updateEndpoint(ctx: EndpointsContext, clientId: string, endpointId: string, body: EndpointPatchBody): Promise<EndpointView> {
  await requireEndpoint(ctx, clientId, endpointId, { forUpdate: true });
  const errors: FieldError[] = [];
  const changes: repo.EndpointChanges = {};
  if (body.url !== undefined) changes.url = checkUrl(body.url, ctx.policy, errors);
  if (body.events !== undefined) changes.events = checkEvents(body.events, errors);
  if (body.description !== undefined) changes.description = clean(body.description);
  if (body.enabled !== undefined) changes.enabled = body.enabled;
  if (errors.length > 0) throw refuse(errors);
  const row = await repo.updateEndpoint(ctx.db, clientId, endpointId, changes, ctx.clock.now());
  if (!row) throw notFound('Webhook endpoint');
  return endpointView(row);
}

/** Deletes the endpoint and its delivery log; deliveries in flight end without being recorded. */
export async function deleteEndpoint(ctx: Pick<EndpointsContext, 'db'>, clientId: string, endpointId: string): Promise<void> {
  if (!isUuid(endpointId) || !(await repo.deleteEndpoint(ctx.db, clientId, endpointId))) throw notFound('Webhook endpoint');
}

/** A new secret, shown once; the previous one signs beside it for 24 hours (a secret rotated out before that is dropped). */
export async function rotateSecret(ctx: Omit<EndpointsContext, 'policy'>, clientId: string, endpointId: string): Promise<EndpointWithSecretView> {
  await requireEndpoint(ctx, clientId, endpointId, { forUpdate: true });
  const secret = newSecret();
  const now = ctx.clock.now();
  const row = await repo.rotateSecret(ctx.db, clientId, endpointId, secret, now, new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS));
  if (!row) throw notFound('Webhook endpoint');
  return { ...endpointView(row), secret: formatSecret(secret) };
}

/** Records a `ping` event for this endpoint only (whatever it subscribes to); delivered like any other event. */
export async function sendTestEvent(ctx: Omit<EndpointsContext, 'policy'>, clientId: string, endpointId: string): Promise<{ event_id: string }> {
  const endpoint = await requireEndpoint(ctx, clientId, endpointId, { forUpdate: true });
  if (!endpoint.enabled) {
    throw new AppError('conflict', 'The webhook endpoint is disabled: enable it (PATCH enabled: true) before sending it a test event.');
  }
  const now = ctx.clock.now();
  const recorded = await recordEvent(
    ctx.db,
    {
      clientId,
      userId: null,
      type: 'ping',
      object: { endpoint_id: endpointId, message: 'A test event sent through POST /api/v1/webhook-endpoints/<id>/test/.' },
      endpointId,
    },
    now,
  );
  return { event_id: recorded.body.id };
}
