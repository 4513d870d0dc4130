// `charging-access webhooks ...`: a client's webhook endpoints and an endpoint's delivery log, for the operator
// (never a signing secret).
import { listDeliveries } from '../../modules/webhooks/deliveries.ts';
import { endpointView } from '../../modules/webhooks/endpoints.ts';
import * as webhooksRepo from '../../modules/webhooks/repository.ts';
import { isUuid } from '../../platform/ids.ts';
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import type { Session } from '../session.ts';

/** Deliveries `webhooks deliveries` shows: the newest. */
const DELIVERIES_SHOWN = 100;

export async function webhooksList(session: Session, { values, json }: CommandLine): Promise<void> {
  const clientId = values.client as string;
  const rows = await webhooksRepo.listEndpointsOfClient(session.db, clientId);
  const list = rows.map((row) => ({ ...endpointView(row), pending_deliveries: row.pending, failed_deliveries: row.failed }));
  const text =
    list.length === 0
      ? `no webhook endpoints for client ${clientId}`
      : list
          .map((e) => {
            const state = e.enabled
              ? e.failing_since
                ? `enabled, failing since ${e.failing_since}`
                : 'enabled'
              : `disabled${e.disabled_reason ? `: ${e.disabled_reason}` : ''}`;
            return `${e.id}  ${e.url}\n  events=${e.events.join(',')}  pending=${e.pending_deliveries}  failed=${e.failed_deliveries}  ${state}`;
          })
          .join('\n');
  print(json, list, text);
}

export async function webhooksDeliveries(session: Session, { arg, json }: CommandLine): Promise<void> {
  const endpoint = isUuid(arg as string) ? await webhooksRepo.findEndpoint(session.db, arg as string) : undefined;
  if (!endpoint) throw new Error(`no webhook endpoint ${arg}`);
  const { count, results } = await listDeliveries({ db: session.db }, endpoint.client_id, endpoint.id, { limit: DELIVERIES_SHOWN, offset: 0 });
  const lastOutcome = (d: (typeof results)[number]) =>
    d.last_status_code !== null ? `last=${d.last_status_code}` : d.last_error ? `last="${d.last_error}"` : 'last=-';
  const text =
    results.length === 0
      ? `no deliveries to endpoint ${endpoint.id}`
      : [
          `${count} deliveries to ${endpoint.url} (client ${endpoint.client_id})${count > results.length ? `, the newest ${results.length}` : ''}:`,
          ...results.map(
            (d) =>
              `${d.id}  ${d.created_at}  ${d.event_type}  event=${d.event_id}  ${d.status}  attempts=${d.attempts}  ${lastOutcome(d)}` +
              (d.next_retry_at ? `  next=${d.next_retry_at}` : '') +
              (d.delivered_at ? `  delivered=${d.delivered_at}` : ''),
          ),
        ].join('\n');
  print(json, { endpoint_id: endpoint.id, client_id: endpoint.client_id, count, deliveries: results }, text);
}
