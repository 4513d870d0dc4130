// The Stripe sandbox's background work when its passes fail: the timer and every kick that joins a pass share it,
// and its failure is reported once, not once per caller. The failure is PostgreSQL's own: a trigger that waits, then
// refuses every claim of a due webhook delivery, and counts the passes it refused on a sequence (not rolled back).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { STRIPE_API_VERSION } from '../src/modules/payments/stripe-processor.ts';
import { systemClock } from '../src/platform/clock.ts';
import type { Database } from '../src/platform/db.ts';
import { createStripeSandbox, type StripeSandbox } from '../src/sandbox/stripe/index.ts';
import { createTestDatabase } from './helpers.ts';

let db: Database;
let drop: () => Promise<void>;
let sandbox: StripeSandbox;
const logged: string[] = [];

before(async () => {
  ({ db, drop } = await createTestDatabase());
  sandbox = await createStripeSandbox({ db, clock: systemClock, apiVersion: STRIPE_API_VERSION, log: (_level, message) => logged.push(message) });
  await sandbox.listen({ host: '127.0.0.1', port: 0 });
  // Events go to this endpoint: each customer created leaves a delivery due (never sent: every claim is refused).
  await sandbox.addWebhookEndpoint({ url: 'http://127.0.0.1:9/webhooks/stripe' });
  await db.query('CREATE SEQUENCE refused_passes');
  await db.query(`CREATE FUNCTION refuse_claim() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_sleep(0.3); PERFORM nextval('refused_passes'); RAISE EXCEPTION 'claims refused by the test'; END $$`);
  await db.query('CREATE TRIGGER refuse_claim BEFORE UPDATE ON stripe_sandbox.webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_claim()');
});
after(async () => {
  await sandbox?.close();
  await drop?.();
});

test('a failing pass is reported once, whether the timer or the kicks of 20 requests started or joined it', async () => {
  sandbox.startBackgroundWork(50);
  const created = await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(`${sandbox.url}/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.keys.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'description=background',
      }).then((res) => res.status),
    ),
  );
  assert.deepEqual(new Set(created), new Set([200]));
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await sandbox.close();
  const { rows } = await db.query<{ refused: number }>('SELECT last_value::int AS refused FROM refused_passes');
  const reports = logged.filter((message) => message === 'sandbox background work failed').length;
  assert.ok((rows[0]?.refused ?? 0) >= 2, `passes refused: ${rows[0]?.refused}`);
  assert.equal(reports, rows[0]?.refused, 'one report per refused pass');
});
