// The credentials handshake the other way round: we issue a TOKEN_A (cpo
// invite) and the sandbox CPO network registers with us; then token renewal
// (PUT), unregistration (DELETE) and refusals of a peer we cannot speak to.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { firstPull } from '../src/modules/ocpi/first-pull.ts';
import { OcpiError } from '../src/ocpi-protocol/transport.ts';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, createCpoSandbox } from '../src/sandbox/cpo/index.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { eventually } from './payments-support.ts';

let ctx: TestContext;
let cpo: CpoSandbox;

const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');
const asPeer = (token: string, method: string, path: string, body?: unknown) =>
  ctx.call(method, `/ocpi${path}`, { headers: { authorization: `Token ${b64(token)}` }, ...(body === undefined ? {} : { body }) });

async function tokenTheNetworkUses(): Promise<string> {
  const peer = (await cpo.listPeers()).find((p) => p.status === 'REGISTERED');
  assert.ok(peer?.theirToken, 'the network is registered with a token for us');
  return peer.theirToken;
}

before(async () => {
  ctx = await setupTestApp({ listen: 0 });
  cpo = await createCpoSandbox({ db: ctx.db, clock: systemClock, locations: 20, seed: 3, statusChangesPerSecond: 0 });
  await cpo.listen({ port: 0 });
});
after(async () => {
  await cpo?.close();
  await ctx.close();
});

describe('a CPO registers with a TOKEN_A we issued', () => {
  it('registers, names the connection after its party and answers our credentials with a new token', async () => {
    const invite = await ctx.ocpi.connections.invite();
    assert.equal(invite.versions_url, `${ctx.config.publicBaseUrl}/ocpi/versions`);
    const registration = await cpo.registerWith({ versionsUrl: invite.versions_url, token: invite.token });
    assert.equal(registration.version, '2.2.1');
    assert.deepEqual(
      registration.roles.map((r) => r.role),
      ['EMSP'],
    );
    const [connection] = (await ctx.ocpi.connections.list()).filter((c) => c.status === 'connected');
    assert.ok(connection);
    assert.equal(connection.incoming_token_kind, 'C');
    const first = cpo.parties[0];
    assert.ok(first);
    assert.equal(connection.name, `${first.country_code}*${first.party_id}`);
    assert.equal(connection.roles.length, cpo.parties.length);
    // TOKEN_A is spent; the token the network now holds works.
    assert.equal((await asPeer(invite.token, 'GET', '/versions')).status, 401);
    const token = await tokenTheNetworkUses();
    const credentials = await asPeer(token, 'GET', '/2.2.1/credentials');
    assert.equal(credentials.status, 200);
    assert.equal(credentials.body.data.token, token);
    assert.equal(credentials.body.data.roles[0].party_id, 'CAX');
    // Registered already: POST is 405.
    const again = await asPeer(token, 'POST', '/2.2.1/credentials', credentials.body.data);
    assert.equal(again.status, 405);
  });

  it('stores the operator names of its parties for stations', async () => {
    const first = cpo.parties[0];
    assert.ok(first);
    const row = await ctx.db.query('SELECT name FROM cpo_parties WHERE country_code = $1 AND party_id = $2', [first.country_code, first.party_id]);
    assert.equal(row.rows[0]?.name, first.name);
  });

  it('renews both tokens with cpo rotate (PUT); the old one stops working', async () => {
    const [connection] = (await ctx.ocpi.connections.list()).filter((c) => c.status === 'connected');
    assert.ok(connection);
    const before = await tokenTheNetworkUses();
    await ctx.ocpi.connections.rotate(connection.name);
    const after = await tokenTheNetworkUses();
    assert.notEqual(after, before);
    assert.equal((await asPeer(before, 'GET', '/versions')).status, 401);
    assert.equal((await asPeer(after, 'GET', '/versions')).status, 200);
  });

  it('refuses an invalid credentials body with 2001 and an unusable peer with 3001 (HTTP 200: the requests reached the OCPI layer)', async () => {
    const invite = await ctx.ocpi.connections.invite({ name: 'broken-peer' });
    const bad = await asPeer(invite.token, 'POST', '/2.2.1/credentials', { token: 'x', url: 'not a url' });
    assert.equal(bad.status, 200);
    assert.equal(bad.body.status_code, 2001);
    const unreachable = await asPeer(invite.token, 'POST', '/2.2.1/credentials', {
      token: 'abcdef',
      url: 'http://127.0.0.1:9/ocpi/versions',
      roles: [{ role: 'CPO', country_code: 'DE', party_id: 'ZZZ', business_details: { name: 'Nobody' } }],
    });
    assert.equal(unreachable.status, 200);
    assert.equal(unreachable.body.status_code, 3001);
    const stillInvited = await ctx.ocpi.connections.findByName('broken-peer');
    assert.equal(stillInvited?.status, 'invited');
  });

  it('cpo disconnect unregisters at the CPO; its token is refused afterwards', async () => {
    const [connection] = (await ctx.ocpi.connections.list()).filter((c) => c.status === 'connected');
    assert.ok(connection);
    const token = await tokenTheNetworkUses();
    const result = await ctx.ocpi.connections.disconnect(connection.name);
    assert.deepEqual(result, { peerInformed: true });
    assert.equal((await asPeer(token, 'GET', '/versions')).status, 401);
    assert.equal((await cpo.listPeers()).filter((p) => p.status === 'REGISTERED').length, 0);
  });

  it('a CPO that unregisters (DELETE) is disconnected; DELETE again is 405', async () => {
    const invite = await ctx.ocpi.connections.invite({ name: 'leaving' });
    await cpo.registerWith({ versionsUrl: invite.versions_url, token: invite.token });
    const token = await tokenTheNetworkUses();
    assert.equal((await asPeer(token, 'DELETE', '/2.2.1/credentials')).status, 200);
    const connection = (await ctx.ocpi.connections.list()).find((c) => c.roles.length > 0 && c.status !== 'invited' && c.name !== 'broken-peer');
    assert.equal(connection?.status, 'disconnected');
    assert.equal((await asPeer(token, 'DELETE', '/2.2.1/credentials')).status, 401);
  });
});

describe('peers we cannot speak to', () => {
  it('refuses a CPO without a version we speak (2.2.1, 2.2, 2.1.1) with 3002, and an http URL off this machine', async () => {
    const peer = Fastify();
    peer.get('/versions', async () => ({
      data: [
        { version: '2.0', url: 'http://127.0.0.1/2.0' },
        { version: '2.1', url: 'http://127.0.0.1/2.1' },
      ],
      status_code: 1000,
      timestamp: new Date().toISOString(),
    }));
    const address = await peer.listen({ port: 0, host: '127.0.0.1' });
    try {
      await assert.rejects(
        ctx.ocpi.connections.connect({ versionsUrl: `${address}/versions`, token: 'token-a' }),
        (error: unknown) => error instanceof OcpiError && error.statusCode === 3002,
      );
    } finally {
      await peer.close();
    }
    await assert.rejects(ctx.ocpi.connections.connect({ versionsUrl: 'http://cpo.example.com/versions', token: 'token-a' }), /https/);
  });
});

describe('right after a CPO registers', () => {
  it('its catalogue is pulled in the background by a durable job, without any reconciliation run', async () => {
    const invite = await ctx.ocpi.connections.invite({ name: 'pulled-after-registration' });
    // No job runner yet: the pull waits in PostgreSQL, committed with the credentials (a restart meanwhile loses nothing).
    await cpo.registerWith({ versionsUrl: invite.versions_url, token: invite.token });
    const connection = (await ctx.ocpi.connections.list()).find((c) => c.status === 'connected');
    assert.ok(connection);
    const job = await ctx.db.query<{ state: string }>("SELECT state FROM jobs WHERE queue = 'ocpi.first-pull' AND key = $1", [connection.id]);
    assert.deepEqual(
      job.rows.map((r) => r.state),
      ['queued'],
    );
    const parties = cpo.parties.map((p) => `${p.country_code}*${p.party_id}`);
    const locations = async () =>
      (await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM ocpi_locations WHERE country_code || '*' || party_id = ANY($1)", [parties])).rows[0]
        ?.n ?? 0;
    assert.equal(await locations(), 0);
    ctx.jobs.start();
    try {
      await eventually(async () => ((await locations()) >= 20 ? true : undefined), 'the CPO’s locations in the catalogue', 10_000);
      const state = async () =>
        (await ctx.db.query<{ state: string }>("SELECT state FROM jobs WHERE queue = 'ocpi.first-pull' AND key = $1", [connection.id])).rows[0]?.state;
      await eventually(async () => ((await state()) === 'done' ? true : undefined), 'the first pull done', 10_000);
      const positions = await ctx.db.query<{ module: string }>('SELECT module FROM ocpi_sync_positions WHERE connection_id = $1 ORDER BY module', [
        connection.id,
      ]);
      assert.deepEqual(
        positions.rows.map((r) => r.module),
        ['cdrs', 'locations', 'sessions', 'tariffs'],
      );
      await ctx.catalogue.reload();
      assert.ok(ctx.catalogue.size >= 20, `catalogue of ${ctx.catalogue.size} stations`);
    } finally {
      await ctx.jobs.stop();
    }
  });

  it('a module the CPO does not deliver is tried again with the job’s backoff, incrementally; after the last attempt the reconciliation takes over', async () => {
    const invite = await ctx.ocpi.connections.invite({ name: 'first-pull-retries' });
    const connection = await ctx.ocpi.connections.findByName(invite.name);
    assert.ok(connection);
    await ctx.db.query("UPDATE ocpi_connections SET status = 'connected' WHERE id = $1", [connection.id]);
    const pulls: boolean[] = [];
    const warnings: string[] = [];
    const sync = {
      syncConnection: async (_c: unknown, options: { full?: boolean } = {}) => {
        pulls.push(options.full ?? false);
        return { tariffs: 0, locations: 0, sessions: 0, cdrs: 0, skipped: 0, failed: [{ module: 'cdrs' as const, reason: 'HTTP 500' }] };
      },
    };
    const pullCtx = { db: ctx.db, sync, log: (_level: string, message: string) => void warnings.push(message) };
    await assert.rejects(firstPull(pullCtx, { connection_id: connection.id }, { attempt: 1, maxAttempts: 3 }), /not pulled yet from .*cdrs: HTTP 500/);
    await assert.rejects(firstPull(pullCtx, { connection_id: connection.id }, { attempt: 2, maxAttempts: 3 }));
    await firstPull(pullCtx, { connection_id: connection.id }, { attempt: 3, maxAttempts: 3 });
    assert.deepEqual(pulls, [true, false, false]);
    assert.equal(warnings.length, 1);
    // Unregistered meanwhile: nothing is pulled.
    await ctx.db.query("UPDATE ocpi_connections SET status = 'disconnected' WHERE id = $1", [connection.id]);
    await firstPull(pullCtx, { connection_id: connection.id }, { attempt: 1, maxAttempts: 3 });
    assert.equal(pulls.length, 3);
  });
});
