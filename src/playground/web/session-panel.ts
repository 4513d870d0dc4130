// A charging session from start to invoice: started on an EVSE, followed live through the session's event stream
// (status changes, energy and cost as the operator reports them), stopped, and, once the operator's CDR is billed,
// the invoice's link (invoice.created on the same stream).
import type { Invoice, PlaygroundApi, Session, SessionEvent } from './api.ts';
import { fill, h } from './dom.ts';

export interface SessionPanelDeps {
  api: PlaygroundApi;
  panel: HTMLElement;
  /** A session started or ended (the station panel's charge points change). */
  changed(): void;
  log(message: string): void;
}

const STATUS_WORDS: Record<string, string> = {
  pending: 'Starting: the operator accepted, waiting for the car',
  active: 'Charging',
  stopping: 'Stopping: waiting for the operator’s final record',
  completed: 'Completed',
  failed: 'Failed',
};

function minutes(seconds: number | null): string {
  if (seconds === null) return '–';
  const m = Math.floor(seconds / 60);
  return `${m} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** The session's station, status and meter: energy and cost as the operator reported them so far, then final. */
function sessionView(s: Session, invoice: Invoice | undefined): HTMLElement[] {
  const currency = invoice?.currency ?? (s.session_cost.currency || s.user_facing_session_prices.currency);
  const cost = s.status === 'completed' && s.session_cost.invoice_summary !== '0.00' ? s.session_cost.invoice_summary : s.estimated_cost;
  const status = h('p', {
    className: `session-status status-${s.status}`,
    text: STATUS_WORDS[s.status] ?? s.status,
    attrs: { id: 'session-status', 'data-status': s.status },
  });
  return [
    h('p', {}, h('strong', { text: s.station_info.station_name ?? s.station_id }), ` · ${s.evse_id}`),
    status,
    ...(s.failure_reason ? [h('p', { className: 'error', text: s.failure_reason })] : []),
    h(
      'dl',
      { className: 'meter' },
      h('dt', { text: 'Energy' }),
      h('dd', { text: `${s.consumed_energy} kWh`, attrs: { id: 'session-energy' } }),
      h('dt', { text: s.status === 'completed' ? 'Cost' : 'Cost so far' }),
      h('dd', { text: cost ? `${cost} ${currency}` : '–', attrs: { id: 'session-cost' } }),
      h('dt', { text: 'Duration' }),
      h('dd', { text: minutes(s.duration) }),
    ),
  ];
}

/** The invoice's signed link once there is one; after completion, what is awaited. */
function invoiceLine(s: Session, invoice: Invoice | undefined): HTMLElement | undefined {
  const link = invoice?.link ?? s.session_cost.invoice_download;
  if (link) {
    const words = invoice ? `Invoice ${invoice.number} (${invoice.total} ${invoice.currency}, PDF)` : 'Invoice (PDF)';
    return h('p', { className: 'invoice' }, h('a', { text: words, attrs: { href: link, target: '_blank', id: 'invoice-link' } }));
  }
  if (s.status !== 'completed') return undefined;
  return h('p', { className: 'note', text: Number(s.consumed_energy) > 0 ? 'Waiting for the invoice…' : 'Nothing was charged: no invoice.' });
}

export function createSessionPanel(deps: SessionPanelDeps) {
  const { api, panel } = deps;
  let userId: string | undefined;
  let session: Session | undefined;
  let invoice: Invoice | undefined;
  let following: AbortController | undefined;
  let problem = '';
  let stopping = false;

  function render(): void {
    if (!session) {
      fill(
        panel,
        h('h2', { text: 'Charging' }),
        problem ? h('p', { className: 'error', text: problem }) : h('p', { className: 'note', text: 'Pick a free charge point on the map.' }),
      );
      return;
    }
    const stop = h('button', { text: stopping ? 'Stopping…' : 'Stop charging', attrs: { type: 'button', id: 'stop' } });
    stop.disabled = stopping || !(session.status === 'pending' || session.status === 'active');
    stop.addEventListener('click', () => void stopSession());
    fill(
      panel,
      h('h2', { text: 'Charging' }),
      ...sessionView(session, invoice),
      stop,
      invoiceLine(session, invoice),
      problem && h('p', { className: 'error', text: problem }),
    );
  }

  function apply(event: SessionEvent): void {
    if (event.type.startsWith('charging_session.')) {
      const next = event.data.object as Session;
      // Events carry the session's version: an older one than shown is stale.
      if (session && next.id === session.id && next.version < session.version) return;
      const changedStatus = next.status !== session?.status;
      session = next;
      if (changedStatus) {
        deps.log(`Session ${next.status}${next.failure_reason ? `: ${next.failure_reason}` : ''}.`);
        deps.changed();
      }
    } else if (event.type === 'invoice.created') {
      invoice = event.data.object;
      deps.log(`Invoice ${invoice.number}: ${invoice.total} ${invoice.currency}.`);
    } else if (event.type === 'debt.created') {
      deps.log('The final charge failed: the amount is now a debt of the user.');
    }
    render();
  }

  async function follow(owner: string, sessionId: string): Promise<void> {
    following?.abort();
    const controller = new AbortController();
    following = controller;
    try {
      for await (const event of api.sessionEvents(owner, sessionId, controller.signal)) apply(event);
    } catch (error) {
      if (!controller.signal.aborted) {
        problem = `The live updates stopped: ${(error as Error).message}`;
        render();
      }
    }
  }

  async function start(owner: string, paymentMethodId: string, evseId: string): Promise<void> {
    problem = '';
    invoice = undefined;
    stopping = false;
    render();
    try {
      session = await api.start(owner, paymentMethodId, evseId);
      userId = owner;
      deps.log(`Started session ${session.id} on ${evseId}.`);
      void follow(owner, session.id);
    } catch (error) {
      problem = `Could not start on ${evseId}: ${(error as Error).message}`;
    }
    render();
    panel.scrollIntoView({ block: 'nearest' });
    deps.changed();
  }

  async function stopSession(): Promise<void> {
    if (!session || !userId) return;
    stopping = true;
    render();
    try {
      await api.stop(userId, session.id);
      deps.log(`Asked the operator to stop session ${session.id}.`);
    } catch (error) {
      problem = `Could not stop: ${(error as Error).message}`;
    }
    stopping = false;
    render();
  }

  /** Picks up the user's running session (after a reload), if any. */
  async function resume(owner: string): Promise<void> {
    const running = (await api.sessions(owner)).find((s) => s.is_active);
    if (!running) return;
    userId = owner;
    session = running;
    render();
    deps.changed();
    void follow(owner, running.id);
  }

  render();
  return {
    start,
    resume,
    /** True while the shown session runs (a user charges on one charge point at a time here). */
    running: () => session?.is_active === true,
  };
}
