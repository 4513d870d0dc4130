// HTTP edge of users and billing details: parse, call the service, shape the answer.
import { Type } from 'typebox';
import type { Database } from '../../platform/db.ts';
import { clientIdOf } from '../../platform/http/auth.ts';
import { type Idempotency, sendGrouped, sendIdempotent } from '../../platform/http/idempotency.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { IdempotencyHeaders, withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { BillingDetails, BillingDetailsInput, type UserCreateBody, UserIdParams, userSchemas } from './schemas.ts';
import type { UsersService } from './service.ts';

export interface UsersRoutesDeps {
  db: Database;
  users: UsersService;
  idempotency: Idempotency;
  publicBaseUrl: string;
  locales: string[];
  metrics?: Metrics | undefined;
}

export function usersRoutes(deps: UsersRoutesDeps) {
  const { db, users, idempotency, publicBaseUrl } = deps;
  const { User, UserCreate, UserPatch } = userSchemas(deps.locales);
  // Sign-ups that arrive together commit together: one transaction, one WAL flush, one statement each for their
  // keys, users, token pushes and stored answers (src/platform/group-commit.ts).
  const signUps = idempotency.grouped({
    write: async (tx, items: readonly { clientId: string; body: UserCreateBody }[]) =>
      (await users.createMany(tx, items)).map((created) => (created.ok ? { ok: true, value: { status: 201, body: created.value } } : created)),
    committed: (size) => deps.metrics?.groupCommitted('sign_up', size),
  });
  const tags = ['Users'];
  const security = [{ bearerAuth: [] }];

  return async function register(app: HttpApp) {
    app.post(
      '/users/',
      {
        schema: {
          summary: 'Create a user',
          tags,
          security,
          headers: IdempotencyHeaders,
          body: UserCreate,
          response: withErrors({ 201: User }, [400, 409, 422]),
        },
      },
      (request, reply) => sendGrouped(signUps, request, reply, clientIdOf(request), { clientId: clientIdOf(request), body: request.body }),
    );

    app.get(
      '/users/',
      {
        schema: {
          summary: 'List users, newest first',
          tags,
          security,
          querystring: Type.Object({
            ...PageQuery,
            search: Type.Optional(Type.String({ maxLength: 250, description: 'Exact match on the user id or custom_properties.external_id.' })),
          }),
          response: withErrors({ 200: PageOf(User) }, [400, 404]),
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const { count, results } = await users.list(db, clientIdOf(request), request.query.search, page);
        return toPage(publicBaseUrl, request.url, page, count, results);
      },
    );

    app.get(
      '/users/:user_id/',
      { schema: { summary: 'Get a user', tags, security, params: UserIdParams, response: withErrors({ 200: User }, [404]) } },
      (request) => users.get(db, clientIdOf(request), request.params.user_id),
    );

    app.patch(
      '/users/:user_id/',
      {
        schema: {
          summary: 'Update a user',
          description: 'Only the fields sent change. `custom_properties: null` clears the external id.',
          tags,
          security,
          params: UserIdParams,
          headers: IdempotencyHeaders,
          body: UserPatch,
          response: withErrors({ 200: User }, [400, 404, 409, 422]),
        },
      },
      (request, reply) =>
        sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
          status: 200,
          body: await users.update(tx, clientIdOf(request), request.params.user_id, request.body),
        })),
    );

    app.delete(
      '/users/:user_id/',
      {
        schema: {
          summary: 'Delete a user (soft)',
          description: 'The user is marked deleted and answers 404 from then on; its data is retained for compliance.',
          tags,
          security,
          params: UserIdParams,
          headers: IdempotencyHeaders,
          response: withErrors({ 204: Type.Null({ description: 'Deleted.' }) }, [400, 402, 404, 409, 422]),
        },
      },
      (request, reply) =>
        sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => {
          await users.remove(tx, clientIdOf(request), request.params.user_id);
          return { status: 204, body: undefined };
        }),
    );

    const billingTags = ['Billing details'];
    app.get(
      '/users/:user_id/billing-details/',
      {
        schema: {
          summary: 'Get billing details',
          description: 'A user who never had billing details set answers the defaults (personal account, every field null).',
          tags: billingTags,
          security,
          params: UserIdParams,
          response: withErrors({ 200: BillingDetails }, [404]),
        },
      },
      (request) => users.getBillingDetails(db, clientIdOf(request), request.params.user_id),
    );

    app.put(
      '/users/:user_id/billing-details/',
      {
        schema: {
          summary: 'Replace billing details',
          description:
            'Replaces all billing details (fields not sent become null). Formats are checked here (VAT number by its country prefix, ISO country code); completeness is checked when charging starts: personal accounts need first_name, last_name and country, business accounts company_name, vat_number and country.',
          tags: billingTags,
          security,
          params: UserIdParams,
          headers: IdempotencyHeaders,
          body: BillingDetailsInput,
          response: withErrors({ 200: BillingDetails }, [400, 404, 409, 422]),
        },
      },
      (request, reply) =>
        sendIdempotent(idempotency, request, reply, clientIdOf(request), async (tx) => ({
          status: 200,
          body: await users.replaceBillingDetails(tx, clientIdOf(request), request.params.user_id, request.body),
        })),
    );
  };
}
