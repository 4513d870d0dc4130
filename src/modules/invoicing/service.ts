// Invoicing: what a completed session costs, taking the money, and the invoice.
//
// A CDR queues one bill job per session (a durable job with the session id as
// its key). The job moves the session's bill forward one step at a time, each
// written before the next:
//   priced    our tariff engine priced the CDR's charging periods (and the CPO's
//             total was compared: a difference beyond one cent is logged and
//             flagged; CHARGING_PRICE_POLICY says which wins); the operator's
//             starting fee is added. Lines are rounded per component, and the
//             totals are the sums of the lines, so the invoice adds up.
//   settled   the hold was captured up to the total (the rest is released by
//             the capture) and any excess charged off-session; a failed final
//             charge became a debt the user pays with the processor's SDK.
//   invoiced  the invoice was issued with the issuer's next number, taken in
//             the transaction that inserts it: numbers have no gaps.
// Every processor call has a key derived from the session (capture:
// `<hold reference>:capture:<amount>`, charge: `session:<id>:charge:<amount>`),
// so a retried job, a duplicate CDR or a crash between two steps never
// charges twice. Sessions without energy are not billed: the hold is released.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import Big from 'big.js';
import type { CDR } from '../../ocpi/cdrs.ts';
import type { OcpiTariff } from '../../ocpi/locations-tariffs.ts';
import { priceSessionExact, priceSessionUnrounded } from '../../ocpi/pricing.ts';
import type { Clock } from '../../platform/clock.ts';
import { type CrashPoint, noCrashPoints } from '../../platform/crash-points.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { enqueue, RetryLater } from '../../platform/jobs.ts';
import { currencyExponent, fromMinorUnits, minimumCharge, toMinorUnits } from '../../platform/money.ts';
import type { SessionRow } from '../charging/repository.ts';
import type { PaymentsService } from '../payments/service.ts';
import type { BillingDetailsView } from '../users/schemas.ts';
import { type InvoiceDocument, renderInvoicePdf } from './pdf.ts';
import * as repo from './repository.ts';
import type { DebtView, InvoiceView, SessionCostView } from './schemas.ts';

export interface InvoicingConfig {
  pricePolicy: 'engine' | 'cdr';
  issuer: { name: string; addressLines: string[]; vatNumber: string | undefined; email: string | undefined };
  numberPrefix: string;
  linkTtlMs: number;
  publicBaseUrl: string;
}

export interface InvoicingLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface InvoicingDeps {
  db: Database;
  clock: Clock;
  config: InvoicingConfig;
  payments: Pick<PaymentsService, 'getHolds' | 'captureHold' | 'releaseHold' | 'chargeOffSession' | 'paymentIntent' | 'onPaymentIntentChanged'>;
  /** The charging module's session (any client), and the CDR the OCPI module stored. */
  session(id: string): Promise<SessionRow | undefined>;
  cdr(key: { country_code: string; party_id: string; id: string }): Promise<CDR | undefined>;
  users: {
    requireUser(db: Queryable, clientId: string, userId: string): Promise<unknown>;
    getBillingDetails(db: Queryable, clientId: string, userId: string): Promise<BillingDetailsView>;
  };
  log?: InvoicingLog;
  /** Crash tests only: kills the process at a named step (a no-op unless TEST_CRASH_POINTS names it). */
  crashPoint?: CrashPoint;
}

const LINK_SECRET = 'invoice_links';
const ONE_CENT = new Big('0.01');

/** Decimal helpers on exact strings. */
const dec = (value: string | number) => new Big(typeof value === 'number' ? String(value) : value);

interface Priced {
  lines: repo.BillLine[];
  currency: string;
  engineTotal: string;
  cdrTotal: string | null;
  mismatch: boolean;
}

/**
 * A line from an amount excl. and incl. VAT (both already rounded to the currency's minor unit: VAT is their
 * difference). `vatRate` is the tariff's rate for the component; without one (components of several rates) it
 * is derived from the amounts.
 */
function line(
  component: repo.BillLine['component'],
  description: string,
  quantity: string,
  unit: string,
  unitPrice: string | null,
  net: string,
  gross: string,
  currency: string,
  vatRate?: string,
): repo.BillLine {
  const netBig = dec(net);
  const vat = dec(gross).minus(netBig);
  const rate = vatRate ?? (netBig.eq(0) ? '0' : vat.div(netBig).times(100).round(1, Big.roundHalfUp).toString());
  return {
    component,
    description,
    quantity,
    unit,
    unit_price: unitPrice,
    net: dec(net).toFixed(decimals(currency)),
    vat_rate: rate,
    vat: vat.toFixed(decimals(currency)),
    gross: dec(gross).toFixed(decimals(currency)),
  };
}

const decimals = currencyExponent;

/** The unit price of a dimension in the tariff (the first component of that type; informative only). */
function unitPriceOf(tariff: OcpiTariff | undefined, type: string, perMinute: boolean): string | null {
  for (const element of tariff?.elements ?? []) {
    const component = element.price_components.find((c) => c.type === type);
    if (component) {
      const gross = dec(component.price).times(
        dec(component.vat ?? 0)
          .div(100)
          .plus(1),
      );
      return (perMinute ? gross.div(60) : gross).round(4, Big.roundHalfUp).toString();
    }
  }
  return null;
}

/** The VAT rate of a dimension's components when they all have the same one (absent VAT: 0). */
function vatRateOf(tariff: OcpiTariff | undefined, type: string): string | undefined {
  const rates = new Set<string>();
  for (const element of tariff?.elements ?? []) {
    for (const component of element.price_components) if (component.type === type) rates.add(dec(component.vat ?? 0).toString());
  }
  return rates.size === 1 ? [...rates][0] : undefined;
}

/**
 * Prices a CDR: the engine's breakdown (or the CDR's, by policy) as rounded lines, plus the starting fee.
 * Pure: exported for tests.
 */
export function priceCdr(session: Pick<SessionRow, 'tariff' | 'time_zone' | 'starting_fee'>, cdr: CDR, policy: 'engine' | 'cdr'): Priced {
  const currency = cdr.currency.toUpperCase();
  const tariffIds = new Set((cdr.charging_periods ?? []).map((p) => p.tariff_id).filter(Boolean));
  const tariff = cdr.tariffs?.find((t) => tariffIds.has(t.id)) ?? cdr.tariffs?.[0] ?? session.tariff;
  const input = {
    tariff,
    currency,
    timeZone: session.time_zone,
    start: new Date(cdr.start_date_time),
    end: new Date(cdr.end_date_time),
    periods: cdr.charging_periods ?? [],
  };
  const engine = priceSessionExact(input);
  const cdrTotal = cdr.total_cost ? dec(cdr.total_cost.incl_vat ?? cdr.total_cost.excl_vat).toFixed(decimals(currency)) : null;
  const mismatch = cdrTotal !== null && dec(cdrTotal).minus(engine.total_cost.incl_vat).abs().gt(ONE_CENT);
  const useCdr = policy === 'cdr' && cdr.total_cost !== undefined;
  const part = (exact: { excl_vat: string; incl_vat: string } | undefined, ocpi: { excl_vat: number; incl_vat?: number } | undefined) => {
    if (!useCdr) return exact;
    if (!ocpi) return undefined;
    return { excl_vat: dec(ocpi.excl_vat).toFixed(decimals(currency)), incl_vat: dec(ocpi.incl_vat ?? ocpi.excl_vat).toFixed(decimals(currency)) };
  };
  const lines: repo.BillLine[] = [];
  const energy = part(engine.total_energy_cost, cdr.total_energy_cost);
  const kwh = dec(cdr.total_energy).toFixed(3);
  if (energy)
    lines.push(
      line('energy', 'Energy', kwh, 'kWh', unitPriceOf(tariff, 'ENERGY', false), energy.excl_vat, energy.incl_vat, currency, vatRateOf(tariff, 'ENERGY')),
    );
  const time = part(engine.total_time_cost, cdr.total_time_cost);
  const chargingMinutes = dec(cdr.total_time)
    .minus(dec(cdr.total_parking_time ?? 0))
    .times(60)
    .round(1, Big.roundHalfUp)
    .toString();
  if (time)
    lines.push(
      line(
        'time',
        'Charging time',
        chargingMinutes,
        'min',
        unitPriceOf(tariff, 'TIME', true),
        time.excl_vat,
        time.incl_vat,
        currency,
        vatRateOf(tariff, 'TIME'),
      ),
    );
  const parking = part(engine.total_parking_cost, cdr.total_parking_cost);
  const parkingMinutes = dec(cdr.total_parking_time ?? 0)
    .times(60)
    .round(1, Big.roundHalfUp)
    .toString();
  if (parking) {
    lines.push(
      line(
        'parking',
        'Parking time (blocking fee)',
        parkingMinutes,
        'min',
        unitPriceOf(tariff, 'PARKING_TIME', true),
        parking.excl_vat,
        parking.incl_vat,
        currency,
        vatRateOf(tariff, 'PARKING_TIME'),
      ),
    );
  }
  const flat = part(engine.total_fixed_cost, cdr.total_fixed_cost);
  if (flat) lines.push(line('flat', 'Session fee', '1', 'session', null, flat.excl_vat, flat.incl_vat, currency, vatRateOf(tariff, 'FLAT')));
  const reservation = part(engine.total_reservation_cost, cdr.total_reservation_cost);
  if (reservation) {
    const rate = vatRateOf(tariff, 'RESERVATION') ?? vatRateOf(tariff, 'TIME');
    lines.push(line('reservation', 'Reservation', '1', 'reservation', null, reservation.excl_vat, reservation.incl_vat, currency, rate));
  }
  // A minimum or maximum price: the difference between the total and the parts, as a line of its own. Only when a
  // bound applied (the unrounded total differs from the unrounded parts, or the CDR's total from its parts by more
  // than their rounding): a rounding cent between separately rounded parts and total is not a line, the invoice's
  // total is the sum of its lines.
  const total = useCdr
    ? { excl_vat: dec((cdr.total_cost as { excl_vat: number }).excl_vat), incl_vat: dec(cdr.total_cost?.incl_vat ?? cdr.total_cost?.excl_vat ?? 0) }
    : { excl_vat: dec(engine.total_cost.excl_vat), incl_vat: dec(engine.total_cost.incl_vat) };
  const sumNet = lines.reduce((sum, l) => sum.plus(l.net), new Big(0));
  const sumGross = lines.reduce((sum, l) => sum.plus(l.gross), new Big(0));
  const raw = priceSessionUnrounded(input);
  const rawParts = [raw.total_fixed_cost, raw.total_energy_cost, raw.total_time_cost, raw.total_parking_cost, raw.total_reservation_cost].filter(
    (p) => p !== undefined,
  );
  const rawNet = rawParts.reduce((sum, p) => sum.plus(p.excl_vat), new Big(0));
  const boundApplied = useCdr ? total.excl_vat.minus(sumNet).abs().gt(ONE_CENT.times(lines.length)) : !raw.total_cost.excl_vat.eq(rawNet);
  if (!boundApplied && lines.length > 0 && (!total.excl_vat.eq(sumNet) || !total.incl_vat.eq(sumGross))) {
    // Rounding: the total (rounded once) and the separately rounded parts differ by a cent or so. The largest line
    // absorbs it, so the invoice's total is the engine's (or the CDR's) total.
    const largest = lines.reduce((a, b) => (dec(b.gross).gt(a.gross) ? b : a));
    const places = decimals(currency);
    const net = dec(largest.net).plus(total.excl_vat.minus(sumNet));
    const gross = dec(largest.gross).plus(total.incl_vat.minus(sumGross));
    largest.net = net.toFixed(places);
    largest.gross = gross.toFixed(places);
    largest.vat = gross.minus(net).toFixed(places);
  }
  if (boundApplied && (!total.excl_vat.eq(sumNet) || !total.incl_vat.eq(sumGross))) {
    const rates = new Set(lines.map((l) => l.vat_rate));
    const shared = rates.size === 1 ? [...rates][0] : undefined;
    lines.push(
      line(
        'adjustment',
        'Tariff minimum/maximum price adjustment',
        '1',
        'session',
        null,
        total.excl_vat.minus(sumNet).toString(),
        total.incl_vat.minus(sumGross).toString(),
        currency,
        shared ?? vatRateOf(tariff, 'ENERGY') ?? '0',
      ),
    );
  }
  if (session.starting_fee && lines.length > 0) {
    const net = dec(session.starting_fee.price).round(decimals(currency), Big.roundHalfUp);
    const gross = net.times(dec(session.starting_fee.vat).div(100).plus(1)).round(decimals(currency), Big.roundHalfUp);
    lines.push(
      line('starting_fee', 'Starting fee', '1', 'session', null, net.toString(), gross.toString(), currency, dec(session.starting_fee.vat).toString()),
    );
  }
  return { lines, currency, engineTotal: engine.total_cost.incl_vat, cdrTotal, mismatch };
}

const sumOf = (lines: repo.BillLine[], field: 'net' | 'vat' | 'gross', currency: string) =>
  toMinorUnits(lines.reduce((sum, l) => sum.plus(l[field]), new Big(0)).toString(), currency);

/** What the invoice says about payment: paid, due (a failed final charge: a debt), not collected (waived). */
function paymentNotes(bill: repo.BillRow): string[] {
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

export function createInvoicing(deps: InvoicingDeps) {
  const { db, clock, config } = deps;
  const log = deps.log;
  const crash = deps.crashPoint ?? noCrashPoints;
  let linkKey: Promise<Buffer> | undefined;
  const linkSecret = () => {
    linkKey ??= repo.serviceSecret(db, LINK_SECRET, clock.now()).catch((error: unknown) => {
      linkKey = undefined;
      throw error;
    });
    return linkKey;
  };

  async function signedLink(invoiceId: string): Promise<string> {
    const expires = Math.floor((clock.now().getTime() + config.linkTtlMs) / 1000);
    const signature = createHmac('sha256', await linkSecret())
      .update(`${invoiceId}.${expires}`)
      .digest('base64url');
    return `${config.publicBaseUrl}/invoices/${invoiceId}/pdf?expires=${expires}&signature=${signature}`;
  }

  async function invoiceView(row: repo.InvoiceRow): Promise<InvoiceView> {
    return {
      id: row.id,
      number: row.number_text,
      link: await signedLink(row.id),
      total: fromMinorUnits(row.gross, row.currency),
      net: fromMinorUnits(row.net, row.currency),
      vat: fromMinorUnits(row.vat, row.currency),
      date: row.issued_at.toISOString(),
      refund: row.refunded,
      charging_session_id: row.session_id,
      currency: row.currency,
    };
  }

  /** Step 1. */
  async function price(session: SessionRow): Promise<repo.BillRow> {
    const existing = await repo.findBill(db, session.id);
    if (existing) return existing;
    if (!session.cdr_id || !session.cdr_country_code || !session.cdr_party_id) throw new Error(`session ${session.id} has no CDR`);
    const cdr = await deps.cdr({ country_code: session.cdr_country_code, party_id: session.cdr_party_id, id: session.cdr_id });
    if (!cdr) throw new Error(`the CDR of session ${session.id} is missing`);
    const priced = priceCdr(session, cdr, config.pricePolicy);
    if (priced.mismatch) {
      log?.warn(
        { session_id: session.id, cdr_id: cdr.id, cdr_total: priced.cdrTotal, engine_total: priced.engineTotal, policy: config.pricePolicy },
        'the CPO’s CDR total differs from our tariff engine by more than one cent',
      );
    }
    const energy = dec(cdr.total_energy);
    const gross = sumOf(priced.lines, 'gross', priced.currency);
    const billed = energy.gt(0) && gross > 0;
    return repo.insertBill(db, {
      session_id: session.id,
      client_id: session.client_id,
      user_id: session.user_id,
      step: billed ? 'priced' : 'not_billed',
      currency: priced.currency,
      lines: billed ? priced.lines : [],
      net: billed ? sumOf(priced.lines, 'net', priced.currency) : 0,
      vat: billed ? sumOf(priced.lines, 'vat', priced.currency) : 0,
      gross: billed ? gross : 0,
      cdr_total: priced.cdrTotal,
      engine_total: priced.engineTotal,
      price_mismatch: priced.mismatch,
      price_source: config.pricePolicy === 'cdr' && cdr.total_cost ? 'cdr' : 'engine',
      created_at: clock.now(),
    });
  }

  /**
   * Whether to capture the hold. Yes when it covers the bill or the rest beyond it can be charged on its own (at
   * least the processor's minimum charge). When the rest is below that minimum but the whole amount is not, the
   * hold is released and the whole amount charged off-session instead. When even the whole amount is below the
   * minimum, the hold is captured (a capture has no minimum) and the rest is waived (see `settle`).
   * Decided from the bill and the hold alone, so a re-run after a crash takes the same path with the same keys.
   */
  const capturable = (gross: number, held: number, currency: string) =>
    gross <= held || gross - held >= minimumCharge(currency) || gross < minimumCharge(currency);

  /** Step 2: capture up to the hold, charge the rest off-session, a failed charge becomes a debt. */
  async function settle(session: SessionRow, bill: repo.BillRow): Promise<void> {
    const hold = (await deps.payments.getHolds(db, session.client_id, [session.hold_reference])).get(session.hold_reference);
    let captured = 0;
    const sameCurrency = hold?.currency.toUpperCase() === bill.currency;
    if (hold && sameCurrency && hold.status === 'captured') captured = hold.amountCaptured;
    else if (hold && sameCurrency && hold.status === 'authorized' && capturable(bill.gross, hold.amountCapturable, bill.currency)) {
      const amount = Math.min(bill.gross, hold.amountCapturable);
      try {
        captured = (await deps.payments.captureHold(session.client_id, session.hold_reference, amount)).amountCaptured;
        crash('bill:captured');
      } catch (error) {
        // Not capturable after all (lapsed meanwhile): the whole amount is charged below.
        if (!(error instanceof AppError && error.code === 'conflict')) throw error;
        log?.warn({ session_id: session.id }, 'the hold could not be captured; charging the whole amount');
      }
    }
    if (hold && captured === 0 && ['authorized', 'requires_action', 'pending', 'processing'].includes(hold.status)) {
      await deps.payments.releaseHold(session.client_id, session.hold_reference);
    }
    const excess = bill.gross - captured;
    let charged = 0;
    let intentId: string | null = null;
    let debt: { paymentIntentId: string; clientSecret: string } | undefined;
    // Below the processor's minimum charge nothing can take the rest: not a charge (refused on every retry) and
    // not a debt (its payment would be refused the same way). It is waived, and the invoice says so.
    const waived = excess > 0 && excess < minimumCharge(bill.currency) ? excess : 0;
    if (waived > 0) {
      log?.warn(
        { session_id: session.id, amount: waived, currency: bill.currency },
        'the rest of the bill is below the processor’s minimum charge and no hold covers it: waived',
      );
    } else if (excess > 0) {
      const outcome = await deps.payments.chargeOffSession({
        clientId: session.client_id,
        userId: session.user_id,
        paymentMethodId: session.payment_method_id,
        amount: excess,
        currency: bill.currency,
        reference: `session:${session.id}:charge`,
        idempotencyKey: `session:${session.id}:charge:${excess}`,
        description: `Charging session ${session.id}`,
      });
      if (outcome.status === 'processing') throw new RetryLater(30_000, 'the final charge is processing');
      if (outcome.status === 'succeeded') {
        crash('bill:charged');
        charged = outcome.amountReceived;
        intentId = outcome.paymentIntentId;
      } else {
        const id = outcome.paymentIntentId;
        const intent = id ? await deps.payments.paymentIntent(id) : undefined;
        if (!id || !intent) throw new Error(`the failed final charge of session ${session.id} left no payment intent to pay the debt with`);
        intentId = id;
        debt = { paymentIntentId: id, clientSecret: intent.clientSecret };
        log?.warn({ session_id: session.id, amount: excess, status: outcome.status }, 'the final charge failed: the user owes it (debt)');
      }
    }
    await db.transaction(async (tx) => {
      if (debt) {
        await repo.insertDebt(tx, {
          session_id: session.id,
          client_id: session.client_id,
          user_id: session.user_id,
          payment_method_id: session.payment_method_id,
          payment_intent_id: debt.paymentIntentId,
          client_secret: debt.clientSecret,
          amount: excess,
          currency: bill.currency,
          created_at: clock.now(),
        });
      }
      await repo.settleBill(tx, session.id, { captured, charged, waived, charge_payment_intent_id: intentId }, clock.now());
    });
  }

  /** Step 3: the invoice, with the issuer's next number in the same transaction. */
  async function issue(session: SessionRow, bill: repo.BillRow): Promise<void> {
    const billing = await deps.users.getBillingDetails(db, session.client_id, session.user_id);
    const now = clock.now();
    await db.transaction(async (tx) => {
      const locked = await repo.findBill(tx, session.id, { forUpdate: true });
      if (locked?.step !== 'settled') return;
      const number = await repo.nextInvoiceNumber(tx, config.numberPrefix);
      const numberText = `${config.numberPrefix}-${String(number).padStart(6, '0')}`;
      const address = [billing.line1, [billing.postal_code, billing.city].filter(Boolean).join(' '), billing.country].filter((x): x is string => Boolean(x));
      const document: InvoiceDocument = {
        number: numberText,
        issueDate: now,
        currency: bill.currency,
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
          energyKwh: dec(session.consumed_energy).toFixed(3),
          operatorName: session.operator_name
            ? `${session.operator_name} (${session.country_code}*${session.party_id})`
            : `${session.country_code}*${session.party_id}`,
        },
        lines: locked.lines.map((l) => ({
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
          net: fromMinorUnits(locked.net, bill.currency),
          vat: fromMinorUnits(locked.vat, bill.currency),
          gross: fromMinorUnits(locked.gross, bill.currency),
        },
        notes: paymentNotes(locked),
      };
      await repo.insertInvoice(tx, {
        id: randomUUID(),
        issuer: config.numberPrefix,
        number,
        number_text: numberText,
        client_id: session.client_id,
        user_id: session.user_id,
        session_id: session.id,
        currency: bill.currency,
        net: locked.net,
        vat: locked.vat,
        gross: locked.gross,
        refunded: false,
        document: { ...document, issueDate: now.toISOString() },
        issued_at: now,
      });
      await repo.markBillInvoiced(tx, session.id, now);
    });
  }

  function documentOf(row: repo.InvoiceRow): InvoiceDocument {
    const doc = row.document as InvoiceDocument & { issueDate: string; session: { startTime: string; endTime: string } };
    return {
      ...doc,
      issueDate: new Date(doc.issueDate),
      session: { ...doc.session, startTime: new Date(doc.session.startTime), endTime: new Date(doc.session.endTime) },
    };
  }

  const service = {
    /** The bill job: prices, settles and invoices a completed session, resuming at the step it reached. */
    async bill(sessionId: string): Promise<void> {
      const session = await deps.session(sessionId);
      if (session?.status !== 'completed') return;
      let bill = await price(session);
      if (bill.step === 'not_billed') {
        // Nothing to pay: the hold is released.
        const hold = (await deps.payments.getHolds(db, session.client_id, [session.hold_reference])).get(session.hold_reference);
        if (hold && ['authorized', 'requires_action', 'pending', 'processing'].includes(hold.status)) {
          await deps.payments.releaseHold(session.client_id, session.hold_reference);
        }
        return;
      }
      if (bill.step === 'priced') {
        crash('bill:priced');
        await settle(session, bill);
        bill = (await repo.findBill(db, session.id)) as repo.BillRow;
        crash('bill:settled');
      }
      if (bill.step === 'settled') await issue(session, bill);
    },

    /** Queues the bill job again for completed sessions whose bill is not finished (a lost job, a crash); returns how many. */
    async reconcile(completedSessionIds: readonly string[]): Promise<number> {
      if (completedSessionIds.length === 0) return 0;
      const finished = await repo.sessionsWithFinishedBill(db, completedSessionIds);
      let queued = 0;
      for (const id of completedSessionIds) {
        if (finished.has(id)) continue;
        const job = await enqueue(db, { queue: 'invoicing.bill', payload: { session_id: id }, key: id, maxAttempts: 50 }, clock.now());
        if (job.created) queued++;
      }
      return queued;
    },

    /** session_cost of completed sessions, for the session view. */
    async sessionCosts(q: Queryable, clientId: string, sessionIds: readonly string[]): Promise<Map<string, SessionCostView>> {
      const [bills, invoices] = await Promise.all([repo.billsOf(q, clientId, sessionIds), repo.invoicesOfSessions(q, clientId, sessionIds)]);
      const invoiceOf = new Map(invoices.map((i) => [i.session_id, i]));
      const costs = new Map<string, SessionCostView>();
      for (const bill of bills) {
        const sum = (component: repo.BillLine['component']) => {
          const matching = bill.lines.filter((l) => l.component === component);
          return matching.length === 0 ? null : matching.reduce((s, l) => s.plus(l.gross), new Big(0)).toFixed(decimals(bill.currency));
        };
        const invoice = invoiceOf.get(bill.session_id);
        const adjustment = sum('adjustment');
        const flat = sum('flat');
        costs.set(bill.session_id, {
          kwh_cost: sum('energy'),
          time_cost: sum('time'),
          session_fee_cost:
            flat === null && adjustment === null
              ? null
              : dec(flat ?? 0)
                  .plus(adjustment ?? 0)
                  .toFixed(decimals(bill.currency)),
          blocking_fee_cost: sum('parking'),
          starting_fee_cost: sum('starting_fee'),
          invoice_download: invoice ? await signedLink(invoice.id) : null,
          invoice_vat: fromMinorUnits(bill.vat, bill.currency),
          invoice_summary: fromMinorUnits(bill.gross, bill.currency),
          invoice_credits: fromMinorUnits(0, bill.currency),
          invoice_discount: fromMinorUnits(0, bill.currency),
          currency: bill.currency,
        });
      }
      return costs;
    },

    hasUnpaidDebt: (q: Queryable, clientId: string, userId: string) => repo.hasUnpaidDebt(q, clientId, userId),

    /** Real-time authorization of a user's token by a CPO: NO_CREDIT while a debt is unpaid, as a start is refused. */
    authorizationCheck: async (userId: string): Promise<'NO_CREDIT' | undefined> => ((await repo.userHasUnpaidDebt(db, userId)) ? 'NO_CREDIT' : undefined),

    /** Removal guard of payment methods: not while a debt is unpaid. */
    async paymentMethodGuard(tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }): Promise<void> {
      if (await repo.hasUnpaidDebt(tx, target.clientId, target.userId)) {
        throw new AppError('payment_error', 'The user has an unpaid charging debt; pay it before removing a payment method.');
      }
    },

    /** The user's unpaid debts; each is re-read from the processor first (a payment whose webhook is late clears it). */
    async listDebts(clientId: string, userId: string, page: { limit: number; offset: number }): Promise<{ count: number; results: DebtView[] }> {
      await deps.users.requireUser(db, clientId, userId);
      let listed = await repo.unpaidDebts(db, clientId, userId, page);
      let cleared = false;
      for (const debt of listed.rows) cleared = (await service.refreshDebt(debt.payment_intent_id)) || cleared;
      if (cleared) listed = await repo.unpaidDebts(db, clientId, userId, page);
      return {
        count: listed.count,
        results: listed.rows.map((d) => ({
          session_id: d.session_id,
          payment_intent_client_secret: d.client_secret,
          amount: fromMinorUnits(d.amount, d.currency),
          currency: d.currency,
        })),
      };
    },

    /** Marks a debt paid when its payment intent succeeded; true when it changed. */
    async refreshDebt(paymentIntentId: string, tx: Queryable = db): Promise<boolean> {
      const intent = await deps.payments.paymentIntent(paymentIntentId);
      if (intent?.outcome.status !== 'succeeded') return false;
      const debt = await repo.findDebtByIntent(tx, paymentIntentId);
      if (!debt) return false;
      const paid = await repo.markDebtPaid(tx, debt.session_id, clock.now());
      if (paid) log?.info({ session_id: debt.session_id }, 'a charging debt was paid');
      return paid;
    },

    async listInvoices(clientId: string, userId: string, page: { limit: number; offset: number }): Promise<{ count: number; results: InvoiceView[] }> {
      await deps.users.requireUser(db, clientId, userId);
      const { count, rows } = await repo.listInvoices(db, clientId, userId, page);
      return { count, results: await Promise.all(rows.map(invoiceView)) };
    },

    /** The PDF behind a signed link; any bad, expired or forged link is "not found". */
    async invoicePdf(invoiceId: string, expires: string, signature: string): Promise<{ pdf: Buffer; filename: string }> {
      const expiresAt = Number(expires);
      if (!/^[0-9a-f-]{36}$/.test(invoiceId) || !Number.isSafeInteger(expiresAt) || expiresAt * 1000 < clock.now().getTime()) throw notFound('Invoice');
      const expected = createHmac('sha256', await linkSecret())
        .update(`${invoiceId}.${expiresAt}`)
        .digest();
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw notFound('Invoice');
      const row = await repo.findInvoice(db, invoiceId);
      if (!row) throw notFound('Invoice');
      return { pdf: await renderInvoicePdf(documentOf(row)), filename: `${row.number_text}.pdf` };
    },
  };

  // A debt paid through the processor's SDK clears when its webhook arrives.
  deps.payments.onPaymentIntentChanged(async (tx, paymentIntentId) => {
    const debt = await repo.findDebtByIntent(tx, paymentIntentId, { forUpdate: true });
    if (debt?.status === 'unpaid') await service.refreshDebt(paymentIntentId, tx);
  });

  return service;
}

export type Invoicing = ReturnType<typeof createInvoicing>;
