// Customers, setup intents and payment methods at Stripe (the PaymentProcessor
// operations that save a payment method for later), each given the SDK client.
import type Stripe from 'stripe';
import type { PaymentProcessor, ProcessorPaymentMethod, ProcessorSetupIntent } from './processor.ts';
import { call, failure, isMissing, paymentMethodOf, setupIntentOf } from './stripe-values.ts';

export function createCustomer(stripe: Stripe, input: Parameters<PaymentProcessor['createCustomer']>[0]): Promise<{ customerId: string }> {
  return call('creating a customer', async () => {
    const customer = await stripe.customers.create(
      { metadata: input.metadata, ...(input.description ? { description: input.description } : {}) },
      { idempotencyKey: input.idempotencyKey },
    );
    return { customerId: customer.id };
  });
}

export function createSetupIntent(stripe: Stripe, input: Parameters<PaymentProcessor['createSetupIntent']>[0]): Promise<ProcessorSetupIntent> {
  return call('creating a setup intent', async () =>
    setupIntentOf(
      await stripe.setupIntents.create(
        { customer: input.customerId, allowed_payment_method_types: [input.paymentMethodType], usage: 'off_session', metadata: input.metadata },
        input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : undefined,
      ),
    ),
  );
}

export async function retrieveSetupIntent(stripe: Stripe, id: string): Promise<ProcessorSetupIntent | undefined> {
  try {
    return setupIntentOf(await stripe.setupIntents.retrieve(id));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw failure(error, 'retrieving a setup intent');
  }
}

export function listPaymentMethods(stripe: Stripe, customerId: string): Promise<ProcessorPaymentMethod[]> {
  return call('listing payment methods', async () => {
    const methods: ProcessorPaymentMethod[] = [];
    for await (const pm of stripe.customers.listPaymentMethods(customerId, { limit: 100 })) methods.push(paymentMethodOf(pm));
    return methods;
  });
}

export async function retrievePaymentMethod(stripe: Stripe, id: string): Promise<ProcessorPaymentMethod | undefined> {
  try {
    return paymentMethodOf(await stripe.paymentMethods.retrieve(id));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw failure(error, 'retrieving a payment method');
  }
}

export async function detachPaymentMethod(stripe: Stripe, id: string): Promise<'detached' | 'not_attached'> {
  const current = await retrievePaymentMethod(stripe, id);
  if (!current?.customerId) return 'not_attached';
  try {
    await stripe.paymentMethods.detach(id);
    return 'detached';
  } catch (error) {
    // Detached meanwhile (a retry, another instance): done all the same.
    const now = await retrievePaymentMethod(stripe, id);
    if (!now?.customerId) return 'not_attached';
    throw failure(error, 'detaching a payment method');
  }
}

export function setDefaultPaymentMethod(stripe: Stripe, customerId: string, paymentMethodId: string | null): Promise<void> {
  return call('setting the default payment method', async () => {
    await stripe.customers.update(customerId, { invoice_settings: { default_payment_method: paymentMethodId ?? '' } });
  });
}
