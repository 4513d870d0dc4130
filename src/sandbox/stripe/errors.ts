// Stripe's error objects and HTTP codes: 400 invalid_request_error (and
// idempotency_error), 401 bad key, 402 card_error, 404 resource_missing,
// 409 an idempotent request still in flight.

export type StripeErrorType = 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';

export interface StripeErrorBody {
  type: StripeErrorType;
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: unknown;
  setup_intent?: unknown;
  payment_method?: unknown;
}

export class SandboxError extends Error {
  readonly status: number;
  readonly body: StripeErrorBody;
  /**
   * True for failures that are themselves a result (a declined card): the
   * changes made so far (the failed payment intent, its event) are committed
   * and the answer is stored for Idempotency-Key replay, as Stripe does.
   */
  readonly commit: boolean;

  constructor(status: number, body: StripeErrorBody, options: { commit?: boolean } = {}) {
    super(body.message);
    this.name = 'SandboxError';
    this.status = status;
    this.body = body.code && !body.doc_url ? { ...body, doc_url: `https://stripe.com/docs/error-codes/${body.code.replaceAll('_', '-')}` } : body;
    this.commit = options.commit ?? false;
  }
}

export function invalidRequest(message: string, options: { param?: string; code?: string; status?: number } = {}): SandboxError {
  return new SandboxError(options.status ?? 400, {
    type: 'invalid_request_error',
    message,
    ...(options.code ? { code: options.code } : {}),
    ...(options.param ? { param: options.param } : {}),
  });
}

const NAMES: Record<string, string> = {
  customer: 'customer',
  setup_intent: 'setupintent',
  payment_method: 'PaymentMethod',
  payment_intent: 'payment_intent',
  charge: 'charge',
  event: 'event',
};

/** A missing object: 404 when named by the URL, 400 when named by a parameter. */
export function resourceMissing(object: string, id: string, param?: string): SandboxError {
  return invalidRequest(`No such ${NAMES[object] ?? object}: '${id}'`, { code: 'resource_missing', param: param ?? 'id', status: param ? 400 : 404 });
}

export function unexpectedState(object: 'payment_intent' | 'setup_intent', message: string, snapshot: unknown): SandboxError {
  const error = invalidRequest(message, { code: `${object}_unexpected_state` });
  return new SandboxError(400, { ...error.body, [object]: snapshot });
}
