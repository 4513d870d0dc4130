// The invoice as a document: its number, what it says, the signed links to its
// PDF and the invoices a user sees. A link is `expires` and an HMAC of the
// invoice id and that time under a secret every process shares, so any process
// can check a link another one handed out, and no bearer token is needed.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Big from 'big.js';
import { countryName } from '../../platform/countries.ts';
import type { Database } from '../../platform/db.ts';
import { notFound } from '../../platform/errors.ts';
import { fromMinorUnits, minimumCharge } from '../../platform/money.ts';
import type { SessionRow } from '../charging/repository.ts';
import type { BillingDetailsView } from '../users/schemas.ts';
import type { InvoicingConfig, InvoicingContext } from './context.ts';
import { currentPaymentNotes } from './payment-state.ts';
import { type InvoiceDocument, renderInvoicePdf } from './pdf.ts';
import * as repo from './repository.ts';
import type { InvoiceView } from './schemas.ts';

const LINK_SECRET = 'invoice_links';

/** The link signing key, read (or made) once; a failed read is retried on the next call rather than kept. */
export function cachedLinkSecret(db: Database, now: () => Date): () => Promise<Buffer> {
  let linkKey: Promise<Buffer> | undefined;
  return () => {
    linkKey ??= repo.serviceSecret(db, LINK_SECRET, now()).catch((error: unknown) => {
      linkKey = undefined;
      throw error;
    });
    return linkKey;
  };
}

const linkSignature = (secret: Buffer, invoiceId: string, expires: number) => createHmac('sha256', secret).update(`${invoiceId}.${expires}`).digest();

/** What signing a link needs: the clock, the link settings and the shared secret. */
export type LinkContext = Pick<InvoicingContext, 'clock' | 'linkSecret'> & { config: Pick<InvoicingConfig, 'linkTtlMs' | 'publicBaseUrl'> };

/** A link to the invoice's PDF that works without a bearer token until INVOICE_LINK_TTL_SECONDS from now. */
export async function signedLink(ctx: LinkContext, invoiceId: string): Promise<string> {
  const expires = Math.floor((ctx.clock.now().getTime() + ctx.config.linkTtlMs) / 1000);
  const signature = linkSignature(await ctx.linkSecret(), invoiceId, expires).toString('base64url');
  return `${ctx.config.publicBaseUrl}/invoices/${invoiceId}/pdf?expires=${expires}&signature=${signature}`;
}

/** Whether a link's parts are one `signedLink` made and it has not expired. */
export async function isValidLink(
  ctx: Pick<InvoicingContext, 'clock' | 'linkSecret'>,
  invoiceId: string,
  expires: string,
  signature: string,
): Promise<boolean> {
  const expiresAt = Number(expires);
  if (!/^[0-9a-f-]{36}$/.test(invoiceId) || !Number.isSafeInteger(expiresAt) || expiresAt * 1000 < ctx.clock.now().getTime()) return false;
  const expected = linkSignature(await ctx.linkSecret(), invoiceId, expiresAt);
  const given = Buffer.from(signature, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The PDF behind a signed link; any bad, expired or forged link is "not found". */
export async function invoicePdf(ctx: InvoicingContext, invoiceId: string, expires: string, signature: string): Promise<{ pdf: Buffer; filename: string }> {
  if (!(await isValidLink(ctx, invoiceId, expires, signature))) throw notFound('Invoice');
  const row = await repo.findInvoice(ctx.db, invoiceId);
  if (!row) throw notFound('Invoice');
  const document = documentOf(row);
  // As the payment stands now: an amount due that was paid since reads as paid (when and how), never as due.
  const notes = await currentPaymentNotes(ctx, row, document.notes ?? []);
  return { pdf: await renderInvoicePdf({ ...document, notes }), filename: `${row.number_text}.pdf` };
}

export async function listInvoices(
  ctx: InvoicingContext,
  clientId: string,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ count: number; results: InvoiceView[] }> {
  await ctx.users.requireUser(ctx.db, clientId, userId);
  const { count, rows } = await repo.listInvoices(ctx.db, clientId, userId, page);
  return { count, results: await Promise.all(rows.map((row) => invoiceView(ctx, row))) };
}

/** An invoice as clients read it (GET .../invoices/, and the invoice.created event). */
export async function invoiceView(ctx: LinkContext, row: repo.InvoiceRow): Promise<InvoiceView> {
  return {
    id: row.id,
    number: row.number_text,
    link: await signedLink(ctx, row.id),
    total: fromMinorUnits(row.gross, row.currency),
    net: fromMinorUnits(row.net, row.currency),
    vat: fromMinorUnits(row.vat, row.currency),
    date: row.issued_at.toISOString(),
    refund: row.refunded,
    charging_session_id: row.session_id,
    currency: row.currency,
  };
}

/** The printed invoice number: the issuer's prefix and the number, six digits ("CA-000042"). */
export const invoiceNumberText = (prefix: string, number: number) => `${prefix}-${String(number).padStart(6, '0')}`;

/** What the invoice of a settled bill says, issued now with the given number. */
export function invoiceDocument(
  config: Pick<InvoicingConfig, 'issuer'>,
  session: SessionRow,
  billing: BillingDetailsView,
  bill: repo.BillRow,
  numberText: string,
  now: Date,
  paymentMethod?: string,
): InvoiceDocument {
  // The country as a name, like the issuer's address ("Austria", not "AT").
  const country = billing.country ? countryName(billing.country) : undefined;
  const address = [billing.line1, [billing.postal_code, billing.city].filter(Boolean).join(' '), country].filter((x): x is string => Boolean(x));
  return {
    number: numberText,
    issueDate: now,
    currency: bill.currency,
    ...(paymentMethod ? { paymentMethod } : {}),
    issuer: {
      name: config.issuer.name,
      addressLines: config.issuer.addressLines,
      ...(config.issuer.vatNumber ? { vatNumber: config.issuer.vatNumber } : {}),
      ...(config.issuer.email ? { email: config.issuer.email } : {}),
    },
    customer:
      billing.account_type === 'business'
        ? {
            kind: 'business',
            companyName: billing.company_name ?? '',
            ...(billing.vat_number ? { vatNumber: billing.vat_number } : {}),
            addressLines: address,
          }
        : { kind: 'personal', firstName: billing.first_name ?? '', lastName: billing.last_name ?? '', addressLines: address },
    session: {
      id: session.id,
      evseId: session.evse_id,
      stationName: session.station_info.station_name ?? '',
      stationAddress: session.station_info.station_address ?? '',
      startTime: session.start_time ?? session.created_at,
      endTime: session.end_time ?? now,
      energyKwh: new Big(session.consumed_energy).toFixed(3),
      operatorName: session.operator_name
        ? `${session.operator_name} (${session.country_code}*${session.party_id})`
        : `${session.country_code}*${session.party_id}`,
    },
    lines: bill.lines.map((l) => ({
      description: l.description,
      quantity: l.quantity,
      unit: l.unit,
      ...(l.unit_price ? { unitPrice: l.unit_price } : {}),
      net: l.net,
      vatRate: l.vat_rate,
      vat: l.vat,
      gross: l.gross,
    })),
    totals: {
      net: fromMinorUnits(bill.net, bill.currency),
      vat: fromMinorUnits(bill.vat, bill.currency),
      gross: fromMinorUnits(bill.gross, bill.currency),
    },
    notes: paymentNotes(bill),
  };
}

/** What the invoice says about payment: paid, due (a failed final charge: a debt), not collected (waived). */
export function paymentNotes(bill: Pick<repo.BillRow, 'currency' | 'captured' | 'charged' | 'gross' | 'waived'>): string[] {
  const money = (units: number) => `${fromMinorUnits(units, bill.currency)} ${bill.currency}`;
  const paid = bill.captured + bill.charged;
  const due = bill.gross - paid - bill.waived;
  const notes: string[] = [];
  if (paid > 0 || due === 0) notes.push(`Paid: ${money(paid)}.`);
  if (due > 0) notes.push(`Amount due: ${money(due)} (the final charge failed).`);
  if (bill.waived > 0) {
    notes.push(`Not collected: ${money(bill.waived)} (below the card processor’s minimum charge of ${money(minimumCharge(bill.currency))}).`);
  }
  return notes;
}

/** The stored document as the renderer takes it: its dates were stored as ISO strings. */
function documentOf(row: repo.InvoiceRow): InvoiceDocument {
  const doc = row.document as InvoiceDocument & { issueDate: string; session: { startTime: string; endTime: string } };
  return {
    ...doc,
    issueDate: new Date(doc.issueDate),
    session: { ...doc.session, startTime: new Date(doc.session.startTime), endTime: new Date(doc.session.endTime) },
  };
}
