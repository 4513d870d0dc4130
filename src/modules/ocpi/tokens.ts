// Our users as OCPI Tokens (mod_tokens, we are the Sender): one APP_USER token
// per user, uid = the user's id, a contract id derived from it. CPOs list
// them (paginated GET), ask for real-time authorization, and receive a push
// (through the outbox) whenever a user is created, changes language or is
// deleted (valid: false).
import { OCPI_STATUS, OcpiError, type PageQuery } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { findUserForToken, listUsersForTokens, type TokenUserRow } from '../users/repository.ts';
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

    /**
     * The user hook: queue a push of each user's token, as the change left it, to every connected CPO that
     * receives tokens, in one statement (none when no CPO does).
     */
    async userChanged(tx: Queryable, users: readonly TokenUserRow[]): Promise<void> {
      await repo.enqueuePushesToReceivers(
        tx,
        {
          module: 'tokens',
          method: 'PUT',
          items: users.map((user) => ({
            path: `/${encodeURIComponent(party.countryCode)}/${encodeURIComponent(party.partyId)}/${encodeURIComponent(user.id)}?type=APP_USER`,
            body: tokenOf(party, user),
            dedupe_key: `token:${user.id}`,
          })),
        },
        deps.clock.now(),
      );
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;
