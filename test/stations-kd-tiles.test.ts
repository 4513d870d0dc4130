// The search and aggregation structures behind around and tiles, against
// brute-force references on random data with many ties:
// - nearestWithin (kd-nearest.ts), our nearest-first walk over the kdbush
//   arrays, against geokdbush (the search it replaces, same distances) and a
//   brute-force haversine with the page's tie rule;
// - summaryTileItems (tiles.ts), low-zoom tiles from per-cell sums of station
//   classes, against tileItems, the station-by-station scan, including after
//   status changes and with coordinates whose cluster means fall exactly on
//   rounding boundaries;
// - isoDateTime and metersJson (catalogue.ts) against Date#toISOString and
//   the number written by JavaScript.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { around as geoAround } from 'geokdbush';
import KDBush from 'kdbush';
import { isoDateTime, metersJson, withinTerm } from '../src/modules/stations/catalogue.ts';
import { boxDist, nearestOut, nearestWithin } from '../src/modules/stations/kd-nearest.ts';
import {
  buildCellSummary,
  mortonCode,
  refreshSummaryEntry,
  SUMMARY_MAX_ZOOM,
  summaryTileItems,
  type TileCluster,
  type TileStation,
  tileItems,
} from '../src/modules/stations/tiles.ts';

const RAD = Math.PI / 180;
const STATUSES = ['free', 'busy', 'error', 'unknown'] as const;

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random points: clusters (cities), many exact duplicates (stacked stations) and a few anywhere, near the antimeridian and poles too. */
function randomPoints(rng: () => number, n: number): { lon: number[]; lat: number[] } {
  const lon: number[] = [];
  const lat: number[] = [];
  const centres = Array.from({ length: 6 }, () => [rng() * 360 - 180, rng() * 160 - 80] as const);
  centres.push([179.99, 10], [-179.99, 10.001], [0, 89.9]);
  for (let k = 0; k < n; k++) {
    const r = rng();
    if (r < 0.25 && k > 0) {
      const j = Math.floor(rng() * k); // stacked on an earlier point
      lon.push(lon[j] as number);
      lat.push(lat[j] as number);
    } else if (r < 0.9) {
      const [cx, cy] = centres[Math.floor(rng() * centres.length)] as readonly [number, number];
      const spread = rng() < 0.5 ? 0.01 : 0.3;
      lon.push(Math.max(-180, Math.min(180, Number((cx + (rng() - 0.5) * spread).toFixed(5)))));
      lat.push(Math.max(-90, Math.min(90, Number((cy + (rng() - 0.5) * spread).toFixed(5)))));
    } else {
      lon.push(rng() * 360 - 180);
      lat.push(rng() * 180 - 90);
    }
  }
  return { lon, lat };
}

/** geokdbush's haversine term, step by step. */
function haverSinTerm(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const hav = (theta: number) => {
    const sine = Math.sin(theta / 2);
    return sine * sine;
  };
  const s1 = Math.sin(((lon1 - lon2) * RAD) / 2);
  const s2 = Math.sin(((lat1 - lat2) * RAD) / 2);
  const h = Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * (s1 * s1) + s2 * s2;
  assert.equal(h, Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * hav((lon1 - lon2) * RAD) + hav((lat1 - lat2) * RAD));
  return h;
}

describe('nearestWithin (nearest-first walk over the kdbush arrays)', () => {
  test('finds what geokdbush and a brute-force search find: the wanted nearest, then every station up to the tie limit', () => {
    let cases = 0;
    let tied = 0;
    let stopped = 0;
    for (const [seed, n, nodeSize] of [
      [1, 1, 64],
      [2, 7, 2],
      [3, 300, 4],
      [4, 2_000, 16],
      [5, 5_000, 64],
      [6, 5_000, 128],
    ] as const) {
      const rng = prng(seed);
      const { lon, lat } = randomPoints(rng, n);
      const index = new KDBush(n, nodeSize);
      for (let k = 0; k < n; k++) index.add(lon[k] as number, lat[k] as number);
      index.finish();
      const kdCos = Float64Array.from(index.ids, (id) => Math.cos((lat[id] as number) * (Math.PI / 180)));
      const out = nearestOut(4); // small, so that it grows
      for (let q = 0; q < 150; q++) {
        const anchor = Math.floor(rng() * n);
        const qLon = rng() < 0.3 ? (lon[anchor] as number) : Math.max(-180, Math.min(180, (lon[anchor] as number) + (rng() - 0.5) * 0.2));
        const qLat = rng() < 0.3 ? (lat[anchor] as number) : Math.max(-90, Math.min(90, (lat[anchor] as number) + (rng() - 0.5) * 0.2));
        const km = [0.05, 1, 10, 100, 2_000, 30_000][Math.floor(rng() * 6)] as number;
        const sine = Math.sin(km / 6371 / 2);
        const maxH = sine * sine;
        const wanted = 1 + Math.floor(rng() * (rng() < 0.8 ? 25 : 400));
        const modulo = 1 + Math.floor(rng() * 4);
        const accept = rng() < 0.4 ? null : (id: number) => id % modulo !== 0 || modulo === 1;
        // The page's rule: stations within 0.1 m of the wanted-th may tie with it once rounded.
        const tieKm = (h: number) => 2 * 6371 * Math.asin(Math.sqrt(h)) + 0.0001;
        const tieLimit = (h: number) => {
          const s = Math.sin(Math.min(km, tieKm(h)) / 6371 / 2);
          return s * s;
        };
        const found = nearestWithin(index, kdCos, qLon, qLat, maxH, wanted, tieLimit, accept, out);

        const all: { id: number; h: number }[] = [];
        for (let id = 0; id < n; id++) {
          if (accept && !accept(id)) continue;
          const h = haverSinTerm(qLon, qLat, lon[id] as number, lat[id] as number);
          if (h <= maxH) all.push({ id, h });
        }
        all.sort((a, b) => a.h - b.h);
        const limit = all.length >= wanted ? Math.min(maxH, tieLimit((all[wanted - 1] as { h: number }).h)) : maxH;
        const expected = all.filter((e) => e.h <= limit);
        const got = Array.from({ length: found }, (_, k) => ({ id: out.ids[k] as number, h: out.hs[k] as number }));
        assert.deepEqual(
          got.map((g) => g.h),
          expected.map((e) => e.h),
          `terms nearest first (seed ${seed}, query ${q})`,
        );
        assert.deepEqual(
          got.map((g) => g.id).sort((a, b) => a - b),
          expected.map((e) => e.id).sort((a, b) => a - b),
          'the same stations',
        );
        for (const g of got) assert.equal(g.h, haverSinTerm(qLon, qLat, lon[g.id] as number, lat[g.id] as number), 'geokdbush terms');
        // geokdbush asked for as many gives the same terms in the same order (ties in either order).
        const theirs = geoAround(index, qLon, qLat, found, km, accept ?? undefined);
        assert.deepEqual(
          theirs.map((id) => haverSinTerm(qLon, qLat, lon[id] as number, lat[id] as number)),
          got.map((g) => g.h),
          'geokdbush order',
        );
        cases++;
        if (found > wanted) tied++;
        if (all.length > found) stopped++;
      }
    }
    assert.ok(cases === 900 && tied >= 20 && stopped >= 100, `ties past the page and early stops are exercised (${tied} with ties, ${stopped} stopped early)`);
  });

  test('boxDist is a lower bound of the term of every point in the box', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -90, max: 90, noNaN: true }),
        fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -180, max: 180, noNaN: true })),
        fc.tuple(fc.double({ min: -90, max: 90, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true })),
        fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
        (qLon, qLat, [x0, x1], [y0, y1], [fx, fy]) => {
          const [minX, maxX] = x0 <= x1 ? [x0, x1] : [x1, x0];
          const [minY, maxY] = y0 <= y1 ? [y0, y1] : [y1, y0];
          const px = minX + (maxX - minX) * fx;
          const py = minY + (maxY - minY) * fy;
          const bound = boxDist(qLon, qLat, Math.cos(qLat * RAD), minX, minY, maxX, maxY);
          assert.ok(bound <= haverSinTerm(qLon, qLat, px, py) * (1 + 1e-12) + 1e-15);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('withinTerm (the distance test of the around count)', () => {
  test('decides what the exact haversine term decides, also for points a rounding error away from the circle', () => {
    const rng = prng(17);
    let near = 0;
    let inside = 0;
    for (let q = 0; q < 100_000; q++) {
      const lat = q % 10 === 0 ? rng() * 170 - 85 : 35 + rng() * 35;
      const lon = q % 10 === 0 ? rng() * 360 - 180 : -10 + rng() * 42;
      const radiusKm = q % 7 === 0 ? rng() * 0.1 : 0.1 * 1000 ** rng();
      const maxH = Math.sin(radiusKm / 6371 / 2) ** 2;
      // A point on the circle in a random direction (found by bisection on the exact term), then
      // moved by a relative amount from 1e-3 down to nothing.
      const bearing = rng() * 2 * Math.PI;
      const at = (km: number): [number, number] => [
        Math.max(-180, Math.min(180, lon + ((km / 6371) * Math.sin(bearing)) / RAD / Math.cos(lat * RAD))),
        Math.max(-90, Math.min(90, lat + ((km / 6371) * Math.cos(bearing)) / RAD)),
      ];
      let lo = 0;
      let hi = 2 * radiusKm;
      for (let step = 0; step < 60; step++) {
        const mid = (lo + hi) / 2;
        const [mx, my] = at(mid);
        if (haverSinTerm(lon, lat, mx, my) <= maxH) lo = mid;
        else hi = mid;
      }
      const scale = q % 3 === 0 ? 0 : (rng() - 0.5) * 10 ** -(3 + Math.floor(rng() * 14));
      let [x, y] = at(lo * (1 + scale));
      if (q % 5 === 0) {
        // Coordinates as CPOs write them: few decimals.
        x = Number(x.toFixed(6));
        y = Number(y.toFixed(6));
      }
      const exact = haverSinTerm(lon, lat, x, y);
      if (Math.abs(exact - maxH) <= maxH * 1e-9) near++;
      if (exact <= maxH) inside++;
      assert.equal(withinTerm(lon, lat, Math.cos(lat * RAD), x, y, Math.cos(y * RAD), maxH), exact <= maxH, `(${lon}, ${lat}) to (${x}, ${y}), ${radiusKm} km`);
    }
    assert.ok(
      near > 30_000 && inside > 30_000 && inside < 70_000,
      `points close to the circle are exercised (${near} within its rounding margin, ${inside} inside)`,
    );
  });
});

// ---------------------------------------------------------------------------

interface World {
  codes: Float64Array;
  longitudes: Float64Array;
  latitudes: Float64Array;
  statusCodes: Uint8Array;
  speedCodes: Uint8Array;
  classOf: Uint32Array;
  classSpeed: Uint8Array;
}

/**
 * Stations numbered in Morton order with classes (speed is a class fact) and
 * statuses. `tieCoordinates`: coordinates on a coarse decimal grid, so that
 * cluster means often land exactly on a 6th-decimal rounding boundary.
 */
function randomWorld(rng: () => number, n: number, classes: number, tieCoordinates: boolean): World {
  const points: { lon: number; lat: number; code: number }[] = [];
  const { lon, lat } = randomPoints(rng, n);
  for (let k = 0; k < n; k++) {
    let x = Math.max(-180, Math.min(180, lon[k] as number));
    let y = Math.max(-85, Math.min(85, lat[k] as number));
    if (tieCoordinates) {
      x = Number((10 + Math.floor(rng() * 4_000) * 0.00025 + Math.floor(rng() * 8) * 0.0000005).toFixed(7));
      y = Number((50 + Math.floor(rng() * 4_000) * 0.00025 + Math.floor(rng() * 8) * 0.0000005).toFixed(7));
    }
    points.push({ lon: x, lat: y, code: mortonCode(x, y) });
  }
  points.sort((a, b) => a.code - b.code);
  const classSpeed = Uint8Array.from({ length: classes }, () => Math.floor(rng() * 3));
  const classOf = Uint32Array.from({ length: n }, () => Math.floor(rng() * classes));
  return {
    codes: Float64Array.from(points, (p) => p.code),
    longitudes: Float64Array.from(points, (p) => p.lon),
    latitudes: Float64Array.from(points, (p) => p.lat),
    statusCodes: Uint8Array.from({ length: n }, () => Math.floor(rng() * 4)),
    speedCodes: Uint8Array.from(classOf, (c) => classSpeed[c] as number),
    classOf,
    classSpeed,
  };
}

function tilesOfWorld(w: World, rng: () => number, z: number): [number, number][] {
  const tiles = new Map<string, [number, number]>();
  for (let k = 0; k < 6; k++) {
    const i = Math.floor(rng() * w.codes.length);
    // The tile holding station i: its Morton code's top 2z bits.
    const top = Math.floor((w.codes[i] as number) / 4 ** (26 - z));
    let x = 0;
    let y = 0;
    for (let b = 0; b < z; b++) {
      x |= ((top >> (2 * b)) & 1) << b;
      y |= ((top >> (2 * b + 1)) & 1) << b;
    }
    tiles.set(`${x}/${y}`, [x, y]);
  }
  if (z <= 1) for (let x = 0; x < 2 ** z; x++) for (let y = 0; y < 2 ** z; y++) tiles.set(`${x}/${y}`, [x, y]);
  return [...tiles.values()];
}

describe('summaryTileItems (low-zoom tiles from per-cell class sums)', () => {
  for (const [name, seed, n, classes, ties] of [
    ['random places, many classes', 11, 4_000, 40, false],
    ['few classes, stacked stations', 12, 3_000, 3, false],
    ['coordinates on a coarse grid (means on rounding boundaries)', 13, 3_000, 5, true],
  ] as const) {
    test(`gives exactly the features of the scan: ${name}, under filters and after status changes`, () => {
      const rng = prng(seed);
      const w = randomWorld(rng, n, classes, ties);
      const summary = buildCellSummary(w.codes, w.classOf, STATUSES.length, w);
      assert.equal(summary.members.length, n);
      let compared = 0;
      let clusters = 0;
      for (let round = 0; round < 12; round++) {
        if (round > 0) {
          // Status changes, applied as the catalogue does: the station's entry is summed again.
          for (let k = 0; k < 50; k++) {
            const i = Math.floor(rng() * n);
            w.statusCodes[i] = Math.floor(rng() * 4);
            refreshSummaryEntry(summary, summary.entryOf[i] as number, w);
          }
        }
        const classOk = rng() < 0.3 ? null : Uint8Array.from({ length: classes }, () => (rng() < 0.6 ? 1 : 0));
        const statusMask = rng() < 0.6 ? 15 : rng() < 0.5 ? 1 : 1 + Math.floor(rng() * 15);
        const accept = (k: number) => (classOk === null || classOk[w.classOf[k] as number] === 1) && ((statusMask >> (w.statusCodes[k] as number)) & 1) === 1;
        for (let z = 0; z <= SUMMARY_MAX_ZOOM; z++) {
          for (const [x, y] of tilesOfWorld(w, rng, z)) {
            const expected = tileItems(w.codes, z, x, y, classOk === null && statusMask === 15 ? null : accept, {
              longitudes: w.longitudes,
              latitudes: w.latitudes,
              speedCodes: w.speedCodes,
              statuses: STATUSES,
              statusCodes: w.statusCodes,
            });
            const got = summaryTileItems(summary, w.codes, z, x, y, classOk, statusMask, w.classSpeed, STATUSES, w);
            // Features as the catalogue writes them: positions to 6 decimals.
            const shown = (items: (TileStation | TileCluster)[]) =>
              items.map((item) => (item.kind === 'station' ? item : { ...item, longitude: item.longitude.toFixed(6), latitude: item.latitude.toFixed(6) }));
            assert.deepEqual(shown(got), shown(expected), `tile ${z}/${x}/${y}, round ${round}`);
            for (const item of got) {
              if (item.kind !== 'cluster') continue;
              clusters++;
              const scan = expected.find((e) => e.kind === 'cluster' && e.id === item.id) as TileCluster;
              assert.ok(Math.abs(item.longitude - scan.longitude) < 1e-9 && Math.abs(item.latitude - scan.latitude) < 1e-9);
            }
            compared++;
          }
        }
      }
      assert.ok(compared > 100 && clusters > 100, `${compared} tiles, ${clusters} clusters compared`);
    });
  }

  test('a cluster of few matches among many stations, its mean on a rounding boundary, is summed in station order', () => {
    // Two matching stations (class 1) whose mean position lies exactly between two 6th decimals,
    // among thousands that do not match (class 0) in the same cells.
    const rng = prng(31);
    const points: { lon: number; lat: number; cls: number }[] = [
      { lon: 10.001001, lat: 50.001001, cls: 1 },
      { lon: 10.002002, lat: 50.002002, cls: 1 },
    ];
    for (let k = 0; k < 5_000; k++) points.push({ lon: 10 + rng() * 0.003, lat: 50 + rng() * 0.003, cls: 0 });
    const coded = points.map((p) => ({ ...p, code: mortonCode(p.lon, p.lat) })).sort((a, b) => a.code - b.code);
    const w: World = {
      codes: Float64Array.from(coded, (p) => p.code),
      longitudes: Float64Array.from(coded, (p) => p.lon),
      latitudes: Float64Array.from(coded, (p) => p.lat),
      statusCodes: Uint8Array.from(coded, (_, k) => k % 4),
      speedCodes: new Uint8Array(coded.length),
      classOf: Uint32Array.from(coded, (p) => p.cls),
      classSpeed: new Uint8Array(2),
    };
    const summary = buildCellSummary(w.codes, w.classOf, 4, w);
    const classOk = Uint8Array.from([0, 1]);
    const facts = { longitudes: w.longitudes, latitudes: w.latitudes, speedCodes: w.speedCodes, statuses: STATUSES, statusCodes: w.statusCodes };
    let clusters = 0;
    for (const statusMask of [15, w.statusCodes.reduce((mask, st, k) => (w.classOf[k] === 1 ? mask | (1 << st) : mask), 0)]) {
      for (let z = 0; z <= SUMMARY_MAX_ZOOM; z++) {
        const [x, y] = tilesOfWorld(w, rng, z)[0] as [number, number];
        const accept = (k: number) => w.classOf[k] === 1 && ((statusMask >> (w.statusCodes[k] as number)) & 1) === 1;
        const expected = tileItems(w.codes, z, x, y, accept, facts);
        const got = summaryTileItems(summary, w.codes, z, x, y, classOk, statusMask, w.classSpeed, STATUSES, w);
        const shown = (items: (TileStation | TileCluster)[]) =>
          items.map((item) => (item.kind === 'station' ? item : { ...item, longitude: item.longitude.toFixed(6), latitude: item.latitude.toFixed(6) }));
        assert.deepEqual(shown(got), shown(expected), `tile ${z}/${x}/${y}`);
        clusters += got.filter((item) => item.kind === 'cluster').length;
      }
    }
    assert.equal(clusters, 14, 'the two matching stations form one cluster at each zoom');
  });

  test('the sums of each entry are those of its stations, by status', () => {
    const rng = prng(21);
    const w = randomWorld(rng, 2_000, 7, false);
    const s = buildCellSummary(w.codes, w.classOf, 4, w);
    let stations = 0;
    for (let e = 0; e < s.entryClass.length; e++) {
      const members = Array.from(s.members.subarray(s.memberStart[e], s.memberStart[e + 1]));
      assert.ok(
        members.every((i, k) => k === 0 || i > (members[k - 1] as number)),
        'members in station order',
      );
      const cell = Math.floor((w.codes[members[0] as number] as number) / 4 ** 18);
      assert.equal(s.entryCell[e], cell);
      for (const i of members) {
        assert.equal(w.classOf[i], s.entryClass[e]);
        assert.equal(Math.floor((w.codes[i] as number) / 4 ** 18), cell);
        assert.equal(s.entryOf[i], e);
      }
      for (let st = 0; st < 4; st++) {
        const mine = members.filter((i) => w.statusCodes[i] === st);
        assert.equal(s.count[e * 4 + st], mine.length);
        if (mine.length === 0) continue;
        assert.equal(s.first[e * 4 + st], mine[0]);
        assert.equal(s.last[e * 4 + st], mine[mine.length - 1]);
        assert.equal(
          s.sumLon[e * 4 + st],
          mine.reduce((sum, i) => sum + (w.longitudes[i] as number), 0),
        );
      }
      stations += members.length;
      if (e > 0)
        assert.ok((s.entryCell[e - 1] as number) < cell || (s.entryClass[e - 1] as number) < (s.entryClass[e] as number), 'entries by cell, then class');
    }
    assert.equal(stations, 2_000);
  });
});

describe('isoDateTime', () => {
  test('writes what Date#toISOString writes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -8.64e15, max: 8.64e15 }),
          fc.integer({ min: 0, max: 4_102_444_800_000 }),
          fc.constantFrom(0, -1, 86_399_999, 86_400_000, -86_400_000, 951_782_400_000, 8.64e15, -8.64e15),
        ),
        (ms) => {
          assert.equal(isoDateTime(ms), new Date(ms).toISOString());
        },
      ),
      { numRuns: 20_000 },
    );
    assert.throws(() => isoDateTime(Number.NaN), RangeError);
  });
});

describe('metersJson', () => {
  test('writes a distance in tenths of a meter as JavaScript writes the number of meters', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 200_000_000 })), (tenths) => {
        assert.equal(metersJson(tenths), String(tenths / 10));
        assert.equal(metersJson(tenths), JSON.stringify(Math.round((tenths / 10_000) * 10_000) / 10));
      }),
      { numRuns: 20_000 },
    );
  });
});
