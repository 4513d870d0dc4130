// The operator's administration of API clients (the CLI): creating and
// disabling clients, setting their rate limits, issuing and revoking their
// bearer tokens. A token we sign is registered when issued, so it can be
// revoked.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKeys } from '../../platform/auth/keys.ts';
import type { Clock } from '../../platform/clock.ts';
import type { JwtConfig } from '../../platform/config.ts';
import type { Database } from '../../platform/db.ts';
import { isUuid } from '../../platform/ids.ts';
import * as repo from './repository.ts';

export interface IssuedToken {
  clientId: string;
  jti: string;
  token: string;
  expiresAt: Date | null;
}

export interface AdminContext {
  db: Database;
  clock: Clock;
  jwt: JwtConfig;
  keys: SigningKeys;
}

export async function issueToken(ctx: AdminContext, clientId: string, options: { expiresInMs?: number } = {}): Promise<IssuedToken> {
  const { db, clock, jwt, keys } = ctx;
  if (!keys.privateKey) throw new Error('this instance has no private signing key (JWT_PRIVATE_KEY_FILE); it can only verify tokens');
  if (!isUuid(clientId)) throw new Error(`no client ${clientId}`);
  const client = await repo.findClient(db, clientId);
  if (!client) throw new Error(`no client ${clientId}`);
  if (client.disabled_at) throw new Error(`client ${clientId} is disabled`);
  const now = clock.now();
  const jti = randomUUID();
  const expiresAt = options.expiresInMs ? new Date(now.getTime() + options.expiresInMs) : null;
  const builder = new SignJWT({})
    .setProtectedHeader({ alg: keys.algorithm, typ: 'JWT' })
    .setIssuer(jwt.issuer)
    .setAudience(jwt.audience)
    .setSubject(clientId)
    .setJti(jti)
    .setIssuedAt(Math.floor(now.getTime() / 1000));
  if (expiresAt) builder.setExpirationTime(Math.floor(expiresAt.getTime() / 1000));
  const token = await builder.sign(keys.privateKey);
  await repo.insertToken(db, { jti, clientId, issuedAt: now, expiresAt });
  return { clientId, jti, token, expiresAt };
}

export async function createClient(ctx: AdminContext, name: string, options: { expiresInMs?: number } = {}): Promise<IssuedToken> {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) throw new Error('the client name must be 1..200 characters');
  const id = randomUUID();
  await repo.insertClient(ctx.db, { id, name: trimmed, createdAt: ctx.clock.now() });
  return issueToken(ctx, id, options);
}

export async function disableClient(ctx: AdminContext, id: string): Promise<void> {
  if (!isUuid(id) || !(await repo.disableClient(ctx.db, id, ctx.clock.now()))) throw new Error(`no client ${id}`);
}

/** Sets a client's requests per minute (0 = unlimited; null = the service default); every instance applies it within the credential cache's TTL. */
export async function setRateLimit(ctx: AdminContext, id: string, perMinute: number | null): Promise<void> {
  if (perMinute !== null && (!Number.isSafeInteger(perMinute) || perMinute < 0 || perMinute > 2_147_483_647)) {
    throw new Error('the rate limit must be an integer >= 0 (0 = unlimited)');
  }
  if (!isUuid(id) || !(await repo.setClientRateLimit(ctx.db, id, perMinute))) throw new Error(`no client ${id}`);
}

export async function revokeToken(ctx: AdminContext, jti: string): Promise<void> {
  if (!(await repo.revokeToken(ctx.db, jti, ctx.clock.now()))) throw new Error(`no token with id ${jti}`);
}
