// HTTP edge of debts and invoices: parse, call the module, shape the answer.
import { Type } from 'typebox';
import { clientIdOf } from '../../platform/http/auth.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import { UserIdParams } from '../users/schemas.ts';
import { Debt, Invoice, InvoicePdfParams, InvoicePdfQuery } from './schemas.ts';
import type { Invoicing } from './service.ts';

export interface InvoicingRoutesDeps {
  invoicing: Invoicing;
  publicBaseUrl: string;
}

/** Debts and invoices of a user, under /api/v1 with the bearer token. */
export function invoicingRoutes(deps: InvoicingRoutesDeps) {
  const { invoicing, publicBaseUrl } = deps;
  const security = [{ bearerAuth: [] }];

  return async function register(app: HttpApp) {
    app.get(
      '/users/:user_id/charging/debts/',
      {
        schema: {
          summary: 'Unpaid charging debts',
          description:
            'Final charges that failed. Pay one by confirming its payment_intent_client_secret with the processor’s SDK; it then disappears from this list. While a debt is unpaid the user cannot start charging (402 payment_error).',
          // Listed with charging: a debt is what a session left unpaid, and it blocks the next start.
          tags: ['Charging'],
          security,
          params: UserIdParams,
          querystring: Type.Object({ ...PageQuery }),
          response: withErrors({ 200: PageOf(Debt) }, [400, 404, 503]),
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const { count, results } = await invoicing.listDebts(clientIdOf(request), request.params.user_id, page);
        return toPage(publicBaseUrl, request.url, page, count, results);
      },
    );

    app.get(
      '/users/:user_id/invoices/',
      {
        schema: {
          summary: 'Invoices, newest first',
          tags: ['Invoices'],
          security,
          params: UserIdParams,
          querystring: Type.Object({ ...PageQuery }),
          response: withErrors({ 200: PageOf(Invoice) }, [400, 404]),
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const { count, results } = await invoicing.listInvoices(clientIdOf(request), request.params.user_id, page);
        return toPage(publicBaseUrl, request.url, page, count, results);
      },
    );
  };
}

/** The signed invoice links: outside /api/v1, no bearer token; a bad, expired or forged link is 404. */
export function invoiceDocumentRoutes(deps: { invoicing: Invoicing }) {
  return async function register(app: HttpApp) {
    app.get(
      '/invoices/:invoice_id/pdf',
      {
        schema: {
          summary: 'Invoice PDF (signed link)',
          tags: ['Invoices'],
          params: InvoicePdfParams,
          querystring: InvoicePdfQuery,
          response: withErrors(
            { 200: Type.Unsafe({ description: 'The PDF.', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } }) },
            [400, 404],
          ),
        },
      },
      async (request, reply) => {
        const { pdf, filename } = await deps.invoicing.invoicePdf(request.params.invoice_id, request.query.expires, request.query.signature);
        return reply
          .header('content-type', 'application/pdf')
          .header('content-disposition', `inline; filename="${filename}"`)
          .header('cache-control', 'private, no-store')
          .send(pdf);
      },
    );
  };
}
