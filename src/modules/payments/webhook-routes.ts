// POST /webhooks/stripe: the processor's events. No bearer token: the
// Stripe-Signature over the raw body is the credential, so this scope keeps
// bodies as raw bytes (any content type) for the service to verify.
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import { WebhookSignatureError } from './processor.ts';
import type { PaymentsService } from './service.ts';

export function paymentWebhookRoutes(deps: { payments: PaymentsService }) {
  return async function register(app: HttpApp) {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    app.post(
      '/webhooks/stripe',
      {
        schema: {
          summary: 'Stripe webhook events',
          description:
            'Called by the payment processor, not by clients. Verified by the Stripe-Signature header over the raw body (STRIPE_WEBHOOK_SECRET, 5 minutes tolerance); an event id seen before is acknowledged and dropped; otherwise the object it names is re-read from the processor.',
          tags: ['Payment processor callbacks'],
          headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String({ maxLength: 4096 })) }),
          response: withErrors({ 200: Type.Object({ received: Type.Literal(true), duplicate: Type.Boolean() }) }, [400, 503]),
        },
      },
      async (request) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        try {
          const result = await deps.payments.handleWebhook(body, request.headers['stripe-signature']);
          request.log.info({ event_type: result.type, duplicate: result.duplicate }, 'payment webhook handled');
          return { received: true as const, duplicate: result.duplicate };
        } catch (error) {
          if (error instanceof WebhookSignatureError) {
            throw new AppError('validation_error', `Stripe-Signature: ${error.message}`, { errors: [{ field: 'Stripe-Signature', message: error.message }] });
          }
          throw error;
        }
      },
    );
  };
}
