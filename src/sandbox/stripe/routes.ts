// The API's routes: method and path to the operation of each resource file.
import * as charges from './charges.ts';
import type { Handler } from './context.ts';
import * as customers from './customers.ts';
import { invalidRequest, type SandboxError } from './errors.ts';
import * as events from './events.ts';
import * as paymentIntents from './payment-intents.ts';
import * as paymentMethods from './payment-methods.ts';
import * as setupIntents from './setup-intents.ts';

const ID = '([A-Za-z0-9_]{1,255})';
const routes: [string, RegExp, Handler][] = [
  ['POST', /^\/v1\/customers$/, customers.createCustomer],
  ['GET', new RegExp(`^/v1/customers/${ID}$`), customers.retrieveCustomer],
  ['POST', new RegExp(`^/v1/customers/${ID}$`), customers.updateCustomer],
  ['DELETE', new RegExp(`^/v1/customers/${ID}$`), customers.deleteCustomer],
  ['GET', new RegExp(`^/v1/customers/${ID}/payment_methods$`), customers.listCustomerPaymentMethods],
  ['GET', /^\/v1\/payment_methods$/, paymentMethods.listPaymentMethods],
  ['GET', new RegExp(`^/v1/payment_methods/${ID}$`), paymentMethods.retrievePaymentMethod],
  ['POST', new RegExp(`^/v1/payment_methods/${ID}/attach$`), paymentMethods.attachPaymentMethod],
  ['POST', new RegExp(`^/v1/payment_methods/${ID}/detach$`), paymentMethods.detachPaymentMethod],
  ['POST', /^\/v1\/setup_intents$/, setupIntents.createSetupIntent],
  ['GET', new RegExp(`^/v1/setup_intents/${ID}$`), setupIntents.retrieveSetupIntent],
  ['POST', new RegExp(`^/v1/setup_intents/${ID}/confirm$`), setupIntents.confirmSetupIntent],
  ['POST', new RegExp(`^/v1/setup_intents/${ID}/cancel$`), setupIntents.cancelSetupIntent],
  ['POST', /^\/v1\/payment_intents$/, paymentIntents.createPaymentIntent],
  ['GET', /^\/v1\/payment_intents$/, paymentIntents.listPaymentIntents],
  ['GET', new RegExp(`^/v1/payment_intents/${ID}$`), paymentIntents.retrievePaymentIntent],
  ['POST', new RegExp(`^/v1/payment_intents/${ID}/confirm$`), paymentIntents.confirmPaymentIntent],
  ['POST', new RegExp(`^/v1/payment_intents/${ID}/capture$`), paymentIntents.capturePaymentIntent],
  ['POST', new RegExp(`^/v1/payment_intents/${ID}/cancel$`), paymentIntents.cancelPaymentIntent],
  ['GET', new RegExp(`^/v1/charges/${ID}$`), charges.retrieveCharge],
  ['GET', /^\/v1\/events$/, events.listEvents],
  ['GET', new RegExp(`^/v1/events/${ID}$`), events.retrieveEvent],
];

export function route(method: string, path: string): { handler: Handler; ids: string[] } | undefined {
  for (const [m, pattern, handler] of routes) {
    if (m !== method) continue;
    const match = pattern.exec(path);
    if (match) return { handler, ids: match.slice(1) };
  }
  return undefined;
}

/** Whether a method and path is an API route (unknown ones get Stripe's "Unrecognized request URL"). */
export function recognizes(method: string, path: string): boolean {
  return route(method, path) !== undefined;
}

export function unrecognized(method: string, path: string): SandboxError {
  return invalidRequest(`Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`, {
    status: 404,
  });
}
