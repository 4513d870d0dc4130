// Invoicing: what a completed session costs, taking the money, and the invoice.
// This factory only assembles; the rules live in files named for what they do:
//   bill.ts           the bill job: a CDR -> priced -> settled -> invoiced
//   price-cdr.ts      a CDR priced as invoice lines (pure)
//   debts.ts          failed final charges the user owes, and what they block
//   documents.ts      invoice numbers, the invoice document, signed PDF links
//   session-costs.ts  the session_cost the charging views show
// SQL: repository.ts; answers' schemas: schemas.ts; routes: routes.ts.
import { noCrashPoints } from '../../platform/crash-points.ts';
import type { Queryable } from '../../platform/db.ts';
import { billSession, requeueUnfinishedBills } from './bill.ts';
import type { InvoicingContext, InvoicingDeps } from './context.ts';
import { authorizationCheck, listDebts, paymentIntentChanged, paymentMethodGuard, refreshDebt } from './debts.ts';
import { cachedLinkSecret, invoicePdf, listInvoices } from './documents.ts';
import * as repo from './repository.ts';
import { sessionCosts } from './session-costs.ts';

export { priceCdr } from '../../pricing/price-cdr.ts';
export type { InvoicingConfig, InvoicingDeps, InvoicingLog } from './context.ts';

export function createInvoicing(deps: InvoicingDeps) {
  const { crashPoint, ...rest } = deps;
  const ctx: InvoicingContext = { ...rest, crash: crashPoint ?? noCrashPoints, linkSecret: cachedLinkSecret(deps.db, () => deps.clock.now()) };

  return {
    /** The bill job: prices, settles and invoices a completed session, resuming at the step it reached. */
    bill: (sessionId: string) => billSession(ctx, sessionId),
    /** Queues the bill job again for completed sessions whose bill is not finished (a lost job, a crash); returns how many. */
    reconcile: (completedSessionIds: readonly string[]) => requeueUnfinishedBills(ctx, completedSessionIds),
    /** session_cost of completed sessions, for the session view. */
    sessionCosts: (q: Queryable, clientId: string, sessionIds: readonly string[]) => sessionCosts(ctx, q, clientId, sessionIds),
    /** The payments module's intent listener: a debt paid through the processor's SDK clears when its webhook arrives. */
    paymentIntentChanged: (tx: Queryable, paymentIntentId: string) => paymentIntentChanged(ctx, tx, paymentIntentId),
    hasUnpaidDebt: (q: Queryable, clientId: string, userId: string) => repo.hasUnpaidDebt(q, clientId, userId),
    authorizationCheck: (userId: string) => authorizationCheck(ctx, userId),
    paymentMethodGuard,
    listDebts: (clientId: string, userId: string, page: { limit: number; offset: number }) => listDebts(ctx, clientId, userId, page),
    refreshDebt: (paymentIntentId: string, tx?: Queryable) => refreshDebt(ctx, paymentIntentId, tx),
    listInvoices: (clientId: string, userId: string, page: { limit: number; offset: number }) => listInvoices(ctx, clientId, userId, page),
    /** The PDF behind a signed link; any bad, expired or forged link is "not found". */
    invoicePdf: (invoiceId: string, expires: string, signature: string) => invoicePdf(ctx, invoiceId, expires, signature),
  };
}

export type Invoicing = ReturnType<typeof createInvoicing>;
