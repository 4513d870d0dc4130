// The errors a call can throw: ApiError for every answer that is not a success (the service's problem+json body,
// typed), and the reasons a call got no answer at all.
import type { components } from './generated/api.ts';

/** The problem body every error answer of the API carries (RFC 9457, with the `error` envelope). */
export type Problem = components['schemas']['Problem'];

/** The service's error codes (`error.type` of a problem body): what to switch on. */
export type ProblemType = Problem['error']['type'];

/**
 * ApiError.type when the answer was not one of the service's problem bodies (a proxy's 502 page, a body cut short):
 * the status is then all there is.
 */
export const UNEXPECTED_RESPONSE = 'unexpected_response';

export type ApiErrorType = ProblemType | typeof UNEXPECTED_RESPONSE;

export interface FieldError {
  /** The field, as the request named it (`email`, `custom_properties.external_id`, `page_size`, `Last-Event-ID`). */
  field: string;
  message: string;
}

/** An answer with an error status. `type` is the service's error code: `if (error.type === 'already_charging')`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: ApiErrorType;
  readonly title: string;
  readonly detail: string;
  /** The invalid fields of a validation_error (empty otherwise). */
  readonly errors: FieldError[];
  /** The X-Request-Id of the answer: quote it to the operator (a 500's detail holds it too). */
  readonly requestId: string | undefined;
  /** pre_authorization_failed: the payment intent the customer must authenticate with the processor's SDK. */
  readonly paymentIntentClientSecret: string | undefined;
  /** Seconds the answer asked to wait before trying again (Retry-After), when it said. */
  readonly retryAfter: number | undefined;
  /** The problem body as received (undefined when the answer was not one). */
  readonly problem: Problem | undefined;

  constructor(status: number, problem: Problem | undefined, meta: { requestId?: string | undefined; retryAfter?: number | undefined } = {}) {
    const type: ApiErrorType = problem?.error.type ?? UNEXPECTED_RESPONSE;
    const detail = problem?.detail ?? `The service answered HTTP ${status} without a problem body.`;
    super(`${status} ${type}: ${detail}`);
    this.status = status;
    this.type = type;
    this.title = problem?.title ?? 'Unexpected response';
    this.detail = detail;
    this.errors = problem?.errors ?? [];
    this.requestId = problem?.request_id ?? meta.requestId;
    this.paymentIntentClientSecret = problem?.error.payment_intent_client_secret;
    this.retryAfter = meta.retryAfter;
    this.problem = problem;
  }
}

export function isApiError(error: unknown, type?: ApiErrorType): error is ApiError {
  return error instanceof ApiError && (type === undefined || error.type === type);
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function isProblem(body: unknown): body is Problem {
  const candidate = body as Partial<Problem> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.status === 'number' &&
    typeof candidate.detail === 'string' &&
    typeof candidate.error === 'object' &&
    candidate.error !== null &&
    typeof candidate.error.type === 'string'
  );
}

/** The ApiError of an error answer (its body is read here). */
export async function apiErrorOf(response: Response): Promise<ApiError> {
  let body: unknown;
  try {
    body = JSON.parse(await response.text());
  } catch {
    body = undefined;
  }
  return new ApiError(response.status, isProblem(body) ? body : undefined, {
    requestId: response.headers.get('x-request-id') ?? undefined,
    retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
  });
}

/** A call that got no answer in time (ClientOptions.timeoutMs). */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}
