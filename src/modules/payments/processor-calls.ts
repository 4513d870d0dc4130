// How the rules ask the processor. No transaction, and no connection, is held
// while the processor is asked: a call may take seconds, and the built-in
// sandbox answers from this same pool (a burst of calls each holding a
// connection would starve it). What a call needs is read, or claimed
// (claims.ts), first; the processor is asked with the same idempotency keys
// as ever; its answer is written afterwards, conditionally (holds.ts,
// mirror.ts).
import { AppError } from '../../platform/errors.ts';
import type { PaymentsContext } from './context.ts';
import { PaymentProcessorError } from './processor.ts';

/** The processor could not be reached: the client may retry. The cause is logged, never shown. */
function unavailable(): AppError {
  return new AppError('payment_processor_unavailable', 'The payment processor could not be reached; retry in a few seconds.', {
    headers: { 'Retry-After': '5' },
  });
}

/**
 * Runs processor calls: a transport failure (retryable) becomes 503
 * payment_processor_unavailable with Retry-After; a refusal that retrying
 * cannot cure (a bad or revoked key, an invalid request) is a 500, logged as
 * an error with the adapter's own wording only (it never carries a key).
 */
export async function ask<T>(ctx: Pick<PaymentsContext, 'log'>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof PaymentProcessorError)) throw error;
    if (error.retryable) {
      ctx.log?.warn({ err: error }, 'payment processor call failed');
      throw unavailable();
    }
    ctx.log?.error(
      { processor_error: error.message, ...(error.processorCode ? { processor_code: error.processorCode } : {}) },
      'the payment processor refused a request; retrying will not help (check the Stripe keys and the request)',
    );
    throw new AppError('unexpected_error', 'The payment processor refused the request.');
  }
}
