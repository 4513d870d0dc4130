// What setup intents and payment intents share: the payment method types
// they accept, the next_action that sends the customer to the browser
// stand-in, and how the browser stand-in answers after a committed decline.
import type { EngineContext } from './context.ts';
import { SandboxError } from './errors.ts';
import type { NextAction } from './objects.ts';

export const PAYMENT_METHOD_TYPES = ['card', 'paypal'] as const;

/** The statuses in which an intent may still be confirmed (and a setup intent canceled). */
export const AWAITING_CONFIRMATION: readonly string[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];

/** off_session=true, one_off or recurring: the customer is not there to authenticate. */
export function isOffSession(value: string | undefined): boolean {
  return value === 'true' || value === 'one_off' || value === 'recurring';
}

/**
 * From API version 2026-09-30 (endive) the types a setup or payment intent
 * accepts are sent as allowed_payment_method_types; before, as payment_method_types.
 */
export const typesParam = (apiVersion: string) => (apiVersion >= '2026-09-30' ? 'allowed_payment_method_types' : 'payment_method_types');

export function nextAction(ctx: EngineContext, kind: 'setup_intents' | 'payment_intents', id: string, secret: string): NextAction {
  const base = ctx.account.browserBaseUrl;
  const url = base ? `${base}/sandbox/?${kind === 'setup_intents' ? 'setup_intent' : 'payment_intent'}=${id}&client_secret=${encodeURIComponent(secret)}` : '';
  return { type: 'redirect_to_url', redirect_to_url: { url, return_url: null } };
}

/** Keeps a decline's committed changes but answers with the intent as it now stands. */
export async function answeringIntent<T>(work: () => Promise<T>, current: () => T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SandboxError && error.commit) return current();
    throw error;
  }
}
