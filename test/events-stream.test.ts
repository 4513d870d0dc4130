// The live session stream (GET /api/v1/users/<id>/charging-sessions/<id>/events) over real HTTP on PostgreSQL:
// replay in order with the bodies byte for byte as stored, Last-Event-ID resume, new events as they commit (and
// not before: a lower seq committing after a higher one is still streamed, and first), heartbeats, the session
// GET's 404s, the per-client bound, one LISTEN connection for every stream, and a revoked token ending a stream.
// Events are recorded here with recordEvent, as the modules record them; test/events-sessions.test.ts has the
// modules' own events.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type EventType, recordEvent } from '../src/modules/events/outbox.ts';
import { createDatabase, type Queryable } from '../src/platform/db.ts';
import { startDatabaseProxy } from './database-proxy-support.ts';
import { insertSessionFor, openSse, type SseClient } from './events-support.ts';
import { appOn, assertProblem, brokenApp, setupTestApp, type TestContext } from './helpers.ts';
import { newOwner, newUser, type Owner, USERS } from './payments-support.ts';

let ctx: TestContext;
const open: SseClient[] = [];

before(async () => {
  ctx = await setupTestApp({ listen: 0, authCacheTtlMs: 0, env: { SSE_HEARTBEAT_MS: '150', SSE_MAX_STREAMS_PER_CLIENT: '3' } });
});
after(async () => {
  for (const stream of open) stream.close();
  await ctx.close();
});

const path = (o: { userId: string }, sessionId: string) => `${USERS}/${o.userId}/charging-sessions/${sessionId}/events`;

async function stream(owner: Owner, sessionId: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await openSse(`${ctx.address}${path(owner, sessionId)}`, owner.token, headers);
  open.push(client);
  return client;
}

async function record(q: Queryable, owner: Owner, sessionId: string, type: EventType, object: unknown = { n: randomUUID() }) {
  return recordEvent(q, { clientId: owner.clientId, userId: owner.userId, type, object, sessionId }, ctx.clock.now());
}

/** The stored body of an event, as text: what the stream must carry byte for byte. */
async function storedBody(seq: number): Promise<string> {
  const { rows } = await ctx.db.query<{ body: string }>('SELECT body::text AS body FROM client_events WHERE seq = $1', [seq]);
  return rows[0]?.body ?? '';
}

async function ownerWithSession(): Promise<{ owner: Owner; sessionId: string }> {
  const owner = await newOwner(ctx);
  return { owner, sessionId: await insertSessionFor(ctx.db, owner.clientId, owner.userId) };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live session stream', () => {
  it('replays the session’s events in order, byte for byte, then streams new ones as they commit', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const otherSession = await insertSessionFor(ctx.db, owner.clientId, owner.userId);
    const first = await record(ctx.db, owner, sessionId, 'charging_session.pending');
    await record(ctx.db, owner, otherSession, 'charging_session.pending');
    const second = await ctx.db.transaction((tx) => record(tx, owner, sessionId, 'charging_session.active'));
    const sse = await stream(owner, sessionId);
    assert.equal(sse.status, 200);
    assert.match(String(sse.headers['content-type']), /^text\/event-stream/);
    assert.equal(sse.headers['cache-control'], 'no-cache, no-store');
    const replayed = await sse.waitForEvents(2);
    assert.deepEqual(
      replayed.map((e) => [e.id, e.event]),
      [
        [String(first.seq), 'charging_session.pending'],
        [String(second.seq), 'charging_session.active'],
      ],
    );
    assert.equal(replayed[0]?.data, await storedBody(first.seq));
    assert.deepEqual(JSON.parse(replayed[1]?.data ?? ''), JSON.parse(JSON.stringify(second.body)));

    const later = [];
    for (const type of ['charging_session.progress', 'charging_session.stopping', 'charging_session.completed'] as const) {
      later.push(await ctx.db.transaction((tx) => record(tx, owner, sessionId, type)));
    }
    await record(ctx.db, owner, otherSession, 'charging_session.active');
    const all = await sse.waitForEvents(5);
    assert.deepEqual(
      all.slice(2).map((e) => Number(e.id)),
      later.map((r) => r.seq),
    );
    for (const e of all) assert.equal(e.data, await storedBody(Number(e.id)));
    // One more of this session after the other session's: the stream is in order, so once it has that one, it has
    // shown whatever it would of the other's.
    const last = await record(ctx.db, owner, sessionId, 'charging_session.progress');
    assert.equal(Number((await sse.waitForEvents(6))[5]?.id), last.seq);
    assert.deepEqual(
      sse.events.map((e) => Number(e.id)),
      [first.seq, second.seq, ...later.map((r) => r.seq), last.seq],
      'the other session’s events are not on this stream',
    );
  });

  it('resumes after Last-Event-ID, and refuses a malformed one naming the header', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const seqs = [];
    for (const type of ['charging_session.pending', 'charging_session.active', 'charging_session.stopping'] as const) {
      seqs.push((await record(ctx.db, owner, sessionId, type)).seq);
    }
    const resumed = await stream(owner, sessionId, { 'Last-Event-ID': String(seqs[0]) });
    assert.deepEqual(
      (await resumed.waitForEvents(2)).map((e) => Number(e.id)),
      seqs.slice(1),
    );
    const atEnd = await stream(owner, sessionId, { 'Last-Event-ID': String(seqs[2]) });
    const next = await record(ctx.db, owner, sessionId, 'charging_session.completed');
    assert.deepEqual(
      (await atEnd.waitForEvents(1)).map((e) => Number(e.id)),
      [next.seq],
    );
    for (const bad of ['abc', '-1', '1.5', '12345678901234567890']) {
      const res = await ctx.call('GET', path(owner, sessionId), { token: owner.token, headers: { 'last-event-id': bad } });
      assertProblem(res, 400, 'validation_error');
      assert.deepEqual(
        res.body.errors.map((e: { field: string }) => e.field),
        ['Last-Event-ID'],
      );
    }
  });

  it('streams an event whose notification never came (a process stopped between its commit and its NOTIFY)', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const sse = await stream(owner, sessionId);
    const first = await record(ctx.db, owner, sessionId, 'charging_session.pending');
    await sse.waitForEvents(1);
    // Committed without any NOTIFY, as when the process that committed it stopped before sending its notification.
    const { rows } = await ctx.db.query<{ seq: string }>(
      `INSERT INTO client_events (id, client_id, user_id, type, session_id, body, created_at)
       VALUES ($1, $2, $3, 'charging_session.active', $4, $5, $6) RETURNING seq`,
      [randomUUID(), owner.clientId, owner.userId, sessionId, JSON.stringify({ unnotified: true }), ctx.clock.now()],
    );
    const events = await sse.waitForEvents(2, 5_000);
    assert.deepEqual(
      events.map((e) => [Number(e.id), e.event]),
      [
        [first.seq, 'charging_session.pending'],
        [Number(rows[0]?.seq), 'charging_session.active'],
      ],
    );
    assert.deepEqual(JSON.parse(events[1]?.data ?? ''), { unnotified: true });
  });

  it('sends a keep-alive comment every SSE_HEARTBEAT_MS', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const sse = await stream(owner, sessionId);
    const started = Date.now();
    await sse.waitForComments(4, 3_000);
    assert.deepEqual(sse.comments.slice(0, 4), ['connected', 'keep-alive', 'keep-alive', 'keep-alive']);
    assert.ok(Date.now() - started >= 3 * 150 - 50, 'not sooner than the interval');
  });

  it('answers 404 like the session GET: another client’s, an unknown or another user’s session, an unknown user; 401 without a token', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const other = await newOwner(ctx);
    assertProblem(await ctx.call('GET', path(owner, sessionId), { token: other.token }), 404, 'not_found');
    assertProblem(await ctx.call('GET', path(owner, randomUUID()), { token: owner.token }), 404, 'not_found');
    assertProblem(await ctx.call('GET', path(owner, 'not-a-uuid'), { token: owner.token }), 404, 'not_found');
    const secondUser = await newUser(ctx, owner);
    assertProblem(await ctx.call('GET', path({ userId: secondUser }, sessionId), { token: owner.token }), 404, 'not_found');
    assertProblem(await ctx.call('GET', path({ userId: randomUUID() }, sessionId), { token: owner.token }), 404, 'not_found');
    assertProblem(await ctx.call('GET', path(owner, sessionId), {}), 401, 'unauthorized');
    // The same answers as the session itself.
    assert.equal((await ctx.call('GET', `${USERS}/${owner.userId}/charging-sessions/${sessionId}/`, { token: other.token })).status, 404);
  });

  it('bounds the open streams of a client (429 with the rate-limit problem), not of other clients', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const streams = [await stream(owner, sessionId), await stream(owner, sessionId), await stream(owner, sessionId)];
    const refused = await ctx.call('GET', path(owner, sessionId), { token: owner.token });
    assertProblem(refused, 429, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '5');
    const other = await ownerWithSession();
    assert.equal((await stream(other.owner, other.sessionId)).status, 200);
    streams[0]?.close();
    let reopened: SseClient | undefined;
    for (let i = 0; i < 50 && reopened?.status !== 200; i++) {
      await pause(20);
      reopened = await stream(owner, sessionId);
    }
    assert.equal(reopened?.status, 200, 'a closed stream frees its place');
    for (const s of [...streams, reopened]) s?.close();
  });

  it('holds back an event while a lower sequence number is still uncommitted, then streams both in order', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const sse = await stream(owner, sessionId);
    await sse.waitForComments(1);
    // A: draws the lower seq and stays open; B: draws the next and commits (and notifies) first.
    const a = await ctx.db.checkOut();
    try {
      await a.client.query('BEGIN');
      const lower = await record(a.client, owner, sessionId, 'charging_session.active');
      const higher = await ctx.db.transaction((tx) => record(tx, owner, sessionId, 'charging_session.stopping'));
      assert.ok(lower.seq < higher.seq);
      await pause(400);
      assert.deepEqual(sse.events, [], 'nothing is streamed while a lower seq may still commit');
      await a.client.query('COMMIT');
      const got = await sse.waitForEvents(2);
      assert.deepEqual(
        got.map((e) => Number(e.id)),
        [lower.seq, higher.seq],
      );
      // The same when the lower one rolls back: the higher comes once it is gone (no NOTIFY from a rollback).
      await a.client.query('BEGIN');
      await record(a.client, owner, sessionId, 'charging_session.completed');
      const after = await ctx.db.transaction((tx) => record(tx, owner, sessionId, 'charging_session.progress'));
      await pause(300);
      assert.equal(sse.events.length, 2);
      await a.client.query('ROLLBACK');
      assert.deepEqual((await sse.waitForEvents(3)).map((e) => Number(e.id))[2], after.seq);
    } finally {
      a.release();
    }
    // A long transaction that does not write events holds nothing back.
    const idle = await ctx.db.checkOut();
    try {
      await idle.client.query('BEGIN');
      await idle.client.query('SELECT txid_current()');
      const event = await record(ctx.db, owner, sessionId, 'charging_session.progress');
      assert.equal(Number((await sse.waitForEvents(4, 2_000))[3]?.id), event.seq);
      await idle.client.query('ROLLBACK');
    } finally {
      idle.release();
    }
  });

  it('feeds every stream of the process from one LISTEN connection', async () => {
    const listeners = async () =>
      (
        await ctx.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN "client_events"'`,
        )
      ).rows[0]?.n;
    const { owner, sessionId } = await ownerWithSession();
    const one = await stream(owner, sessionId);
    await one.waitForComments(1);
    const before = await listeners();
    assert.ok((before ?? 0) >= 1);
    const more = [];
    for (let i = 0; i < 2; i++) {
      const o = await ownerWithSession();
      more.push(await stream(o.owner, o.sessionId));
    }
    assert.equal(await listeners(), before, 'no connection per stream');
    const event = await record(ctx.db, owner, sessionId, 'charging_session.active');
    assert.equal(Number((await one.waitForEvents(1))[0]?.id), event.seq);
    for (const s of [one, ...more]) s.close();
  });

  it('catches up on what committed while its LISTEN connection was lost', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const sse = await stream(owner, sessionId);
    await sse.waitForComments(1);
    const { rows } = await ctx.db.query<{ pid: number }>(
      `SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN "client_events"'`,
    );
    assert.equal(rows.length, 1);
    // Committed while nobody listens (the connection comes back a second later): no notification reaches the stream.
    const missed = await record(ctx.db, owner, sessionId, 'charging_session.active');
    assert.equal(Number((await sse.waitForEvents(1, 5_000))[0]?.id), missed.seq);
    const next = await record(ctx.db, owner, sessionId, 'charging_session.stopping');
    assert.equal(Number((await sse.waitForEvents(2))[1]?.id), next.seq);
  });

  it('answers 503 without internals when the database cannot be reached', async () => {
    const broken = await brokenApp(ctx);
    try {
      const { owner, sessionId } = await ownerWithSession();
      const res = await broken.app.inject({ method: 'GET', url: path(owner, sessionId), headers: { authorization: `Bearer ${owner.token}` } });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(JSON.parse(res.body).error.type, 'service_unavailable');
      assert.doesNotMatch(JSON.parse(res.body).detail, /ECONNREFUSED|postgres|127\.0\.0\.1|:1\b|SELECT/i);
    } finally {
      await broken.close();
    }
  });

  it('is in the OpenAPI document as text/event-stream, with Last-Event-ID; sessions document their version', async () => {
    const doc = (await ctx.call('GET', '/api/v1/openapi.json')).body;
    const operation = doc.paths['/api/v1/users/{user_id}/charging-sessions/{session_id}/events'].get;
    assert.ok(operation.responses['200'].content['text/event-stream']);
    for (const status of ['400', '404', '429', '503']) assert.ok(operation.responses[status], status);
    assert.ok(operation.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'last-event-id'));
    assert.deepEqual(operation.security, [{ bearerAuth: [] }]);
    const session = doc.paths['/api/v1/users/{user_id}/charging-sessions/{session_id}/'].get.responses['200'].content['application/json'].schema;
    assert.equal(session.properties.version.type, 'integer');
    assert.ok(session.required.includes('version'));
    assert.equal(doc.paths['/api/v1/users/{user_id}/charging-sessions/{session_id}/events/'], undefined, 'the trailing-slash alias is not documented twice');
  });

  it('ends a stream whose token was revoked, at the next heartbeat', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const issued = await ctx.clients.issueToken(owner.clientId);
    const sse = await stream({ ...owner, token: issued.token }, sessionId);
    await sse.waitForComments(2);
    await ctx.clients.revokeToken(issued.jti);
    const ended = await Promise.race([sse.ended, pause(3_000).then(() => 'still open')]);
    assert.equal(ended, 'end');
  });
});

describe('a client that does not keep up', () => {
  it('is cut off once more than 1 MiB has waited for it a whole heartbeat interval (a clean end), resumes with Last-Event-ID and misses nothing; a reader that keeps up is not', async () => {
    const { owner, sessionId } = await ownerWithSession();
    const slow = await openSse(`${ctx.address}${path(owner, sessionId)}`, owner.token, {}, { paused: true });
    open.push(slow);
    const reading = await stream(owner, sessionId);
    await reading.waitForComments(1);
    // 48 events of 256 KiB each (12 MiB) in one transaction: more than socket buffers and the 1 MiB hold.
    const recorded = await ctx.db.transaction(async (tx) => {
      const seqs: number[] = [];
      for (let i = 0; i < 48; i++) seqs.push((await record(tx, owner, sessionId, 'charging_session.progress', { i, pad: 'x'.repeat(256 * 1024) })).seq);
      return seqs;
    });
    const read = await reading.waitForEvents(recorded.length, 20_000);
    assert.deepEqual(
      read.map((e) => Number(e.id)),
      recorded,
      'the reader that keeps up gets every event (a burst larger than the hold waits for it, it is not cut off)',
    );
    // The slow one is full since the burst: the service's own heartbeats (every 150 ms here) pass for it too.
    await reading.waitForComments(reading.comments.length + 4);
    slow.resume();
    assert.equal(await slow.ended, 'end', 'the slow stream was ended cleanly');
    const got = slow.events.map((e) => Number(e.id));
    assert.ok(got.length > 0 && got.length < recorded.length, `cut off after ${got.length} of ${recorded.length} events`);
    assert.deepEqual(got, recorded.slice(0, got.length), 'in order, each once, up to the cut');
    const resumed = await stream(owner, sessionId, { 'Last-Event-ID': String(got.at(-1)) });
    assert.deepEqual(
      (await resumed.waitForEvents(recorded.length - got.length, 20_000)).map((e) => Number(e.id)),
      recorded.slice(got.length),
      'the rest, after the last event it had',
    );
    const next = await record(ctx.db, owner, sessionId, 'charging_session.stopping');
    assert.equal(Number((await reading.waitForEvents(recorded.length + 1))[recorded.length]?.id), next.seq, 'the reader that kept up is still open');
  });
});

/** The app again, on a pool of its own that reaches the test database through a proxy the test can cut. */
async function appBehindProxy() {
  const proxy = await startDatabaseProxy(ctx.databaseUrl);
  const db = createDatabase(proxy.url, { max: 4 });
  const app = await appOn(ctx, db);
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    proxy,
    address,
    async close() {
      proxy.restore();
      await app.close();
      await db.close();
      await proxy.close();
    },
  };
}

describe('the database failing under open streams', () => {
  it('reads again once the database answers after refusing the stream’s reads (its notifications still came): nothing missed, nothing twice', async () => {
    const behind = await appBehindProxy();
    try {
      const { owner, sessionId } = await ownerWithSession();
      const sse = await openSse(`${behind.address}${path(owner, sessionId)}`, owner.token);
      open.push(sse);
      const first = await record(ctx.db, owner, sessionId, 'charging_session.pending');
      assert.equal(Number((await sse.waitForEvents(1))[0]?.id), first.seq);
      // Every connection but the LISTEN one is cut, and new ones are refused: the NOTIFYs of these two arrive, the
      // rounds they start cannot read.
      behind.proxy.cut({ spareListeners: true });
      const during = [await record(ctx.db, owner, sessionId, 'charging_session.active'), await record(ctx.db, owner, sessionId, 'charging_session.stopping')];
      const deadline = Date.now() + 10_000;
      while (behind.proxy.refused < 2 && Date.now() < deadline) await pause(20);
      assert.ok(behind.proxy.refused >= 2, 'a round failed and was tried again');
      assert.equal(sse.events.length, 1, 'nothing streamed while the database refuses');
      behind.proxy.restore();
      // No new event, no new NOTIFY: the stream's own retry reads them.
      assert.deepEqual(
        (await sse.waitForEvents(3, 5_000)).map((e) => Number(e.id)),
        [first.seq, ...during.map((d) => d.seq)],
      );
      const later = await record(ctx.db, owner, sessionId, 'charging_session.completed');
      await sse.waitForEvents(4);
      const { rows } = await ctx.db.query<{ seq: number }>('SELECT seq FROM client_events WHERE session_id = $1 ORDER BY seq', [sessionId]);
      assert.deepEqual(
        sse.events.map((e) => Number(e.id)),
        rows.map((r) => r.seq),
      );
      assert.equal(rows.at(-1)?.seq, later.seq);
    } finally {
      await behind.close();
    }
  });

  it('answers its own 503 (Retry-After, no internals) when its LISTEN connection is not ready within 5 s, then opens once it is', async () => {
    const behind = await appBehindProxy();
    try {
      const { owner, sessionId } = await ownerWithSession();
      // The database answers every statement but the LISTEN (the session check passes; the stream cannot listen).
      behind.proxy.stallListens();
      const refused = await openSse(`${behind.address}${path(owner, sessionId)}`, owner.token);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers['retry-after'], '2');
      const problem = refused.body as { error: { type: string }; detail: string };
      assert.equal(problem.error.type, 'service_unavailable');
      assert.equal(problem.detail, 'Live streams cannot be opened right now; retry shortly.');
      behind.proxy.restore();
      const sse = await openSse(`${behind.address}${path(owner, sessionId)}`, owner.token);
      open.push(sse);
      assert.equal(sse.status, 200);
      const event = await record(ctx.db, owner, sessionId, 'charging_session.pending');
      assert.equal(Number((await sse.waitForEvents(1))[0]?.id), event.seq);
    } finally {
      await behind.close();
    }
  });
});
