// The page's API calls through the SDK (@charging-access/client, packages/client): typed paths, problem errors,
// Idempotency-Keys on writes, retries on 503/429, and the session's live stream. The bearer token comes from
// GET /playground/token (minted by the service for this page, short-lived: src/playground/token.ts); the SDK asks
// for it before every request, and a new one is fetched before the current one expires.
import { createClient, isApiError } from '@charging-access/client';
import type { PlaygroundApi } from './api.ts';

/** A token is fetched again this long before it expires. */
const RENEW_BEFORE_MS = 2 * 60_000;

/** The problem's own words for a failed call (the SDK's ApiError carries the service's detail). */
export function problemWords(error: unknown): string {
  if (isApiError(error)) return error.errors.length ? error.errors.map((e) => `${e.field}: ${e.message}`).join('; ') : error.detail;
  return error instanceof Error ? error.message : String(error);
}

function playgroundTokens(report: (problem: string) => void) {
  let current: { token: string; renewAt: number } | undefined;
  let fetching: Promise<string> | undefined;
  async function fetchToken(): Promise<string> {
    const res = await fetch('token', { cache: 'no-store' });
    const body = (await res.json().catch(() => undefined)) as { token?: string; expires_at?: string; detail?: string } | undefined;
    if (!res.ok || !body?.token || !body.expires_at) {
      const problem = `The playground has no token: ${body?.detail ?? `HTTP ${res.status}`}`;
      report(problem);
      throw new Error(problem);
    }
    report('');
    current = { token: body.token, renewAt: Date.parse(body.expires_at) - RENEW_BEFORE_MS };
    return body.token;
  }
  return {
    token: async (): Promise<string> => {
      if (current && Date.now() < current.renewAt) return current.token;
      fetching ??= fetchToken().finally(() => {
        fetching = undefined;
      });
      return fetching;
    },
    /** The token was refused (revoked by the operator): the next call fetches another. */
    forget: () => {
      current = undefined;
    },
  };
}

export function connectApi(report: (problem: string) => void): PlaygroundApi {
  const tokens = playgroundTokens(report);
  const client = createClient({ baseUrl: location.origin, token: tokens.token });
  /** A call, made once more with a new token when its token was refused; every failure in the service's words. */
  async function call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!isApiError(error, 'unauthorized')) throw new Error(problemWords(error), { cause: error });
      tokens.forget();
      return work().catch((again: unknown) => {
        throw new Error(problemWords(again), { cause: again });
      });
    }
  }

  return {
    tile: (query, signal) => call(async () => (await client.get('/api/v1/stations/tile/', { query, ...(signal ? { signal } : {}) })).features),
    partners: () => call(() => client.get('/api/v1/stations/partners/')),
    station: (stationId) => call(() => client.get('/api/v1/stations/details/', { query: { id: stationId, type: 'station_id' } })),
    user: async (userId) => {
      try {
        return await call(() => client.get('/api/v1/users/{user_id}/', { path: { user_id: userId } }));
      } catch (error) {
        if (isApiError((error as Error).cause, 'not_found')) return undefined;
        throw error;
      }
    },
    createDemoUser: () =>
      call(async () => {
        const user = await client.post('/api/v1/users/', { body: { email: 'ada@example.com', locale: 'en' } });
        await client.put('/api/v1/users/{user_id}/billing-details/', {
          path: { user_id: user.id },
          body: {
            account_type: 'personal',
            first_name: 'Ada',
            last_name: 'Lovelace',
            line1: 'Unter den Linden 1',
            postal_code: '10117',
            city: 'Berlin',
            country: 'DE',
          },
        });
        return user;
      }),
    paymentMethods: (userId) =>
      call(async () => {
        const methods = [];
        for await (const method of client.paginate('/api/v1/users/{user_id}/payment-methods/', { path: { user_id: userId } })) methods.push(method);
        return methods;
      }),
    setupIntent: (userId) => call(() => client.get('/api/v1/users/{user_id}/setup-intents/', { path: { user_id: userId }, query: { pm_type: 'card' } })),
    sessions: (userId) => call(async () => (await client.get('/api/v1/users/{user_id}/charging-sessions/', { path: { user_id: userId } })).results),
    start: (userId, paymentMethodId, evseId) =>
      call(() =>
        client.post('/api/v1/users/{user_id}/charging/start/', { path: { user_id: userId }, body: { payment_method_id: paymentMethodId, evse_id: evseId } }),
      ),
    stop: (userId, sessionId) =>
      call(async () => void (await client.post('/api/v1/users/{user_id}/charging/stop/{session_id}/', { path: { user_id: userId, session_id: sessionId } }))),
    // The SDK reconnects with Last-Event-ID when the connection drops: each event comes once, in order.
    sessionEvents: async function* (userId, sessionId, signal) {
      for await (const { event } of client.sessionEvents(userId, sessionId, { signal })) yield event;
    },
  };
}
