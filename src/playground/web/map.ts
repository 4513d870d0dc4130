// The map: Leaflet over bundled country outlines (Natural Earth via world-atlas, public domain), no map tiles from
// anywhere. Leaflet rather than MapLibre GL: it draws with SVG and the DOM, needs no WebGL (which headless Chromium
// in CI lacks without a GPU), is about a fifth of the size, and plain markers are all the stations layer needs.
// The view is kept in the address (#zoom/latitude/longitude), so a reload or a shared link shows the same place.
import L from 'leaflet';
import { feature, mesh } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';

export const MAX_ZOOM = 20;
const DEFAULT_VIEW = { zoom: 5, center: [50.5, 10] as [number, number] };

/** "#7/52.52/13.4" -> the view it names, or undefined when the address names none (or nonsense). */
export function viewFromHash(hash: string): { zoom: number; center: [number, number] } | undefined {
  const match = /^#(\d{1,2})\/(-?\d+(?:\.\d+)?)\/(-?\d+(?:\.\d+)?)$/.exec(hash);
  if (!match) return undefined;
  const [zoom, lat, lon] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (zoom > MAX_ZOOM || Math.abs(lat) > 85 || Math.abs(lon) > 180) return undefined;
  return { zoom, center: [lat, lon] };
}

export function createMap(container: HTMLElement): L.Map {
  const view = viewFromHash(location.hash) ?? DEFAULT_VIEW;
  const map = L.map(container, {
    center: view.center,
    zoom: view.zoom,
    minZoom: 2,
    maxZoom: MAX_ZOOM,
    maxBounds: [
      [-85, -200],
      [85, 200],
    ],
  });
  map.attributionControl.setPrefix('Leaflet').addAttribution('Country outlines: Natural Earth');
  const remember = () => {
    const c = map.getCenter();
    history.replaceState(null, '', `#${map.getZoom()}/${c.lat.toFixed(5)}/${c.lng.toFixed(5)}`);
  };
  map.on('moveend', remember);
  window.addEventListener('hashchange', () => {
    const asked = viewFromHash(location.hash);
    if (asked) map.setView(asked.center, asked.zoom);
  });
  return map;
}

/** Land and borders from the bundled TopoJSON (countries.json, served beside the page). */
export async function drawCountries(map: L.Map): Promise<void> {
  const res = await fetch('countries.json');
  if (!res.ok) throw new Error(`the country outlines did not load (HTTP ${res.status})`);
  const world = (await res.json()) as Topology<{ countries: GeometryCollection }>;
  const land = feature(world, world.objects.countries);
  const borders = mesh(world, world.objects.countries, (a, b) => a !== b);
  L.geoJSON(land, { interactive: false, style: { className: 'land', stroke: false, fillOpacity: 1 } }).addTo(map);
  L.geoJSON(borders, { interactive: false, style: { className: 'border', weight: 0.8, fill: false } }).addTo(map);
}
