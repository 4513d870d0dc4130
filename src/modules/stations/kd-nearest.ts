// Nearest-first search over a kdbush index without allocating per candidate.
//
// geokdbush's `around` queues one object per point and per k-d node it meets;
// this walk keeps the same priority queue (points and nodes ordered by
// geokdbush's haversine term, nodes by its lower bound for their box) in a
// binary heap of preallocated typed arrays, and the boxes of queued nodes in
// a pool of typed arrays. Distances are geokdbush's to the last floating-point
// step (the point's cos(latitude) is passed in precomputed, the same value
// geokdbush computes), so "within r km" agrees with it exactly.
//
// One walk answers one page: it pops points nearest first until it has
// `wanted` of them, then asks `tieLimit` how far it must go on (the page's
// last station may tie, once distances are rounded, with farther ones), and
// pops every point up to that limit. Buffers grow when a search needs more
// (many stations on one spot); nothing is allocated otherwise.

const RAD = Math.PI / 180;

/** The arrays of a finished kdbush index this walk reads. */
export interface KdArrays {
  ids: ArrayLike<number>;
  coords: ArrayLike<number>;
  nodeSize: number;
}

function haverSin(theta: number): number {
  const s = Math.sin(theta / 2);
  return s * s;
}

/** geokdbush's haverSinDistPartial. */
function haverSinDistPartial(haverSinDLng: number, cosLat1: number, lat1: number, lat2: number): number {
  return cosLat1 * Math.cos(lat2 * RAD) * haverSinDLng + haverSin((lat1 - lat2) * RAD);
}

/** geokdbush's vertexLat. */
function vertexLat(lat: number, haverSinDLng: number): number {
  const cosDLng = 1 - 2 * haverSinDLng;
  if (cosDLng <= 0) return lat > 0 ? 90 : -90;
  return Math.atan(Math.tan(lat * RAD) / cosDLng) / RAD;
}

/** geokdbush's boxDist: a lower bound of the haversine term from (lng, lat) to any point in the box. */
export function boxDist(lng: number, lat: number, cosLat: number, minLng: number, minLat: number, maxLng: number, maxLat: number): number {
  if (lng >= minLng && lng <= maxLng) {
    if (lat < minLat) return haverSin((lat - minLat) * RAD);
    if (lat > maxLat) return haverSin((lat - maxLat) * RAD);
    return 0;
  }
  const haverSinDLng = Math.min(haverSin((lng - minLng) * RAD), haverSin((lng - maxLng) * RAD));
  const extremumLat = vertexLat(lat, haverSinDLng);
  if (extremumLat > minLat && extremumLat < maxLat) return haverSinDistPartial(haverSinDLng, cosLat, lat, extremumLat);
  return Math.min(haverSinDistPartial(haverSinDLng, cosLat, lat, minLat), haverSinDistPartial(haverSinDLng, cosLat, lat, maxLat));
}

/** Where a search writes its answer: ids and haversine terms, nearest first (grown when too small). */
export interface NearestOut {
  ids: Uint32Array;
  hs: Float64Array;
}

export function nearestOut(capacity = 1024): NearestOut {
  return { ids: new Uint32Array(capacity), hs: new Float64Array(capacity) };
}

// The queue: keys (haversine terms) and values (a point id >= 0, or -1 - slot of a queued node).
// Module state: a search runs to its end synchronously and never re-enters.
let heapKeys = new Float64Array(1 << 12);
let heapVals = new Int32Array(1 << 12);
let size = 0;
// Queued nodes: index range and axis, and box (minLng, minLat, maxLng, maxLat), by slot.
let nodeRanges = new Int32Array(3 * 1024);
let nodeBoxes = new Float64Array(4 * 1024);
/** Slots given back (a stack), and the first slot never used in this search. */
let freeSlots = new Int32Array(1024);
let freeCount = 0;
let freshSlot = 0;
// The search in progress.
let qLng = 0;
let qLat = 0;
let qCosLat = 1;
let qLimit = 0;

function growHeap(): void {
  const keys = new Float64Array(heapKeys.length * 2);
  keys.set(heapKeys);
  heapKeys = keys;
  const vals = new Int32Array(heapVals.length * 2);
  vals.set(heapVals);
  heapVals = vals;
}

function growNodes(): void {
  const ranges = new Int32Array(nodeRanges.length * 2);
  ranges.set(nodeRanges);
  nodeRanges = ranges;
  const boxes = new Float64Array(nodeBoxes.length * 2);
  boxes.set(nodeBoxes);
  nodeBoxes = boxes;
  const free = new Int32Array(freeSlots.length * 2);
  free.set(freeSlots);
  freeSlots = free;
}

function growOut(out: NearestOut): void {
  const ids = new Uint32Array(out.ids.length * 2);
  ids.set(out.ids);
  out.ids = ids;
  const hs = new Float64Array(out.hs.length * 2);
  hs.set(out.hs);
  out.hs = hs;
}

function push(key: number, val: number): void {
  if (size === heapKeys.length) growHeap();
  const keys = heapKeys;
  const vals = heapVals;
  let pos = size++;
  while (pos > 0) {
    const parent = (pos - 1) >> 1;
    const pk = keys[parent] as number;
    if (pk <= key) break;
    keys[pos] = pk;
    vals[pos] = vals[parent] as number;
    pos = parent;
  }
  keys[pos] = key;
  vals[pos] = val;
}

/** Removes the top entry (the caller has read it). */
function popTop(): void {
  const keys = heapKeys;
  const vals = heapVals;
  size--;
  if (size === 0) return;
  const key = keys[size] as number;
  const val = vals[size] as number;
  const half = size >> 1;
  let pos = 0;
  while (pos < half) {
    let child = 2 * pos + 1;
    const right = child + 1;
    if (right < size && (keys[right] as number) < (keys[child] as number)) child = right;
    const ck = keys[child] as number;
    if (ck >= key) break;
    keys[pos] = ck;
    vals[pos] = vals[child] as number;
    pos = child;
  }
  keys[pos] = key;
  vals[pos] = val;
}

function pushNode(left: number, right: number, axis: number, x0: number, y0: number, x1: number, y1: number): void {
  if (left > right) return;
  const d = boxDist(qLng, qLat, qCosLat, x0, y0, x1, y1);
  if (d > qLimit) return; // nothing in it can be kept
  let slot: number;
  if (freeCount > 0) slot = freeSlots[--freeCount] as number;
  else {
    if (freshSlot === freeSlots.length) growNodes();
    slot = freshSlot++;
  }
  nodeRanges[3 * slot] = left;
  nodeRanges[3 * slot + 1] = right;
  nodeRanges[3 * slot + 2] = axis;
  nodeBoxes[4 * slot] = x0;
  nodeBoxes[4 * slot + 1] = y0;
  nodeBoxes[4 * slot + 2] = x1;
  nodeBoxes[4 * slot + 3] = y1;
  push(d, -1 - slot);
}

/**
 * The `wanted` nearest points of the index that `accept` lets through (all when null) and
 * whose haversine term from (lng, lat) is at most `maxH`, nearest first, and
 * after them every further point up to `tieLimit(h)` (h: the term of the
 * wanted-th point; a limit below h changes nothing). Written to `out`; returns
 * how many. Points with equal terms come in no particular order.
 */
export function nearestWithin(
  index: KdArrays,
  /** cos(latitude) of the point at each position of the index (as geokdbush computes it). */
  kdCosLatitudes: ArrayLike<number>,
  lng: number,
  lat: number,
  maxH: number,
  wanted: number,
  tieLimit: (h: number) => number,
  /** Whether the point `id` at position k of the index is wanted. */
  accept: ((id: number, k: number) => boolean) | null,
  out: NearestOut,
): number {
  const { ids, coords, nodeSize } = index;
  if (ids.length === 0 || wanted <= 0) return 0;
  qLng = lng;
  qLat = lat;
  const cosLat = Math.cos(lat * RAD);
  qCosLat = cosLat;
  qLimit = maxH;
  size = 0;
  freeCount = 0;
  freshSlot = 0;
  let found = 0;
  // The whole earth, as geokdbush starts.
  pushNode(0, ids.length - 1, 0, -180, -90, 180, 90);
  while (size > 0) {
    const key = heapKeys[0] as number;
    if (key > qLimit) break;
    const val = heapVals[0] as number;
    popTop();
    if (val >= 0) {
      if (found === out.ids.length) growOut(out);
      out.ids[found] = val;
      out.hs[found] = key;
      found++;
      if (found === wanted) qLimit = Math.min(qLimit, tieLimit(key));
      continue;
    }
    const slot = -1 - val;
    freeSlots[freeCount++] = slot;
    const left = nodeRanges[3 * slot] as number;
    const right = nodeRanges[3 * slot + 1] as number;
    if (right - left <= nodeSize) {
      for (let k = left; k <= right; k++) {
        const id = ids[k] as number;
        const h =
          cosLat * (kdCosLatitudes[k] as number) * haverSin((lng - (coords[2 * k] as number)) * RAD) + haverSin((lat - (coords[2 * k + 1] as number)) * RAD);
        if (h <= qLimit && (accept === null || accept(id, k))) push(h, id);
      }
      continue;
    }
    const axis = nodeRanges[3 * slot + 2] as number;
    const x0 = nodeBoxes[4 * slot] as number;
    const y0 = nodeBoxes[4 * slot + 1] as number;
    const x1 = nodeBoxes[4 * slot + 2] as number;
    const y1 = nodeBoxes[4 * slot + 3] as number;
    const m = (left + right) >> 1;
    const midLng = coords[2 * m] as number;
    const midLat = coords[2 * m + 1] as number;
    const id = ids[m] as number;
    const h = cosLat * (kdCosLatitudes[m] as number) * haverSin((lng - midLng) * RAD) + haverSin((lat - midLat) * RAD);
    if (h <= qLimit && (accept === null || accept(id, m))) push(h, id);
    if (axis === 0) {
      pushNode(left, m - 1, 1, x0, y0, midLng, y1);
      pushNode(m + 1, right, 1, midLng, y0, x1, y1);
    } else {
      pushNode(left, m - 1, 0, x0, y0, x1, midLat);
      pushNode(m + 1, right, 0, x0, midLat, x1, y1);
    }
  }
  return found;
}
