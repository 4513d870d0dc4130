// Stripe's list answer for stored objects: a cursor that names a missing
// object is an error, as in Stripe, not an empty page.
import type { EngineContext } from './context.ts';
import { resourceMissing } from './errors.ts';
import * as store from './store.ts';

export async function listAnswer(ctx: EngineContext, url: string, object: string, filter: Parameters<typeof store.listObjects>[1], list: store.ListOptions) {
  const cursor = list.startingAfter ?? list.endingBefore;
  if (cursor !== undefined && !(await store.loadObject(ctx.tx, cursor, object))) {
    throw resourceMissing(object, cursor, list.startingAfter !== undefined ? 'starting_after' : 'ending_before');
  }
  const page = await store.listObjects(ctx.tx, filter, list);
  return { object: 'list', data: page.data, has_more: page.hasMore, url };
}
