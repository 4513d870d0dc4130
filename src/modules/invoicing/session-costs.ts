// The `session_cost` of completed sessions, from their bills: what the charging
// module shows in its session views (the cost per component, incl. VAT, and the
// link to the invoice once it is issued).
import Big from 'big.js';
import type { Queryable } from '../../platform/db.ts';
import { currencyExponent, fromMinorUnits } from '../../platform/money.ts';
import { type LinkContext, signedLink } from './documents.ts';
import * as repo from './repository.ts';
import type { SessionCostView } from './schemas.ts';

/** session_cost of the client's completed sessions among these ids (sessions without a bill are absent). */
export async function sessionCosts(ctx: LinkContext, q: Queryable, clientId: string, sessionIds: readonly string[]): Promise<Map<string, SessionCostView>> {
  // One after the other: `q` may be a transaction's client, which must not run two queries at once.
  const bills = await repo.billsOf(q, clientId, sessionIds);
  const invoices = await repo.invoicesOfSessions(q, clientId, sessionIds);
  const invoiceOf = new Map(invoices.map((i) => [i.session_id, i]));
  const costs = new Map<string, SessionCostView>();
  for (const bill of bills) {
    const invoice = invoiceOf.get(bill.session_id);
    costs.set(bill.session_id, { ...componentCosts(bill), invoice_download: invoice ? await signedLink(ctx, invoice.id) : null });
  }
  return costs;
}

/** A bill's cost per component, incl. VAT; null where the bill has no such line. */
export function componentCosts(bill: Pick<repo.BillRow, 'lines' | 'currency' | 'vat' | 'gross'>): Omit<SessionCostView, 'invoice_download'> {
  const places = currencyExponent(bill.currency);
  const sum = (component: repo.BillLine['component']) => {
    const matching = bill.lines.filter((l) => l.component === component);
    return matching.length === 0 ? null : matching.reduce((s, l) => s.plus(l.gross), new Big(0)).toFixed(places);
  };
  const adjustment = sum('adjustment');
  const flat = sum('flat');
  return {
    kwh_cost: sum('energy'),
    time_cost: sum('time'),
    // A tariff's minimum/maximum price adjustment is shown as part of the session fee: the API has no field of its own for it.
    session_fee_cost: flat === null && adjustment === null ? null : new Big(flat ?? 0).plus(adjustment ?? 0).toFixed(places),
    blocking_fee_cost: sum('parking'),
    starting_fee_cost: sum('starting_fee'),
    invoice_vat: fromMinorUnits(bill.vat, bill.currency),
    invoice_summary: fromMinorUnits(bill.gross, bill.currency),
    invoice_credits: fromMinorUnits(0, bill.currency),
    invoice_discount: fromMinorUnits(0, bill.currency),
    currency: bill.currency,
  };
}
