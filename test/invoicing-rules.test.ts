// Invoicing's rules in their own files, tested on their own (pure, no database):
// the signed PDF links (documents.ts), what an invoice says about payment
// (documents.ts), whether the bill job captures a hold (bill.ts) and the
// session_cost a bill shows (session-costs.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { capturable } from '../src/modules/invoicing/bill.ts';
import { invoiceNumberText, isValidLink, paymentNotes, signedLink } from '../src/modules/invoicing/documents.ts';
import type { BillLine } from '../src/modules/invoicing/repository.ts';
import { componentCosts } from '../src/modules/invoicing/session-costs.ts';
import { manualClock } from '../src/platform/clock.ts';

describe('signed invoice links', () => {
  const clock = manualClock(new Date('2026-03-01T12:00:00Z'));
  const secret = Buffer.alloc(32, 7);
  const ctx = { clock, config: { linkTtlMs: 3_600_000, publicBaseUrl: 'https://api.example' }, linkSecret: async () => secret };
  const id = '6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
  const partsOf = (link: string) => {
    const url = new URL(link);
    return { path: url.pathname, expires: url.searchParams.get('expires') ?? '', signature: url.searchParams.get('signature') ?? '' };
  };

  it('a link is valid until its TTL, then not; it points at the invoice’s PDF', async () => {
    const { path, expires, signature } = partsOf(await signedLink(ctx, id));
    assert.equal(path, `/invoices/${id}/pdf`);
    assert.equal(Number(expires), Date.parse('2026-03-01T13:00:00Z') / 1000);
    assert.equal(await isValidLink(ctx, id, expires, signature), true);
    clock.advance(3_600_000);
    assert.equal(await isValidLink(ctx, id, expires, signature), true, 'valid up to its last second');
    clock.advance(1000);
    assert.equal(await isValidLink(ctx, id, expires, signature), false, 'expired');
    clock.set(new Date('2026-03-01T12:00:00Z'));
  });

  it('a forged link is refused: another invoice, a later expiry, another secret, a cut or malformed signature', async () => {
    const { expires, signature } = partsOf(await signedLink(ctx, id));
    const other = '0f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
    assert.equal(await isValidLink(ctx, other, expires, signature), false);
    assert.equal(await isValidLink(ctx, id, String(Number(expires) + 1), signature), false);
    assert.equal(await isValidLink({ ...ctx, linkSecret: async () => Buffer.alloc(32, 8) }, id, expires, signature), false);
    assert.equal(await isValidLink(ctx, id, expires, signature.slice(0, -2)), false);
    assert.equal(await isValidLink(ctx, id, expires, ''), false);
    assert.equal(await isValidLink(ctx, id, 'soon', signature), false);
    assert.equal(await isValidLink(ctx, 'not-an-id', expires, signature), false);
  });
});

describe('invoice numbers and payment notes', () => {
  it('the printed number is the issuer’s prefix and six digits', () => {
    assert.equal(invoiceNumberText('CA', 42), 'CA-000042');
    assert.equal(invoiceNumberText('CB', 1_234_567), 'CB-1234567');
  });

  const bill = { currency: 'EUR', gross: 1250, captured: 0, charged: 0, waived: 0 };
  it('paid in full (captured and charged): "Paid" with the sum', () => {
    assert.deepEqual(paymentNotes({ ...bill, captured: 1000, charged: 250 }), ['Paid: 12.50 EUR.']);
  });
  it('a failed final charge: what was paid and the amount due', () => {
    assert.deepEqual(paymentNotes({ ...bill, captured: 1000 }), ['Paid: 10.00 EUR.', 'Amount due: 2.50 EUR (the final charge failed).']);
    assert.deepEqual(paymentNotes(bill), ['Amount due: 12.50 EUR (the final charge failed).']);
  });
  it('a rest below the minimum charge: waived, and the invoice says so', () => {
    assert.deepEqual(paymentNotes({ ...bill, captured: 1230, waived: 20 }), [
      'Paid: 12.30 EUR.',
      'Not collected: 0.20 EUR (below the card processor’s minimum charge of 0.50 EUR).',
    ]);
  });
});

describe('whether the bill job captures the hold', () => {
  // EUR: the processor's minimum charge is 0.50 (50 minor units).
  it('captures when the hold covers the bill', () => assert.equal(capturable(1000, 1000, 'EUR'), true));
  it('captures when the rest beyond the hold can be charged on its own', () => assert.equal(capturable(1050, 1000, 'EUR'), true));
  it('does not capture when the rest is below the minimum but the whole is not: the whole is charged', () =>
    assert.equal(capturable(1049, 1000, 'EUR'), false));
  it('captures when even the whole is below the minimum (a capture has none): the rest is waived', () => assert.equal(capturable(49, 30, 'EUR'), true));
});

describe('session_cost of a bill', () => {
  const lineOf = (component: BillLine['component'], gross: string): BillLine => ({
    component,
    description: component,
    quantity: '1',
    unit: 'session',
    unit_price: null,
    net: gross,
    vat_rate: '0',
    vat: '0.00',
    gross,
  });

  it('per component incl. VAT, null where absent; a min/max adjustment counts as session fee', () => {
    const cost = componentCosts({
      currency: 'EUR',
      vat: 190,
      gross: 1190,
      lines: [lineOf('energy', '7.00'), lineOf('energy', '1.00'), lineOf('flat', '1.00'), lineOf('adjustment', '1.90'), lineOf('starting_fee', '1.00')],
    });
    assert.deepEqual(cost, {
      kwh_cost: '8.00',
      time_cost: null,
      session_fee_cost: '2.90',
      blocking_fee_cost: null,
      starting_fee_cost: '1.00',
      invoice_vat: '1.90',
      invoice_summary: '11.90',
      invoice_credits: '0.00',
      invoice_discount: '0.00',
      currency: 'EUR',
    });
  });

  it('an adjustment without a session fee is still the session fee', () => {
    assert.equal(
      componentCosts({ currency: 'EUR', vat: 0, gross: 100, lines: [lineOf('energy', '0.50'), lineOf('adjustment', '0.50')] }).session_fee_cost,
      '0.50',
    );
  });
});
