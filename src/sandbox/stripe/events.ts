// Stripe events: each change records one in the change's transaction, with a
// pending delivery to every webhook endpoint (sent after commit); the list and
// retrieve operations read them back.
import { clone, type EngineContext, seconds } from './context.ts';
import { resourceMissing } from './errors.ts';
import type { FormObject } from './form.ts';
import { type EventObject, newId } from './objects.ts';
import { LIST_PARAMS, listOptions, Params } from './params.ts';
import * as store from './store.ts';

/** Records the event `type` for `object` (a snapshot) and its pending deliveries. */
export async function emit(ctx: EngineContext, type: string, object: unknown, previous?: Record<string, unknown>): Promise<void> {
  const event: EventObject = {
    id: newId('evt'),
    object: 'event',
    api_version: ctx.account.apiVersion,
    created: seconds(ctx.now),
    data: { object: clone(object), ...(previous ? { previous_attributes: previous } : {}) },
    livemode: false,
    pending_webhooks: 0, // the count of the endpoints that receive it, set as it is recorded
    request: { id: ctx.requestId, idempotency_key: ctx.idempotencyKey },
    type,
  };
  await store.recordEvent(ctx.tx, { id: event.id, type, created: event.created, data: event }, ctx.now);
}

export async function listEvents(ctx: EngineContext, raw: FormObject): Promise<unknown> {
  const params = new Params(raw, [...LIST_PARAMS, 'type', 'types', 'created', 'delivery_success']);
  params.expand([]);
  const list = listOptions(params);
  const cursor = list.startingAfter ?? list.endingBefore;
  if (cursor !== undefined && !(await store.loadEvent(ctx.tx, cursor))) throw resourceMissing('event', cursor, 'starting_after');
  const page = await store.listEvents(ctx.tx, { type: params.string('type') || undefined }, list);
  return { object: 'list', data: page.data, has_more: page.hasMore, url: '/v1/events' };
}

export async function retrieveEvent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  new Params(raw, ['expand']).expand([]);
  const event = await store.loadEvent(ctx.tx, id as string);
  if (!event) throw resourceMissing('event', id as string);
  return event;
}
