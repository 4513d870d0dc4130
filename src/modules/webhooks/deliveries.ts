// A client's delivery log: each delivery of an event to one of its endpoints,
// with every attempt, and a delivery made due again on request.
import type { Clock } from '../../platform/clock.ts';
import type { Queryable } from '../../platform/db.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { requireEndpoint } from './endpoints.ts';
import * as repo from './repository.ts';
import type { DeliveryView } from './schemas.ts';

const iso = (date: Date | null) => date?.toISOString() ?? null;

function deliveryStatus(row: Pick<repo.DeliveryRow, 'next_attempt_at' | 'delivered_at'>): DeliveryView['status'] {
  if (row.next_attempt_at) return 'pending';
  return row.delivered_at ? 'delivered' : 'failed';
}

function deliveryView(row: repo.DeliveryRow, attempts: repo.AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: deliveryStatus(row),
    attempts: row.attempts,
    last_status_code: row.last_status,
    last_error: row.last_error,
    last_attempt_at: iso(row.last_attempt_at),
    next_retry_at: iso(row.next_attempt_at),
    delivered_at: iso(row.delivered_at),
    created_at: row.created_at.toISOString(),
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at.toISOString(),
      finished_at: iso(a.finished_at),
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
    })),
  };
}

async function withAttempts(db: Queryable, clientId: string, rows: repo.DeliveryRow[]): Promise<DeliveryView[]> {
  const attempts = Map.groupBy(
    await repo.attemptsOf(
      db,
      clientId,
      rows.map((r) => r.id),
    ),
    (a) => a.delivery_id,
  );
  return rows.map((row) => deliveryView(row, attempts.get(row.id) ?? []));
}

/** The endpoint's deliveries, newest first. */
export async function listDeliveries(ctx: { db: Queryable }, clientId: string, endpointId: string, page: { limit: number; offset: number }) {
  await requireEndpoint(ctx, clientId, endpointId);
  const { count, rows } = await repo.listDeliveriesForEndpoint(ctx.db, clientId, endpointId, page);
  return { count, results: await withAttempts(ctx.db, clientId, rows) };
}

/**
 * Makes the delivery due now, whether it is pending, delivered or given up: the next attempt goes at once (with the
 * same webhook-id). Refused while an attempt is in flight, and while the endpoint is disabled (nothing would go).
 */
export async function retryDelivery(ctx: { db: Queryable; clock: Clock }, clientId: string, endpointId: string, deliveryId: string): Promise<DeliveryView> {
  const endpoint = await requireEndpoint(ctx, clientId, endpointId);
  const found = isUuid(deliveryId) ? await repo.findDeliveryForClient(ctx.db, clientId, endpointId, deliveryId) : undefined;
  if (!found) throw notFound('Webhook delivery');
  if (!endpoint.enabled) throw new AppError('conflict', 'The webhook endpoint is disabled: enable it (PATCH enabled: true) before retrying its deliveries.');
  const now = ctx.clock.now();
  const due = await repo.makeDeliveryDue(ctx.db, clientId, endpointId, deliveryId, now);
  if (!due) throw new AppError('conflict', 'An attempt of this delivery is in flight; retry once it has ended.', { headers: { 'Retry-After': '10' } });
  return (await withAttempts(ctx.db, clientId, [due]))[0] as DeliveryView;
}
