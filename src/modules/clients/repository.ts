// SQL for API clients and their tokens. Only this file touches these tables.
import type { Queryable } from '../../platform/db.ts';

export interface ApiClientRow {
  id: string;
  name: string;
  created_at: Date;
  disabled_at: Date | null;
  /** Requests per minute; null: the service default (RATE_LIMIT_PER_MINUTE); 0: unlimited. */
  rate_limit_per_minute: number | null;
}

export interface ApiTokenRow {
  jti: string;
  client_id: string;
  issued_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export async function insertClient(db: Queryable, client: { id: string; name: string; createdAt: Date }): Promise<void> {
  await db.query('INSERT INTO api_clients (id, name, created_at) VALUES ($1, $2, $3)', [client.id, client.name, client.createdAt]);
}

export async function listClients(db: Queryable): Promise<(ApiClientRow & { active_tokens: number })[]> {
  const { rows } = await db.query<ApiClientRow & { active_tokens: number }>(
    `SELECT c.id, c.name, c.created_at, c.disabled_at, c.rate_limit_per_minute,
            (SELECT count(*) FROM api_tokens t WHERE t.client_id = c.id AND t.revoked_at IS NULL
               AND (t.expires_at IS NULL OR t.expires_at > now())) AS active_tokens
       FROM api_clients c ORDER BY c.created_at, c.id`,
  );
  return rows;
}

export async function findClient(db: Queryable, id: string): Promise<ApiClientRow | undefined> {
  const { rows } = await db.query<ApiClientRow>('SELECT id, name, created_at, disabled_at, rate_limit_per_minute FROM api_clients WHERE id = $1', [id]);
  return rows[0];
}

export async function disableClient(db: Queryable, id: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE api_clients SET disabled_at = coalesce(disabled_at, $2) WHERE id = $1', [id, at]);
  return rowCount === 1;
}

/** Sets a client's requests per minute (null: back to the service default). */
export async function setClientRateLimit(db: Queryable, id: string, perMinute: number | null): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE api_clients SET rate_limit_per_minute = $2 WHERE id = $1', [id, perMinute]);
  return rowCount === 1;
}

export async function insertToken(db: Queryable, token: { jti: string; clientId: string; issuedAt: Date; expiresAt: Date | null }): Promise<void> {
  await db.query('INSERT INTO api_tokens (jti, client_id, issued_at, expires_at) VALUES ($1, $2, $3, $4)', [
    token.jti,
    token.clientId,
    token.issuedAt,
    token.expiresAt,
  ]);
}

export async function revokeToken(db: Queryable, jti: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $2) WHERE jti = $1', [jti, at]);
  return rowCount === 1;
}

export interface CredentialState {
  client_disabled: boolean;
  token_revoked: boolean;
  token_registered: boolean;
  rate_limit_per_minute: number | null;
}

/** What authentication needs to know beyond the signature: is the client live, is this token revoked, the client's rate limit. */
export async function findCredentialState(db: Queryable, clientId: string, jti: string): Promise<CredentialState | undefined> {
  const { rows } = await db.query<CredentialState>(
    `SELECT c.disabled_at IS NOT NULL AS client_disabled, c.rate_limit_per_minute,
            EXISTS (SELECT 1 FROM api_tokens t WHERE t.jti = $2 AND (t.revoked_at IS NOT NULL OR t.client_id <> c.id)) AS token_revoked,
            EXISTS (SELECT 1 FROM api_tokens t WHERE t.jti = $2 AND t.client_id = c.id) AS token_registered
       FROM api_clients c WHERE c.id = $1`,
    [clientId, jti],
  );
  return rows[0];
}
