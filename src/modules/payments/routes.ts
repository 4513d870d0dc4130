// HTTP edge of payment methods and setup intents: parse, call the service, shape the answer.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { clientIdOf } from '../../platform/http/auth.ts';
import { type Idempotency, type StoredAnswer, sendIdempotent } from '../../platform/http/idempotency.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { IdempotencyHeaders, NoBody, withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import { UserIdParams } from '../users/schemas.ts';
import { PaymentMethod, PaymentMethodParams, SetupIntent, SetupIntentQuery } from './schemas.ts';
import type { PaymentsService } from './service.ts';

export interface PaymentsRoutesDeps {
  payments: PaymentsService;
  idempotency: Idempotency;
  publicBaseUrl: string;
}

/** Thrown by the first pass of sendIdempotentOutside: the key has no answer yet. */
const FIRST_PASS = Symbol('first pass');

export function paymentsRoutes(deps: PaymentsRoutesDeps) {
  const { payments, idempotency, publicBaseUrl } = deps;
  const tags = ['Payments'];
  const security = [{ bearerAuth: [] }];

  /**
   * sendIdempotent for work that asks the payment processor, which must not
   * run inside the key's transaction (that would hold a connection for as long
   * as the processor takes). A first pass answers a replay, or refuses a key
   * still in flight or reused for another request, having done nothing;
   * otherwise the work runs on its own (it is idempotent at the processor),
   * and a second pass stores its answer under the key.
   */
  async function sendIdempotentOutside(request: FastifyRequest, reply: FastifyReply, work: () => Promise<StoredAnswer>) {
    const clientId = clientIdOf(request);
    try {
      return await sendIdempotent(idempotency, request, reply, clientId, () => Promise.reject(FIRST_PASS));
    } catch (error) {
      if (error !== FIRST_PASS) throw error;
    }
    const answer = await work();
    return sendIdempotent(idempotency, request, reply, clientId, async () => answer);
  }

  return async function register(app: HttpApp) {
    app.get(
      '/users/:user_id/setup-intents/',
      {
        schema: {
          summary: 'Create a setup intent to connect a payment method',
          description:
            'Answers a new setup intent of the payment processor for the user. Confirm it with the processor’s frontend SDK (Stripe.js, Stripe’s mobile SDKs) and `client_secret`; while the built-in sandbox is the processor (`processor: stripe_sandbox`), confirm it through `POST /sandbox/setup_intents/<id>/confirm` instead. When it succeeds the method is attached to the user; the user’s first method becomes the default.',
          tags,
          security,
          params: UserIdParams,
          querystring: SetupIntentQuery,
          response: withErrors({ 200: SetupIntent }, [400, 404, 503]),
        },
      },
      (request) => payments.createSetupIntent(clientIdOf(request), request.params.user_id, request.query.pm_type === 'paypal' ? 'paypal' : 'card'),
    );

    app.get(
      '/users/:user_id/payment-methods/',
      {
        schema: {
          summary: 'List payment methods, newest first',
          tags,
          security,
          params: UserIdParams,
          querystring: Type.Object({ ...PageQuery }),
          response: withErrors({ 200: PageOf(PaymentMethod) }, [400, 404]),
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const { count, results } = await payments.listPaymentMethods(clientIdOf(request), request.params.user_id, page);
        return toPage(publicBaseUrl, request.url, page, count, results);
      },
    );

    app.delete(
      '/users/:user_id/payment-methods/:pm_id/',
      {
        schema: {
          summary: 'Remove a payment method',
          description:
            'Detaches the method at the processor. Refused while it holds funds for an unfinished charging session (409 already_charging) or an unpaid debt is on it (402 payment_error). Deleting the default makes the newest remaining method the default.',
          tags,
          security,
          params: PaymentMethodParams,
          headers: IdempotencyHeaders,
          response: withErrors({ 204: Type.Null({ description: 'Removed.' }) }, [400, 402, 404, 409, 422, 503]),
        },
      },
      (request, reply) =>
        sendIdempotentOutside(request, reply, async () => {
          await payments.removePaymentMethod(clientIdOf(request), request.params.user_id, request.params.pm_id);
          return { status: 204, body: undefined };
        }),
    );

    app.post(
      '/users/:user_id/payment-methods/:pm_id/default/',
      {
        schema: {
          summary: 'Make a payment method the default',
          tags,
          security,
          params: PaymentMethodParams,
          headers: IdempotencyHeaders,
          body: NoBody,
          response: withErrors({ 204: Type.Null({ description: 'It is now the default.' }) }, [400, 404, 409, 422, 503]),
        },
      },
      (request, reply) =>
        sendIdempotentOutside(request, reply, async () => {
          await payments.setDefaultPaymentMethod(clientIdOf(request), request.params.user_id, request.params.pm_id);
          return { status: 204, body: undefined };
        }),
    );
  };
}
