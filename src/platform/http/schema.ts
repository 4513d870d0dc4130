// Schema helpers shared by every module's routes: the problem body, nullable
// fields, and the standard error responses each route documents.
import { type Static, type TSchema, Type } from 'typebox';
import { AppError, ERROR_CODES, type ErrorCode, type FieldError, renderProblem } from '../errors.ts';

/** A JSON-Schema `type: [T, "null"]` field: one clear validation message instead of an anyOf pair. */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string | string[] } & Record<string, unknown>;
  const types = Array.isArray(type) ? type : [type];
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [...types, 'null'] });
}

export const FieldErrorSchema = Type.Object({ field: Type.String(), message: Type.String() });

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri', description: 'URI of the problem type; GET it for a description.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'Human-readable explanation. For 500 it holds only a support id.' }),
    error: Type.Object({
      type: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(ERROR_CODES), description: 'Machine-readable error code; clients switch on this.' }),
      details: Type.String(),
      payment_intent_client_secret: Type.Optional(Type.String()),
    }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'One entry per invalid field.' })),
  },
  { description: 'RFC 9457 problem details, also carrying the reference API error envelope (detail, error.type, error.details).' },
);

/** Where the OpenAPI document keeps the problem body once (every error response refers to it). */
const PROBLEM_COMPONENT = 'Problem';

/**
 * The OpenAPI document with the problem body as one named component (`#/components/schemas/Problem`) instead of a
 * copy in every error response: the same schema, so a generated client has one Problem type. Only the document
 * changes; the routes still validate and serialize with ProblemSchema itself.
 */
export function problemAsComponent<T extends { paths?: Record<string, unknown>; components?: { schemas?: Record<string, unknown> } }>(document: T): T {
  const ref = { $ref: `#/components/schemas/${PROBLEM_COMPONENT}` };
  for (const item of Object.values(document.paths ?? {}) as Record<
    string,
    { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }
  >[]) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation?.responses ?? {})) {
        const problem = response?.content?.['application/problem+json'];
        if (problem?.schema) problem.schema = ref;
      }
    }
  }
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, [PROBLEM_COMPONENT]: JSON.parse(JSON.stringify(ProblemSchema)) },
  };
  return document;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (validation_error); `errors` names the fields.',
  401: 'Missing, malformed, expired or revoked token, or disabled client (unauthorized).',
  402: 'Payment required (payment_error, pre_authorization_failed).',
  403: 'Plain HTTP where HTTPS is required (https_required).',
  404: 'Not found, or owned by another client (not_found).',
  409: 'Conflict with the current state, or the same Idempotency-Key is in flight.',
  413: 'Body too large.',
  415: 'Body is not JSON.',
  422: 'Idempotency-Key reused with a different request (idempotency_conflict).',
  424: 'The charge point operator refused or did not answer, or the station data could not be obtained.',
  429: 'Too many requests (rate_limited); see Retry-After.',
  500: 'Unexpected error; detail holds only a support id.',
  503: 'Temporarily unavailable (the database, the payment processor, start-up); retry after Retry-After seconds.',
};

/** What a problem of each code says in the document's examples: a detail as the service writes one, and its field errors. */
const EXAMPLE_PROBLEMS: Partial<Record<ErrorCode | `${ErrorCode} ${number}`, { detail: string; errors?: FieldError[] }>> = {
  validation_error: { detail: 'email: must match format "email"', errors: [{ field: 'email', message: 'must match format "email"' }] },
  payment_method_error: { detail: 'The payment method pm_1Qx9 is not one of the user’s.' },
  unauthorized: { detail: 'Missing bearer token.' },
  payment_error: { detail: 'The user has an unpaid charging debt; it must be paid before charging again (GET .../charging/debts/).' },
  pre_authorization_failed: { detail: 'The hold of 29.00 EUR was declined: Your card has insufficient funds.' },
  https_required: { detail: 'This API is served over HTTPS only; repeat the request with https://.' },
  not_found: { detail: 'User not found.' },
  conflict: { detail: 'A request with this Idempotency-Key is still being processed; retry shortly.' },
  already_charging: { detail: 'The user already has an unfinished session (or a start in flight) on this EVSE.' },
  already_stopped: { detail: 'The session is already completed.' },
  billing_data_required: { detail: 'Billing details are incomplete: first_name, country.' },
  station_availability_issue: { detail: 'EVSE DE*HHC*ESCN*NORMAL is not available (charging).' },
  'station_availability_issue 424': { detail: 'The operator sent no price for this EVSE; it cannot be started.' },
  payload_too_large: { detail: 'The request body is too large.' },
  unsupported_media_type: { detail: 'Request bodies must be JSON (Content-Type: application/json).' },
  idempotency_conflict: { detail: 'This Idempotency-Key was already used with a different request (method, path or body).' },
  charging_provider_error: { detail: 'The operator rejected the start: the charge point rejected the start.' },
  rate_limited: { detail: 'This client may make 1200 requests per minute; retry after 17 s.' },
  service_unavailable: { detail: 'The service is temporarily unavailable; retry shortly.' },
  payment_processor_unavailable: { detail: 'The payment processor could not be reached; retry shortly.' },
};

/** The code a status is shown with when a route names none of its own: the first code of that status in ERROR_CODES. */
const DEFAULT_CODE: Partial<Record<number, ErrorCode>> = {};
for (const [code, { status }] of Object.entries(ERROR_CODES) as [ErrorCode, { status: number }][]) DEFAULT_CODE[status] ??= code;

/** A problem body exactly as the service renders it (errors.ts), under the default address. */
function exampleProblem(code: ErrorCode, status: number) {
  const known = EXAMPLE_PROBLEMS[`${code} ${status}`] ?? EXAMPLE_PROBLEMS[code];
  const error = new AppError(code, known?.detail ?? '', { status, ...(known?.errors ? { errors: known.errors } : {}) });
  return renderProblem(error, 'req-7f3a9c2e41', 'https://localhost:8443');
}

/**
 * Response map of a route: its success responses plus documented problem responses, each with an example per
 * error code (`examples` names a route's own codes per status; otherwise the status's usual one).
 */
export function withErrors<T extends Record<number, TSchema>>(success: T, codes: number[] = [], examples: Partial<Record<number, ErrorCode[]>> = {}) {
  const responses: Record<number, TSchema> = { ...success };
  for (const status of [...new Set([...codes, 401, 403, 500])].sort()) {
    const shown = examples[status] ?? (DEFAULT_CODE[status] ? [DEFAULT_CODE[status]] : []);
    responses[status] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'Problem.',
      content: {
        'application/problem+json': {
          schema: ProblemSchema,
          examples: Object.fromEntries(shown.map((code) => [code, { summary: code, value: exampleProblem(code, status) }])),
        },
      },
    } as unknown as TSchema;
  }
  return responses as T & Record<number, TSchema>;
}

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Makes the request safe to retry: the first answer is replayed for 24 h.' }),
  ),
});

/** No body, or an empty JSON object: any field is refused (400). */
export const NoBody = Type.Unsafe<Record<string, never> | undefined>({
  description: 'No body (an empty JSON object is accepted).',
  additionalProperties: false,
  not: { type: ['string', 'number', 'boolean', 'array'] },
});

/** An amount as an exact decimal string in the currency's major unit ("12.40"), never a float. */
export const Money = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description });
/** An amount that may be absent (null); not pattern-checked, as before: only serialized, never parsed. */
export const NullableMoney = (description: string) => Nullable(Type.String({ description }));
