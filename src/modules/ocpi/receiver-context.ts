// What every Receiver rule is given (the database, the clock, the station
// ingestion, other modules' listeners and our OCPI base URL), and the checks
// they share: the body is an object, ids in the body match the URL, the
// connection owns the party, and invalid objects become OCPI 2001 errors.
import type { Finding, Reading } from '../../ocpi-protocol/reader/rules.ts';
import { looseDateTime } from '../../ocpi-protocol/reader/schema-rules.ts';
import { invalidParameters, OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { isDateTime } from '../../ocpi-protocol/types.ts';
import type { CDR, Session } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { type Ingestion, InvalidOcpiObject } from '../stations/ingest.ts';
import { type QualityModule, recordFindings } from './quality.ts';
import * as repo from './repository.ts';

export interface PartyPath {
  country_code: string;
  party_id: string;
}

/** Listeners of what CPOs report (the charging module follows sessions, CDRs and command results). */
/**
 * What other modules learn from CPO messages (the charging module follows its
 * sessions). Each runs inside the transaction that stores the message, so
 * what a handler records (a state change, a job) commits with it or not at
 * all; handlers do database work only (anything slower goes to a job). A
 * handler that throws fails the OCPI request, and the CPO sends it again.
 */
export interface OcpiEvents {
  sessionChanged?(tx: Queryable, session: Session, connectionId: string): Promise<void>;
  cdrReceived?(tx: Queryable, cdr: CDR, connectionId: string): Promise<void>;
  commandResult?(tx: Queryable, commandId: string, result: { result: string; message?: string }): Promise<void>;
}

/** The Receivers' dependencies, given to every rule as they are. */
export interface ReceiversContext {
  db: Database;
  clock: Clock;
  ingestion: Ingestion;
  events?: OcpiEvents;
  ocpiBaseUrl: string;
}

const sameId = (a: string, b: string) => a.toUpperCase() === b.toUpperCase();

export function requireObject(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidParameters('the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A PATCH's last_updated; one in a near-miss format (a space for T, a +hhmm offset) is read as that instant, in UTC. */
export function requireLastUpdated(patch: Record<string, unknown>): string {
  const value = patch.last_updated;
  const stamp = isDateTime(value) ? value : typeof value === 'string' ? looseDateTime(value) : undefined;
  if (stamp === undefined) throw invalidParameters('a PATCH must carry last_updated (an RFC 3339 date-time)');
  patch.last_updated = stamp;
  return stamp;
}

export function checkMatches(body: Record<string, unknown>, field: string, expected: string): void {
  const value = body[field];
  if (value !== undefined && (typeof value !== 'string' || !sameId(value, expected))) {
    throw invalidParameters(`${field} in the body (${String(value).slice(0, 40)}) differs from the URL (${expected})`);
  }
}

/** A client-owned object's country_code, party_id and id, where present, must be those of the URL (2001 otherwise). */
export function checkOwnKey(body: Record<string, unknown>, party: PartyPath, id: string): void {
  checkMatches(body, 'country_code', party.country_code);
  checkMatches(body, 'party_id', party.party_id);
  checkMatches(body, 'id', id);
}

export function invalid(error: unknown): never {
  if (error instanceof InvalidOcpiObject) {
    throw invalidParameters(
      error.errors
        .slice(0, 5)
        .map((e) => `${e.path || '/'} ${e.message}`)
        .join('; '),
    );
  }
  throw error;
}

export function ok<T>(result: { ok: true; value: T } | { ok: false; errors: { path: string; message: string }[] }, what: string): T {
  if (result.ok) return result.value;
  throw invalidParameters(
    `${what}: ${result.errors
      .slice(0, 5)
      .map((e) => `${e.path || '/'} ${e.message}`)
      .join('; ')}`,
  );
}

/**
 * The connection must hold the party of the object. A push (PUT, PATCH, POST, DELETE) for another party reached the
 * OCPI layer (valid JSON, authenticated, on an endpoint that exists): refused with 2001 in an HTTP 200 answer
 * (status_codes), its country_code/party_id being parameters this client may not use. A read of another party's
 * object is 404, as transport_and_format allows ("it is allowed to respond with an HTTP `404` status code, this way
 * blocking client access to objects that do not belong to them").
 */
export async function requireParty(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, access: 'read' | 'write' = 'write'): Promise<void> {
  if (await repo.connectionOwnsParty(ctx.db, connection.id, party.country_code, party.party_id)) return;
  const who = `${party.country_code.toUpperCase()}*${party.party_id.toUpperCase()}`;
  if (access === 'read') throw new OcpiError(404, OCPI_STATUS.clientError, `Party ${who} is not registered on this connection`);
  throw invalidParameters(`${who} is not a party of this connection (its credentials roles)`);
}

// country_code and party_id are case-insensitive (CiString): stored upper-case.
export const locationKey = (party: PartyPath, id: string) => ({ country_code: party.country_code.toUpperCase(), party_id: party.party_id.toUpperCase(), id });

/** The findings about a part of an object (an EVSE, a connector pushed alone), named as that part. */
export const aboutPart = (findings: readonly Finding[], part: string): Finding[] => findings.map((f) => (f.part === undefined ? { ...f, part } : f));

/**
 * What the tolerant reader made of a pushed object: its findings are recorded
 * for the connection (cpo quality); a refused object is answered 2001 with
 * the reader's message (it names the fields). Returns the object to store.
 */
export async function taken<T>(
  ctx: ReceiversContext,
  connection: repo.Connection,
  module: QualityModule,
  objectId: string,
  reading: Reading<T>,
  part?: string,
): Promise<T> {
  const findings = part === undefined ? reading.findings : aboutPart(reading.findings, part);
  await recordFindings(ctx, connection.id, module, [{ objectId, findings }]);
  if (!reading.ok) throw invalidParameters(reading.message);
  return reading.value;
}

/** The status_message of a stored push of which parts were left out (an EVSE, a connector): the CPO is told which. */
export function leftOutMessage(findings: readonly Finding[], isRejection: (f: Finding) => boolean): string | undefined {
  const parts = findings.filter(isRejection).map((f) => `${f.part ?? f.path} (${f.rule})`);
  return parts.length === 0 ? undefined : `stored without ${parts.slice(0, 5).join(', ')}${parts.length > 5 ? ` and ${parts.length - 5} more` : ''}`;
}
