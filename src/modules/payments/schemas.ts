// Wire shapes of payment methods and setup intents: validation, TypeScript
// types and the OpenAPI document come from these definitions.
import { type Static, Type } from 'typebox';
import { Nullable } from '../../platform/http/schema.ts';

export const PaymentMethodParams = Type.Object({
  user_id: Type.String({ description: 'User id (UUID).' }),
  pm_id: Type.String({ description: 'Payment method id issued by the processor (pm_...).' }),
});

export const SetupIntentQuery = Type.Object({
  pm_type: Type.Optional(Type.String({ enum: ['card', 'paypal'], default: 'card', description: 'card (also Apple Pay and Google Pay wallets) or paypal.' })),
});

export const SetupIntent = Type.Object(
  {
    id: Type.String({ description: 'The processor’s setup intent id (seti_...).' }),
    client_secret: Type.String({ description: 'Confirm the setup intent with it through the processor’s SDK (or /sandbox/... while the sandbox is active).' }),
    setup_intent_client_secret: Type.String({ description: 'Same value as client_secret (the reference API name).' }),
    status: Type.String({ description: 'The setup intent’s status, requires_payment_method when new.' }),
    pm_type: Type.String({ enum: ['card', 'paypal'] }),
    processor: Type.String({
      enum: ['stripe', 'stripe_sandbox'],
      description:
        'stripe: confirm with Stripe.js or Stripe’s mobile SDKs and publishable_key; stripe_sandbox: the built-in sandbox, confirm through /sandbox/setup_intents/<id>/confirm.',
    }),
    publishable_key: Type.String({ description: 'The processor’s publishable key for its frontend SDK.' }),
  },
  {
    examples: [
      {
        id: 'seti_aVMxdFx28h2Ick6W5E9Snid8',
        client_secret: 'seti_aVMxdFx28h2Ick6W5E9Snid8_secret_9oFAr9WiX5SiJHDE5BfR9XED',
        setup_intent_client_secret: 'seti_aVMxdFx28h2Ick6W5E9Snid8_secret_9oFAr9WiX5SiJHDE5BfR9XED',
        status: 'requires_payment_method',
        pm_type: 'card',
        processor: 'stripe_sandbox',
        publishable_key: 'pk_test_sandbox5Y1SWvfKGAKzBmb6QL6fN5fpMUlNholu',
      },
    ],
  },
);
export type SetupIntentView = Static<typeof SetupIntent>;

export const PaymentMethod = Type.Object(
  {
    id: Type.String({ description: 'Processor id of the payment method (pm_...).' }),
    type: Type.String({ enum: ['card', 'paypal', 'apple_pay', 'google_pay'] }),
    default: Type.Boolean({ description: 'Whether this is the user’s default payment method; a user’s first method becomes the default.' }),
    created_at: Type.String({ format: 'date-time', description: 'When the method was attached to the user.' }),
    card: Type.Optional(
      Type.Object({
        brand: Type.String({ description: 'e.g. visa, mastercard, amex.' }),
        last4: Type.String(),
        expiration_date: Type.String({ description: 'MM/YY' }),
        cardholder_name: Nullable(Type.String()),
      }),
    ),
    paypal: Type.Optional(Type.Object({ email: Nullable(Type.String()) })),
  },
  {
    examples: [
      {
        id: 'pm_qiTunlkfDvcEU7kKyVKMuiHC',
        type: 'card',
        default: true,
        created_at: '2026-03-02T09:14:51.000Z',
        card: { brand: 'visa', last4: '4242', expiration_date: '12/29', cardholder_name: null },
      },
    ],
  },
);
export type PaymentMethodView = Static<typeof PaymentMethod>;
