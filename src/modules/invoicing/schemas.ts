// TypeBox schemas of invoicing's answers: the invoices, the debts and the cost
// part of a charging session. The view types are derived from them, so the
// validation, the TypeScript type and the OpenAPI document cannot disagree.
import { type Static, Type } from 'typebox';
import { Money, Nullable, NullableMoney } from '../../platform/http/schema.ts';

export const Invoice = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    number: Type.String({ description: 'Sequential per issuer, without gaps.' }),
    link: Type.String({ format: 'uri', description: 'Signed link to the PDF, valid for INVOICE_LINK_TTL_SECONDS; needs no bearer token.' }),
    total: Money('Incl. VAT.'),
    net: Money('Excl. VAT.'),
    vat: Money('VAT.'),
    date: Type.String({ format: 'date-time' }),
    refund: Type.Boolean(),
    charging_session_id: Nullable(Type.String()),
    currency: Type.String(),
  },
  {
    examples: [
      {
        id: 'ddb15005-b912-4c0c-9c7f-405359a803a0',
        number: 'CA-000001',
        link: 'https://localhost:8443/invoices/ddb15005-b912-4c0c-9c7f-405359a803a0/pdf?expires=1772446566&signature=KJxfWaGXxtOoVovE-eij6RMGMpm3Kn_Plefn5MWTaRw',
        total: '7.37',
        net: '6.20',
        vat: '1.17',
        date: '2026-03-02T09:17:12.031Z',
        refund: false,
        charging_session_id: 'cc79d392-c8a5-4528-b7db-88a61859ca08',
        currency: 'EUR',
      },
    ],
  },
);
export type InvoiceView = Static<typeof Invoice>;

export const Debt = Type.Object({
  session_id: Type.String({ format: 'uuid' }),
  payment_intent_client_secret: Type.String({ description: 'Confirm the payment with the processor’s SDK; paying clears the debt.' }),
  amount: Money('Amount owed.'),
  currency: Type.String(),
});
export type DebtView = Static<typeof Debt>;

/** The `session_cost` of a charging session: invoicing computes it from the bill, charging shows it. */
export const SessionCost = Type.Object({
  kwh_cost: NullableMoney('Energy part of the cost, incl. VAT.'),
  time_cost: NullableMoney('Charging-time part, incl. VAT.'),
  session_fee_cost: NullableMoney('The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT.'),
  blocking_fee_cost: NullableMoney('Parking (blocking) part, incl. VAT.'),
  starting_fee_cost: NullableMoney('Our starting fee, incl. VAT.'),
  invoice_download: Nullable(Type.String({ format: 'uri', description: 'Signed, expiring link to the invoice PDF (no bearer token needed).' })),
  invoice_vat: Money('VAT of the invoice.'),
  invoice_summary: Money('Total of the invoice incl. VAT ("0.00" until the session is billed).'),
  invoice_credits: Money('Credits applied (always 0.00: there are no credits yet).'),
  invoice_discount: Money('Discount applied (always 0.00: there are no discounts yet).'),
  currency: Type.String(),
});
export type SessionCostView = Static<typeof SessionCost>;

export const InvoicePdfParams = Type.Object({ invoice_id: Type.String() });
export const InvoicePdfQuery = Type.Object({ expires: Type.String({ maxLength: 20 }), signature: Type.String({ maxLength: 100 }) });
