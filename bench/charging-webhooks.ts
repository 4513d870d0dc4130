// bench:charging --webhooks: a client's webhook receiver on loopback, for the event delivery figures of issue 19.
//
// The bench registers one endpoint for every event type (`["*"]`) through the API, as a client app would, pointing
// at this receiver. Up, it answers 200 at once and records, per event (counted once per webhook-id, however often
// it came), how long after the event's created_at it arrived: the service stamps created_at in the transaction of
// the change, so this is commit -> receiver plus the commit itself, an upper bound. Down, its port refuses
// connections (the receiver is gone): the service retries later, and what the bench measures then is whether the
// API notices.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceiverMode = 'up' | 'down';

export interface ReceiverFigures {
  /** Events received (distinct webhook-ids) since the last reset. */
  events: number;
  /** Requests of those events (a retry of one already received counts here only). */
  requests: number;
  /** Per event type, distinct events. */
  byType: Record<string, number>;
  /** ms from the event's created_at to its first arrival. */
  latenciesMs: number[];
  /** Session events that arrived out of their version order (a later version seen first). */
  staleArrivals: number;
}

export interface WebhookReceiver {
  url: string;
  setMode(mode: ReceiverMode): Promise<void>;
  /** Figures since the last call, then counts afresh: only events created from `since` on (ms), not retries of older ones. */
  takeFigures(since: number): ReceiverFigures;
  close(): Promise<void>;
}

const emptyFigures = (): ReceiverFigures => ({ events: 0, requests: 0, byType: {}, latenciesMs: [], staleArrivals: 0 });

interface EventBody {
  id?: unknown;
  type?: unknown;
  created_at?: unknown;
  data?: { object?: { id?: unknown; version?: unknown } };
}

interface Counting {
  figures: ReceiverFigures;
  /** Events created before this (ms) are left out. */
  since: number;
  seen: Set<string>;
  versions: Map<string, number>;
}

function record({ figures, since, seen, versions }: Counting, webhookId: string, body: string, at: number): void {
  if (seen.has(webhookId)) {
    figures.requests++;
    return;
  }
  seen.add(webhookId);
  let event: EventBody;
  try {
    event = JSON.parse(body) as EventBody;
  } catch {
    return;
  }
  const created = typeof event.created_at === 'string' ? Date.parse(event.created_at) : Number.NaN;
  if (!Number.isFinite(created) || created < since) return;
  figures.requests++;
  figures.events++;
  const type = typeof event.type === 'string' ? event.type : '?';
  figures.byType[type] = (figures.byType[type] ?? 0) + 1;
  figures.latenciesMs.push(Math.max(0, at - created));
  const object = event.data?.object;
  if (type.startsWith('charging_session.') && typeof object?.id === 'string' && typeof object.version === 'number') {
    const latest = versions.get(object.id) ?? 0;
    if (object.version < latest) figures.staleArrivals++;
    else versions.set(object.id, object.version);
  }
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const counting: Counting = { figures: emptyFigures(), since: 0, seen: new Set(), versions: new Map() };
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      record(counting, String(req.headers['webhook-id'] ?? ''), Buffer.concat(chunks).toString('utf8'), Date.now());
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  };
  let server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let mode: ReceiverMode = 'up';
  const close = (s: Server) =>
    new Promise<void>((resolve) => {
      s.closeAllConnections();
      s.close(() => resolve());
    });
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    async setMode(next) {
      if (next === mode) return;
      mode = next;
      if (next === 'down') await close(server);
      else {
        server = createServer(handler);
        await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
      }
    },
    takeFigures(since) {
      const taken = counting.figures;
      counting.figures = emptyFigures();
      counting.since = since;
      return taken;
    },
    close: () => (mode === 'up' ? close(server) : Promise.resolve()),
  };
}
