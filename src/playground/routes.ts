// The playground under /playground/: its page and assets (bundle.ts), and the short-lived token it calls the API
// with (token.ts). Registered by app.ts only outside production (as the payment sandbox's /sandbox/ is only where
// the sandbox is the processor); in production /playground/ is a 404 like any unknown path.
import { Type } from 'typebox';
import { AppError, notFound } from '../platform/errors.ts';
import type { HttpApp } from '../platform/http/server.ts';
import type { PlaygroundAssets } from './bundle.ts';
import type { PlaygroundToken } from './token.ts';

export interface PlaygroundRoutesDeps {
  assets(): Promise<PlaygroundAssets>;
  token(): Promise<PlaygroundToken>;
}

/**
 * The page runs only its own bundle, talks only to this origin, and draws its map from the bundled country outlines:
 * nothing may load from elsewhere. Leaflet positions its panes with inline styles set from script (CSSOM), which
 * style-src does not govern, so no 'unsafe-inline' is needed.
 */
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TokenAnswer = Type.Object({
  token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_at: Type.String({ format: 'date-time' }),
});

export function playgroundRoutes(deps: PlaygroundRoutesDeps) {
  return async function register(app: HttpApp) {
    // Relative asset paths need the trailing slash.
    app.get('/playground', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/playground/', 308));

    app.get('/playground/', { schema: { hide: true } }, async (_request, reply) => {
      const page = (await deps.assets()).get('index.html');
      if (!page) throw notFound('Page');
      return reply.type(page.type).header('content-security-policy', PAGE_CSP).header('cache-control', 'no-cache').send(page.body);
    });

    app.get('/playground/token', { schema: { hide: true, response: { 200: TokenAnswer } } }, async (request, reply) => {
      // Browsers say where a request comes from: only the playground's own page gets the token.
      const site = request.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin' && site !== 'none') {
        throw new AppError('unauthorized', 'The playground token is handed only to the playground page itself (same-origin requests).');
      }
      const { token, expiresAt } = await deps.token();
      void reply.header('cache-control', 'no-store');
      return { token, token_type: 'Bearer' as const, expires_at: expiresAt.toISOString() };
    });

    app.get('/playground/:asset', { schema: { hide: true, params: Type.Object({ asset: Type.String({ maxLength: 64 }) }) } }, async (request, reply) => {
      const { asset } = request.params;
      const found = asset === 'index.html' ? undefined : (await deps.assets()).get(asset);
      if (!found) throw notFound('Playground file');
      return reply.type(found.type).header('cache-control', 'no-cache').send(found.body);
    });
  };
}
