// The map's filters, as GET /stations/tile/ takes them: connector types, only available, only partners, partner
// operators, power groups (slow < 43 kW, fast, turbo >= 150 kW) and a maximum price (incl. VAT, per kWh or per
// minute in the station's own currency). A value the API would refuse is named beside its field instead of sent.
import type { PlaygroundApi } from './api.ts';
import { fill, h } from './dom.ts';
import { CONNECTOR_NAMES } from './price-words.ts';
import type { TileFilter } from './stations-layer.ts';

const POWER_GROUPS = [
  ['slow', 'Slow (below 43 kW)'],
  ['fast', 'Fast (43 to 149 kW)'],
  ['turbo', 'Turbo (150 kW and more)'],
] as const;

function checkbox(id: string, label: string, value?: string): HTMLLabelElement {
  return h('label', { className: 'check' }, h('input', { attrs: { type: 'checkbox', id, ...(value ? { value } : {}) } }), label);
}

function selected(select: HTMLSelectElement): string[] {
  return [...select.selectedOptions].map((option) => option.value);
}

export function createFilters(form: HTMLFormElement, api: PlaygroundApi, changed: () => void) {
  const connectors = h(
    'select',
    { attrs: { id: 'f-connectors', multiple: '', size: '6', 'aria-describedby': 'f-connectors-help' } },
    ...Object.entries(CONNECTOR_NAMES).map(([value, name]) => h('option', { text: name, attrs: { value } })),
  );
  const partners = h('select', { attrs: { id: 'f-partners', multiple: '', size: '3' } });
  const partnersNote = h('p', { className: 'note', attrs: { id: 'f-partners-note' } });
  const maxPrice = h('input', {
    attrs: { id: 'f-max-price', type: 'text', inputmode: 'decimal', placeholder: 'e.g. 0.60', 'aria-describedby': 'f-max-price-error' },
  });
  const maxPriceError = h('p', { className: 'field-error', attrs: { id: 'f-max-price-error', role: 'alert' } });
  fill(
    form,
    h('label', { attrs: { for: 'f-connectors' } }, 'Connector types'),
    connectors,
    h('p', { className: 'note', text: 'Ctrl/Cmd-click to pick several; none picked: all.', attrs: { id: 'f-connectors-help' } }),
    checkbox('f-available', 'Only stations with a free charge point'),
    checkbox('f-only-partners', 'Only partner operators'),
    h('label', { attrs: { for: 'f-partners' } }, 'Partner operators'),
    partners,
    partnersNote,
    h('fieldset', {}, h('legend', { text: 'Power' }), ...POWER_GROUPS.map(([value, label]) => checkbox(`f-power-${value}`, label, value))),
    h('label', { attrs: { for: 'f-max-price' } }, 'Max price (incl. VAT, per kWh or per minute)'),
    maxPrice,
    maxPriceError,
  );

  void api.partners().then(
    (list) => {
      fill(partners, ...list.map((p) => h('option', { text: p.name, attrs: { value: p.name } })));
      partnersNote.textContent = list.length === 0 ? 'No partners yet (the operator adds them with: charging-access partners add).' : '';
      partners.disabled = list.length === 0;
    },
    (error: Error) => {
      partnersNote.textContent = `Partners could not be loaded: ${error.message}`;
    },
  );

  /** The max price as the API takes it, or an error to show beside the field. */
  function maxPriceValue(): { value?: number; error?: string } {
    const text = maxPrice.value.trim().replace(',', '.');
    if (text === '') return {};
    if (!/^\d+(\.\d+)?$/.test(text)) return { error: 'Max price: must be a number of at least 0, such as 0.60' };
    return { value: Number(text) };
  }

  function current(): TileFilter {
    const filter: TileFilter = {};
    const types = selected(connectors);
    // The options' values are CONNECTOR_NAMES' keys: the API's connector types.
    if (types.length) filter.connector_types = types as TileFilter['connector_types'];
    if ((form.querySelector('#f-available') as HTMLInputElement).checked) filter.only_available = true;
    if ((form.querySelector('#f-only-partners') as HTMLInputElement).checked) filter.only_partners = true;
    const operators = selected(partners);
    if (operators.length) filter.operators = operators;
    const power = POWER_GROUPS.map(([value]) => value).filter((value) => (form.querySelector(`#f-power-${value}`) as HTMLInputElement).checked);
    if (power.length) filter.power_groups = power;
    const price = maxPriceValue().value;
    if (price !== undefined) filter.max_price = price;
    return filter;
  }

  // Enter in the price field both commits it (change) and submits the form: the map is asked again only when the filter differs.
  let applied = JSON.stringify(current());
  const onChange = () => {
    const { error } = maxPriceValue();
    maxPriceError.textContent = error ?? '';
    maxPrice.setAttribute('aria-invalid', error ? 'true' : 'false');
    const filter = JSON.stringify(current());
    if (error || filter === applied) return;
    applied = filter;
    changed();
  };
  form.addEventListener('change', onChange);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    onChange();
  });
  return { current };
}
