// The composition root (src/modules.ts): which modules exist with which dependencies, and that the durable jobs
// the modules queue are the ones the process is given handlers for (a queue without its handler is work that
// never runs: a completed session never billed).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CHARGING_QUEUES } from '../src/modules/charging/service.ts';
import { INVOICING_QUEUES } from '../src/modules/invoicing/queues.ts';
import { OCPI_QUEUES } from '../src/modules/ocpi/first-pull.ts';
import { createOcpi } from '../src/modules/ocpi/service.ts';
import type { PaymentProcessor } from '../src/modules/payments/processor.ts';
import { createModules } from '../src/modules.ts';
import { setupTestApp, type TestContext } from './helpers.ts';

const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silent, level: 'silent', silent() {} } as never;

describe('the composition root', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await setupTestApp();
  });
  after(() => ctx?.close());

  it('with a processor and OCPI: a handler for every queue charging and invoicing fill, and the bill runs invoicing’s job', async () => {
    const handlers = ctx.modules.jobHandlers;
    assert.deepEqual(
      Object.keys(handlers).sort(),
      [CHARGING_QUEUES.releaseHold, CHARGING_QUEUES.startDeadline, CHARGING_QUEUES.stopAtCpo, INVOICING_QUEUES.bill, OCPI_QUEUES.firstPull].sort(),
    );
    // Charging queues a completed session's bill on invoicing's queue, by the one name.
    assert.equal(CHARGING_QUEUES.bill, INVOICING_QUEUES.bill);
    // An unknown session: the bill job returns without billing (it is invoicing's, not a stand-in).
    await handlers[INVOICING_QUEUES.bill]?.({ session_id: '00000000-0000-4000-8000-000000000000' } as never, {} as never);
    assert.ok(ctx.modules.charging && ctx.modules.invoicing && ctx.modules.payments && ctx.modules.ocpi);
  });

  it('without OCPI or without a processor: no charging, no invoicing, nothing to repair; only OCPI’s own job with OCPI', async () => {
    const base = { config: ctx.config, db: ctx.db, clock: ctx.clock, catalogue: ctx.catalogue, ingestion: ctx.ingestion, log: silent };
    const processor = { info: { account: 'acct_test' } } as unknown as PaymentProcessor;
    for (const modules of [createModules(base), createModules({ ...base, payments: { processor } }), createModules({ ...base, ocpi: {} })]) {
      assert.equal(modules.charging, undefined);
      assert.equal(modules.invoicing, undefined);
      assert.deepEqual(Object.keys(modules.jobHandlers), modules.ocpi ? [OCPI_QUEUES.firstPull] : []);
      assert.deepEqual(await modules.reconcile(), {});
    }
    assert.ok(createModules({ ...base, payments: { processor } }).payments);
    assert.ok(createModules({ ...base, ocpi: {} }).ocpi);
  });

  it('an OCPI module made by the caller is the one used; from settings, one is made here', async () => {
    const base = { config: ctx.config, db: ctx.db, clock: ctx.clock, catalogue: ctx.catalogue, ingestion: ctx.ingestion, log: silent };
    const given = createOcpi({ db: ctx.db, clock: ctx.clock, config: ctx.config.ocpi, baseUrl: `${ctx.config.publicBaseUrl}/ocpi`, ingestion: ctx.ingestion });
    assert.equal(createModules({ ...base, ocpi: given }).ocpi, given);
    const made = createModules({ ...base, ocpi: {} }).ocpi;
    assert.ok(made && made !== given);
    await given.stop();
    await made.stop();
  });
});
