// The playground's bearer token, minted here on the server.
//
// The playground is a page: whatever token it holds, anyone with the browser's developer tools holds too. So the
// page never sees the demo client's own token (DATA_DIR/demo-token, which never expires). It asks
// GET /playground/token and gets a token of the demo client that expires after TOKEN_LIFETIME_MS, registered like
// every token we issue (listed and revocable with the CLI); the page asks again before it expires. Scope: tokens of
// this service carry no scopes (a token is its client's, and reaches only that client's users), so the narrowest
// there is is the demo client itself, whose users, cards and sessions are demo data on the sandboxes. The lifetime
// is the other bound: a copied token stops working within 15 minutes. One token is handed out again while more than
// half of its life is left, so reloads do not register a new token each time.
import type { Clock } from '../platform/clock.ts';
import { AppError } from '../platform/errors.ts';

export const TOKEN_LIFETIME_MS = 15 * 60_000;

export interface PlaygroundToken {
  token: string;
  expiresAt: Date;
}

export interface PlaygroundTokenContext {
  clock: Clock;
  /** The demo client's own token (DATA_DIR/demo-token); undefined when there is no demo client (DEMO_CLIENT=false). */
  demoToken(): Promise<string | undefined>;
  /** The clients module: who a token belongs to (and whether it still works), and a new token for a client. */
  authenticate(authorization: string): Promise<{ clientId: string }>;
  issueToken(clientId: string, options: { expiresInMs: number }): Promise<{ token: string; expiresAt: Date | null }>;
  /** The token handed out last, and the demo token it was minted with (kept by the caller between requests). */
  cache: { current?: PlaygroundToken & { demoToken: string }; minting?: Promise<PlaygroundToken & { demoToken: string }> };
}

const isUnauthorized = (error: unknown) => error instanceof AppError && error.code === 'unauthorized';

/** The token the playground calls the API with: the one handed out last while it has more than half its life left and still works, else a new one. */
export async function playgroundToken(ctx: PlaygroundTokenContext): Promise<PlaygroundToken> {
  const { cache } = ctx;
  // Read on every call: the demo client may have been made anew (its token file replaced) or turned off since.
  const demoToken = await ctx.demoToken();
  if (!demoToken) {
    throw new AppError('conflict', 'The playground works as the demo client, and this service runs without one: start it with DEMO_CLIENT=true (the default).');
  }
  const current = cache.current;
  if (current && current.demoToken === demoToken && current.expiresAt.getTime() - ctx.clock.now().getTime() > TOKEN_LIFETIME_MS / 2) {
    // Revoked since (`tokens revoke`), or its client disabled: a new one is minted (and refused if the client is disabled).
    const works = await ctx.authenticate(`Bearer ${current.token}`).then(
      () => true,
      (error: unknown) => {
        if (isUnauthorized(error)) return false;
        throw error;
      },
    );
    if (works) return current;
  }
  cache.minting ??= mint(ctx, demoToken).finally(() => {
    cache.minting = undefined;
  });
  const minted = await cache.minting;
  cache.current = minted;
  return minted;
}

async function mint(ctx: PlaygroundTokenContext, demoToken: string): Promise<PlaygroundToken & { demoToken: string }> {
  let clientId: string;
  try {
    ({ clientId } = await ctx.authenticate(`Bearer ${demoToken}`));
  } catch (error) {
    if (!isUnauthorized(error)) throw error;
    throw new AppError(
      'conflict',
      'The demo client’s token no longer works (revoked, expired, or the client disabled): delete DATA_DIR/demo-token and restart the service to create a new demo client.',
    );
  }
  const issued = await ctx.issueToken(clientId, { expiresInMs: TOKEN_LIFETIME_MS });
  return { token: issued.token, expiresAt: issued.expiresAt ?? new Date(ctx.clock.now().getTime() + TOKEN_LIFETIME_MS), demoToken };
}
