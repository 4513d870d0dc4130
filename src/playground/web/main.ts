// The playground page: a map of the stations with filters, a station's panel, the demo user with its cards, and a
// charging session followed live to its invoice, all through the SDK (api-client.ts) with the playground's token.
import 'leaflet/dist/leaflet.css';
import './style.css';
import { connectApi } from './api-client.ts';
import { byId, h } from './dom.ts';
import { createFilters } from './filters.ts';
import { createMap, drawCountries } from './map.ts';
import { createSessionPanel } from './session-panel.ts';
import { createStationPanel } from './station-panel.ts';
import { createStationsLayer } from './stations-layer.ts';
import { createUserPanel } from './user-panel.ts';

function activityLog(list: HTMLElement) {
  return (message: string) => {
    const time = new Date().toLocaleTimeString();
    list.prepend(h('li', {}, h('time', { text: time }), ` ${message}`));
    while (list.childElementCount > 50) list.lastElementChild?.remove();
  };
}

async function main(): Promise<void> {
  const log = activityLog(byId('log-lines'));
  const problem = byId('problem');
  const api = connectApi((message) => {
    problem.textContent = message;
    problem.hidden = !message;
  });
  const map = createMap(byId('map'));
  // The background is drawn in the meantime; stations do not wait for it.
  void drawCountries(map).catch((error: Error) => log(error.message));

  let stationPanel: ReturnType<typeof createStationPanel> | undefined;
  const sessionPanel = createSessionPanel({
    api,
    panel: byId('session'),
    changed: () => void stationPanel?.refresh(),
    log,
  });
  const userPanel = createUserPanel({ api, panel: byId('user'), changed: () => stationPanel?.redraw(), log });
  stationPanel = createStationPanel({
    api,
    panel: byId('station'),
    cannotStart: () => {
      if (!userPanel.user()) return 'The demo user is being created.';
      if (!userPanel.paymentMethod()) return 'Add a card first.';
      if (sessionPanel.running()) return 'A session is running: stop it first.';
      return undefined;
    },
    start: (evseId) => {
      const user = userPanel.user();
      const method = userPanel.paymentMethod();
      if (user && method) void sessionPanel.start(user.id, method.id, evseId);
    },
  });
  const shownStation = stationPanel;
  let stations: ReturnType<typeof createStationsLayer> | undefined;
  const filters = createFilters(byId<HTMLFormElement>('filters'), api, () => void stations?.refresh());
  stations = createStationsLayer({
    map,
    api,
    filter: filters.current,
    openStation: (id) => void shownStation.show(id),
    failed: log,
  });
  await stations.refresh();
  await userPanel.start();
  const user = userPanel.user();
  if (user) await sessionPanel.resume(user.id).catch((error: Error) => log(`The running session could not be read: ${error.message}`));
}

main().catch((error: Error) => {
  const problem = document.getElementById('problem');
  if (problem) {
    problem.textContent = `The playground could not start: ${error.message}`;
    problem.hidden = false;
  }
});
