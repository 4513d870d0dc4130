// API clients (tenants) and their bearer tokens: the operator creates and
// disables clients and issues and revokes tokens; every API request is
// authenticated here.
// The factory only assembles; the rules live in:
//   admin.ts             the operator's commands: clients, rate limits, tokens issued and revoked
//   authenticate.ts      a request's bearer token: signature and claims, verified once per token
//   credential-check.ts  client enabled, token not revoked, the client's rate limit: one query, cached briefly
import type { SigningKeys } from '../../platform/auth/keys.ts';
import type { Clock } from '../../platform/clock.ts';
import type { JwtConfig } from '../../platform/config.ts';
import type { Database } from '../../platform/db.ts';
import { type AdminContext, createClient, disableClient, issueToken, revokeToken, setRateLimit } from './admin.ts';
import { type AuthenticateContext, authenticate } from './authenticate.ts';
import * as repo from './repository.ts';

export type { IssuedToken } from './admin.ts';
export type { Principal } from './authenticate.ts';

/** "30d", "12h", "45m", "90s": a lifetime in milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration such as 30d, 12h, 45m or 90s`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  const ms = Number(match[1]) * unit;
  if (ms <= 0) throw new Error('the lifetime must be positive');
  return ms;
}

export interface ClientsServiceDeps {
  db: Database;
  clock: Clock;
  jwt: JwtConfig;
  keys: SigningKeys;
  /** How long a positive or negative credential check is reused; bounds revocation latency. */
  cacheTtlMs: number;
  /** True when tokens come from an external issuer (JWKS) and are not registered with us. */
  acceptUnregisteredTokens?: boolean;
}

export function createClientsService(deps: ClientsServiceDeps) {
  // The caches of authenticate.ts and credential-check.ts live as long as the service.
  const ctx: AdminContext & AuthenticateContext = { ...deps, credentialCache: new Map(), verifiedTokens: new Map() };

  return {
    createClient: (name: string, options?: { expiresInMs?: number }) => createClient(ctx, name, options),
    issueToken: (clientId: string, options?: { expiresInMs?: number }) => issueToken(ctx, clientId, options),
    authenticate: (authorization: string | undefined) => authenticate(ctx, authorization),
    listClients: () => repo.listClients(deps.db),
    disableClient: (id: string) => disableClient(ctx, id),
    setRateLimit: (id: string, perMinute: number | null) => setRateLimit(ctx, id, perMinute),
    revokeToken: (jti: string) => revokeToken(ctx, jti),
  };
}

export type ClientsService = ReturnType<typeof createClientsService>;
