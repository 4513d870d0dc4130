import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PDFParse } from 'pdf-parse';
import { type InvoiceDocument, type InvoiceLine, invoiceVatSummary, renderInvoicePdf, winAnsi } from '../src/modules/invoicing/pdf.ts';

const ISSUER: InvoiceDocument['issuer'] = {
  name: 'Charging Access GmbH',
  addressLines: ['Hauptstraße 1', '10115 Berlin', 'Germany'],
  vatNumber: 'DE123456789',
  email: 'billing@charging-access.example',
  phone: '+49 30 1234567',
};

const SESSION: InvoiceDocument['session'] = {
  id: 'SESS-7f3a',
  evseId: 'DE*ION*E1234*1',
  stationName: 'Café Élysée Ladepark',
  stationAddress: 'Königsallee 5, 40212 Düsseldorf',
  startTime: new Date('2025-03-31T21:05:00Z'),
  endTime: new Date('2025-03-31T22:10:30Z'),
  energyKwh: '12.345',
  operatorName: 'Ionity GmbH',
};

const LINES: InvoiceLine[] = [
  { description: 'Energy', quantity: '12.345', unit: 'kWh', unitPrice: '0.39', net: '4.81', vatRate: '19', vat: '0.91', gross: '5.72' },
  { description: 'Charging time', quantity: '1.0917', unit: 'h', unitPrice: '1.00', net: '1.09', vatRate: '19', vat: '0.21', gross: '1.30' },
  { description: 'Parking time', quantity: '0.25', unit: 'h', unitPrice: '6.00', net: '1.50', vatRate: '19.0', vat: '0.29', gross: '1.79' },
  { description: 'Session fee', quantity: '1', unit: 'session', net: '0.50', vatRate: '7', vat: '0.04', gross: '0.54' },
  { description: 'Starting fee', quantity: '1', unit: 'session', unitPrice: '0.25', net: '0.25', vatRate: '7', vat: '0.02', gross: '0.27' },
];

function personalInvoice(): InvoiceDocument {
  return {
    number: 'CA-000042',
    // Late in the UTC day: printed as the UTC date whatever the local time zone.
    issueDate: new Date('2025-03-31T23:30:00Z'),
    currency: 'EUR',
    issuer: ISSUER,
    customer: {
      kind: 'personal',
      firstName: 'Jürgen',
      lastName: 'Müller-Straße',
      addressLines: ['Rue de l’Église 3', '1000 Bruxelles'],
      email: 'j@example.com',
    },
    session: SESSION,
    lines: LINES,
    totals: { net: '8.15', vat: '1.47', gross: '9.62' },
    notes: ['Paid with Visa •••• 4242', 'Thank you for charging with us.'],
  };
}

function businessInvoice(): InvoiceDocument {
  return {
    ...personalInvoice(),
    number: 'CA-000043',
    customer: { kind: 'business', companyName: 'Straßenbau Österreich GmbH', vatNumber: 'ATU12345678', addressLines: ['Ringstraße 1', '1010 Wien', 'Austria'] },
    notes: undefined,
  };
}

/** The PDF's text, whitespace collapsed (pdf.js separates same-line items with spaces or tabs). */
async function pdfText(buffer: Buffer): Promise<{ text: string; pages: number }> {
  const parser = new PDFParse({ data: buffer });
  try {
    const result = await parser.getText();
    return { text: result.text.replace(/\s+/g, ' '), pages: result.total };
  } finally {
    await parser.destroy();
  }
}

function assertIncludes(text: string, ...parts: string[]): void {
  for (const part of parts) assert.ok(text.includes(part), `expected the PDF text to include ${JSON.stringify(part)}`);
}

function assertLinesAndTotals(text: string, invoice: InvoiceDocument): void {
  for (const line of invoice.lines) {
    assertIncludes(text, line.description, `${line.quantity} ${line.unit} ${line.net} EUR`, `${line.vat} EUR ${line.gross} EUR`);
    if (line.unitPrice) assertIncludes(text, `${line.unitPrice} EUR / ${line.unit}`);
  }
  assertIncludes(text, `Net ${invoice.totals.net} EUR`, `VAT ${invoice.totals.vat} EUR`, `Total ${invoice.totals.gross} EUR`);
}

describe('invoice VAT summary', () => {
  test('sums the lines per rate with exact decimals, ascending by rate', () => {
    assert.deepEqual(invoiceVatSummary(personalInvoice()), [
      { rate: '7', net: '0.75', vat: '0.06', gross: '0.81' },
      { rate: '19', net: '7.40', vat: '1.41', gross: '8.81' },
    ]);
  });

  test('adds without float error (0.1 + 0.2 = 0.3)', () => {
    const invoice = personalInvoice();
    invoice.lines = [
      { description: 'a', quantity: '1', unit: 'session', net: '0.10', vatRate: '0', vat: '0.00', gross: '0.10' },
      { description: 'b', quantity: '1', unit: 'session', net: '0.20', vatRate: '0', vat: '0.00', gross: '0.20' },
    ];
    invoice.totals = { net: '0.30', vat: '0.00', gross: '0.3' };
    assert.deepEqual(invoiceVatSummary(invoice), [{ rate: '0', net: '0.30', vat: '0.00', gross: '0.30' }]);
  });
});

describe('renderInvoicePdf', () => {
  test('personal invoice: header, names, session, every line, VAT summary, totals, notes', async () => {
    const invoice = personalInvoice();
    const pdf = await renderInvoicePdf(invoice);
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.ok(pdf.subarray(-6).toString('latin1').includes('%%EOF'));
    const { text, pages } = await pdfText(pdf);
    assert.equal(pages, 1);
    assertIncludes(text, 'Invoice', 'Invoice number: CA-000042', 'Issue date: 2025-03-31');
    assertIncludes(text, 'Charging Access GmbH', 'Hauptstraße 1', 'VAT number: DE123456789', 'billing@charging-access.example', '+49 30 1234567');
    assertIncludes(text, 'Bill to', 'Jürgen Müller-Straße', 'Rue de l’Église 3', 'j@example.com');
    assertIncludes(
      text,
      'Café Élysée Ladepark',
      'Königsallee 5, 40212 Düsseldorf',
      'DE*ION*E1234*1',
      'Ionity GmbH',
      'SESS-7f3a',
      'Start 2025-03-31 21:05:00 UTC',
      'End 2025-03-31 22:10:30 UTC',
      'Energy 12.345 kWh',
    );
    assertLinesAndTotals(text, invoice);
    assertIncludes(text, 'VAT summary', '7% 0.75 EUR 0.06 EUR 0.81 EUR', '19% 7.40 EUR 1.41 EUR 8.81 EUR');
    assertIncludes(text, 'Paid with Visa •••• 4242', 'Page 1 of 1');
  });

  test('business invoice: company name and VAT number, no personal name', async () => {
    const invoice = businessInvoice();
    const { text } = await pdfText(await renderInvoicePdf(invoice));
    assertIncludes(text, 'Invoice number: CA-000043', 'Straßenbau Österreich GmbH', 'VAT number: ATU12345678', 'Ringstraße 1', '1010 Wien');
    assert.ok(!text.includes('Jürgen'));
    assertLinesAndTotals(text, invoice);
    assertIncludes(text, '7% 0.75 EUR 0.06 EUR 0.81 EUR', '19% 7.40 EUR 1.41 EUR 8.81 EUR');
  });

  test('the same input gives the same bytes; CreationDate is the issue date', async () => {
    const a = await renderInvoicePdf(personalInvoice());
    const b = await renderInvoicePdf(personalInvoice());
    assert.ok(a.equals(b));
    assert.ok(a.toString('latin1').includes('(D:20250331233000Z)'));
    const later = personalInvoice();
    later.issueDate = new Date('2025-04-01T08:00:00Z');
    assert.ok(!a.equals(await renderInvoicePdf(later)));
  });

  test('a 60-line invoice spans pages and still shows every line, the VAT summary and the totals', async () => {
    const invoice = personalInvoice();
    invoice.lines = Array.from({ length: 60 }, (_, i) => ({
      description: i % 9 === 0 ? `Parking time ${i + 1}, a description long enough to wrap over several lines of its column` : `Parking time ${i + 1}`,
      quantity: '0.5',
      unit: 'h',
      unitPrice: '2.00',
      net: '1.00',
      vatRate: i % 2 ? '19' : '7',
      vat: i % 2 ? '0.19' : '0.07',
      gross: i % 2 ? '1.19' : '1.07',
    }));
    invoice.totals = { net: '60.00', vat: '7.80', gross: '67.80' };
    const { text, pages } = await pdfText(await renderInvoicePdf(invoice));
    assert.ok(pages >= 3, `expected at least 3 pages, got ${pages}`);
    for (let i = 1; i <= 60; i++) assertIncludes(text, `Parking time ${i}`);
    assertIncludes(text, `Page 1 of ${pages}`, `Page ${pages} of ${pages}`);
    // The table header is repeated on every page the table continues on.
    assert.ok(text.split('Description Quantity Net VAT rate VAT Gross').length - 1 >= pages - 1);
    assertIncludes(text, '7% 30.00 EUR 2.10 EUR 32.10 EUR', '19% 30.00 EUR 5.70 EUR 35.70 EUR');
    assertIncludes(text, 'Net 60.00 EUR', 'VAT 7.80 EUR', 'Total 67.80 EUR');
  });

  describe('an invoice that does not add up is never rendered', () => {
    test('totals differing from the sum of the lines', async () => {
      for (const key of ['net', 'vat', 'gross'] as const) {
        const invoice = personalInvoice();
        invoice.totals = { ...invoice.totals, [key]: '100.00' };
        await assert.rejects(renderInvoicePdf(invoice), new RegExp(`totals\\.${key}`));
      }
    });

    test('a line whose net + VAT is not its gross', async () => {
      const invoice = personalInvoice();
      invoice.lines = invoice.lines.map((l, i) => (i === 1 ? { ...l, gross: '1.31' } : l));
      invoice.totals = { net: '8.15', vat: '1.47', gross: '9.63' };
      await assert.rejects(renderInvoicePdf(invoice), /lines\[1\]: net 1\.09 \+ VAT 0\.21 != gross 1\.31/);
    });

    test('amounts that are not decimal strings', async () => {
      for (const bad of ['4,81', '4.81 EUR', '1e1', '', ' 4.81', 'NaN']) {
        const invoice = personalInvoice();
        invoice.lines = invoice.lines.map((l, i) => (i === 0 ? { ...l, net: bad } : l));
        await assert.rejects(renderInvoicePdf(invoice), /lines\[0\]\.net/, bad);
      }
    });

    test('an invalid currency or date', async () => {
      await assert.rejects(renderInvoicePdf({ ...personalInvoice(), currency: 'eur' }), /currency/);
      await assert.rejects(renderInvoicePdf({ ...personalInvoice(), issueDate: new Date('nope') }), /issueDate/);
      const invoice = personalInvoice();
      invoice.session = { ...SESSION, endTime: new Date('2025-03-31T21:00:00Z') };
      await assert.rejects(renderInvoicePdf(invoice), /endTime is before startTime/);
    });
  });

  test('text outside WinAnsi does not crash: transliterated or replaced by "?"', async () => {
    assert.equal(winAnsi('Zoë Łódź Wałęsa Dvořák Ştefan'), 'Zoë Lódz Walesa Dvorák Stefan');
    assert.equal(winAnsi('王小明 😀 Ω'), '??? ? ?');
    assert.equal(winAnsi('€ • – “x” ‘y’ … Œ'), '€ • – “x” ‘y’ … Œ');
    assert.equal(winAnsi('a\tb\nc\u202fd\u0000e\u0085f'), 'a b c d?e?f');

    const invoice = personalInvoice();
    invoice.customer = { kind: 'personal', firstName: 'Łukasz', lastName: 'Wałęsa 王小明', addressLines: ['ul. Żółwia 7', '00-001 Warszawa'] };
    invoice.session = { ...SESSION, stationName: 'Станция 😀' };
    invoice.notes = ['Zaplacono kartą ⚡'];
    const { text } = await pdfText(await renderInvoicePdf(invoice));
    assertIncludes(text, 'Lukasz Walesa ???', 'ul. Zólwia 7', 'Station ??????? ?', 'Zaplacono karta ?');
    assertLinesAndTotals(text, invoice);
  });

  test('long ids and station names wrap at word boundaries (after a space, -, *, /), never inside a part; the payment method is named', async () => {
    const invoice = personalInvoice();
    const uuid = '0b6f9d2e-5c1a-4f7e-9a3b-2d8c6e1f4a7b';
    const evse = 'DE*ION*E1234567890*ABCDEFGH*1234';
    const station = 'Supercalifragilistic Schnellladepark Autobahnraststätte Irschenberg Süd Westseite';
    invoice.session = { ...SESSION, id: uuid, evseId: evse, stationName: station };
    invoice.paymentMethod = 'Visa •••• 4242';
    const parser = new PDFParse({ data: await renderInvoicePdf(invoice) });
    const lines = (await parser.getText()).text.split('\n').map((line) => line.trim());
    await parser.destroy();
    // Each value is drawn on lines of its own, right of its label: the lines from the label on, joined, are the value.
    const wrapped = (label: string, count: number) => {
      const at = lines.findIndex((line) => line.startsWith(`${label} `));
      assert.ok(at >= 0, `${label} in ${lines.join(' | ')}`);
      return [lines[at]?.slice(label.length + 1) ?? '', ...lines.slice(at + 1, at + count)];
    };
    const idLines = wrapped('Session ID', 2);
    assert.equal(idLines.join(''), uuid, `the id wraps once, whole: ${idLines.join(' | ')}`);
    assert.ok(idLines[0]?.endsWith('-'), `broken after a dash: ${idLines.join(' | ')}`);
    const evseLines = wrapped('EVSE', 2);
    assert.equal(evseLines.join(''), evse);
    assert.ok(evseLines[0]?.endsWith('*'), `broken after a star: ${evseLines.join(' | ')}`);
    const stationLines = wrapped('Station', 3);
    assert.equal(stationLines.join(' '), station, `broken between words: ${stationLines.join(' | ')}`);
    assert.ok(lines.includes('Payment method: Visa •••• 4242'), lines.join(' | '));
  });
});
