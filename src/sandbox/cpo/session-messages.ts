// The outbox messages of a simulated session (push.ts delivers them): the
// Session PUT and PATCHes, and the CDR POST, each to the eMSP that started
// the session, if it has a receiver for them. Scenarios NOUPDATES, DUPLICATE
// and LATECDR change what is sent and when.
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import { joinUrl } from './push.ts';
import type { Row, SimulationContext } from './simulation-context.ts';
import type { OutboxMessage } from './store.ts';

export function sessionMessages({ peers, push, quirks }: SimulationContext, row: Row, method: 'PUT' | 'PATCH', body: unknown, now: Date): OutboxMessage[] {
  if (row.scenario === 'NOUPDATES') return [];
  const peer = peers.get(row.peerId);
  const base = peer && peers.endpoint(peer, 'sessions', 'RECEIVER');
  if (!peer || !base) return [];
  const message: OutboxMessage = {
    peerId: peer.id,
    orderingKey: row.id,
    kind: method === 'PUT' ? 'session_put' : 'session_patch',
    method,
    url: joinUrl(base, row.data.country_code, row.data.party_id, row.id),
    body: quirks ? quirks.sessionOrCdr(body) : body,
    routing: push.routing(row.data, peer),
    dueAt: now,
  };
  return row.scenario === 'DUPLICATE' && method === 'PATCH' ? [message, { ...message }] : [message];
}

export function cdrMessage({ peers, push, options, quirks }: SimulationContext, row: Row, cdr: Cdr, now: Date): OutboxMessage[] {
  const peer = peers.get(row.peerId);
  const url = peer && peers.endpoint(peer, 'cdrs', 'RECEIVER');
  if (!peer || !url) return [];
  const due = row.scenario === 'LATECDR' ? new Date(now.getTime() + options.lateCdrDelayMs) : now;
  return [
    {
      peerId: peer.id,
      orderingKey: row.id,
      kind: 'cdr',
      method: 'POST',
      url,
      body: quirks ? quirks.sessionOrCdr(cdr) : cdr,
      routing: push.routing(cdr, peer),
      dueAt: due,
    },
  ];
}
