// HTTP edge of the live session stream: the session GET's checks, Last-Event-ID, then the stream (streams.ts).
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { type Authenticate, clientIdOf } from '../../platform/http/auth.ts';
import { withErrors } from '../../platform/http/schema.ts';
import type { FastifyReply, FastifyRequest, HttpApp } from '../../platform/http/server.ts';
import type { SessionStreams } from './streams.ts';

interface EventsRoutesDeps {
  streams: SessionStreams;
  /** The session GET's checks (charging): the user's session of this client, else not_found. */
  requireSession(clientId: string, userId: string, sessionId: string): Promise<{ id: string }>;
  /** The bearer-token check, asked again at each heartbeat: a revoked token or disabled client ends the stream. */
  authenticate: Authenticate;
}

const SessionParams = Type.Object({ user_id: Type.String(), session_id: Type.String() });

const EventStream = Type.Unsafe({
  description:
    'Server-Sent Events. Each event: `id: <sequence number>`, `event: <type>` and `data: <the event body>` (JSON, the very bytes a webhook of it carries: `{id, type, created_at, data: {object}, user_id}`); comment lines (`: keep-alive`) at the heartbeat interval.',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
});

/** Last-Event-ID: the sequence number of the last event a client received (absent or empty: from the start). */
function lastEventId(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '').trim();
  if (value === '') return 0;
  if (!/^\d{1,15}$/.test(value)) {
    throw new AppError('validation_error', 'Last-Event-ID: must be the id (a sequence number) of an event of this stream', {
      errors: [{ field: 'Last-Event-ID', message: 'must be the id (a sequence number) of an event of this stream' }],
    });
  }
  return Number(value);
}

export function eventsRoutes(deps: EventsRoutesDeps) {
  const { streams } = deps;
  return async function register(app: HttpApp) {
    const handler = async (request: FastifyRequest<{ Params: { user_id: string; session_id: string } }>, reply: FastifyReply) => {
      const after = lastEventId(request.headers['last-event-id']);
      const clientId = clientIdOf(request);
      const session = await deps.requireSession(clientId, request.params.user_id, request.params.session_id);
      const authorization = request.headers.authorization;
      const stream = await streams.open({
        clientId,
        sessionId: session.id,
        after,
        // A token revoked (or a client disabled) since: the stream ends. The check failing otherwise (the database) keeps it.
        stillAllowed: () =>
          deps.authenticate(authorization).then(
            (principal) => principal.clientId === clientId,
            (error: unknown) => !(error instanceof AppError && error.code === 'unauthorized'),
          ),
      });
      // The client went away: the stream ends with it.
      reply.raw.once('close', () => stream.destroy());
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-store')
        .header('x-accel-buffering', 'no')
        .send(stream);
    };
    app.get(
      '/users/:user_id/charging-sessions/:session_id/events',
      {
        schema: {
          summary: 'Live events of a charging session (Server-Sent Events)',
          description:
            'The session’s client events as Server-Sent Events: on connect, every event of the session so far (or those after `Last-Event-ID` when the header is sent: a reconnecting EventSource sends it by itself), then each new one as it happens, in order: charging_session.pending, .active, .stopping, .completed or .failed (one per status change), charging_session.progress (at most one per EVENTS_PROGRESS_INTERVAL_MS while charging), invoice.created, debt.created and debt.paid. ' +
            'The session in an event carries its `version`. A comment line `: keep-alive` comes every SSE_HEARTBEAT_MS. The stream stays open until the client closes it (or the service stops; reconnect with Last-Event-ID). A client that reads nothing while more than 1 MiB waits for it for a whole heartbeat interval is cut off with a clean end: it reconnects with Last-Event-ID and misses nothing. ' +
            '400 for a malformed Last-Event-ID; 404 as for the session itself; 429 rate_limited beyond SSE_MAX_STREAMS_PER_CLIENT open streams of the client on one instance.',
          tags: ['Charging'],
          security: [{ bearerAuth: [] }],
          params: SessionParams,
          headers: Type.Object({
            'last-event-id': Type.Optional(Type.String({ description: 'Resume after this event id (the `id:` of the last event received).' })),
          }),
          response: withErrors({ 200: EventStream }, [400, 404, 429, 503]),
        },
      },
      handler,
    );
    // The same with the trailing slash every other route of the API has.
    app.get('/users/:user_id/charging-sessions/:session_id/events/', { schema: { hide: true, params: SessionParams } }, handler);
  };
}
