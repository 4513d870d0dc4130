// Customers: create, retrieve, update (including the default payment
// method), delete, and the list of a customer's payment methods.
import { clone, type EngineContext, type StoredCustomer, seconds } from './context.ts';
import { invalidRequest } from './errors.ts';
import { emit } from './events.ts';
import type { FormObject } from './form.ts';
import { type CustomerObject, newId, type PaymentMethodObject } from './objects.ts';
import { LIST_PARAMS, listOptions, Params } from './params.ts';
import { listAnswer, loadOr404 } from './reads.ts';
import * as store from './store.ts';

export async function customerOr404(ctx: EngineContext, id: string, param?: string, forUpdate = false): Promise<StoredCustomer> {
  return loadOr404<CustomerObject>(ctx, 'customer', id, { param, forUpdate, visible: (customer) => !customer.deleted });
}

const CUSTOMER_FIELDS = ['description', 'email', 'name', 'metadata', 'invoice_settings', 'expand'] as const;

export async function createCustomer(ctx: EngineContext, raw: FormObject): Promise<CustomerObject> {
  const params = new Params(raw, CUSTOMER_FIELDS);
  params.expand([]);
  const invoice = params.object('invoice_settings', ['default_payment_method']);
  if (invoice?.string('default_payment_method'))
    throw invalidRequest('A new customer has no payment methods to make default.', { param: 'invoice_settings[default_payment_method]' });
  const data: CustomerObject = {
    id: newId('cus'),
    object: 'customer',
    created: seconds(ctx.now),
    description: params.nullableString('description') ?? null,
    email: params.nullableString('email', 512) ?? null,
    name: params.nullableString('name', 256) ?? null,
    metadata: params.metadata() ?? {},
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
  };
  await store.insertObject(ctx.tx, { id: data.id, object: 'customer', customer: null, created: data.created, data, internal: {}, expiresAt: null });
  await emit(ctx, 'customer.created', data);
  return data;
}

export async function retrieveCustomer(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  new Params(raw, ['expand']).expand([]);
  const found = await loadOr404<CustomerObject>(ctx, 'customer', id as string);
  return found.data.deleted ? { id: found.id, object: 'customer', deleted: true } : found.data;
}

export async function updateCustomer(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<CustomerObject> {
  const params = new Params(raw, CUSTOMER_FIELDS);
  params.expand([]);
  const customer = await customerOr404(ctx, id as string, undefined, true);
  const before = clone(customer.data);
  const previous: Record<string, unknown> = {};
  for (const field of ['description', 'email', 'name'] as const) {
    const value = params.nullableString(field);
    if (value !== undefined && value !== customer.data[field]) {
      previous[field] = customer.data[field];
      customer.data[field] = value;
    }
  }
  const metadata = params.metadata();
  if (metadata !== undefined) {
    previous.metadata = before.metadata;
    customer.data.metadata = metadata === null ? {} : { ...customer.data.metadata, ...metadata };
    // `metadata[key]=` removes that key.
    const sent = raw.metadata;
    if (sent && typeof sent === 'object' && !Array.isArray(sent)) {
      for (const [k, v] of Object.entries(sent)) if (v === '') delete customer.data.metadata[k];
    }
  }
  const invoice = params.object('invoice_settings', ['default_payment_method']);
  const defaultMethod = invoice?.nullableString('default_payment_method');
  if (defaultMethod !== undefined && defaultMethod !== customer.data.invoice_settings.default_payment_method) {
    if (defaultMethod !== null) {
      const param = 'invoice_settings[default_payment_method]';
      const pm = await loadOr404<PaymentMethodObject>(ctx, 'payment_method', defaultMethod, { param });
      if (pm.data.customer !== customer.id) {
        throw invalidRequest(`The customer does not have a payment method with the ID ${defaultMethod}. The payment method must be attached to the customer.`, {
          param,
        });
      }
    }
    previous.invoice_settings = before.invoice_settings;
    customer.data.invoice_settings = { ...customer.data.invoice_settings, default_payment_method: defaultMethod };
  }
  if (Object.keys(previous).length > 0) {
    await store.saveObject(ctx.tx, customer);
    await emit(ctx, 'customer.updated', customer.data, previous);
  }
  return customer.data;
}

export async function deleteCustomer(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  new Params(raw, []);
  const customer = await customerOr404(ctx, id as string, undefined, true);
  const snapshot = clone(customer.data);
  customer.data.deleted = true;
  await store.saveObject(ctx.tx, customer);
  await emit(ctx, 'customer.deleted', snapshot);
  return { id: customer.id, object: 'customer', deleted: true };
}

export async function listCustomerPaymentMethods(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  const params = new Params(raw, [...LIST_PARAMS, 'type', 'allow_redisplay']);
  params.expand([]);
  const type = params.string('type') || undefined;
  const customer = await customerOr404(ctx, id as string);
  return listAnswer(
    ctx,
    `/v1/customers/${customer.id}/payment_methods`,
    'payment_method',
    { object: 'payment_method', customer: customer.id, type },
    listOptions(params),
  );
}
