// OCPI 2.2.1 transport and format (transport_and_format.asciidoc,
// status_codes.asciidoc): the response envelope, status codes, the credentials
// token in the Authorization header, pagination parameters and headers, and
// the request/correlation ids. Both sides of the protocol use these facts.

/** OCPI status codes (status_codes.asciidoc). */
export const OCPI_STATUS = {
  success: 1000,
  clientError: 2000,
  invalidParameters: 2001,
  notEnoughInformation: 2002,
  unknownLocation: 2003,
  unknownToken: 2004,
  serverError: 3000,
  unableToUseClientApi: 3001,
  unsupportedVersion: 3002,
  noMatchingEndpoints: 3003,
  hubError: 4000,
  unknownReceiver: 4001,
  forwardTimeout: 4002,
  connectionProblem: 4003,
} as const;

export interface OcpiEnvelope<T = unknown> {
  data?: T;
  status_code: number;
  status_message?: string;
  timestamp: string;
}

export function envelope<T>(data: T | undefined, now: Date, statusCode: number = OCPI_STATUS.success, message?: string): OcpiEnvelope<T> {
  return {
    ...(data === undefined ? {} : { data }),
    status_code: statusCode,
    ...(message ? { status_message: message } : {}),
    timestamp: now.toISOString(),
  };
}

/**
 * A request the receiving side refuses: the HTTP status and the OCPI status
 * code of the answer, and a message safe to show the peer.
 */
export class OcpiError extends Error {
  readonly httpStatus: number;
  readonly statusCode: number;
  constructor(httpStatus: number, statusCode: number, message: string) {
    super(message);
    this.name = 'OcpiError';
    this.httpStatus = httpStatus;
    this.statusCode = statusCode;
  }
}

// Which HTTP status an OCPI error goes with (status_codes.asciidoc):
//   "When a message does not contain a valid JSON string, the HTTP error `400 - Bad request` MUST be returned."
//   "If a request is syntactically valid JSON and addresses an existing resource, and comes from a sender that is
//   successfully authenticated and authorized, this request is supposed to have reached the OCPI layer. To such a
//   request, an HTTP error status code MUST NOT be returned."
//   "In case of a GET request, when the resource does NOT exist, the server SHOULD return a HTTP `404 - Not Found`."
// So: invalid JSON 400, a missing or unknown token 401 (transport_and_format), an object that does not exist 404
// (a GET SHOULD; for other methods the resource the request addresses does not exist, so the MUST NOT does not
// apply), and every other refusal of a request that reached the OCPI layer (2xxx, 3xxx) HTTP 200 with the code in
// the envelope. Where a module prescribes an HTTP status (405 on credentials, 404 for an unknown token's
// authorization, 404 with 2001 for charging preferences) the module's text wins.

/** A refusal of a request that reached the OCPI layer: HTTP 200, the OCPI status code in the envelope. */
export const ocpiLayerError = (statusCode: number, message: string) => new OcpiError(200, statusCode, message);
/** 2001, in an HTTP 200 answer (the request reached the OCPI layer). */
export const invalidParameters = (message: string) => ocpiLayerError(OCPI_STATUS.invalidParameters, message);
/** A body that is not JSON: HTTP 400 (the request never reached the OCPI layer), 2001 in the envelope. */
export const invalidJson = (message: string) => new OcpiError(400, OCPI_STATUS.invalidParameters, message);
/** The object the request addresses does not exist: HTTP 404. */
export const unknownObject = (message: string, statusCode: number = OCPI_STATUS.clientError) => new OcpiError(404, statusCode, message);

// ---------------------------------------------------------------------------
// Authorization: Token <base64(credentials token)>

/** The header value for a credentials token; `raw` for OCPI 2.1.1/2.2 peers that expect it unencoded. */
export function authorizationHeader(token: string, raw = false): string {
  return `Token ${raw ? token : Buffer.from(token, 'utf8').toString('base64')}`;
}

/**
 * The credentials tokens an Authorization header may carry, most likely first:
 * the Base64-decoded token (OCPI 2.2.1) and the value as sent (2.1.1 and 2.2
 * peers often send it unencoded). The caller looks each up; a token that only
 * matches unencoded is accepted only from connections that allow raw tokens.
 */
export function tokenCandidates(header: string | undefined): { decoded?: string; raw: string } | undefined {
  if (!header) return undefined;
  const match = /^Token\s+(\S+)\s*$/i.exec(header);
  if (!match) return undefined;
  const raw = match[1] as string;
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(raw) && raw.length % 4 === 0) {
    const decoded = Buffer.from(raw, 'base64').toString('utf8');
    // Only a clean round trip is a Base64 token; otherwise it was a raw token that happens to look like Base64.
    if (decoded.length > 0 && printable(decoded) && Buffer.from(decoded, 'utf8').toString('base64') === raw) {
      return { decoded, raw };
    }
  }
  return { raw };
}

/** No control characters and no replacement character (what invalid UTF-8 decodes to). */
function printable(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f || code === 0xfffd) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Request ids and routing headers

export const HEADER = {
  requestId: 'x-request-id',
  correlationId: 'x-correlation-id',
  fromCountryCode: 'ocpi-from-country-code',
  fromPartyId: 'ocpi-from-party-id',
  toCountryCode: 'ocpi-to-country-code',
  toPartyId: 'ocpi-to-party-id',
  totalCount: 'x-total-count',
  limit: 'x-limit',
  link: 'link',
  location: 'location',
} as const;

export interface PartyRef {
  country_code: string;
  party_id: string;
}

export function routingHeaders(from: PartyRef, to: PartyRef): Record<string, string> {
  return {
    'OCPI-from-country-code': from.country_code,
    'OCPI-from-party-id': from.party_id,
    'OCPI-to-country-code': to.country_code,
    'OCPI-to-party-id': to.party_id,
  };
}

// ---------------------------------------------------------------------------
// Pagination

export interface PageQuery {
  offset: number;
  limit: number;
  date_from?: Date;
  date_to?: Date;
}

/**
 * Reads offset/limit/date_from/date_to of a GET on a list. A limit above the
 * server's maximum is lowered to it (X-Limit tells the client); malformed
 * values are refused with 2001.
 */
export function parsePageQuery(query: Record<string, unknown>, maxLimit: number): PageQuery {
  const integer = (name: string, fallback: number): number => {
    const value = query[name];
    if (value === undefined || value === '') return fallback;
    if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) throw invalidParameters(`${name} must be a non-negative integer`);
    return Number(value);
  };
  const date = (name: string): Date | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.test(value)) {
      throw invalidParameters(`${name} must be an RFC 3339 date-time`);
    }
    const parsed = new Date(/[Zz]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`);
    if (Number.isNaN(parsed.getTime())) throw invalidParameters(`${name} must be an RFC 3339 date-time`);
    return parsed;
  };
  const limit = Math.min(integer('limit', maxLimit), maxLimit);
  const page: PageQuery = { offset: integer('offset', 0), limit };
  const from = date('date_from');
  const to = date('date_to');
  if (from) page.date_from = from;
  if (to) page.date_to = to;
  return page;
}

/** The headers of a page: X-Total-Count, X-Limit and, unless it is the last page, a Link to the next one with the same filters. */
export function pageHeaders(baseUrl: string, page: PageQuery, returned: number, total: number): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(total), 'X-Limit': String(page.limit) };
  const nextOffset = page.offset + returned;
  if (returned > 0 && nextOffset < total) {
    const url = new URL(baseUrl);
    url.search = '';
    if (page.date_from) url.searchParams.set('date_from', page.date_from.toISOString());
    if (page.date_to) url.searchParams.set('date_to', page.date_to.toISOString());
    url.searchParams.set('offset', String(nextOffset));
    url.searchParams.set('limit', String(page.limit));
    headers.Link = `<${url.toString()}>; rel="next"`;
  }
  return headers;
}

/** The URL of rel="next" in a Link header, if any. */
export function nextLink(header: string | undefined | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]+)>\s*;(.*)$/.exec(part);
    if (match && /(^|;)\s*rel\s*=\s*"?next"?\s*(;|$)/i.test(match[2] as string)) return match[1];
  }
  return undefined;
}
