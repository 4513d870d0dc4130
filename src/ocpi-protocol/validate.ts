// Validation of OCPI 2.2.1 objects against the TypeBox schemas of this folder,
// in one place: one Ajv instance, each schema compiled the first time it is
// used (importing this module compiles nothing), and errors as JSON-pointer
// paths with a message. Optionally records every object that passed, for the
// CI check against the official OpenAPI (scripts/ocpi-official-check.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Static, TSchema } from 'typebox';
import { Cdr } from './cdrs.ts';
import { CommandResponse, CommandResult, StartSession, StopSession } from './commands.ts';
import { Credentials } from './credentials.ts';
import { ClientInfo } from './hub-client-info.ts';
import { OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from './locations-tariffs.ts';
import { Session, SessionPatch } from './sessions.ts';
import { AuthorizationInfo, Token, TokenPatch } from './tokens.ts';
import { VersionDetails, Versions } from './versions.ts';

// The types of the objects the parsers below return, for callers that only need those.
export type { CDR, Cdr } from './cdrs.ts';
export type { CommandResponse, CommandResult, StartSession, StopSession } from './commands.ts';
export type { Credentials } from './credentials.ts';
export type { ClientInfo } from './hub-client-info.ts';
export type { Session, SessionPatch } from './sessions.ts';
export type { AuthorizationInfo, Token, TokenPatch } from './tokens.ts';
export type { Version, VersionDetails, Versions } from './versions.ts';

export interface OcpiSchemaError {
  /** JSON pointer to the offending value; for a missing property, the pointer it should have had. */
  path: string;
  message: string;
}

export type OcpiParseResult<T> = { ok: true; value: T } | { ok: false; errors: OcpiSchemaError[] };
export type OcpiParser<T> = (value: unknown) => OcpiParseResult<T>;

/** The schema names the recordings use; the same names as the official OpenAPI's components (EVSEPatch spelled EvsePatch). */
export const OCPI_SCHEMA_NAMES = [
  'Session',
  'CDR',
  'Token',
  'Location',
  'EVSE',
  'Connector',
  'Tariff',
  'Credentials',
  'Version',
  'VersionDetails',
  'CommandResponse',
  'CommandResult',
  'StartSession',
  'StopSession',
  'AuthorizationInfo',
  'SessionPatch',
  'TokenPatch',
  'LocationPatch',
  'EvsePatch',
  'ConnectorPatch',
  'ClientInfo',
] as const;
export type OcpiSchemaName = (typeof OCPI_SCHEMA_NAMES)[number];

let ajv: Ajv | undefined;
// The recorder's state (see setOcpiRecorder below).
let recordDir: string | undefined;
let recordCount = 0;

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function toSchemaErrors(errors: readonly ErrorObject[]): OcpiSchemaError[] {
  const result: OcpiSchemaError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    // if/then/else only says which branch failed; the branch's own errors say what is wrong.
    if (error.keyword === 'if') continue;
    const missing = (error.params as { missingProperty?: unknown }).missingProperty;
    const pointer = typeof missing === 'string' ? `${error.instancePath}/${escapePointer(missing)}` : error.instancePath;
    const message = typeof missing === 'string' ? 'is required' : (error.message ?? 'is invalid');
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    result.push({ path: pointer, message });
  }
  return result;
}

/**
 * A validator for any TypeBox schema. It compiles on its first call. With
 * `recordAs`, every value that passes is also handed to recordOcpiMessage.
 */
export function validator<S extends TSchema>(schema: S, recordAs?: string): OcpiParser<Static<S>> {
  let validate: ValidateFunction | undefined;
  return (value: unknown): OcpiParseResult<Static<S>> => {
    if (validate === undefined) {
      ajv ??= new Ajv({ allErrors: true, strict: false });
      validate = ajv.compile(schema);
    }
    if (validate(value)) {
      if (recordAs !== undefined && recordDir !== undefined) recordOcpiMessage(recordAs, value);
      return { ok: true, value: value as Static<S> };
    }
    return { ok: false, errors: toSchemaErrors(validate.errors ?? []) };
  };
}

export const parseSession = validator(Session, 'Session');
export const parseSessionPatch = validator(SessionPatch, 'SessionPatch');
export const parseCdr = validator(Cdr, 'CDR');
export const parseToken = validator(Token, 'Token');
export const parseTokenPatch = validator(TokenPatch, 'TokenPatch');
export const parseAuthorizationInfo = validator(AuthorizationInfo, 'AuthorizationInfo');
export const parseCommandResponse = validator(CommandResponse, 'CommandResponse');
export const parseCommandResult = validator(CommandResult, 'CommandResult');
export const parseStartSession = validator(StartSession, 'StartSession');
export const parseStopSession = validator(StopSession, 'StopSession');
export const parseCredentials = validator(Credentials, 'Credentials');
export const parseClientInfo = validator(ClientInfo, 'ClientInfo');
/** The data of a versions endpoint: an array of Version (recorded as "Version", one array). */
export const parseVersions = validator(Versions, 'Version');
export const parseVersionDetails = validator(VersionDetails, 'VersionDetails');
export const parseLocation = validator(OcpiLocation, 'Location');
export const parseEvse = validator(OcpiEvse, 'EVSE');
export const parseConnector = validator(OcpiConnector, 'Connector');
export const parseTariff = validator(OcpiTariff, 'Tariff');

// ---------------------------------------------------------------------------
// Recorder: off unless a directory is set. Each recorded message is one file
// { "schema": <name>, "message": <object> } in that directory.

/**
 * Turns recording on (a directory, created if missing) or off (undefined or
 * ""). Returns the previous directory, so a caller can restore it.
 */
export function setOcpiRecorder(dir: string | undefined): string | undefined {
  const previous = recordDir;
  recordDir = dir ? path.resolve(dir) : undefined;
  if (recordDir !== undefined) mkdirSync(recordDir, { recursive: true });
  return previous;
}

/** Whether messages are being recorded (callers skip building what they would record otherwise). */
export const isOcpiRecording = (): boolean => recordDir !== undefined;

/**
 * One HTTP exchange of a functional or configuration module as the CI check needs it (routing headers, HTTP and
 * OCPI status codes; scripts/ocpi-exchange-rules.ts): a request one of our senders made (the eMSP, the sandbox CPO
 * network), with the answer's status, or an answer of our OCPI interface, with how far its request got.
 */
export interface OcpiExchange {
  direction: 'request' | 'answer';
  /** Who sent the request (direction request) or the answer (direction answer). */
  sender: string;
  method: string;
  /** The request's URL path; for an answer, the route's pattern when one matched. */
  path: string;
  /** The OCPI module (versions, credentials, locations, ...); null when it is not known (no route matched). */
  module: string | null;
  /** The HTTP status of the answer (null: none came). */
  status: number | null;
  /** The OCPI status_code of the answer's envelope (null: none). */
  ocpi_status: number | null;
  /** The routing headers the message carried (only those present), by their names as sent. */
  routing: Record<string, string>;
  /** Answers: the request was authenticated (its token names a connection allowed on that module). */
  authenticated?: boolean;
  /** Answers: the request reached the OCPI layer (status_codes: valid JSON, authenticated, an existing resource). */
  reached_ocpi_layer?: boolean;
  /** The OCPI version of the exchange when it is not 2.2.1 (2.1.1: held to 2.1.1's rules, not 2.2.1's; 2.2: to 2.2.1's, and no 4000). */
  version?: string;
}

/** Writes one exchange to the recording directory (as { "exchange": ... }); does nothing when recording is off. */
export function recordOcpiExchange(exchange: OcpiExchange): void {
  if (recordDir === undefined) return;
  recordCount += 1;
  const name = `${process.pid}-${Date.now()}-${recordCount}-exchange.json`;
  try {
    writeFileSync(path.join(recordDir, name), `${JSON.stringify({ exchange })}\n`);
  } catch (error) {
    process.emitWarning(`could not record an OCPI exchange: ${(error as Error).message}`);
  }
}

/** The routing headers among these (any letter case), under their names as OCPI spells them. */
export function routingHeadersOf(headers: Record<string, unknown>): Record<string, string> {
  const routing: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const spelled = ROUTING_HEADER_NAMES.find((n) => n.toLowerCase() === name.toLowerCase());
    if (spelled && typeof value === 'string') routing[spelled] = value;
  }
  return routing;
}

/** The four routing headers of transport_and_format (Message Routing), spelled as OCPI spells them. */
export const ROUTING_HEADER_NAMES = ['OCPI-from-country-code', 'OCPI-from-party-id', 'OCPI-to-country-code', 'OCPI-to-party-id'] as const;

/** Writes one message to the recording directory; does nothing when recording is off. Never throws: a failed write is a warning. */
export function recordOcpiMessage(schema: string, message: unknown): void {
  if (recordDir === undefined) return;
  recordCount += 1;
  const name = `${process.pid}-${Date.now()}-${recordCount}-${schema.replace(/[^A-Za-z0-9_-]/g, '_')}.json`;
  try {
    writeFileSync(path.join(recordDir, name), `${JSON.stringify({ schema, message })}\n`);
  } catch (error) {
    process.emitWarning(`could not record an OCPI ${schema}: ${(error as Error).message}`);
  }
}
