// HTTP edge of charging sessions: parse, call the module, shape the answer (debts and invoices: invoicing/routes.ts).
import { Type } from 'typebox';
import { clientIdOf } from '../../platform/http/auth.ts';
import { type Idempotency, sendIdempotent } from '../../platform/http/idempotency.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { IdempotencyHeaders, Nullable, withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import { UserIdParams } from '../users/schemas.ts';
import { ChargingSession, StartedChargingSession } from './schemas.ts';
import type { Charging } from './service.ts';

const SessionParams = Type.Object({ user_id: Type.String(), session_id: Type.String() });

export interface ChargingRoutesDeps {
  charging: Charging;
  idempotency: Idempotency;
  publicBaseUrl: string;
}

export function chargingRoutes(deps: ChargingRoutesDeps) {
  const { charging, idempotency, publicBaseUrl } = deps;
  const tags = ['Charging'];
  const security = [{ bearerAuth: [] }];

  return async function register(app: HttpApp) {
    app.post(
      '/users/:user_id/charging/start/',
      {
        schema: {
          summary: 'Start charging',
          description:
            'Checks the user (billing details, no unpaid debt), the payment method and the EVSE (AVAILABLE), holds the price group’s pre_authorization_amount on the payment method, and asks the operator to start. Answers 201 with the session (status pending) once the operator accepted; the session becomes active when charging begins. 402 pre_authorization_failed with payment_intent_client_secret when the bank wants the customer to authenticate: confirm it with the processor’s SDK, then start again (the authenticated hold is used). 424 charging_provider_error when the operator refused or could not be reached (the hold is released). With an Idempotency-Key, the request holds a database connection until the operator answered.',
          tags,
          security,
          params: UserIdParams,
          headers: IdempotencyHeaders,
          body: Type.Object(
            { payment_method_id: Type.String({ minLength: 1, maxLength: 255 }), evse_id: Type.String({ minLength: 1, maxLength: 255 }) },
            { additionalProperties: false },
          ),
          response: withErrors({ 201: StartedChargingSession }, [400, 402, 404, 409, 422, 424, 503], {
            400: ['validation_error', 'payment_method_error'],
            402: ['payment_error', 'pre_authorization_failed'],
            409: ['billing_data_required', 'already_charging', 'station_availability_issue', 'conflict'],
            424: ['charging_provider_error', 'station_availability_issue'],
          }),
        },
      },
      async (request, reply) => {
        const start = () => charging.start(clientIdOf(request), request.params.user_id, request.body);
        if (request.headers['idempotency-key'] === undefined) return reply.code(201).send(await start());
        return sendIdempotent(idempotency, request, reply, clientIdOf(request), async () => ({ status: 201, body: await start() }));
      },
    );

    app.post(
      '/users/:user_id/charging/stop/:session_id/',
      {
        schema: {
          summary: 'Stop charging',
          description:
            'Asks the operator to stop; 204 once it accepted (the session is then stopping until the CDR arrives). A second stop of a stopping session is 204; a completed or failed one is 409 already_stopped. 409 conflict (Retry-After) while the operator has not reported the session yet.',
          tags,
          security,
          params: SessionParams,
          headers: IdempotencyHeaders,
          response: withErrors({ 204: Type.Null({ description: 'Stopping.' }) }, [400, 404, 409, 422, 424], { 409: ['already_stopped', 'conflict'] }),
        },
      },
      async (request, reply) => {
        const stop = () => charging.stop(clientIdOf(request), request.params.user_id, request.params.session_id);
        if (request.headers['idempotency-key'] === undefined) {
          await stop();
          return reply.code(204).send(null);
        }
        return sendIdempotent(idempotency, request, reply, clientIdOf(request), async () => {
          await stop();
          return { status: 204, body: undefined };
        });
      },
    );

    app.get(
      '/users/:user_id/charging-sessions/',
      {
        schema: {
          summary: 'List charging sessions, newest first',
          tags,
          security,
          params: UserIdParams,
          querystring: Type.Object({ ...PageQuery, status: Type.Optional(Type.String({ enum: ['pending', 'active', 'stopping', 'completed', 'failed'] })) }),
          response: withErrors({ 200: PageOf(ChargingSession) }, [400, 404]),
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const status = request.query.status as 'pending' | 'active' | 'stopping' | 'completed' | 'failed' | undefined;
        const { count, results } = await charging.list(clientIdOf(request), request.params.user_id, status, page);
        return toPage(publicBaseUrl, request.url, page, count, results);
      },
    );

    app.get(
      '/users/:user_id/charging-sessions/:session_id/',
      { schema: { summary: 'A charging session', tags, security, params: SessionParams, response: withErrors({ 200: ChargingSession }, [400, 404]) } },
      (request) => charging.get(clientIdOf(request), request.params.user_id, request.params.session_id),
    );

    app.patch(
      '/users/:user_id/charging-sessions/:session_id/',
      {
        schema: {
          summary: 'Rate a charging session',
          tags,
          security,
          params: SessionParams,
          headers: IdempotencyHeaders,
          body: Type.Object({ rates: Nullable(Type.Integer({ minimum: 1, maximum: 5 })) }, { additionalProperties: false }),
          response: withErrors({ 200: ChargingSession }, [400, 404, 409, 422]),
        },
      },
      (request, reply) =>
        sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
          status: 200,
          body: await charging.rate(tx, clientIdOf(request), request.params.user_id, request.params.session_id, request.body.rates),
        })),
    );
  };
}
