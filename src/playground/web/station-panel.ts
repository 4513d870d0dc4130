// The station panel: a station as GET /stations/details/ answers it, its price groups in plain words, and its
// charge points (EVSEs) with a Start button each.
import type { PlaygroundApi, Station } from './api.ts';
import { fill, h } from './dom.ts';
import { priceGroupWords } from './price-words.ts';

export interface StationPanelDeps {
  api: PlaygroundApi;
  panel: HTMLElement;
  /** Why no session can be started now (no card yet, one running), or undefined when one can. */
  cannotStart(): string | undefined;
  start(evseId: string): void;
}

const STATUS_WORDS: Record<string, string> = {
  AVAILABLE: 'free',
  CHARGING: 'in use',
  BLOCKED: 'blocked',
  RESERVED: 'reserved',
  OUTOFORDER: 'out of order',
  INOPERATIVE: 'not in operation',
  PLANNED: 'planned',
  REMOVED: 'removed',
  UNKNOWN: 'status unknown',
};

function openingWords(station: Station): string {
  const { twentyfourseven, regular_hours } = station.opening_times;
  if (twentyfourseven) return 'Open 24/7';
  if (regular_hours.length === 0) return 'Opening hours not published';
  return `Open ${regular_hours.map((r) => `${r.weekday.slice(0, 3).toLowerCase()} ${r.period_begin}–${r.period_end}`).join(', ')}`;
}

export function createStationPanel(deps: StationPanelDeps) {
  const { api, panel } = deps;
  let shown: Station | undefined;
  let asked = 0;

  function evseRow(evse: Station['evses'][number]): HTMLLIElement {
    const why = evse.status === 'AVAILABLE' ? deps.cannotStart() : 'This charge point is not free.';
    const button = h('button', { text: 'Start charging', attrs: { type: 'button', 'data-evse-id': evse.evse_id } });
    button.disabled = why !== undefined;
    if (why) button.title = why;
    button.addEventListener('click', () => deps.start(evse.evse_id));
    return h(
      'li',
      { className: `evse status-${evse.status}` },
      h('span', { className: 'evse-id', text: evse.evse_id }),
      button,
      h('span', { className: 'evse-status', text: STATUS_WORDS[evse.status] ?? evse.status }),
    );
  }

  function render(station: Station): void {
    const why = deps.cannotStart();
    const groups = station.price_groups.map((group) => {
      const words = priceGroupWords(group);
      return h('li', { className: 'price-group' }, h('strong', { text: words.title }), h('ul', {}, ...words.lines.map((line) => h('li', { text: line }))));
    });
    const phone = station.operator.contact.phone;
    fill(
      panel,
      h('h2', { text: station.name, attrs: { id: 'station-name' } }),
      h('p', { className: 'address', text: station.address }),
      h('p', { text: `${station.operator.name}${station.is_partner ? ' (partner)' : ''}${phone ? ` · ${phone}` : ''}` }),
      h('p', { className: 'note', text: `${openingWords(station)} · ${station.speed} · station ${station.status}` }),
      h('h3', { text: 'Charge points' }),
      h('ul', { className: 'evses' }, ...station.evses.map(evseRow)),
      why ? h('p', { className: 'note', text: why, attrs: { id: 'cannot-start' } }) : undefined,
      h('h3', { text: 'Prices' }),
      groups.length ? h('ul', { className: 'price-groups' }, ...groups) : h('p', { text: 'No prices published.' }),
    );
    panel.dataset.stationId = station.id;
    panel.hidden = false;
  }

  async function show(stationId: string): Promise<void> {
    const mine = ++asked;
    panel.hidden = false;
    panel.setAttribute('aria-busy', 'true');
    try {
      const station = await api.station(stationId);
      if (mine !== asked) return;
      shown = station;
      render(station);
    } catch (error) {
      if (mine === asked) fill(panel, h('p', { className: 'error', text: `The station could not be loaded: ${(error as Error).message}` }));
    } finally {
      if (mine === asked) panel.removeAttribute('aria-busy');
    }
  }

  return {
    show,
    /** Reads the shown station again (its charge points' statuses change as sessions start and end). */
    refresh: () => (shown ? show(shown.id) : Promise.resolve()),
    /** Redraws the Start buttons (a card arrived, a session started or ended). */
    redraw: () => {
      if (shown) render(shown);
    },
  };
}
