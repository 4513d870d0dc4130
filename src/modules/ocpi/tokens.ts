// Our users as OCPI Tokens (mod_tokens, we are the Sender): one APP_USER token
// per user, uid = the user's id, a contract id derived from it. CPOs list
// them (paginated GET), ask for real-time authorization, and receive a push
// (through the outbox) whenever a user is created, changes language or is
// deleted (valid: false).
import type { OcpiPeerAuth } from '../../ocpi-protocol/client.ts';
import { OcpiTransportError, ocpiData } from '../../ocpi-protocol/client.ts';
import { OCPI_STATUS, OcpiError, type PageQuery } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { findUserForToken, listUsersForTokens, type TokenUserRow } from '../users/repository.ts';
import { endpointOf } from './connections.ts';
import * as repo from './repository.ts';

export interface OurParty {
  countryCode: string;
  partyId: string;
  businessName: string;
}

/**
 * The contract id (eMAID style, ISO 15118: country-party-C + id) of a user:
 * 60 bits of the user id in base 36, so ids never collide in practice.
 */
export function contractIdOf(party: OurParty, userId: string): string {
  const bits = BigInt(`0x${userId.replace(/-/g, '').slice(0, 15)}`);
  return `${party.countryCode}-${party.partyId}-C${bits.toString(36).toUpperCase().padStart(12, '0')}`;
}

export function tokenOf(party: OurParty, user: TokenUserRow) {
  return {
    country_code: party.countryCode,
    party_id: party.partyId,
    uid: user.id,
    type: 'APP_USER' as const,
    contract_id: contractIdOf(party, user.id),
    issuer: party.businessName,
    valid: !user.deleted,
    whitelist: 'ALLOWED' as const,
    language: user.locale.slice(0, 2),
    last_updated: user.last_updated.toISOString(),
  };
}

export type OcpiToken = ReturnType<typeof tokenOf>;

/** A module's say on whether a live user may charge (unpaid debt: NO_CREDIT); undefined lets it through. */
export type AuthorizationCheck = (userId: string) => Promise<'NO_CREDIT' | 'BLOCKED' | 'NOT_ALLOWED' | undefined>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createTokens(deps: { db: Database; clock: Clock; party: OurParty; checks?: readonly AuthorizationCheck[] }) {
  const { db, party } = deps;

  async function findToken(uid: string, type: string | undefined) {
    if ((type ?? 'RFID') !== 'APP_USER' || !UUID.test(uid)) return undefined;
    const user = await findUserForToken(db, uid.toLowerCase());
    return user ? tokenOf(party, user) : undefined;
  }

  return {
    /** The user's APP_USER token (undefined for an unknown user id). */
    forUser: (userId: string) => findToken(userId, 'APP_USER'),

    async list(page: PageQuery): Promise<{ total: number; tokens: OcpiToken[] }> {
      const filter = { ...(page.date_from ? { from: page.date_from } : {}), ...(page.date_to ? { to: page.date_to } : {}) };
      const { count, rows } = await listUsersForTokens(db, filter, page);
      return { total: count, tokens: rows.map((row) => tokenOf(party, row)) };
    },

    /** Real-time authorization (POST tokens/{uid}/authorize). */
    async authorize(uid: string, type: string | undefined, location: unknown) {
      const token = await findToken(uid, type);
      if (!token) throw new OcpiError(404, OCPI_STATUS.unknownToken, `Unknown token ${uid.slice(0, 36)}`);
      let allowed: 'ALLOWED' | 'BLOCKED' | 'NO_CREDIT' | 'NOT_ALLOWED' = token.valid ? 'ALLOWED' : 'BLOCKED';
      if (allowed === 'ALLOWED') {
        for (const check of deps.checks ?? []) {
          const verdict = await check(token.uid);
          if (verdict) {
            allowed = verdict;
            break;
          }
        }
      }
      const references =
        location && typeof location === 'object' && typeof (location as { location_id?: unknown }).location_id === 'string' ? location : undefined;
      return { allowed, token, ...(references ? { location: references } : {}) };
    },

    /** The user hook: queue a push of this user's token to every connected CPO that receives tokens. */
    async userChanged(tx: Queryable, userId: string): Promise<void> {
      const user = await findUserForToken(tx, userId);
      if (!user) return;
      const token = tokenOf(party, user);
      for (const connection of await repo.listConnectedConnections(tx)) {
        if (!endpointOf(connection, 'tokens', 'RECEIVER')) continue;
        await repo.enqueuePush(
          tx,
          {
            connection_id: connection.id,
            module: 'tokens',
            method: 'PUT',
            path: `/${encodeURIComponent(party.countryCode)}/${encodeURIComponent(party.partyId)}/${encodeURIComponent(user.id)}?type=APP_USER`,
            body: token,
            dedupe_key: `token:${user.id}`,
          },
          deps.clock.now(),
        );
      }
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;

/** Backoff of failed pushes: 5 s, 30 s, 2 min, 10 min, then hourly. */
const PUSH_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000];

/**
 * Sends due pushes of the outbox, one at a time, each claimed with a lease (several processes share the work)
 * and sent with no transaction open. A push the CPO refuses with a client error (2xxx) is dropped and logged;
 * transport failures are retried later, and the rest of that CPO's pushes wait for the next round (a CPO that
 * does not answer costs one timeout per round, not one per push, and does not hold up the others).
 */
export async function deliverDuePushes(deps: {
  db: Database;
  clock: Clock;
  auth: (connection: repo.Connection) => OcpiPeerAuth;
  timeoutMs: number;
  log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
  limit?: number;
}): Promise<{ sent: number; failed: number }> {
  const { db } = deps;
  let sent = 0;
  let failed = 0;
  const unreachable: string[] = [];
  for (let i = 0; i < (deps.limit ?? 100); i++) {
    const now = deps.clock.now();
    const item = await repo.claimDuePush(db, now, new Date(now.getTime() + deps.timeoutMs + 60_000), unreachable);
    if (!item) break;
    const connection = await repo.findConnection(db, item.connection_id);
    const base = connection && connection.status === 'connected' ? endpointOf(connection, item.module, 'RECEIVER') : undefined;
    if (!connection || !base) {
      await repo.dropPush(db, item.id);
      continue;
    }
    try {
      await ocpiData(deps.auth(connection), {
        method: item.method,
        url: `${base.replace(/\/+$/, '')}${item.path}`,
        module: item.module,
        body: item.body ?? undefined,
        timeoutMs: deps.timeoutMs,
        retries: 0,
      });
      await repo.completePush(db, item.id, item.body);
      sent++;
    } catch (error) {
      const refused =
        error instanceof OcpiTransportError && error.httpStatus !== undefined && error.httpStatus < 500 && error.httpStatus !== 429 && error.httpStatus !== 401;
      if (refused) {
        deps.log?.('warn', 'a CPO refused a push; dropped', {
          connection: connection.name,
          module: item.module,
          path: item.path,
          reason: (error as Error).message,
        });
        await repo.completePush(db, item.id, item.body);
      } else {
        const delay = PUSH_DELAYS_MS[Math.min(item.attempts, PUSH_DELAYS_MS.length - 1)] as number;
        await repo.postponePush(db, item.id, item.body, new Date(deps.clock.now().getTime() + delay), (error as Error).message);
        unreachable.push(connection.id);
      }
      failed++;
    }
  }
  return { sent, failed };
}
