// The demo user and its cards. The user is created once (with the billing details charging needs) and remembered
// in this browser; a card is added as a client app would: a setup intent from the API, confirmed on the payment
// processor's page, here the payment sandbox's hosted page (/sandbox/), opened in a new tab. The card reaches the
// user through the processor's webhook, so the panel looks for it until it is there.
import type { PaymentMethod, PlaygroundApi, User } from './api.ts';
import { fill, h } from './dom.ts';

const STORED_USER = 'charging-access-playground-user';
const CARD_WAIT_MS = 5 * 60_000;
const CARD_POLL_MS = 1_500;

export interface UserPanelDeps {
  api: PlaygroundApi;
  panel: HTMLElement;
  /** The user or its cards changed (the station panel's Start buttons follow). */
  changed(): void;
  log(message: string): void;
}

function methodWords(method: PaymentMethod): string {
  const what = method.card
    ? `${method.card.brand} •••• ${method.card.last4} (expires ${method.card.expiration_date})`
    : method.paypal
      ? `PayPal ${method.paypal.email ?? ''}`
      : method.type;
  return `${what}${method.default ? ' · default' : ''}`;
}

export function createUserPanel(deps: UserPanelDeps) {
  const { api, panel } = deps;
  let user: User | undefined;
  let methods: PaymentMethod[] = [];
  let waiting: { sandboxUrl: string; since: number } | undefined;
  let status = '';

  function render(): void {
    const add = h('button', { text: waiting ? 'Waiting for the card…' : 'Add a card', attrs: { type: 'button', id: 'add-card' } });
    add.disabled = !user || waiting !== undefined;
    add.addEventListener('click', () => void addCard());
    const fresh = h('button', { text: 'New demo user', attrs: { type: 'button', id: 'new-user', class: 'secondary' } });
    fresh.addEventListener('click', () => void newUser());
    fill(
      panel,
      h('h2', { text: 'Demo user' }),
      user
        ? h('p', {}, 'Ada Lovelace, Berlin (DE) · ', h('code', { text: user.id, attrs: { id: 'user-id' } }))
        : h('p', { text: status ? 'No demo user.' : 'Creating…' }),
      h(
        'ul',
        { className: 'methods', attrs: { id: 'payment-methods' } },
        ...(methods.length ? methods.map((m) => h('li', { text: methodWords(m) })) : [h('li', { className: 'note', text: 'No card yet: add one to charge.' })]),
      ),
      add,
      ' ',
      fresh,
      waiting &&
        h(
          'p',
          { className: 'note' },
          'Confirm the card on the payment sandbox (opened in a new tab; test card 4242 4242 4242 4242). Not opened? ',
          h('a', { text: 'Open the payment sandbox', attrs: { href: waiting.sandboxUrl, target: '_blank', id: 'sandbox-link' } }),
        ),
      status && h('p', { className: 'error', text: status }),
    );
  }

  async function loadMethods(): Promise<void> {
    if (!user) return;
    methods = await api.paymentMethods(user.id);
  }

  async function newUser(): Promise<void> {
    user = undefined;
    methods = [];
    status = '';
    render();
    try {
      user = await api.createDemoUser();
      localStorage.setItem(STORED_USER, user.id);
      deps.log(`Created the demo user ${user.id} with its billing details.`);
    } catch (error) {
      status = `The demo user could not be created: ${(error as Error).message}`;
    }
    render();
    deps.changed();
  }

  async function addCard(): Promise<void> {
    if (!user) return;
    status = '';
    try {
      const intent = await api.setupIntent(user.id);
      const sandboxUrl = `/sandbox/?setup_intent=${encodeURIComponent(intent.id)}&client_secret=${encodeURIComponent(intent.client_secret)}`;
      waiting = { sandboxUrl, since: Date.now() };
      window.open(sandboxUrl, '_blank');
      deps.log(`Setup intent ${intent.id}: confirm the card on the payment sandbox.`);
    } catch (error) {
      status = `No setup intent: ${(error as Error).message}`;
    }
    render();
    if (waiting) void waitForCard(methods.length);
  }

  async function waitForCard(before: number): Promise<void> {
    while (waiting && Date.now() - waiting.since < CARD_WAIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, CARD_POLL_MS));
      try {
        await loadMethods();
      } catch {
        continue; // the next look may work: the service restarting, a token being renewed
      }
      if (methods.length > before) {
        waiting = undefined;
        deps.log(`Card added: ${methodWords(methods[0] as PaymentMethod)}.`);
        render();
        deps.changed();
        return;
      }
    }
    if (waiting) status = 'No card arrived within 5 minutes: add one again.';
    waiting = undefined;
    render();
  }

  async function start(): Promise<void> {
    render();
    const stored = localStorage.getItem(STORED_USER);
    const known = stored ? await api.user(stored).catch(() => undefined) : undefined;
    if (!known) return newUser();
    user = known;
    await loadMethods().catch((error: Error) => {
      status = `The cards could not be loaded: ${error.message}`;
    });
    render();
    deps.changed();
  }

  return {
    start,
    user: () => user,
    /** The card to charge with: the default one, else the newest. */
    paymentMethod: () => methods.find((m) => m.default) ?? methods[0],
  };
}
