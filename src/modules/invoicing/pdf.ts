// Invoice PDF rendering: a pure function from an InvoiceDocument to PDF bytes
// (pdfkit, A4, the built-in Helvetica fonts, nothing read from disk or the
// network, no clock: the document's CreationDate is the issue date, so the
// same input gives the same bytes).
//
// Every amount is an exact decimal string computed by the caller and printed
// as given ("12.40" -> "12.40 EUR"). The renderer never does float arithmetic
// on money: it only adds decimal strings with big.js to check the invoice
// (each line's net + VAT = gross; the lines add up to the totals) and to print
// the VAT summary per rate. An invoice that does not add up throws and is
// never rendered. All formatting is locale-independent (no Intl).
//
// The standard PDF fonts are WinAnsi-encoded (Windows-1252): every string
// drawn goes through winAnsi(), which keeps Latin-1 and the other WinAnsi
// characters (€, •, curly quotes, dashes, ...), transliterates what it can
// (accents outside Latin-1 are dropped: "ő" -> "o", "Ł" -> "L") and replaces
// the rest with "?".
import Big from 'big.js';
import PDFDocument from 'pdfkit';

export interface InvoiceIssuer {
  /** The service operator (the eMSP) issuing the invoice. */
  name: string;
  addressLines: readonly string[];
  vatNumber?: string;
  email?: string;
  phone?: string;
}

export type InvoiceCustomer = ({ kind: 'personal'; firstName: string; lastName: string } | { kind: 'business'; companyName: string; vatNumber?: string }) & {
  addressLines: readonly string[];
  email?: string;
};

export interface InvoiceSession {
  id: string;
  evseId: string;
  stationName: string;
  stationAddress: string;
  startTime: Date;
  endTime: Date;
  /** Decimal string, e.g. "12.345". */
  energyKwh: string;
  /** The charge point operator (CPO). */
  operatorName: string;
}

/** One price component (energy, charging time, parking time, session fee, starting fee). Decimal strings. */
export interface InvoiceLine {
  description: string;
  quantity: string;
  /** E.g. "kWh", "h", "min", "session". */
  unit: string;
  /** Price per unit incl. VAT, as the user-facing price was shown (may carry more decimals than the currency: per minute). */
  unitPrice?: string;
  net: string;
  /** Percent, e.g. "19" or "5.5". */
  vatRate: string;
  vat: string;
  gross: string;
}

export interface InvoiceTotals {
  net: string;
  vat: string;
  gross: string;
}

export interface InvoiceDocument {
  /** E.g. "CA-000042". */
  number: string;
  /** Printed as YYYY-MM-DD (UTC); also the PDF's CreationDate. */
  issueDate: Date;
  /** ISO 4217, e.g. "EUR". */
  currency: string;
  issuer: InvoiceIssuer;
  customer: InvoiceCustomer;
  session: InvoiceSession;
  lines: readonly InvoiceLine[];
  /** Must equal the sums of the lines. */
  totals: InvoiceTotals;
  notes?: readonly string[];
  /** How the invoice is paid, in words ("Visa •••• 4242", "PayPal (j@example.com)"). */
  paymentMethod?: string;
}

/** The VAT summary row of one rate: sums of the lines at that rate, as decimal strings. */
export interface InvoiceVatRate {
  /** Normalized percent, e.g. "19", "5.5". */
  rate: string;
  net: string;
  vat: string;
  gross: string;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;
const UNSIGNED_DECIMAL = /^\d+(\.\d+)?$/;

function decimal(value: unknown, field: string, pattern = DECIMAL): string {
  if (typeof value !== 'string' || !pattern.test(value)) throw new Error(`invoice ${field}: ${JSON.stringify(value)} is not a decimal string`);
  return value;
}

function validDate(value: unknown, field: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new Error(`invoice ${field}: not a valid Date`);
  return value;
}

function decimals(value: string): number {
  const dot = value.indexOf('.');
  return dot < 0 ? 0 : value.length - dot - 1;
}

/** Sum of decimal strings, exact, printed with as many decimals as the most precise term. */
function sum(values: readonly string[]): string {
  let total = new Big(0);
  let dp = 0;
  for (const v of values) {
    total = total.plus(v);
    dp = Math.max(dp, decimals(v));
  }
  return total.toFixed(dp);
}

/** A percent as a plain decimal string ("19.0" -> "19"), independent of Big.NE/PE. */
function normalizeRate(rate: string): string {
  const [whole = '0', fraction = ''] = rate.split('.');
  const f = fraction.replace(/0+$/, '');
  const w = whole.replace(/^0+(?=\d)/, '');
  return f ? `${w}.${f}` : w;
}

/**
 * Checks the invoice (decimal strings, valid dates, each line's net + VAT =
 * gross, the lines adding up to the totals) and returns its VAT summary per
 * rate, ascending. Throws an Error when anything does not add up.
 */
export function invoiceVatSummary(invoice: InvoiceDocument): InvoiceVatRate[] {
  if (!/^[A-Z]{3}$/.test(invoice.currency)) throw new Error(`invoice currency: ${JSON.stringify(invoice.currency)} is not an ISO 4217 code`);
  validDate(invoice.issueDate, 'issueDate');
  const start = validDate(invoice.session.startTime, 'session.startTime');
  const end = validDate(invoice.session.endTime, 'session.endTime');
  if (end.getTime() < start.getTime()) throw new Error('invoice session: endTime is before startTime');
  decimal(invoice.session.energyKwh, 'session.energyKwh', UNSIGNED_DECIMAL);

  const byRate = new Map<string, InvoiceLine[]>();
  invoice.lines.forEach((line, i) => {
    const at = `lines[${i}]`;
    decimal(line.quantity, `${at}.quantity`);
    if (line.unitPrice !== undefined) decimal(line.unitPrice, `${at}.unitPrice`);
    const rate = normalizeRate(decimal(line.vatRate, `${at}.vatRate`, UNSIGNED_DECIMAL));
    const net = new Big(decimal(line.net, `${at}.net`));
    const vat = new Big(decimal(line.vat, `${at}.vat`));
    if (!net.plus(vat).eq(decimal(line.gross, `${at}.gross`))) {
      throw new Error(`invoice ${at}: net ${line.net} + VAT ${line.vat} != gross ${line.gross}`);
    }
    const group = byRate.get(rate);
    if (group) group.push(line);
    else byRate.set(rate, [line]);
  });

  for (const key of ['net', 'vat', 'gross'] as const) {
    const given = decimal(invoice.totals[key], `totals.${key}`);
    const lines = sum(invoice.lines.map((l) => l[key]));
    if (!new Big(lines).eq(given)) throw new Error(`invoice totals.${key}: lines add up to ${lines}, totals say ${given}`);
  }

  return [...byRate.entries()]
    .sort(([a], [b]) => new Big(a).cmp(b))
    .map(([rate, lines]) => ({
      rate,
      net: sum(lines.map((l) => l.net)),
      vat: sum(lines.map((l) => l.vat)),
      gross: sum(lines.map((l) => l.gross)),
    }));
}

// --- Text ------------------------------------------------------------------

/** Unicode code points outside Latin-1 that WinAnsi (Windows-1252) encodes; pdfkit maps them. */
const WIN_ANSI_EXTRA = new Set([
  0x152, 0x153, 0x160, 0x161, 0x178, 0x17d, 0x17e, 0x192, 0x2c6, 0x2dc, 0x2013, 0x2014, 0x2018, 0x2019, 0x201a, 0x201c, 0x201d, 0x201e, 0x2020, 0x2021, 0x2022,
  0x2026, 0x2030, 0x2039, 0x203a, 0x20ac, 0x2122,
]);

/** Letters without a canonical decomposition, and a few look-alikes. */
const TRANSLITERATION: Record<string, string> = {
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Ħ: 'H',
  ħ: 'h',
  ı: 'i',
  Ŀ: 'L',
  ŀ: 'l',
  Ŧ: 'T',
  ŧ: 't',
  Ŋ: 'N',
  ŋ: 'n',
  ĸ: 'q',
  Ĳ: 'IJ',
  ĳ: 'ij',
  '\u2212': '-',
  '\u2010': '-',
  '\u2011': '-',
  '\u2032': "'",
  '\u2033': '"',
};

function encodable(cp: number): boolean {
  return (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) || WIN_ANSI_EXTRA.has(cp);
}

/** A string the standard (WinAnsi) fonts can show: one line, Latin-1 and WinAnsi kept, others transliterated or "?". */
export function winAnsi(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    const cp = ch.codePointAt(0) ?? 0;
    if (encodable(cp)) out += ch;
    else if (/\s/u.test(ch)) out += ' ';
    else if (TRANSLITERATION[ch] !== undefined) out += TRANSLITERATION[ch];
    else {
      // Drop combining marks: "ő" -> "o", "ș" -> "s"; keep it only if all that is left is encodable.
      const base = ch.normalize('NFD').replace(/\p{M}/gu, '');
      out += base && [...base].every((c) => encodable(c.codePointAt(0) ?? 0)) ? base : '?';
    }
  }
  return out;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function utcDate(d: Date): string {
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

function utcDateTime(d: Date): string {
  return `${utcDate(d)} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} UTC`;
}

// --- Layout ----------------------------------------------------------------

type Doc = PDFKit.PDFDocument;
type Align = 'left' | 'right';

const MARGIN = 50;
const FOOTER = 30;
const REGULAR = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const TEXT = '#000000';
const MUTED = '#555555';
const RULE = '#cccccc';
const TABLE_SIZE = 8.5;
const CELL_PAD = 3;

interface Style {
  font?: string;
  size?: number;
  color?: string;
  align?: Align;
}

interface Column {
  label: string;
  width: number;
  align: Align;
}

/** Table columns; widths add up to the A4 content width (595.28 - 2 * 50). */
const LINE_COLUMNS: readonly Column[] = [
  { label: 'Description', width: 170.28, align: 'left' },
  { label: 'Quantity', width: 75, align: 'right' },
  { label: 'Net', width: 72, align: 'right' },
  { label: 'VAT rate', width: 44, align: 'right' },
  { label: 'VAT', width: 62, align: 'right' },
  { label: 'Gross', width: 72, align: 'right' },
];

/** Where a line may break: after a space, or after a separator of an id (EVSE ids, UUIDs, paths): - * / _ */
const BREAK_AFTER = /[^\s*/_-]*[\s*/_-]*/g;

/**
 * The text with line breaks where it must wrap to fit `width` in the current font: at word boundaries (after a
 * space or an id's separator), so "DE*ION*E1234*1" or a session UUID never splits inside a part; within a part
 * only when that part alone is wider than the box.
 */
function breakLines(doc: Doc, text: string, width: number): string {
  return text
    .split('\n')
    .map((paragraph) => {
      const lines: string[] = [];
      let line = '';
      for (const piece of paragraph.match(BREAK_AFTER) ?? []) {
        if (piece === '') continue;
        if (line !== '' && doc.widthOfString((line + piece).trimEnd()) > width) {
          lines.push(line.trimEnd());
          line = piece.trimStart();
        } else {
          line += piece;
        }
      }
      lines.push(line.trimEnd());
      return lines.join('\n');
    })
    .join('\n');
}

class Layout {
  readonly doc: Doc;
  readonly left: number;
  readonly width: number;
  readonly bottom: number;
  y: number;

  constructor(doc: Doc) {
    this.doc = doc;
    this.left = MARGIN;
    this.width = doc.page.width - 2 * MARGIN;
    this.bottom = doc.page.height - MARGIN - FOOTER;
    this.y = MARGIN;
  }

  private apply(style: Style): void {
    this.doc
      .font(style.font ?? REGULAR)
      .fontSize(style.size ?? 9)
      .fillColor(style.color ?? TEXT);
  }

  height(text: string, width: number, style: Style = {}): number {
    this.apply(style);
    return this.doc.heightOfString(breakLines(this.doc, winAnsi(text), width), { width, lineGap: 1 });
  }

  /** Draws text in a box at (x, y) of the given width, wrapping at word boundaries; returns its height. */
  text(text: string, x: number, y: number, width: number, style: Style = {}): number {
    this.apply(style);
    const t = breakLines(this.doc, winAnsi(text), width);
    const h = this.doc.heightOfString(t, { width, lineGap: 1 });
    this.doc.text(t, x, y, { width, align: style.align ?? 'left', lineGap: 1 });
    return h;
  }

  /** Draws lines of text top to bottom; returns the y below them. */
  stack(lines: readonly { text: string; style?: Style }[], x: number, y: number, width: number): number {
    let at = y;
    for (const line of lines) at += this.text(line.text, x, at, width, line.style);
    return at;
  }

  rule(y: number, color = RULE, x = this.left, width = this.width): void {
    this.doc
      .moveTo(x, y)
      .lineTo(x + width, y)
      .lineWidth(0.5)
      .strokeColor(color)
      .stroke();
  }

  /** Starts a new page when `height` does not fit below y; returns whether it did. */
  ensure(height: number): boolean {
    if (this.y + height <= this.bottom) return false;
    this.doc.addPage();
    this.y = MARGIN;
    return true;
  }
}

function customerLines(customer: InvoiceCustomer): { text: string; style?: Style }[] {
  const lines: { text: string; style?: Style }[] = [];
  if (customer.kind === 'personal') {
    lines.push({ text: `${customer.firstName} ${customer.lastName}`, style: { font: BOLD } });
  } else {
    lines.push({ text: customer.companyName, style: { font: BOLD } });
  }
  for (const line of customer.addressLines) lines.push({ text: line });
  if (customer.kind === 'business' && customer.vatNumber) lines.push({ text: `VAT number: ${customer.vatNumber}` });
  if (customer.email) lines.push({ text: customer.email });
  return lines;
}

function drawHeader(l: Layout, invoice: InvoiceDocument): void {
  const { issuer } = invoice;
  const half = l.width / 2 - 10;
  const issuerLines: { text: string; style?: Style }[] = [{ text: issuer.name, style: { font: BOLD, size: 11 } }];
  for (const line of issuer.addressLines) issuerLines.push({ text: line });
  if (issuer.vatNumber) issuerLines.push({ text: `VAT number: ${issuer.vatNumber}` });
  if (issuer.email) issuerLines.push({ text: issuer.email });
  if (issuer.phone) issuerLines.push({ text: issuer.phone });
  const leftEnd = l.stack(issuerLines, l.left, l.y, half);

  const rx = l.left + l.width - half;
  const right: Style = { align: 'right' };
  const rightEnd = l.stack(
    [
      { text: 'Invoice', style: { font: BOLD, size: 22, align: 'right' } },
      { text: `Invoice number: ${invoice.number}`, style: { font: BOLD, size: 10, align: 'right' } },
      { text: `Issue date: ${utcDate(invoice.issueDate)}`, style: right },
      { text: `Currency: ${invoice.currency}`, style: right },
      ...(invoice.paymentMethod ? [{ text: `Payment method: ${invoice.paymentMethod}`, style: right }] : []),
    ],
    rx,
    l.y,
    half,
  );
  l.y = Math.max(leftEnd, rightEnd) + 24;
}

function drawParties(l: Layout, invoice: InvoiceDocument): void {
  const { session } = invoice;
  const half = l.width / 2 - 10;
  const heading: Style = { font: BOLD, size: 10 };
  const top = l.y;

  const billEnd = l.stack([{ text: 'Bill to', style: heading }, ...customerLines(invoice.customer)], l.left, top, half);

  const rx = l.left + l.width - half;
  const labelW = 78;
  let y = top + l.text('Charging session', rx, top, half, heading);
  const rows: [string, string][] = [
    ['Station', session.stationName],
    ['Address', session.stationAddress],
    ['EVSE', session.evseId],
    ['Operator (CPO)', session.operatorName],
    ['Session ID', session.id],
    ['Start', utcDateTime(session.startTime)],
    ['End', utcDateTime(session.endTime)],
    ['Energy', `${session.energyKwh} kWh`],
  ];
  for (const [label, value] of rows) {
    const h = l.height(value, half - labelW);
    l.text(label, rx, y, labelW - 4, { color: MUTED });
    l.text(value, rx + labelW, y, half - labelW);
    y += h;
  }
  l.y = Math.max(billEnd, y) + 24;
}

/** Draws one table row (cells as [text, optional second line]) and returns its height; `measure` only measures. */
function tableRow(l: Layout, columns: readonly Column[], x0: number, cells: readonly (readonly [string, string?])[], style: Style, measure: boolean): number {
  let x = x0;
  let height = 0;
  columns.forEach((col, i) => {
    const [main, sub] = cells[i] ?? [''];
    const w = col.width - 2 * CELL_PAD;
    const mainStyle: Style = { ...style, size: TABLE_SIZE, align: col.align };
    const subStyle: Style = { size: TABLE_SIZE - 1, color: MUTED, align: col.align };
    let h = l.height(main, w, mainStyle);
    if (sub) h += l.height(sub, w, subStyle);
    if (!measure) {
      const mh = l.text(main, x + CELL_PAD, l.y + CELL_PAD, w, mainStyle);
      if (sub) l.text(sub, x + CELL_PAD, l.y + CELL_PAD + mh, w, subStyle);
    }
    height = Math.max(height, h);
    x += col.width;
  });
  return height + 2 * CELL_PAD;
}

function tableHeader(l: Layout, columns: readonly Column[], x0: number): void {
  const cells = columns.map((c) => [c.label] as const);
  const h = tableRow(l, columns, x0, cells, { font: BOLD }, true);
  tableRow(l, columns, x0, cells, { font: BOLD }, false);
  l.y += h;
  l.rule(
    l.y,
    TEXT,
    x0,
    columns.reduce((w, c) => w + c.width, 0),
  );
}

/** A table that repeats its header on every page it continues on. */
function drawTable(l: Layout, columns: readonly Column[], x0: number, rows: readonly (readonly (readonly [string, string?])[])[], title?: string): void {
  const headerH = tableRow(
    l,
    columns,
    x0,
    columns.map((c) => [c.label] as const),
    { font: BOLD },
    true,
  );
  const width = columns.reduce((w, c) => w + c.width, 0);
  const titleStyle: Style = { font: BOLD, size: 10 };
  const titleH = title ? l.height(title, width, titleStyle) + 4 : 0;
  const firstH = rows[0] ? tableRow(l, columns, x0, rows[0], {}, true) : 0;
  l.ensure(titleH + headerH + firstH);
  if (title) l.y += l.text(title, x0 + CELL_PAD, l.y, width, titleStyle) + 4;
  tableHeader(l, columns, x0);
  for (const row of rows) {
    const h = tableRow(l, columns, x0, row, {}, true);
    if (l.ensure(h)) tableHeader(l, columns, x0);
    tableRow(l, columns, x0, row, {}, false);
    l.y += h;
    l.rule(l.y, RULE, x0, width);
  }
}

function renderInto(doc: Doc, invoice: InvoiceDocument, summary: readonly InvoiceVatRate[]): void {
  const l = new Layout(doc);
  const money = (amount: string) => `${amount} ${invoice.currency}`;

  drawHeader(l, invoice);
  drawParties(l, invoice);

  drawTable(
    l,
    LINE_COLUMNS,
    l.left,
    invoice.lines.map((line) => [
      line.unitPrice === undefined ? [line.description] : [line.description, `${money(line.unitPrice)} / ${line.unit} incl. VAT`],
      [`${line.quantity} ${line.unit}`],
      [money(line.net)],
      [`${normalizeRate(line.vatRate)}%`],
      [money(line.vat)],
      [money(line.gross)],
    ]),
  );
  l.y += 18;

  // VAT summary and totals, right-aligned under the table's amount columns.
  const summaryColumns: readonly Column[] = [
    { label: 'VAT rate', width: 60, align: 'left' },
    { label: 'Net', width: 80, align: 'right' },
    { label: 'VAT', width: 80, align: 'right' },
    { label: 'Gross', width: 80, align: 'right' },
  ];
  const summaryWidth = summaryColumns.reduce((w, c) => w + c.width, 0);
  const sx = l.left + l.width - summaryWidth;
  drawTable(
    l,
    summaryColumns,
    sx,
    summary.map((r) => [[`${r.rate}%`], [money(r.net)], [money(r.vat)], [money(r.gross)]]),
    'VAT summary',
  );
  l.y += 14;

  const totals: [string, string, Style][] = [
    ['Net', money(invoice.totals.net), {}],
    ['VAT', money(invoice.totals.vat), {}],
    ['Total', money(invoice.totals.gross), { font: BOLD, size: 11 }],
  ];
  const labelW = 120;
  const valueW = 140;
  const tx = l.left + l.width - labelW - valueW;
  const totalsH = totals.reduce((h, [, value, style]) => h + l.height(value, valueW, style) + 4, 0) + 4;
  l.ensure(totalsH);
  l.rule(l.y, TEXT, tx, labelW + valueW);
  l.y += 4;
  for (const [label, value, style] of totals) {
    l.text(label, tx, l.y, labelW, style);
    l.y += l.text(value, tx + labelW, l.y, valueW, { ...style, align: 'right' }) + 4;
  }
  l.y += 18;

  for (const note of invoice.notes ?? []) {
    const h = l.height(note, l.width) + 3;
    l.ensure(h);
    l.y += l.text(note, l.left, l.y, l.width) + 3;
  }

  // Footer on every page: issuer, invoice number, page n of N. The bottom
  // margin is lifted while writing so pdfkit does not start a new page.
  const { start, count } = doc.bufferedPageRange();
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    const margin = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const y = doc.page.height - MARGIN - 10;
    l.rule(y - 6);
    const style: Style = { size: 7.5, color: MUTED };
    l.text(`${invoice.issuer.name} - Invoice ${invoice.number}`, l.left, y, l.width / 2, style);
    l.text(`Page ${i - start + 1} of ${count}`, l.left + l.width / 2, y, l.width / 2, { ...style, align: 'right' });
    doc.page.margins.bottom = margin;
  }
}

/**
 * Renders the invoice as an A4 PDF. Throws (rejects) when the invoice does
 * not add up (see invoiceVatSummary). The same input gives the same bytes.
 */
export async function renderInvoicePdf(invoice: InvoiceDocument): Promise<Buffer> {
  const summary = invoiceVatSummary(invoice);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    info: {
      Title: `Invoice ${invoice.number}`,
      Author: invoice.issuer.name,
      CreationDate: new Date(invoice.issueDate.getTime()),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  renderInto(doc, invoice, summary);
  doc.end();
  return done;
}
