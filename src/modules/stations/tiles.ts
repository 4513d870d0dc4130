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

// ---------------------------------------------------------------------------
// Low zooms: per-cell sums of station classes
//
// A tile at zoom <= SUMMARY_MAX_ZOOM has cells of level <= SUMMARY_LEVEL,
// each a union of whole level-SUMMARY_LEVEL cells. Stations that filters
// cannot tell apart (same connector mask, speed, operator and map price: a
// "class") are summed per level-SUMMARY_LEVEL cell and status, so a filtered
// low-zoom tile adds up the sums of the classes the filter lets through
// instead of visiting every station. Counts, first and last stations,
// fastest speed and status bits are those tileItems finds. Coordinate sums
// added in another order may round differently; the mean position is then
// the same to its 6th decimal (what the API shows) unless it lies within the
// rounding error of a boundary, and those rare cells are summed station by
// station, in tileItems' order, so the features are exactly tileItems'.
// Without filters, each cell's sums are kept as tileItems computes them.

export const SUMMARY_LEVEL = 8;
export const SUMMARY_MAX_ZOOM = SUMMARY_LEVEL - CELL_LEVELS;
const SUMMARY_SPAN = 4 ** (GRID_BITS - SUMMARY_LEVEL);

export interface CellSummary {
  /** Number of station status codes: each entry has one slot per status. */
  statuses: number;
  /** The level-SUMMARY_LEVEL cell of each entry, ascending; one entry per (cell, class) present. */
  entryCell: Float64Array;
  entryClass: Uint32Array;
  /** Stations of entry e: members[memberStart[e] .. memberStart[e + 1] - 1], ascending. */
  memberStart: Uint32Array;
  members: Uint32Array;
  /** The entry of each station. */
  entryOf: Uint32Array;
  /** Per slot (entry * statuses + status code): its stations' count, coordinate sums, first and last station. */
  count: Uint32Array;
  sumLon: Float64Array;
  sumLat: Float64Array;
  /** Sums of |longitude| and |latitude|: bounds of the rounding errors of the sums. */
  sumAbsLon: Float64Array;
  sumAbsLat: Float64Array;
  first: Uint32Array;
  last: Uint32Array;
  /**
   * Without filters: the coordinate sums of every cell of the levels low-zoom tiles are made
   * of, added one by one in station order (as tileItems adds them), by level and cell index.
   */
  allSums: Map<number, { lon: number; lat: number }>[];
}

interface SummaryFacts {
  longitudes: Float64Array;
  latitudes: Float64Array;
  statusCodes: Uint8Array;
}

/** Sums per class of each level-SUMMARY_LEVEL cell, over stations numbered in Morton order. */
export function buildCellSummary(codes: Float64Array, classOf: Uint32Array, statuses: number, facts: SummaryFacts): CellSummary {
  const size = codes.length;
  const members = new Uint32Array(size);
  const entryOf = new Uint32Array(size);
  const cells: number[] = [];
  const classes: number[] = [];
  const starts: number[] = [];
  let m = 0;
  for (let a = 0; a < size; ) {
    const cell = Math.floor((codes[a] as number) / SUMMARY_SPAN);
    let b = a + 1;
    while (b < size && Math.floor((codes[b] as number) / SUMMARY_SPAN) === cell) b++;
    // The cell's stations by class, each class in station order.
    const run = Uint32Array.from({ length: b - a }, (_, k) => a + k).sort((x, y) => (classOf[x] as number) - (classOf[y] as number) || x - y);
    for (let k = 0; k < run.length; k++) {
      const station = run[k] as number;
      const cls = classOf[station] as number;
      if (k === 0 || cls !== classOf[run[k - 1] as number]) {
        cells.push(cell);
        classes.push(cls);
        starts.push(m);
      }
      entryOf[station] = cells.length - 1;
      members[m++] = station;
    }
    a = b;
  }
  starts.push(m);
  const entries = cells.length;
  const summary: CellSummary = {
    statuses,
    entryCell: Float64Array.from(cells),
    entryClass: Uint32Array.from(classes),
    memberStart: Uint32Array.from(starts),
    members,
    entryOf,
    count: new Uint32Array(entries * statuses),
    sumLon: new Float64Array(entries * statuses),
    sumLat: new Float64Array(entries * statuses),
    sumAbsLon: new Float64Array(entries * statuses),
    sumAbsLat: new Float64Array(entries * statuses),
    first: new Uint32Array(entries * statuses),
    last: new Uint32Array(entries * statuses),
    allSums: [],
  };
  for (let e = 0; e < entries; e++) refreshSummaryEntry(summary, e, facts);
  for (let level = CELL_LEVELS; level <= SUMMARY_LEVEL; level++) {
    const span = 4 ** (GRID_BITS - level);
    const sums = new Map<number, { lon: number; lat: number }>();
    for (let a = 0; a < size; ) {
      const cell = Math.floor((codes[a] as number) / span);
      let lon = 0;
      let lat = 0;
      let b = a;
      for (; b < size && Math.floor((codes[b] as number) / span) === cell; b++) {
        lon += facts.longitudes[b] as number;
        lat += facts.latitudes[b] as number;
      }
      sums.set(cell, { lon, lat });
      a = b;
    }
    summary.allSums[level] = sums;
  }
  return summary;
}

/** Recomputes the sums of one entry from its stations (after a status change of one of them). */
export function refreshSummaryEntry(summary: CellSummary, e: number, facts: SummaryFacts): void {
  const { statuses, count, sumLon, sumLat, sumAbsLon, sumAbsLat, first, last } = summary;
  const base = e * statuses;
  for (let st = 0; st < statuses; st++) {
    count[base + st] = 0;
    sumLon[base + st] = 0;
    sumLat[base + st] = 0;
    sumAbsLon[base + st] = 0;
    sumAbsLat[base + st] = 0;
  }
  for (let k = summary.memberStart[e] as number; k < (summary.memberStart[e + 1] as number); k++) {
    const station = summary.members[k] as number;
    const slot = base + (facts.statusCodes[station] as number);
    if (count[slot] === 0) first[slot] = station;
    last[slot] = station;
    count[slot] = (count[slot] as number) + 1;
    sumLon[slot] = (sumLon[slot] as number) + (facts.longitudes[station] as number);
    sumLat[slot] = (sumLat[slot] as number) + (facts.latitudes[station] as number);
    sumAbsLon[slot] = (sumAbsLon[slot] as number) + Math.abs(facts.longitudes[station] as number);
    sumAbsLat[slot] = (sumAbsLat[slot] as number) + Math.abs(facts.latitudes[station] as number);
  }
}

const UNIT_ROUNDOFF = 2 ** -53;
/** Matching stations of one cell, gathered to be summed in station order. */
let gathered = new Uint32Array(1024);

/**
 * Whether `mean` (of n values whose absolute values sum to sumAbs, summed as `parts`
 * partial sums) may show another 6th decimal than the mean of the same values summed
 * one by one: then the two means may lie on either side of a rounding boundary of
 * toFixed(6). Both sums are within (n + parts) * u * sumAbs of the exact sum.
 */
function mayRoundOtherwise(mean: number, n: number, parts: number, sumAbs: number): boolean {
  const sumError = (2 * n + parts + 4) * UNIT_ROUNDOFF * sumAbs * (1 + 1e-9);
  const meanError = sumError / n + 4 * UNIT_ROUNDOFF * Math.abs(mean);
  const scaled = Math.abs(mean) * 1e6;
  const fromHalf = Math.abs(scaled - Math.floor(scaled) - 0.5);
  return fromHalf <= 2 * (meanError * 1e6 + 8 * UNIT_ROUNDOFF * scaled);
}

/**
 * The features tileItems gives for tile (z, x, y), z <= SUMMARY_MAX_ZOOM, from the
 * summary: the stations of the classes with classOk 1 (all when null) whose status
 * code has its bit in statusMask.
 */
export function summaryTileItems(
  summary: CellSummary,
  codes: Float64Array,
  z: number,
  x: number,
  y: number,
  classOk: Uint8Array | null,
  statusMask: number,
  classSpeed: Uint8Array,
  statuses: readonly StationStatus[],
  /** For the few cells whose mean position must be summed station by station (see mayRoundOtherwise). */
  facts: SummaryFacts & { classOf: Uint32Array },
): (TileStation | TileCluster)[] {
  if (z > SUMMARY_MAX_ZOOM) throw new RangeError(`summaries answer zooms up to ${SUMMARY_MAX_ZOOM}`);
  const shift = GRID_BITS - z;
  const start = mortonOfCell(x * 2 ** shift, y * 2 ** shift);
  const cellLevel = z + CELL_LEVELS;
  const cellSpan = 4 ** (GRID_BITS - cellLevel);
  const cells = 4 ** CELL_LEVELS;
  const statusBits = statuses.map((status) => STATUS_BITS[status]);
  const allStatuses = (1 << summary.statuses) - 1;
  const { entryCell, entryClass, count: counts, sumLon: lons, sumLat: lats, first: firsts, last: lasts } = summary;
  const n = summary.statuses;
  const items: (TileStation | TileCluster)[] = [];
  let from = lowerBound(entryCell, start / SUMMARY_SPAN);
  const end = lowerBound(entryCell, (start + 4 ** shift) / SUMMARY_SPAN, from);
  for (let c = 0; c < cells && from < end; c++) {
    const cellStart = start + c * cellSpan;
    const to = lowerBound(entryCell, (cellStart + cellSpan) / SUMMARY_SPAN, from, end);
    const cellFrom = from;
    let count = 0;
    let first = 0;
    let last = 0;
    let sumLon = 0;
    let sumLat = 0;
    let speed = 0;
    let bits = 0;
    let parts = 0;
    let absLon = 0;
    let absLat = 0;
    for (let e = from; e < to; e++) {
      const cls = entryClass[e] as number;
      if (classOk !== null && classOk[cls] !== 1) continue;
      for (let st = 0; st < n; st++) {
        const slot = e * n + st;
        const slotCount = counts[slot] as number;
        if (slotCount === 0 || ((statusMask >> st) & 1) === 0) continue;
        const slotFirst = firsts[slot] as number;
        const slotLast = lasts[slot] as number;
        if (count === 0 || slotFirst < first) first = slotFirst;
        if (count === 0 || slotLast > last) last = slotLast;
        count += slotCount;
        parts++;
        sumLon += lons[slot] as number;
        sumLat += lats[slot] as number;
        absLon += summary.sumAbsLon[slot] as number;
        absLat += summary.sumAbsLat[slot] as number;
        bits |= statusBits[st] as number;
        const sp = classSpeed[cls] as number;
        if (sp > speed) speed = sp;
      }
    }
    from = to;
    if (count === 1) items.push({ kind: 'station', index: first });
    else if (count > 1) {
      const all = classOk === null && statusMask === allStatuses ? summary.allSums[cellLevel]?.get(Math.floor(cellStart / cellSpan)) : undefined;
      let longitude = (all?.lon ?? sumLon) / count;
      let latitude = (all?.lat ?? sumLat) / count;
      if (all === undefined && (mayRoundOtherwise(longitude, count, parts, absLon) || mayRoundOtherwise(latitude, count, parts, absLat))) {
        // Near a rounding boundary: sum as tileItems does, in station order, over the
        // matching stations gathered from their entries (few) or the cell's range (many).
        sumLon = 0;
        sumLat = 0;
        if (count * 32 < last - first + 1) {
          if (gathered.length < count) gathered = new Uint32Array(2 * count);
          let m = 0;
          for (let e = cellFrom; e < to; e++) {
            if (classOk !== null && classOk[entryClass[e] as number] !== 1) continue;
            for (let k = summary.memberStart[e] as number; k < (summary.memberStart[e + 1] as number); k++) {
              const station = summary.members[k] as number;
              if (((statusMask >> (facts.statusCodes[station] as number)) & 1) === 1) gathered[m++] = station;
            }
          }
          const stations = gathered.subarray(0, m).sort();
          for (let k = 0; k < m; k++) {
            sumLon += facts.longitudes[stations[k] as number] as number;
            sumLat += facts.latitudes[stations[k] as number] as number;
          }
        } else {
          for (let k = first; k <= last; k++) {
            if ((classOk !== null && classOk[facts.classOf[k] as number] !== 1) || ((statusMask >> (facts.statusCodes[k] as number)) & 1) === 0) continue;
            sumLon += facts.longitudes[k] as number;
            sumLat += facts.latitudes[k] as number;
          }
        }
        longitude = sumLon / count;
        latitude = sumLat / count;
      }
      const deepest = commonLevel(codes[first] as number, codes[last] as number);
      items.push({
        kind: 'cluster',
        id: `${cellLevel}/${Math.floor(cellStart / cellSpan)}`,
        count,
        expansionZoom: Math.min(deepest - CELL_LEVELS + 1, MAX_ZOOM + 1),
        longitude,
        latitude,
        speedCode: speed,
        status: statusOfBits(bits),
      });
    }
  }
  return items;
}
