// HTTP edge of charging sessions: parse, call the module, shape the answer (debts and invoices: invoicing/routes.ts).
import { Type } from 'typebox';
import { clientIdOf } from '../../platform/http/auth.ts';
import { type Idempotency, sendIdempotent } from '../../platform/http/idempotency.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { IdempotencyHeaders, Money, Nullable, NullableMoney, withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import { SessionCost } from '../invoicing/schemas.ts';
import { UserIdParams } from '../users/schemas.ts';
import type { Charging } from './service.ts';

const StationInfo = Type.Object({
  station_name: Nullable(Type.String()),
  station_address: Nullable(Type.String()),
  country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-3, as the operator sent it.' })),
  station_speed: Nullable(Type.String({ description: 'slow, fast or turbo' })),
  connector_standard: Nullable(Type.String()),
  connector_power: Nullable(Type.Number({ description: 'kW' })),
  support_phone: Nullable(Type.String()),
  latitude: Nullable(Type.String()),
  longitude: Nullable(Type.String()),
});

const UserFacingPrices = Type.Object({
  kwh_price: NullableMoney('Per kWh incl. VAT at the start.'),
  time_price: NullableMoney('Per minute of charging incl. VAT at the start.'),
  session_fee: NullableMoney('One-off fee of the operator incl. VAT.'),
  blocking_fee: NullableMoney('Per minute of parking (blocking) incl. VAT.'),
  starting_fee: NullableMoney('Our one-off fee incl. VAT.'),
  grace_period_minutes: Nullable(Type.Integer()),
  blocking_cap: NullableMoney('Most blocking fees per session.'),
  currency: Type.String(),
});

export const ChargingSession = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String({
    enum: ['pending', 'active', 'stopping', 'completed', 'failed'],
    description:
      'pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).',
  }),
  is_active: Type.Boolean({ description: 'True while pending, active or stopping.' }),
  start_time: Nullable(Type.String({ format: 'date-time' })),
  end_time: Nullable(Type.String({ format: 'date-time' })),
  duration: Nullable(Type.Integer({ description: 'Seconds since the start (to the end once ended).' })),
  consumed_energy: Type.String({ description: 'kWh, 3 decimals.' }),
  evse_id: Type.String(),
  station_id: Type.String(),
  station_info: StationInfo,
  is_partner: Type.Boolean(),
  logo_url: Nullable(Type.String()),
  user_facing_session_prices: UserFacingPrices,
  session_cost: SessionCost,
  estimated_cost: NullableMoney('What the session has cost so far incl. VAT, from the tariff and the charging periods reported.'),
  pre_authorization: Type.Object({
    amount: Money('Amount held on the payment method.'),
    currency: Type.String(),
    status: Type.String({ description: 'Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed.' }),
  }),
  payment_method_id: Type.String(),
  failure_reason: Nullable(Type.String()),
  rates: Nullable(Type.Integer({ minimum: 1, maximum: 5 })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

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
          response: withErrors({ 201: ChargingSession }, [400, 402, 404, 409, 422, 424, 503]),
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
          response: withErrors({ 204: Type.Null({ description: 'Stopping.' }) }, [400, 404, 409, 422, 424]),
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
