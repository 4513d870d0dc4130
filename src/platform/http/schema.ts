// Schema helpers shared by every module's routes: the problem body, nullable
// fields, and the standard error responses each route documents.
import { type Static, type TSchema, Type } from 'typebox';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';

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
export const PROBLEM_COMPONENT = 'Problem';

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
  500: 'Unexpected error; detail holds only a support id.',
};

/** Response map of a route: its success responses plus documented problem responses. */
export function withErrors<T extends Record<number, TSchema>>(success: T, codes: number[] = []) {
  const responses: Record<number, TSchema> = { ...success };
  for (const code of [...new Set([...codes, 401, 403, 500])].sort()) {
    responses[code] = {
      description: ERROR_DESCRIPTIONS[code] ?? 'Problem.',
      content: { 'application/problem+json': { schema: ProblemSchema } },
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
