// One error-code table, one domain error type, one renderer.
// Services throw AppError with a code; only the HTTP edge turns it into a
// status and an RFC 9457 problem+json body (see renderProblem).

interface ErrorCodeInfo {
  status: number;
  title: string;
  /** What a client should understand by it; published under /problems/<code>. */
  description: string;
}

export const ERROR_CODES = {
  validation_error: { status: 400, title: 'Invalid request', description: 'A parameter or body field is missing or malformed; `errors` names each field.' },
  payment_method_error: { status: 400, title: 'Payment method problem', description: 'The payment method cannot be used for this operation.' },
  unauthorized: { status: 401, title: 'Unauthorized', description: 'The bearer token is missing, malformed, expired, revoked, or its client is disabled.' },
  payment_error: { status: 402, title: 'Payment required', description: 'The user has an unpaid debt that must be settled first.' },
  pre_authorization_failed: {
    status: 402,
    title: 'Pre-authorization failed',
    description: 'The hold on the payment method failed; it may need customer authentication (payment_intent_client_secret).',
  },
  https_required: { status: 403, title: 'HTTPS required', description: 'The API is served over HTTPS only.' },
  not_found: { status: 404, title: 'Not found', description: 'The resource does not exist or belongs to another client.' },
  conflict: { status: 409, title: 'Conflict', description: 'The request conflicts with the current state, or an identical request is still in flight.' },
  already_charging: { status: 409, title: 'Already charging', description: 'The user has an unfinished charging session.' },
  already_stopped: { status: 409, title: 'Already stopped', description: 'The charging session has already ended.' },
  billing_data_required: { status: 409, title: 'Billing data required', description: 'The billing details are incomplete for charging.' },
  station_availability_issue: {
    status: 409,
    title: 'Station not available',
    description: 'The EVSE cannot be used now (409), or the station data cannot be obtained (424).',
  },
  payload_too_large: { status: 413, title: 'Payload too large', description: 'The request body exceeds the size limit.' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', description: 'Send request bodies as application/json.' },
  idempotency_conflict: { status: 422, title: 'Idempotency key reused', description: 'The Idempotency-Key was already used with a different request.' },
  temporary_locked: { status: 423, title: 'Temporarily locked', description: 'The resource is locked for a moment; retry later.' },
  charging_provider_error: {
    status: 424,
    title: 'Charging provider error',
    description: 'The charge point operator rejected the request or could not be reached.',
  },
  rate_limited: { status: 429, title: 'Too many requests', description: 'The client exceeded its request rate; see Retry-After.' },
  unexpected_error: { status: 500, title: 'Unexpected error', description: 'Something failed on our side; quote the support id to the operator.' },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    description: 'The service cannot answer this request right now (its database is restarting, or it is still starting); retry after Retry-After seconds.',
  },
  payment_processor_unavailable: {
    status: 503,
    title: 'Payment processor unavailable',
    description: 'The payment processor could not be reached or did not answer as expected; retry later (see Retry-After).',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  field: string;
  message: string;
}

export interface AppErrorOptions {
  /** Overrides the code's status where the table allows two (station_availability_issue: 409 or 424). */
  status?: number;
  errors?: FieldError[];
  paymentIntentClientSecret?: string;
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly paymentIntentClientSecret: string | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, detail: string, options: AppErrorOptions = {}) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.errors = options.errors;
    this.paymentIntentClientSecret = options.paymentIntentClientSecret;
    this.headers = options.headers;
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found.`);

/** 503 with Retry-After: the request may be repeated as it is (with the same Idempotency-Key for a write). */
export const serviceUnavailable = (detail = 'The service is temporarily unavailable; retry shortly.', retryAfterSeconds = 2) =>
  new AppError('service_unavailable', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });

export const validationError = (field: string, message: string) => new AppError('validation_error', `${field}: ${message}`, { errors: [{ field, message }] });

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  error: { type: ErrorCode; details: string; payment_intent_client_secret?: string };
  request_id: string;
  errors?: FieldError[];
}

export function problemTypeUri(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}/problems/${code}`;
}

/** The one renderer: an AppError (or anything else, as a 500 with only a support id) to a problem body. */
export function renderProblem(error: unknown, requestId: string, baseUrl: string): ProblemBody {
  const known = error instanceof AppError ? error : undefined;
  const code: ErrorCode = known?.code ?? 'unexpected_error';
  const status = known?.status ?? 500;
  const detail =
    known && code !== 'unexpected_error' ? known.message : `An unexpected error occurred. Support id: ${requestId}. Quote it when contacting the operator.`;
  const body: ProblemBody = {
    type: problemTypeUri(baseUrl, code),
    title: ERROR_CODES[code].title,
    status,
    detail,
    error: { type: code, details: detail },
    request_id: requestId,
  };
  if (known?.paymentIntentClientSecret) body.error.payment_intent_client_secret = known.paymentIntentClientSecret;
  if (known?.errors?.length) body.errors = known.errors;
  return body;
}
