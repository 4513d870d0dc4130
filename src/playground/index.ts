// The development playground (/playground/): a page that uses the API as a client app would, through the SDK, with
// a map of the stations, a demo user, a card from the payment sandbox, and a charging session to the invoice.
// This factory only assembles: the page and its assets (bundle.ts, web/), its token (token.ts), its routes.
import type { Clock } from '../platform/clock.ts';
import { playgroundAssets } from './bundle.ts';
import { playgroundRoutes } from './routes.ts';
import { type PlaygroundTokenContext, playgroundToken } from './token.ts';

/** What main.ts (or a test) gives the playground: the demo client's token, and the clients module's way to issue one. */
export interface PlaygroundSettings {
  demoToken: PlaygroundTokenContext['demoToken'];
  issueToken: PlaygroundTokenContext['issueToken'];
}

export function createPlayground(deps: PlaygroundSettings & { clock: Clock; authenticate: PlaygroundTokenContext['authenticate'] }) {
  const tokenContext: PlaygroundTokenContext = { ...deps, cache: {} };
  return playgroundRoutes({ assets: playgroundAssets(), token: () => playgroundToken(tokenContext) });
}
