// Bills held for the operator: a CDR in another currency than the session's
// tariff and payment hold (bill.ts never converts or guesses). The operator
// lists them (`charging-access bills held`) and releases each one
// (`charging-access bills release SESSION_ID [--waive]`):
//   - billed at the session's own tariff (the default): the tariff the session
//     started under, in the hold's currency, prices the CDR's charging periods,
//     energy and times (its own currency and totals are set aside). The bill is
//     priced anew and the bill job settles (captures the hold) and invoices it
//     as any other; a session without energy or cost is not billed.
//   - waived: nothing is charged; the bill job releases the hold; no invoice.
// A release is one transaction: the bill moves out of `held` (once: a second
// release finds nothing held) and the bill job is queued with it, so whichever
// service process runs jobs finishes it (the CLI itself calls no processor).
// That job has a key of its own (RELEASED_KEY), not the session's: a bill job
// of the session may still be running, having read the bill `held` a moment
// before (it then does nothing), and under the session's key the release's
// job would be that one (jobs.ts: a key deduplicates against a running job),
// so a waived bill's hold would stay until it lapses and a priced one would
// wait for the reconciliation. The bill job is idempotent, so running beside
// another of its session is safe (holds are taken exclusively, every
// processor call has its key, each step is written once).
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { enqueue } from '../../platform/jobs.ts';
import { fromMinorUnits } from '../../platform/money.ts';
import { priceCdr } from '../../pricing/price-cdr.ts';
import type { SessionRow } from '../charging/repository.ts';
import { billAmounts } from './bill.ts';
import { INVOICING_QUEUES } from './queues.ts';
import * as repo from './repository.ts';

export interface HeldBillsContext {
  db: Database;
  clock: Clock;
  /** A session as charging stored it (any client), and its CDR as OCPI stored it. */
  session(id: string): Promise<SessionRow | undefined>;
  cdr(key: { country_code: string; party_id: string; id: string }): Promise<CDR | undefined>;
}

/** Why a release cannot be done; the CLI shows the message. */
export class ReleaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReleaseError';
  }
}

export type ReleaseAs = 'tariff' | 'waived';

/** The key of the bill job a release queues: one per session, whatever other bill job of the session runs. */
const RELEASED_KEY = (sessionId: string) => `${sessionId}:released`;

export interface Released {
  session_id: string;
  released_as: ReleaseAs;
  step: repo.BillStep;
  currency: string;
  /** What is billed, incl. VAT, as a decimal string (0 when waived or nothing to bill). */
  total: string;
}

export const listHeldBills = (ctx: Pick<HeldBillsContext, 'db'>) => repo.listHeldBills(ctx.db);

/** The CDR priced at the session's own tariff, in the hold's currency: its currency, tariffs and totals set aside. */
function priceAtSessionTariff(session: SessionRow, cdr: CDR) {
  const currency = session.currency.toUpperCase();
  if (session.tariff.currency.toUpperCase() !== currency) {
    throw new ReleaseError(`the session's tariff is in ${session.tariff.currency}, not in its hold's ${currency}: it can only be waived`);
  }
  const { tariffs: _tariffs, ...rest } = cdr;
  const priced = priceCdr(session, { ...rest, currency, total_cost: { excl_vat: 0 } } as CDR, 'engine');
  return { currency, ...billAmounts(priced.lines, currency, cdr.total_energy), engine_total: priced.engineTotal };
}

/** Releases the held bill of a session: billed at its own tariff, or waived; the bill job finishes it. */
export async function releaseHeldBill(ctx: HeldBillsContext, sessionId: string, as: ReleaseAs): Promise<Released> {
  const bill = await repo.findBill(ctx.db, sessionId);
  if (!bill) throw new ReleaseError(`no bill for session ${sessionId}`);
  if (bill.step !== 'held') throw new ReleaseError(`the bill of session ${sessionId} is not held (it is ${bill.step.replace('_', ' ')})`);
  const session = await ctx.session(sessionId);
  if (!session) throw new ReleaseError(`no session ${sessionId}`);
  let priced: ReturnType<typeof priceAtSessionTariff> | undefined;
  if (as === 'tariff') {
    if (!session.cdr_id || !session.cdr_country_code || !session.cdr_party_id) throw new ReleaseError(`session ${sessionId} has no CDR`);
    const cdr = await ctx.cdr({ country_code: session.cdr_country_code, party_id: session.cdr_party_id, id: session.cdr_id });
    if (!cdr) throw new ReleaseError(`the CDR of session ${sessionId} is missing`);
    priced = priceAtSessionTariff(session, cdr);
  }
  const now = ctx.clock.now();
  const released = await ctx.db.transaction(async (tx) => {
    const moved = priced
      ? await repo.releaseHeldBillPriced(tx, sessionId, priced, now)
      : await repo.releaseHeldBillWaived(tx, sessionId, session.currency.toUpperCase(), now);
    if (moved) await enqueue(tx, { queue: INVOICING_QUEUES.bill, payload: { session_id: sessionId }, key: RELEASED_KEY(sessionId), maxAttempts: 50 }, now);
    return moved;
  });
  if (!released) throw new ReleaseError(`the bill of session ${sessionId} was released meanwhile`);
  const step: repo.BillStep = priced?.step ?? 'waived';
  const currency = priced?.currency ?? session.currency.toUpperCase();
  return { session_id: sessionId, released_as: as, step, currency, total: fromMinorUnits(priced?.gross ?? 0, currency) };
}
