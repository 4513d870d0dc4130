// Security headers on every answer, from one root onSend hook (so problems,
// 404s, the OCPI envelope, the API reference and the sandbox pages get them
// alike). JSON answers may not be framed or run anything; HTML pages get a
// policy as strict as the page allows.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** What a JSON (or any non-page) answer may do in a browser: nothing. */
export const JSON_CSP = "default-src 'none'; frame-ancestors 'none'";
/** A page of ours without scripts or styles of its own (a route with its own policy sets it, e.g. /sandbox/). */
const PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** A browser's built-in PDF viewer can be refused under default-src 'none'; a PDF runs no script of ours, so only framing is ruled out. */
const PDF_CSP = "frame-ancestors 'none'";

// Inline scripts without a src attribute (the API reference's one-line start-up call).
const INLINE_SCRIPT = /<script\b(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script>/gi;

/**
 * The API reference (Scalar): its bundle is served from /docs/js/scalar.js
 * ('self'); its inline start-up script is allowed by hash, so no other
 * inline script runs. It fetches the OpenAPI document from this origin and
 * sends "try it" requests to the public base URL. Its styles are injected at
 * run time as a <style> element and style attributes, which only
 * 'unsafe-inline' allows for styles (a nonce would have to be fixed at
 * registration, which is no nonce at all). Its web fonts are turned off
 * (withDefaultFonts: false in app.ts), so nothing loads from elsewhere.
 */
export function docsCsp(html: string, publicOrigin: string): string {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map(
    (m) =>
      `'sha256-${createHash('sha256')
        .update(m[1] ?? '', 'utf8')
        .digest('base64')}'`,
  );
  return [
    "default-src 'none'",
    `script-src 'self' ${hashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${publicOrigin ? ` ${publicOrigin}` : ''}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/** The headers every answer carries whatever its kind. */
export function addCommonSecurityHeaders(reply: FastifyReply): void {
  // Lower-case names: Fastify stores them as given (these run on every answer).
  void reply.header('x-content-type-options', 'nosniff');
  void reply.header('x-frame-options', 'DENY');
  // The signed invoice link carries its signature in the query: it must not leave in a Referer.
  void reply.header('referrer-policy', 'no-referrer');
}

/** For answers sent before routing (a malformed URL), which no onSend hook sees: always JSON problems. */
export function addJsonSecurityHeaders(reply: FastifyReply): void {
  addCommonSecurityHeaders(reply);
  void reply.header('Content-Security-Policy', JSON_CSP);
}

export function addSecurityHeaders(app: FastifyInstance, options: { publicBaseUrl: string; docsPrefix: string }): void {
  const publicOrigin = originOf(options.publicBaseUrl);
  // A callback hook, not an async one: it runs on every answer and needs no promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    addCommonSecurityHeaders(reply);
    if (reply.hasHeader('content-security-policy')) return done(null, payload);
    const type = String(reply.getHeader('content-type') ?? '');
    let csp = JSON_CSP;
    if (type.startsWith('text/html')) {
      const pathname = request.url.split('?')[0] ?? '';
      csp = pathname.startsWith(`${options.docsPrefix}/`) && typeof payload === 'string' ? docsCsp(payload, publicOrigin) : PAGE_CSP;
    } else if (type.startsWith('application/pdf')) {
      csp = PDF_CSP;
    }
    void reply.header('content-security-policy', csp);
    done(null, payload);
  });
}
