// Stripe's test cards, as they behave in test mode (https://docs.stripe.com/testing).
// The sandbox never stores a card number: only its brand, last 4 digits and
// what the card does (its behaviour).
import { createHmac } from 'node:crypto';

/** What a card does when it is set up and when it is charged. */
export type CardBehaviour =
  | 'succeeds'
  /** 4000002500003155: authentication to set up and on-session; off-session fine once set up. */
  | 'authenticate_unless_set_up'
  /** 4000002760003184: authentication for every setup and payment; off-session always fails. */
  | 'authenticate_always'
  /** 4000000000009995: charges declined with insufficient_funds. */
  | 'insufficient_funds'
  /** 4000000000000341: attaches, every charge declined. */
  | 'charge_declined'
  /** 4000000000000002: declined, even when set up. */
  | 'declined';

/** The test cards that do something else than succeed (any other valid number behaves like 4242424242424242). */
export const CARD_BEHAVIOURS: Record<string, CardBehaviour> = {
  '4000002500003155': 'authenticate_unless_set_up',
  '4000002760003184': 'authenticate_always',
  '4000000000009995': 'insufficient_funds',
  '4000000000000341': 'charge_declined',
  '4000000000000002': 'declined',
};

/** Stripe's test PaymentMethod ids (usable server-side instead of a card number). */
export const TEST_PAYMENT_METHODS: Record<string, string> = {
  pm_card_visa: '4242424242424242',
  pm_card_mastercard: '5555555555554444',
  pm_card_amex: '378282246310005',
  pm_card_authenticationRequiredOnSetup: '4000002500003155',
  pm_card_authenticationRequired: '4000002760003184',
  pm_card_visa_chargeDeclinedInsufficientFunds: '4000000000009995',
  pm_card_chargeCustomerFail: '4000000000000341',
  pm_card_visa_chargeDeclined: '4000000000000002',
};

export function luhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function brandOf(number: string): string {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  if (/^35(2[89]|[3-8]\d)/.test(number)) return 'jcb';
  if (/^3(0[0-5]|[689])/.test(number)) return 'diners';
  return 'unknown';
}

export interface TestCard {
  brand: string;
  last4: string;
  fingerprint: string;
  behaviour: CardBehaviour;
}

/** A card number as the sandbox keeps it; undefined when it is not a valid number. */
export function testCard(rawNumber: string, fingerprintKey: string): TestCard | undefined {
  const number = rawNumber.replace(/[\s-]/g, '');
  if (!/^\d{13,19}$/.test(number) || !luhnValid(number)) return undefined;
  return {
    brand: brandOf(number),
    last4: number.slice(-4),
    fingerprint: createHmac('sha256', fingerprintKey).update(number).digest('base64url').replace(/[-_]/g, '').slice(0, 16),
    behaviour: CARD_BEHAVIOURS[number] ?? 'succeeds',
  };
}
