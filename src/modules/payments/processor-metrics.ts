// Payment processor calls counted and timed by operation and outcome: a
// wrapper around any PaymentProcessor, so what is measured is what the
// service asked and what it got back (the SDK's own retries included).
import type { Metrics, ProcessorCallOutcome } from '../../platform/metrics.ts';
import { type PaymentProcessor, PaymentProcessorError } from './processor.ts';

/** An answer's outcome: declines and customer authentication are answers the processor gave, not failures. */
function answered(result: unknown): ProcessorCallOutcome {
  const status = (result as { status?: unknown } | undefined)?.status;
  return status === 'declined' || status === 'requires_action' ? status : 'success';
}

function failed(error: unknown): ProcessorCallOutcome {
  return error instanceof PaymentProcessorError && error.retryable ? 'unavailable' : 'failed';
}

/** The processor with every call told to `metrics` (verifyWebhook is local: a signature check, no call). */
export function observedProcessor(processor: PaymentProcessor, metrics: Pick<Metrics, 'processorCall'>): PaymentProcessor {
  const observed = { ...processor } as Record<string, unknown>;
  for (const [operation, value] of Object.entries(processor)) {
    if (typeof value !== 'function' || operation === 'verifyWebhook') continue;
    const call = value as (...args: unknown[]) => Promise<unknown>;
    observed[operation] = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        const result = await call.apply(processor, args);
        metrics.processorCall(operation, answered(result), (performance.now() - started) / 1000);
        return result;
      } catch (error) {
        metrics.processorCall(operation, failed(error), (performance.now() - started) / 1000);
        throw error;
      }
    };
  }
  return observed as unknown as PaymentProcessor;
}
