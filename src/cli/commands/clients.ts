// `charging-access clients ...`: the API clients (create, list, disable, update).
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import { clientsService, type Session } from '../session.ts';

export async function clientsCreate(session: Session, { values, json, expiresInMs }: CommandLine): Promise<void> {
  const issued = await (await clientsService(session)).createClient(values.name as string, { expiresInMs });
  print(
    json,
    { client_id: issued.clientId, token_id: issued.jti, token: issued.token },
    `client_id: ${issued.clientId}\ntoken_id:  ${issued.jti}\ntoken:     ${issued.token}`,
  );
}

export async function clientsList(session: Session, { json }: CommandLine): Promise<void> {
  const rows = await (await clientsService(session)).listClients();
  const list = rows.map((r) => ({
    client_id: r.id,
    name: r.name,
    created_at: r.created_at.toISOString(),
    disabled_at: r.disabled_at?.toISOString() ?? null,
    active_tokens: r.active_tokens,
    rate_limit_per_minute: r.rate_limit_per_minute,
  }));
  const shownLimit = (perMinute: number | null) =>
    perMinute === null ? `rate=${session.config.rateLimitPerMinute || 'unlimited'}/min (default)` : `rate=${perMinute || 'unlimited'}/min`;
  const text =
    list.length === 0
      ? 'no clients'
      : list
          .map(
            (c) => `${c.client_id}  ${c.disabled_at ? 'disabled' : 'active  '}  tokens=${c.active_tokens}  ${shownLimit(c.rate_limit_per_minute)}  ${c.name}`,
          )
          .join('\n');
  print(json, list, text);
}

export async function clientsDisable(session: Session, { arg, json }: CommandLine): Promise<void> {
  await (await clientsService(session)).disableClient(arg as string);
  print(json, { client_id: arg, disabled: true }, `client ${arg} disabled`);
}

export async function clientsUpdate(session: Session, { arg, values, json }: CommandLine): Promise<void> {
  const rateLimit = values['rate-limit'];
  const perMinute = rateLimit === 'default' ? null : Number(rateLimit);
  await (await clientsService(session)).setRateLimit(arg as string, perMinute);
  const shown = perMinute === null ? `the default (${session.config.rateLimitPerMinute || 'unlimited'})` : perMinute || 'unlimited';
  print(json, { client_id: arg, rate_limit_per_minute: perMinute }, `client ${arg}: ${shown} requests per minute`);
}
