// Map tiles with clusters that stay consistent across zoom levels and filters.
//
// Every station gets a Morton (Z-order) code of its Web-Mercator position on a
// 2^26 x 2^26 grid; stations sorted by code make every slippy-map tile, and
// every quarter of it, one contiguous range. A cluster at zoom z is the set of
// matching stations in one grid cell of level z + CELL_LEVELS (a tile is split
// into 4 x 4 cells), so:
// - a station belongs to exactly one cell per zoom, and every cell to exactly
//   one tile: adjacent tiles never lose or duplicate a station, and a tile's
//   counts add up to its matching stations;
// - a cell at zoom z is the union of its four child cells at z + 1: clusters
//   nest across zooms, and a cluster's expansion_zoom (where it splits) follows
//   from the deepest cell that still holds all its matching stations;
// - filters only decide which stations of a range count; nothing is rebuilt.
import type { StationStatus } from './projection.ts';

export const GRID_BITS = 26;
export const CELL_LEVELS = 2;
export const MAX_ZOOM = 20;

const GRID_SIZE = 2 ** GRID_BITS;

/** Spreads the low 13 bits of v to the even bit positions of a 26-bit value. */
function spread13(v: number): number {
  let x = v & 0x1fff;
  x = (x | (x << 8)) & 0x00ff00ff;
  x = (x | (x << 4)) & 0x0f0f0f0f;
  x = (x | (x << 2)) & 0x33333333;
  x = (x | (x << 1)) & 0x55555555;
  return x;
}

/** Morton code of grid cell (gx, gy), 0 <= gx, gy < 2^26: a 52-bit integer, exact in a double. */
export function mortonOfCell(gx: number, gy: number): number {
  const high = spread13(gx >>> 13) | (spread13(gy >>> 13) << 1);
  const low = spread13(gx & 0x1fff) | (spread13(gy & 0x1fff) << 1);
  return (high >>> 0) * 2 ** 26 + (low >>> 0);
}

/** Web-Mercator position in [0, 1) x [0, 1) (y grows southwards, as in tile coordinates). */
export function mercator(lon: number, lat: number): [number, number] {
  const x = (lon + 180) / 360;
  const sin = Math.sin((Math.max(-85.05112878, Math.min(85.05112878, lat)) * Math.PI) / 180);
  const y = 0.5 - (0.25 * Math.log((1 + sin) / (1 - sin))) / Math.PI;
  const clamp = (v: number) => Math.min(Math.max(v, 0), 1 - 1 / GRID_SIZE);
  return [clamp(x), clamp(y)];
}

export function mortonCode(lon: number, lat: number): number {
  const [x, y] = mercator(lon, lat);
  return mortonOfCell(Math.floor(x * GRID_SIZE), Math.floor(y * GRID_SIZE));
}

function lowerBound(codes: Float64Array, value: number, lo = 0, hi = codes.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((codes[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface TileStation {
  kind: 'station';
  index: number;
}

export interface TileCluster {
  kind: 'cluster';
  /** Stable id of the grid cell: "<level>/<cell index>". */
  id: string;
  count: number;
  expansionZoom: number;
  longitude: number;
  latitude: number;
  speedCode: number;
  status: StationStatus;
}

const STATUS_BITS: Record<StationStatus, number> = { free: 1, busy: 2, error: 4, unknown: 8 };

/**
 * The status of a cluster from the statuses of its members, given as bits
 * (free 1, busy 2, error 4, unknown 8): the station rule applied to members,
 * free if any free, else busy if any busy, else error if all error, else unknown.
 */
function statusOfBits(bits: number): StationStatus {
  if (bits & 1) return 'free';
  if (bits & 2) return 'busy';
  if (bits === 4) return 'error';
  return 'unknown';
}

/** The deepest grid level (0..26) whose cell holds both codes. */
function commonLevel(a: number, b: number): number {
  let level = GRID_BITS;
  let unit = 1;
  while (level > 0 && Math.floor(a / unit) !== Math.floor(b / unit)) {
    unit *= 4;
    level--;
  }
  return level;
}

/**
 * Features of tile (z, x, y) over the stations `accept` lets through (all when
 * null): single stations where a cell holds one, clusters elsewhere.
 */
export function tileItems(
  /** Morton codes of the stations, ascending: station k has the k-th code (stations are numbered in Morton order). */
  codes: Float64Array,
  z: number,
  x: number,
  y: number,
  accept: ((station: number) => boolean) | null,
  facts: { longitudes: Float64Array; latitudes: Float64Array; speedCodes: Uint8Array; statuses: readonly StationStatus[]; statusCodes: Uint8Array },
): (TileStation | TileCluster)[] {
  const shift = GRID_BITS - z;
  const start = mortonOfCell(x * 2 ** shift, y * 2 ** shift);
  const cellLevel = Math.min(z + CELL_LEVELS, GRID_BITS);
  const cellSpan = 4 ** (GRID_BITS - cellLevel);
  const cells = 4 ** (cellLevel - z);
  const statusBits = facts.statuses.map((status) => STATUS_BITS[status]);
  const items: (TileStation | TileCluster)[] = [];
  // A cell is a contiguous range of stations: find its ends, then aggregate the matches in it.
  let from = lowerBound(codes, start);
  const end = lowerBound(codes, start + 4 ** shift, from);
  for (let c = 0; c < cells && from < end; c++) {
    const cellStart = start + c * cellSpan;
    const to = lowerBound(codes, cellStart + cellSpan, from, end);
    let count = 0;
    let first = 0;
    let last = 0;
    let sumLon = 0;
    let sumLat = 0;
    let speed = 0;
    let bits = 0;
    for (let k = from; k < to; k++) {
      if (accept !== null && !accept(k)) continue;
      if (count === 0) first = k;
      last = k;
      count++;
      sumLon += facts.longitudes[k] as number;
      sumLat += facts.latitudes[k] as number;
      const sp = facts.speedCodes[k] as number;
      if (sp > speed) speed = sp;
      bits |= statusBits[facts.statusCodes[k] as number] as number;
    }
    from = to;
    if (count === 1) items.push({ kind: 'station', index: first });
    else if (count > 1) {
      const deepest = commonLevel(codes[first] as number, codes[last] as number);
      items.push({
        kind: 'cluster',
        id: `${cellLevel}/${Math.floor(cellStart / cellSpan)}`,
        count,
        expansionZoom: Math.min(deepest - CELL_LEVELS + 1, MAX_ZOOM + 1),
        longitude: sumLon / count,
        latitude: sumLat / count,
        speedCode: speed,
        status: statusOfBits(bits),
      });
    }
  }
  return items;
}
