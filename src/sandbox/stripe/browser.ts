// The browser-SDK stand-in, mounted on the service's own HTTPS port while the
// sandbox is the payment processor: what Stripe.js (or the mobile SDKs) would
// do with a client secret, which cannot be pointed at a sandbox. No bearer
// token: the client secret is the credential. Answers are Stripe-shaped: the
// intent (client-side view), or `{error: {...}}` with Stripe's HTTP codes; an
// unknown intent and a wrong client secret are the same 404.
import { randomBytes } from 'node:crypto';
import type { FastifyError, FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { isDatabaseUnavailable } from '../../platform/db.ts';
import { SandboxError } from './errors.ts';
import type { StripeSandbox } from './index.ts';
import { clientView } from './objects.ts';

const ClientSecret = Type.String({ minLength: 1, maxLength: 255, description: 'The intent’s client secret (the credential, as with Stripe.js).' });
const Outcome = Type.Union([Type.Literal('approve'), Type.Literal('fail')], { description: 'How the customer answers the 3-D Secure challenge.' });
const IntentId = Type.Object({ id: Type.String({ maxLength: 255 }) });
const StripeIntent = Type.Object({}, { additionalProperties: true, description: 'The intent as Stripe.js sees it (no customer, no metadata).' });
const StripeError = Type.Object(
  {
    error: Type.Object(
      { type: Type.String(), code: Type.Optional(Type.String()), message: Type.String(), param: Type.Optional(Type.String()) },
      { additionalProperties: true },
    ),
  },
  { description: 'A Stripe error object.' },
);

const ConfirmSetupBody = Type.Object(
  {
    client_secret: ClientSecret,
    card_number: Type.Optional(Type.String({ maxLength: 32, description: 'A test card number, e.g. 4242424242424242.' })),
    exp_month: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
    exp_year: Type.Optional(Type.Integer({ minimum: 2000, maximum: 2100 })),
    cvc: Type.Optional(Type.String({ pattern: '^[0-9]{3,4}$' })),
    cardholder_name: Type.Optional(Type.String({ maxLength: 200 })),
    wallet: Type.Optional(
      Type.Union([Type.Literal('apple_pay'), Type.Literal('google_pay')], {
        description: 'The card comes from this wallet (as with Stripe’s Payment Request Button).',
      }),
    ),
    paypal: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('decline')], { description: 'Approve (or decline) a PayPal billing agreement.' })),
    paypal_email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  },
  { additionalProperties: false },
);
const AuthenticateBody = Type.Object({ client_secret: ClientSecret, outcome: Outcome }, { additionalProperties: false });

function stripeErrorOf(error: FastifyError | SandboxError): { status: number; body: { error: Record<string, unknown> } } {
  if (error instanceof SandboxError) return { status: error.status, body: { error: { ...error.body } } };
  if (error.validation) {
    const first = error.validation[0];
    const param = first
      ? first.instancePath.slice(1) ||
        String(
          (first.params as { missingProperty?: string; additionalProperty?: string }).missingProperty ??
            (first.params as { additionalProperty?: string }).additionalProperty ??
            '',
        )
      : '';
    return { status: 400, body: { error: { type: 'invalid_request_error', message: `Invalid request: ${error.message}`, ...(param ? { param } : {}) } } };
  }
  if (error.statusCode === 415 || error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return { status: 415, body: { error: { type: 'invalid_request_error', message: 'Send a JSON body (Content-Type: application/json).' } } };
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, body: { error: { type: 'invalid_request_error', message: 'The request is invalid.' } } };
  }
  if (isDatabaseUnavailable(error))
    return { status: 503, body: { error: { type: 'api_error', message: 'The sandbox is temporarily unavailable; retry shortly.' } } };
  return { status: 500, body: { error: { type: 'api_error', message: 'An unknown error occurred.' } } };
}

/** Registers /sandbox/* on the service (a Fastify plugin; encapsulated, with Stripe-shaped errors). */
export function sandboxBrowserRoutes(sandbox: StripeSandbox) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const { status, body } = stripeErrorOf(error);
      if (status >= 500) request.log.error({ err: error }, 'sandbox browser route failed');
      return reply.code(status).type('application/json; charset=utf-8').send(body);
    });
    const tags = ['Sandbox (payment processor stand-in)'];
    const responses = { 200: StripeIntent, 400: StripeError, 402: StripeError, 404: StripeError };

    app.post(
      '/sandbox/setup_intents/:id/confirm',
      {
        schema: {
          summary: 'Confirm a setup intent with a test card or a PayPal approval (sandbox only)',
          description:
            'Does what the processor’s frontend SDK would: answers the setup intent. 4242424242424242 succeeds; 4000002500003155 and 4000002760003184 answer requires_action (complete it with /authenticate); 4000000000000002 is declined (status requires_payment_method, last_setup_error); 4000000000009995 and 4000000000000341 attach but their charges fail.',
          tags,
          params: IntentId,
          body: ConfirmSetupBody,
          response: responses,
        },
      },
      async (request) => {
        const body = request.body as Static<typeof ConfirmSetupBody>;
        const intent = await sandbox.browser.confirmSetupIntent((request.params as { id: string }).id, {
          clientSecret: body.client_secret,
          ...(body.card_number !== undefined ? { cardNumber: body.card_number } : {}),
          ...(body.exp_month !== undefined ? { expMonth: body.exp_month } : {}),
          ...(body.exp_year !== undefined ? { expYear: body.exp_year } : {}),
          ...(body.cardholder_name !== undefined ? { cardholderName: body.cardholder_name } : {}),
          ...(body.wallet !== undefined ? { wallet: body.wallet } : {}),
          ...(body.paypal !== undefined ? { paypal: body.paypal } : {}),
          ...(body.paypal_email !== undefined ? { paypalEmail: body.paypal_email } : {}),
        });
        return clientView(intent);
      },
    );

    app.post(
      '/sandbox/setup_intents/:id/authenticate',
      {
        schema: {
          summary: 'Complete or fail the 3-D Secure challenge of a setup intent (sandbox only)',
          tags,
          params: IntentId,
          body: AuthenticateBody,
          response: responses,
        },
      },
      async (request) => {
        const body = request.body as Static<typeof AuthenticateBody>;
        return clientView(await sandbox.browser.authenticateSetupIntent((request.params as { id: string }).id, body.client_secret, body.outcome));
      },
    );

    app.post(
      '/sandbox/payment_intents/:id/authenticate',
      {
        schema: {
          summary: 'Complete or fail the 3-D Secure challenge of a payment intent (sandbox only)',
          description:
            'For a payment intent that requires_action, or that an off-session attempt left in requires_payment_method with authentication_required (the payment_intent_client_secret of a pre_authorization_failed error).',
          tags,
          params: IntentId,
          body: AuthenticateBody,
          response: responses,
        },
      },
      async (request) => {
        const body = request.body as Static<typeof AuthenticateBody>;
        return clientView(await sandbox.browser.authenticatePaymentIntent((request.params as { id: string }).id, body.client_secret, body.outcome));
      },
    );

    for (const kind of ['setup_intent', 'payment_intent'] as const) {
      app.get(
        `/sandbox/${kind}s/:id`,
        {
          schema: {
            summary: `Retrieve a ${kind.replace('_', ' ')} with its client secret (sandbox only)`,
            tags,
            params: IntentId,
            querystring: Type.Object({ client_secret: ClientSecret }),
            response: { 200: StripeIntent, 404: StripeError },
          },
        },
        async (request) =>
          clientView(await sandbox.browser.retrieve(kind, (request.params as { id: string }).id, (request.query as { client_secret: string }).client_secret)),
      );
    }

    app.get(
      '/sandbox/',
      { schema: { summary: 'Hosted page: confirm a setup intent or answer a 3-D Secure challenge by hand (sandbox only)', tags } },
      async (_request, reply) => {
        const nonce = randomBytes(16).toString('base64');
        return reply
          .type('text/html; charset=utf-8')
          .header(
            'content-security-policy',
            `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
          )
          .header('referrer-policy', 'no-referrer')
          .header('cache-control', 'no-store')
          .send(hostedPage(nonce));
      },
    );
  };
}

function hostedPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment sandbox</title>
<style nonce="${nonce}">
body{font:15px/1.4 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.3rem}fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.8rem}
label{display:block;margin:.4rem 0}input{font:inherit;padding:.3rem;width:100%;box-sizing:border-box}
button{font:inherit;margin:.3rem .3rem 0 0;padding:.35rem .8rem;cursor:pointer}
pre{background:#f4f4f4;padding:.6rem;overflow:auto;font-size:12px}.note{color:#555;font-size:13px}
#outcome{font-weight:600;margin:1rem 0 .3rem}#outcome.ok{color:#13612e}#outcome.bad{color:#a11}#outcome.wait{color:#7a4b00}
</style>
</head>
<body>
<h1>Payment sandbox</h1>
<p class="note">Stands in for the payment processor's frontend SDK while the service runs its built-in Stripe sandbox. Nothing here moves money.</p>
<fieldset><legend>Intent</legend>
<label>Setup intent or payment intent id <input id="intent" placeholder="seti_... or pi_..."></label>
<label>Client secret <input id="secret" placeholder="..._secret_..."></label>
<button id="load">Show status</button></fieldset>
<fieldset><legend>Confirm a setup intent with a card</legend>
<label>Card number <input id="card" value="4242424242424242"></label>
<div class="note">4242424242424242 succeeds · 4000002500003155 authenticate to set up · 4000002760003184 always authenticate · 4000000000009995 insufficient funds · 4000000000000341 charges fail · 4000000000000002 declined</div>
<button id="confirmCard">Confirm with card</button></fieldset>
<fieldset><legend>Confirm a setup intent with PayPal</legend>
<button id="paypalApprove">Approve</button><button id="paypalDecline">Decline</button></fieldset>
<fieldset><legend>3-D Secure challenge</legend>
<button id="authApprove">Complete authentication</button><button id="authFail">Fail authentication</button></fieldset>
<p id="outcome" role="status" aria-live="polite"></p>
<pre id="out">-</pre>
<script nonce="${nonce}">
const q = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
$('intent').value = q.get('setup_intent') || q.get('payment_intent') || '';
$('secret').value = q.get('client_secret') || '';
const kind = () => ($('intent').value.startsWith('pi_') ? 'payment_intents' : 'setup_intents');
// The answer in plain words (above the raw object): what happened to the card or payment.
function outcome(status, body, action) {
  if (status >= 400) {
    const e = (body && body.error) || {};
    if (e.code === 'card_declined') return ['bad', 'Card declined: ' + e.message];
    return ['bad', 'Refused: ' + (e.message || 'HTTP ' + status)];
  }
  const payment = String(body.id).startsWith('pi_');
  const error = payment ? body.last_payment_error : body.last_setup_error;
  switch (body.status) {
    case 'succeeded':
      if (payment) return ['ok', 'Payment authenticated: the amount is taken'];
      return ['ok', action === 'paypal' ? 'PayPal approved: payment method saved' : action === 'card' || action === 'authenticate' ? 'Card saved' : 'Set up: the payment method is saved'];
    case 'requires_capture': return ['ok', 'Payment authorised: the amount is held'];
    case 'requires_action': return ['wait', 'Authentication required: complete or fail the 3-D Secure challenge below'];
    case 'processing': return ['wait', 'Processing'];
    case 'canceled': return ['bad', 'Canceled' + (body.cancellation_reason ? ': ' + body.cancellation_reason : '')];
    case 'requires_payment_method':
      if (!error) return ['wait', 'Waiting for a payment method: confirm with a card or PayPal'];
      if (error.code === 'authentication_required') return ['wait', 'Authentication required: ' + error.message];
      if (/authentication_failure$/.test(error.code || '')) return ['bad', 'Authentication failed: ' + error.message];
      if (error.code === 'card_declined') return ['bad', 'Card declined: ' + error.message];
      return ['bad', 'Declined: ' + error.message];
    default: return ['wait', 'Status: ' + body.status];
  }
}
async function call(method, path, body, action) {
  const res = await fetch(path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const answer = await res.json();
  const [tone, words] = outcome(res.status, answer, action);
  $('outcome').className = tone;
  $('outcome').textContent = words;
  $('out').textContent = res.status + '\\n' + JSON.stringify(answer, null, 2);
}
const id = () => encodeURIComponent($('intent').value.trim());
const secret = () => $('secret').value.trim();
$('load').onclick = () => call('GET', '/sandbox/' + kind() + '/' + id() + '?client_secret=' + encodeURIComponent(secret()));
$('confirmCard').onclick = () => call('POST', '/sandbox/setup_intents/' + id() + '/confirm', { client_secret: secret(), card_number: $('card').value.trim() }, 'card');
$('paypalApprove').onclick = () => call('POST', '/sandbox/setup_intents/' + id() + '/confirm', { client_secret: secret(), paypal: 'approve' }, 'paypal');
$('paypalDecline').onclick = () => call('POST', '/sandbox/setup_intents/' + id() + '/confirm', { client_secret: secret(), paypal: 'decline' });
$('authApprove').onclick = () => call('POST', '/sandbox/' + kind() + '/' + id() + '/authenticate', { client_secret: secret(), outcome: 'approve' }, 'authenticate');
$('authFail').onclick = () => call('POST', '/sandbox/' + kind() + '/' + id() + '/authenticate', { client_secret: secret(), outcome: 'fail' });
if ($('intent').value && secret()) $('load').onclick();
</script>
</body>
</html>
`;
}
