// `for await` over a paginated list: the API answers pages `{count, next, previous, results}` whose `next` is the
// absolute link to the following page (null on the last). The client follows `next`, taking only its query string
// onto its own address: the link is built from the service's PUBLIC_BASE_URL, which may name another host than the
// one this client talks to (a proxy, a container's port), and the bearer token never goes to another host.
import { type Call, send, type Transport } from './transport.ts';

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** Each page of the list `call` asks for, from its first (or the `page` its query names) to the last. */
export async function* pages<T>(transport: Transport, call: Call): AsyncGenerator<Page<T>, void, undefined> {
  let current: Call = call;
  for (;;) {
    const { data } = await send<Page<T>>(transport, current);
    yield data;
    if (!data.next) return;
    current = { ...call, search: new URL(data.next).search };
  }
}

/** Each result of the list `call` asks for, across all its pages. */
export async function* items<T>(transport: Transport, call: Call): AsyncGenerator<T, void, undefined> {
  for await (const page of pages<T>(transport, call)) yield* page.results;
}
