// How operations read stored objects, as Stripe answers: an id that names no
// object (or one the caller may not see) is resource_missing, and so is a list
// cursor that names none (an error, as in Stripe, not an empty page).
import type { EngineContext } from './context.ts';
import { resourceMissing } from './errors.ts';
import * as store from './store.ts';

/**
 * The stored `object` with this id, or resource_missing: 404 when the id came
 * in the URL, 400 naming `param` when it came in a parameter. `visible` hides
 * an object that exists from a caller who may not see it (a wrong client
 * secret), with the same answer as a missing one.
 */
export async function loadOr404<T, I = Record<string, unknown>>(
  ctx: EngineContext,
  object: string,
  id: string,
  options: { param?: string | undefined; forUpdate?: boolean; visible?: (data: T) => boolean } = {},
): Promise<store.StoredObject<T, I>> {
  const found = await store.loadObject<T, I>(ctx.tx, id, object, { forUpdate: options.forUpdate ?? false });
  if (!found || (options.visible && !options.visible(found.data))) throw resourceMissing(object, id, options.param);
  return found;
}

export async function listAnswer(ctx: EngineContext, url: string, object: string, filter: Parameters<typeof store.listObjects>[1], list: store.ListOptions) {
  const cursor = list.startingAfter ?? list.endingBefore;
  if (cursor !== undefined && !(await store.loadObject(ctx.tx, cursor, object))) {
    throw resourceMissing(object, cursor, list.startingAfter !== undefined ? 'starting_after' : 'ending_before');
  }
  const page = await store.listObjects(ctx.tx, filter, list);
  return { object: 'list', data: page.data, has_more: page.hasMore, url };
}
