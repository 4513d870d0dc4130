// HTTP edge of webhook endpoints and their delivery log: parse, call the rules, shape the answer.
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { clientIdOf } from '../../platform/http/auth.ts';
import { type Idempotency, sendIdempotent } from '../../platform/http/idempotency.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { IdempotencyHeaders, NoBody, withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import { listDeliveries, retryDelivery } from './deliveries.ts';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, sendTestEvent, updateEndpoint } from './endpoints.ts';
import { Delivery, DeliveryParams, Endpoint, EndpointCreate, EndpointParams, EndpointPatch, EndpointWithSecret, TestEvent } from './schemas.ts';
import type { UrlPolicy } from './url-rules.ts';

interface WebhooksRoutesDeps {
  db: Database;
  clock: Clock;
  idempotency: Idempotency;
  publicBaseUrl: string;
  policy: UrlPolicy;
}

const ENDPOINTS = '/webhook-endpoints/';
const ONE = '/webhook-endpoints/:endpoint_id/';

const tags = ['Webhooks'];
const security = [{ bearerAuth: [] }];

export function webhooksRoutes(deps: WebhooksRoutesDeps) {
  return async function register(app: HttpApp) {
    endpointRoutes(app, deps);
    actionRoutes(app, deps);
  };
}

/** The endpoints themselves: create, list, read, update, delete. */
function endpointRoutes(app: HttpApp, deps: WebhooksRoutesDeps): void {
  const { db, clock, idempotency, publicBaseUrl, policy } = deps;
  app.post(
    ENDPOINTS,
    {
      schema: {
        summary: 'Create a webhook endpoint',
        description:
          'Events of the chosen types are POSTed to the URL, signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature) with the `secret` answered here, and only here: keep it. Failed deliveries are retried for 3 days (5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h); a 410 Gone answer, or 3 days of failures, disables the endpoint.',
        tags,
        security,
        headers: IdempotencyHeaders,
        body: EndpointCreate,
        response: withErrors({ 201: EndpointWithSecret }, [400, 409, 422]),
      },
    },
    (request, reply) =>
      sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
        status: 201,
        body: await createEndpoint({ db: tx, clock, policy }, clientIdOf(request), request.body),
      })),
  );

  app.get(
    ENDPOINTS,
    {
      schema: {
        summary: 'List webhook endpoints, oldest first',
        tags,
        security,
        querystring: Type.Object({ ...PageQuery }),
        response: withErrors({ 200: PageOf(Endpoint) }, [400, 404]),
      },
    },
    async (request) => {
      const page = pageRequest(request.query);
      const { count, results } = await listEndpoints({ db }, clientIdOf(request), page);
      return toPage(publicBaseUrl, request.url, page, count, results);
    },
  );

  app.get(
    ONE,
    { schema: { summary: 'Get a webhook endpoint', tags, security, params: EndpointParams, response: withErrors({ 200: Endpoint }, [404]) } },
    (request) => getEndpoint({ db }, clientIdOf(request), request.params.endpoint_id),
  );

  app.patch(
    ONE,
    {
      schema: {
        summary: 'Update a webhook endpoint',
        description:
          'Only the fields sent change. `enabled: false` pauses deliveries (they wait); `enabled: true` re-enables an endpoint (also one the service disabled) and clears its failure state.',
        tags,
        security,
        params: EndpointParams,
        headers: IdempotencyHeaders,
        body: EndpointPatch,
        response: withErrors({ 200: Endpoint }, [400, 404, 409, 422]),
      },
    },
    (request, reply) =>
      sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
        status: 200,
        body: await updateEndpoint({ db: tx, clock, policy }, clientIdOf(request), request.params.endpoint_id, request.body),
      })),
  );

  app.delete(
    ONE,
    {
      schema: {
        summary: 'Delete a webhook endpoint',
        description: 'Nothing more is delivered to it; its delivery log goes with it.',
        tags,
        security,
        params: EndpointParams,
        headers: IdempotencyHeaders,
        response: withErrors({ 204: Type.Null({ description: 'Deleted.' }) }, [400, 404, 409, 422]),
      },
    },
    (request, reply) =>
      sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => {
        await deleteEndpoint({ db: tx }, clientIdOf(request), request.params.endpoint_id);
        return { status: 204, body: undefined };
      }),
  );
}

/** What is done to an endpoint: its secret rotated, a test event, its deliveries read and retried. */
function actionRoutes(app: HttpApp, deps: WebhooksRoutesDeps): void {
  const { db, clock, idempotency, publicBaseUrl } = deps;
  app.post(
    `${ONE}rotate-secret/`,
    {
      schema: {
        summary: 'Rotate the signing secret',
        description:
          'Answers a new secret (shown only here). For 24 hours deliveries carry two signatures, with the new and the previous secret, so receivers can switch without losing a delivery.',
        tags,
        security,
        params: EndpointParams,
        headers: IdempotencyHeaders,
        body: NoBody,
        response: withErrors({ 200: EndpointWithSecret }, [400, 404, 409, 422]),
      },
    },
    (request, reply) =>
      sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
        status: 200,
        body: await rotateSecret({ db: tx, clock }, clientIdOf(request), request.params.endpoint_id),
      })),
  );

  app.post(
    `${ONE}test/`,
    {
      schema: {
        summary: 'Send a test event',
        description:
          'Records a `ping` event for this endpoint only and answers at once (202); it is delivered like any other event, and shows in the delivery log.',
        tags,
        security,
        params: EndpointParams,
        headers: IdempotencyHeaders,
        body: NoBody,
        response: withErrors({ 202: TestEvent }, [400, 404, 409, 422]),
      },
    },
    (request, reply) =>
      sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
        status: 202,
        body: await sendTestEvent({ db: tx, clock }, clientIdOf(request), request.params.endpoint_id),
      })),
  );

  app.get(
    `${ONE}deliveries/`,
    {
      schema: {
        summary: 'List the deliveries to an endpoint, newest first',
        description: 'Each event delivered (or to be delivered) to the endpoint, with every attempt: its status code or error, and when.',
        tags,
        security,
        params: EndpointParams,
        querystring: Type.Object({ ...PageQuery }),
        response: withErrors({ 200: PageOf(Delivery) }, [400, 404]),
      },
    },
    async (request) => {
      const page = pageRequest(request.query);
      const { count, results } = await listDeliveries({ db }, clientIdOf(request), request.params.endpoint_id, page);
      return toPage(publicBaseUrl, request.url, page, count, results);
    },
  );

  app.post(
    `${ONE}deliveries/:delivery_id/retry/`,
    {
      schema: {
        summary: 'Retry a delivery now',
        description:
          'Makes the delivery due at once, whether it is pending, delivered or given up; it is sent again with the same webhook-id. 409 while an attempt is in flight or the endpoint is disabled.',
        tags,
        security,
        params: DeliveryParams,
        headers: IdempotencyHeaders,
        body: NoBody,
        response: withErrors({ 202: Delivery }, [400, 404, 409, 422]),
      },
    },
    (request, reply) =>
      sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
        status: 202,
        body: await retryDelivery({ db: tx, clock }, clientIdOf(request), request.params.endpoint_id, request.params.delivery_id),
      })),
  );
}
