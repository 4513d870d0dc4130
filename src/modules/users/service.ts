// Users and their billing details: the rules. Every function takes the
// caller's client id; another client's user is "not found".
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { isCountryCode } from '../../platform/countries.ts';
import type { Queryable } from '../../platform/db.ts';
import { AppError, type FieldError, notFound } from '../../platform/errors.ts';
import type { Outcome } from '../../platform/group-commit.ts';
import { isUuid } from '../../platform/ids.ts';
import { recordEvent } from '../events/outbox.ts';
import * as repo from './repository.ts';
import type { BillingDetailsBody, BillingDetailsView, UserCreateBody, UserPatchBody, UserView } from './schemas.ts';
import { normalizeVatNumber, vatNumberProblem } from './vat.ts';

/**
 * Another module's veto on deleting a user (an unfinished charging session:
 * already_charging; an unpaid debt: payment_error). Runs inside the deletion's
 * transaction with the user row locked; throws an AppError to refuse.
 */
export type UserDeletionGuard = (tx: Queryable, clientId: string, userId: string) => Promise<void>;

/**
 * Another module following users (the OCPI Tokens module pushes each user's
 * token to CPOs), told the user as the change left it. Runs inside the
 * change's transaction, so what it records commits with the change.
 */
export type UserChangeHook = (tx: Queryable, users: readonly repo.TokenUserRow[]) => Promise<void>;

export interface UsersServiceDeps {
  clock: Clock;
  locales: string[];
  deletionGuards?: UserDeletionGuard[];
  changeHooks?: UserChangeHook[];
}

function toView(row: repo.UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    locale: row.locale,
    custom_properties: { external_id: row.external_id },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function billingView(row: repo.BillingDetailsRow | undefined): BillingDetailsView {
  return {
    account_type: row?.account_type ?? 'personal',
    first_name: row?.first_name ?? null,
    last_name: row?.last_name ?? null,
    company_name: row?.company_name ?? null,
    vat_number: row?.vat_number ?? null,
    vat_id: row?.vat_number ?? null,
    tax_id: row?.tax_id ?? null,
    line1: row?.line1 ?? null,
    postal_code: row?.postal_code ?? null,
    city: row?.city ?? null,
    country: row?.country ?? null,
    updated_at: row?.updated_at.toISOString() ?? null,
  };
}

/** Empty or whitespace-only strings carry no information: store them as null. */
function clean(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** Which fields charging needs that these billing details lack (checked at charging start, not on PUT). */
export function missingBillingFields(details: BillingDetailsView): string[] {
  const required =
    details.account_type === 'business' ? (['company_name', 'vat_number', 'country'] as const) : (['first_name', 'last_name', 'country'] as const);
  return required.filter((field) => !details[field]);
}

export function createUsersService(deps: UsersServiceDeps) {
  const { clock } = deps;
  const guards = deps.deletionGuards ?? [];
  const changed = async (db: Queryable, ...users: repo.TokenUserRow[]) => {
    if (users.length === 0) return;
    for (const hook of deps.changeHooks ?? []) await hook(db, users);
  };
  const live = (row: repo.UserRow): repo.TokenUserRow => ({ id: row.id, locale: row.locale, deleted: false, last_updated: row.updated_at });

  async function requireUser(db: Queryable, clientId: string, userId: string, options: { forUpdate?: boolean } = {}): Promise<repo.UserRow> {
    const row = isUuid(userId) ? await repo.findLiveUserForClient(db, clientId, userId, options) : undefined;
    if (!row) throw notFound('User');
    return row;
  }

  /**
   * Creates users, of any clients, in the caller's transaction: each request's user, or its own error (409
   * conflict when its external id is taken, also by an earlier request of the same call); the others are
   * created regardless. One insert and one hook call for all of them (group commit, see the routes).
   */
  async function createMany(db: Queryable, requests: readonly { clientId: string; body: UserCreateBody }[]): Promise<Outcome<UserView>[]> {
    const rows = await repo.insertUsers(
      db,
      requests.map(({ clientId, body }) => ({
        id: randomUUID(),
        client_id: clientId,
        email: clean(body.email),
        locale: body.locale ?? deps.locales[0] ?? 'en',
        external_id: clean(body.custom_properties?.external_id),
        created_at: clock.now(),
      })),
    );
    const created = rows.filter((row) => row !== undefined);
    await changed(db, ...created.map(live));
    return rows.map((row) => (row ? { ok: true, value: toView(row) } : { ok: false, error: repo.externalIdTaken() }));
  }

  return {
    /** For other modules: the live user of this client, or AppError not_found. */
    requireUser,

    createMany,

    async get(db: Queryable, clientId: string, userId: string): Promise<UserView> {
      return toView(await requireUser(db, clientId, userId));
    },

    async list(db: Queryable, clientId: string, search: string | undefined, page: { limit: number; offset: number }) {
      const term = search?.trim();
      const filter = term ? { search: { externalId: term, id: isUuid(term) ? term : null } } : {};
      const { count, rows } = await repo.listLiveUsersForClient(db, clientId, filter, page);
      return { count, results: rows.map(toView) };
    },

    async update(db: Queryable, clientId: string, userId: string, body: UserPatchBody): Promise<UserView> {
      await requireUser(db, clientId, userId);
      const changes: { email?: string | null; locale?: string; external_id?: string | null } = {};
      if (body.email !== undefined) changes.email = clean(body.email);
      if (body.locale !== undefined) changes.locale = body.locale;
      if (body.custom_properties === null) changes.external_id = null;
      else if (body.custom_properties?.external_id !== undefined) changes.external_id = clean(body.custom_properties.external_id);
      const row = await repo.updateUser(db, clientId, userId, changes, clock.now());
      if (!row) throw notFound('User');
      if (changes.locale !== undefined) await changed(db, live(row));
      return toView(row);
    },

    /** Soft-deletes the user, with its user.deleted event; `db` must be the deletion's transaction. */
    async remove(db: Queryable, clientId: string, userId: string): Promise<void> {
      await requireUser(db, clientId, userId, { forUpdate: true });
      for (const guard of guards) await guard(db, clientId, userId);
      const deleted = await repo.softDeleteUser(db, clientId, userId, clock.now());
      if (!deleted) throw notFound('User');
      await changed(db, deleted);
      // What is left to say of a deleted user: who it was (its id, and the client's own id for it) and when it went.
      const object = { id: deleted.id, ...(deleted.external_id ? { external_id: deleted.external_id } : {}), deleted_at: deleted.deleted_at.toISOString() };
      await recordEvent(db, { clientId, userId: deleted.id, type: 'user.deleted', object }, clock.now());
    },

    async getBillingDetails(db: Queryable, clientId: string, userId: string): Promise<BillingDetailsView> {
      await requireUser(db, clientId, userId);
      return billingView(await repo.findBillingDetails(db, clientId, userId));
    },

    async replaceBillingDetails(db: Queryable, clientId: string, userId: string, body: BillingDetailsBody): Promise<BillingDetailsView> {
      await requireUser(db, clientId, userId, { forUpdate: true });
      const errors: FieldError[] = [];
      const vatNumber = clean(body.vat_number);
      const vatId = clean(body.vat_id);
      if (vatNumber && vatId && normalizeVatNumber(vatNumber) !== normalizeVatNumber(vatId)) {
        errors.push({ field: 'vat_id', message: 'must equal vat_number when both are sent (vat_id is an alias)' });
      }
      const vatRaw = vatNumber ?? vatId;
      const vat = vatRaw ? normalizeVatNumber(vatRaw) : null;
      const vatProblem = vat ? vatNumberProblem(vat) : undefined;
      if (vatProblem) errors.push({ field: vatNumber ? 'vat_number' : 'vat_id', message: vatProblem });
      const country = clean(body.country)?.toUpperCase() ?? null;
      if (country && !isCountryCode(country)) errors.push({ field: 'country', message: 'must be an ISO 3166-1 alpha-2 country code' });
      if (errors.length > 0) {
        throw new AppError('validation_error', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
      }
      const row = await repo.replaceBillingDetails(
        db,
        clientId,
        userId,
        {
          account_type: body.account_type === 'business' ? 'business' : 'personal',
          first_name: clean(body.first_name),
          last_name: clean(body.last_name),
          company_name: clean(body.company_name),
          vat_number: vat,
          tax_id: clean(body.tax_id),
          line1: clean(body.line1),
          postal_code: clean(body.postal_code),
          city: clean(body.city),
          country,
        },
        clock.now(),
      );
      return billingView(row);
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
