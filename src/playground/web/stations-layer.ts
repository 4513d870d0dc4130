// Stations on the map from GET /stations/tile/: the visible slippy-map tiles at the map's zoom (256 px each, as the
// API cuts them), at most 64 a request, with the filters. A cluster shows its count and, clicked, zooms to its
// expansion_zoom (where it splits); a station shows its status and price and, clicked, opens its panel.
import L from 'leaflet';
import type { PlaygroundApi, TileFeature, TileQuery } from './api.ts';
import { h } from './dom.ts';
import { MAX_ZOOM } from './map.ts';

const MAX_TILES_PER_REQUEST = 64;

export type TileFilter = Omit<TileQuery, 'z' | 'x' | 'y'>;

export interface StationsLayerDeps {
  map: L.Map;
  api: PlaygroundApi;
  filter(): TileFilter;
  openStation(stationId: string): void;
  /** Where a failed load is told. */
  failed(message: string): void;
}

/** The tiles that cover the map's view at zoom z (clamped to the world). */
export function visibleTiles(map: L.Map, z: number): { x: number[]; y: number[] } {
  const bounds = map.getPixelBounds();
  const scale = map.getZoomScale(z, map.getZoom());
  const last = 2 ** z - 1;
  const clamp = (v: number) => Math.min(Math.max(v, 0), last);
  const min = bounds.min as L.Point;
  const max = bounds.max as L.Point;
  const [x0, x1] = [clamp(Math.floor((min.x * scale) / 256)), clamp(Math.floor((max.x * scale - 1) / 256))];
  const [y0, y1] = [clamp(Math.floor((min.y * scale) / 256)), clamp(Math.floor((max.y * scale - 1) / 256))];
  const x: number[] = [];
  const y: number[] = [];
  for (let tx = x0; tx <= x1; tx++) {
    for (let ty = y0; ty <= y1; ty++) {
      x.push(tx);
      y.push(ty);
    }
  }
  return { x, y };
}

/** A marker's action on a click, and on Enter or Space (markers are focusable buttons; Leaflet itself only opens popups from the keyboard). */
function onActivate(marker: L.Marker, action: () => void): L.Marker {
  marker.on('click', action);
  marker.on('keypress', (event: L.LeafletKeyboardEvent) => {
    if (event.originalEvent.key === 'Enter' || event.originalEvent.key === ' ') action();
  });
  return marker;
}

function clusterMarker(f: TileFeature, map: L.Map): L.Marker {
  const [lon, lat] = f.geometry.coordinates.map(Number) as [number, number];
  const { count, status } = f.properties;
  const [size, px] = count < 10 ? ['small', 28] : count < 100 ? ['medium', 34] : ['large', 42];
  const icon = L.divIcon({ className: `cluster cluster-${size} status-${status}`, html: h('span', { text: String(count) }), iconSize: [px, px] });
  const marker = L.marker([lat, lon], { icon, title: `${count} stations: zoom in`, keyboard: true, riseOnHover: true });
  return onActivate(marker, () => {
    const expansion = f.properties.expansion_zoom ?? map.getZoom() + 1;
    map.setView([lat, lon], Math.min(Math.max(expansion, map.getZoom() + 1), MAX_ZOOM));
  });
}

function stationMarker(f: TileFeature, openStation: (id: string) => void): L.Marker {
  const [lon, lat] = f.geometry.coordinates.map(Number) as [number, number];
  const { status, speed } = f.properties;
  const price = f.price_properties
    ? `${f.price_properties.price} ${f.price_properties.currency}${f.price_properties.type === 'time_price' ? '/min' : '/kWh'}`
    : '';
  const label = h('span', { className: 'price', text: price });
  const dot = h('span', { className: 'dot' });
  const element = h('span', { attrs: { 'data-station-id': f.station_id ?? '' } }, dot, price ? label : undefined);
  const partner = f.custom_properties?.is_partner ? ' partner' : '';
  // The icon is the dot; the price label hangs beside it (style.css), outside the icon's box.
  const icon = L.divIcon({ className: `station status-${status} speed-${speed}${partner}`, html: element, iconSize: [16, 16] });
  const title = `Station: ${status}, ${speed}${price ? `, ${price}` : ''}`;
  const marker = L.marker([lat, lon], { icon, title, keyboard: true, riseOnHover: true });
  return onActivate(marker, () => openStation(f.station_id as string));
}

export function createStationsLayer(deps: StationsLayerDeps) {
  const { map, api } = deps;
  const layer = L.layerGroup().addTo(map);
  let loading: AbortController | undefined;

  async function refresh(): Promise<void> {
    loading?.abort();
    const controller = new AbortController();
    loading = controller;
    const z = Math.min(Math.max(Math.round(map.getZoom()), 0), MAX_ZOOM);
    const { x, y } = visibleTiles(map, z);
    const filter = deps.filter();
    const requests: Promise<TileFeature[]>[] = [];
    for (let k = 0; k < x.length; k += MAX_TILES_PER_REQUEST) {
      const query = { z, x: x.slice(k, k + MAX_TILES_PER_REQUEST), y: y.slice(k, k + MAX_TILES_PER_REQUEST), ...filter };
      requests.push(api.tile(query, controller.signal));
    }
    let features: TileFeature[];
    try {
      features = (await Promise.all(requests)).flat();
    } catch (error) {
      if (controller.signal.aborted) return;
      deps.failed(`Stations could not be loaded: ${(error as Error).message}`);
      return;
    }
    if (controller.signal.aborted) return;
    layer.clearLayers();
    let stations = 0;
    let clusters = 0;
    for (const f of features) {
      if (f.station_id) {
        stations++;
        layer.addLayer(stationMarker(f, deps.openStation));
      } else {
        clusters++;
        layer.addLayer(clusterMarker(f, map));
      }
    }
    // What is drawn, for people (the summary line) and for tests (the map's data attributes).
    const container = map.getContainer();
    container.dataset.zoom = String(z);
    container.dataset.stations = String(stations);
    container.dataset.clusters = String(clusters);
    container.dataset.loaded = String(Number(container.dataset.loaded ?? '0') + 1);
  }

  map.on('moveend', () => void refresh());
  return { refresh };
}
