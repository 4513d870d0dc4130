// The transport rules of OCPI 2.2.1 that a recorded exchange is held to by
// the CI check (scripts/ocpi-official-check.ts), written from the spec's text:
//
// transport_and_format, Message Routing: the four routing headers
// (OCPI-from-country-code, OCPI-from-party-id, OCPI-to-country-code,
// OCPI-to-party-id) "SHALL be implemented for any request/response to/from a
// Functional Module"; the configuration modules (credentials, versions, hub
// client info) "are not to be routed ... routing headers SHALL NOT be used".
// We send all four on every request to a functional module (we address one
// party; no open routing) and on every answer to an authenticated request.
// Values are CiString(2) and CiString(3).
//
// status_codes: "If a request is syntactically valid JSON and addresses an
// existing resource, and comes from a sender that is successfully
// authenticated and authorized, this request is supposed to have reached the
// OCPI layer. To such a request, an HTTP error status code MUST NOT be
// returned." So an answer to an authenticated request whose JSON was read and
// whose route matched is 200 or 201, except: 404 when the object it
// addresses does not exist (then it addresses no existing resource; a GET
// "SHOULD return a HTTP 404", mod_tokens answers the authorization of an
// unknown token 404, and a PATCH that fails is followed by a GET and a PUT,
// transport_and_format; the wire does not tell whether the object existed,
// so a 404 is taken as that), 405 on the credentials module (POST when
// registered, PUT/DELETE when not), and one of ours: 503 with Retry-After
// while our database is unreachable (nothing could be processed; the peer
// retries). A 500 is never acceptable. Requests that did not reach the OCPI
// layer (not JSON, no or a bad token, over the rate limit, no such endpoint)
// may have HTTP error statuses.

import { type OcpiExchange, ROUTING_HEADER_NAMES as ROUTING } from '../src/ocpi-protocol/validate.ts';

/** One exchange as the service records it (src/ocpi-protocol/validate.ts, recordOcpiExchange). */
export type RecordedExchange = OcpiExchange;

const CONFIGURATION_MODULES = new Set(['versions', 'credentials', 'hubclientinfo']);
const FORMAT: Record<(typeof ROUTING)[number], RegExp> = {
  'OCPI-from-country-code': /^[A-Za-z]{2}$/,
  'OCPI-from-party-id': /^[A-Za-z0-9]{3}$/,
  'OCPI-to-country-code': /^[A-Za-z]{2}$/,
  'OCPI-to-party-id': /^[A-Za-z0-9]{3}$/,
};

function routingProblems(e: RecordedExchange, functional: boolean): string[] {
  const present = ROUTING.filter((name) => e.routing[name] !== undefined);
  if (!functional) return present.length > 0 ? [`routing headers on the ${e.module} module (a configuration module): ${present.join(', ')}`] : [];
  const problems: string[] = [];
  const missing = ROUTING.filter((name) => e.routing[name] === undefined);
  if (missing.length > 0) problems.push(`routing headers missing to the ${e.module} module: ${missing.join(', ')}`);
  for (const name of present) if (!FORMAT[name].test(e.routing[name] as string)) problems.push(`${name} is not a valid party code: ${e.routing[name]}`);
  return problems;
}

/** The HTTP statuses an answer to a request that reached the OCPI layer may have. */
function allowedStatus(e: RecordedExchange): boolean {
  const status = e.status ?? 0;
  if (status === 200 || status === 201 || status === 404 || status === 503) return true;
  return status === 405 && e.module === 'credentials';
}

function answerProblems(e: RecordedExchange): string[] {
  const problems: string[] = [];
  if (e.status === 500) problems.push('HTTP 500: an internal error answered to a peer');
  if (e.reached_ocpi_layer && !allowedStatus(e)) {
    problems.push(`HTTP ${e.status} to a ${e.method} that reached the OCPI layer (status_codes: no HTTP error status; the error goes in the envelope)`);
  }
  if (e.status !== null && e.status < 500 && e.ocpi_status === null) problems.push(`HTTP ${e.status} without an OCPI status_code`);
  // Whom an unauthenticated request comes from is not known: its answer cannot be addressed.
  if (e.module !== null && (e.authenticated || CONFIGURATION_MODULES.has(e.module))) {
    problems.push(...routingProblems(e, !CONFIGURATION_MODULES.has(e.module)));
  }
  return problems;
}

/**
 * An exchange with an OCPI 2.1.1 peer is not held to 2.2.1's rules: 2.1.1 has no message routing (its
 * transport_and_format has no routing headers; nothing 2.2.1-only may reach a 2.1.1 peer, so none may be sent)
 * and no "reached the OCPI layer" rule. What holds in any version: no HTTP 500, and an OCPI status_code in every
 * answer below 500.
 */
function problems211(e: RecordedExchange): string[] {
  const problems: string[] = [];
  const present = ROUTING.filter((name) => e.routing[name] !== undefined);
  if (present.length > 0) problems.push(`routing headers in an OCPI 2.1.1 exchange (2.1.1 has none): ${present.join(', ')}`);
  if (e.status === 500) problems.push('HTTP 500: an internal error answered to a peer');
  if (e.status !== null && e.status < 500 && e.ocpi_status === null) problems.push(`HTTP ${e.status} without an OCPI status_code`);
  return problems;
}

/**
 * An exchange with an OCPI 2.2 peer is held to the same rules as 2.2.1's: 2.2 introduced message routing (the same four
 * headers, the same configuration modules, hub client info among them) and its status codes; the changelog of 2.2.1
 * lists no change to either but one, "Added 4000 Hub generic error". So 2.2.1's rules, and no 4000 (2.2 has no such
 * code: we must not answer it to a 2.2 peer, nor does a 2.2 sandbox answer it).
 */
function problems22(e: RecordedExchange): string[] {
  const problems = problems221(e);
  if (e.ocpi_status === 4000) problems.push('OCPI status 4000 in an OCPI 2.2 exchange (2.2.1 added it)');
  return problems;
}

/** 2.2.1's rules: an answer's (answerProblems), or a request's routing headers (a configuration module is not routed). */
function problems221(e: RecordedExchange): string[] {
  if (e.direction === 'answer') return answerProblems(e);
  if (e.module === null) return [`a ${e.method} to ${e.path} that names no OCPI module`];
  return routingProblems(e, !CONFIGURATION_MODULES.has(e.module));
}

/** What is wrong with one recorded exchange (empty: nothing). */
export function exchangeProblems(e: RecordedExchange): string[] {
  if (e.version === '2.1.1') return problems211(e);
  if (e.version === '2.2') return problems22(e);
  return problems221(e);
}
