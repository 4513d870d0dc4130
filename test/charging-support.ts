// Steps the charging tests share: the sandbox CPO network connected over OCPI
// with its catalogue pulled (fast timings), and a driver (a user with complete
// billing details and a card).
import assert from 'node:assert/strict';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, type CpoSandboxOptions, createCpoSandbox, type Scenario, scenarioEvseId } from '../src/sandbox/cpo/index.ts';
import type { TestContext } from './helpers.ts';
import { CARDS, connectCard, newOwner, type Owner, USERS } from './payments-support.ts';

export type Driver = Owner & { pm: string };

/** Sandbox CPO timings for tests: no random status changes, short delays, energy 600 times faster than the power gives (time runs as the clock does). */
export const FAST_CPO_TIMINGS = {
  timeCompression: 600,
  statusChangesPerSecond: 0,
  tickMs: 50,
  commandDelayMs: 20,
  activationDelayMs: 100,
  sessionUpdateIntervalMs: 150,
  retryBaseMs: 100,
} satisfies Partial<CpoSandboxOptions>;

/**
 * A small sandbox network (40 locations) on the system clock with short delays, connected to the app, its
 * catalogue pulled and loaded, and its background work started. `options` override the timings.
 */
export async function startCpoNetwork(ctx: TestContext, options: Partial<CpoSandboxOptions> = {}): Promise<CpoSandbox> {
  const cpo = await createCpoSandbox({
    db: ctx.db,
    clock: systemClock,
    locations: 40,
    seed: 11,
    ...FAST_CPO_TIMINGS,
    ...options,
  });
  await cpo.listen({ port: 0 });
  const connection = await ctx.ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token: await cpo.issueTokenA(), name: 'network' });
  await ctx.ocpi.sync.syncConnection(connection, { full: true });
  await ctx.catalogue.reload();
  cpo.startBackgroundWork();
  return cpo;
}

/** The id of a scenario EVSE of the network's first scenario party. */
export function scenarioEvse(cpo: CpoSandbox, scenario: Scenario): string {
  const party = cpo.scenarioParties[0];
  assert.ok(party);
  return scenarioEvseId(party, scenario);
}

/** A user (new, or another user of `owner`'s client) with complete personal billing details and a card. */
export async function newDriver(ctx: TestContext, options: { card?: string; owner?: Owner; firstName?: string; lastName?: string } = {}): Promise<Driver> {
  const base = options.owner ?? (await newOwner(ctx));
  const userId = options.owner ? (await ctx.call('POST', `${USERS}/`, { token: options.owner.token, body: {} })).body.id : base.userId;
  const billing = await ctx.call('PUT', `${USERS}/${userId}/billing-details/`, {
    token: base.token,
    body: {
      account_type: 'personal',
      first_name: options.firstName ?? 'Jürgen',
      last_name: options.lastName ?? 'Müller',
      line1: 'Hauptstraße 5',
      postal_code: '10115',
      city: 'Berlin',
      country: 'DE',
    },
  });
  assert.equal(billing.status, 200, billing.text);
  const pm = await connectCard(ctx, { ...base, userId }, options.card ?? CARDS.visa, userId);
  return { ...base, userId, pm };
}
