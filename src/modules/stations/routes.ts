// HTTP edge of station discovery.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { notFound, validationError } from '../../platform/errors.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { normalizeQuery } from '../../platform/http/query.ts';
import { withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import type { Catalogue, StationFilter } from './catalogue.ts';
import { CONNECTOR_TYPE_ALIASES, connectorBit } from './projection.ts';
import { ConnectorTypes, PartnerSchema, StationAroundSchema, StationSchema, TileResponseSchema } from './schemas.ts';
import { MAX_ZOOM } from './tiles.ts';

/** Most tiles one request may ask for. */
export const MAX_TILES_PER_REQUEST = 64;

export const MAX_AROUND_DISTANCE = 100_000;

export interface StationsRoutesDeps {
  catalogue: Catalogue;
  publicBaseUrl: string;
}

/**
 * Sends JSON text written by the catalogue as it is. The route's response
 * schema still documents it (OpenAPI); the tests check answers against it.
 */
function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

export function connectorMaskOf(types: string[] | undefined): number {
  let mask = 0;
  for (const type of types ?? []) mask |= connectorBit(CONNECTOR_TYPE_ALIASES[type] ?? type);
  return mask >>> 0;
}

/** The filters around and tile share, from their query parameters. */
function filterOf(q: { connector_types?: string[]; only_available?: boolean; only_partners?: boolean; operators?: string[] }): StationFilter {
  return {
    connectorMask: connectorMaskOf(q.connector_types),
    onlyAvailable: q.only_available ?? false,
    onlyPartners: q.only_partners ?? false,
    operators: (q.operators ?? []).map((o) => o.toLowerCase()),
  };
}

export function stationsRoutes(deps: StationsRoutesDeps) {
  const { catalogue, publicBaseUrl } = deps;
  const tags = ['Stations'];
  const security = [{ bearerAuth: [] }];

  return async function register(app: HttpApp) {
    app.get(
      '/stations/around/',
      {
        preValidation: normalizeQuery({ arrays: ['connector_types', 'operators'], booleans: ['only_available', 'only_partners'] }),
        schema: {
          summary: 'Stations around a point, nearest first',
          tags,
          security,
          querystring: Type.Object({
            latitude: Type.Number({ minimum: -90, maximum: 90, description: 'Centre of the search.', examples: [52.52] }),
            longitude: Type.Number({ minimum: -180, maximum: 180, description: 'Centre of the search.', examples: [13.405] }),
            distance: Type.Optional(
              Type.Integer({ minimum: 1, maximum: MAX_AROUND_DISTANCE, default: 100, description: `Radius in meters (max ${MAX_AROUND_DISTANCE}).` }),
            ),
            connector_types: Type.Optional(ConnectorTypes),
            only_available: Type.Optional(Type.Boolean({ default: false, description: 'Only stations with an AVAILABLE EVSE.' })),
            only_partners: Type.Optional(Type.Boolean({ default: false, description: 'Only partner operators.' })),
            operators: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { description: 'Operator names (repeat or comma-separate).' })),
            ...PageQuery,
          }),
          response: withErrors({ 200: PageOf(StationAroundSchema) }, [400, 404]),
        },
      },
      async (request, reply) => {
        const q = request.query;
        const page = pageRequest(q);
        const { count, results } = catalogue.around(
          {
            latitude: q.latitude,
            longitude: q.longitude,
            distance: q.distance ?? 100,
            ...filterOf(q),
          },
          page,
        );
        // Stations arrive as JSON text (see catalogue.ts); the page around them is written here.
        const { next, previous } = toPage(publicBaseUrl, request.url, page, count, []);
        return sendJson(reply, `{"count":${count},"next":${JSON.stringify(next)},"previous":${JSON.stringify(previous)},"results":[${results.join(',')}]}`);
      },
    );

    app.get(
      '/stations/details/',
      {
        schema: {
          summary: 'One station, by station id or EVSE id',
          tags,
          security,
          querystring: Type.Object({
            id: Type.String({ minLength: 1, maxLength: 255, examples: ['DE*HHC*ESCN*NORMAL'] }),
            type: Type.String({ enum: ['evse_id', 'station_id'], description: 'What `id` refers to.', examples: ['evse_id'] }),
          }),
          response: withErrors({ 200: StationSchema }, [400, 404]),
        },
      },
      async (request, reply) => {
        const { id, type } = request.query;
        const station = catalogue.stationJson(type === 'evse_id' ? { evseId: id } : { stationId: id.toLowerCase() });
        if (station === undefined) throw notFound('Station');
        return sendJson(reply, station);
      },
    );

    app.get(
      '/stations/tile/',
      {
        preValidation: normalizeQuery({ arrays: ['x', 'y', 'connector_types', 'operators', 'power_groups'], booleans: ['only_available', 'only_partners'] }),
        schema: {
          summary: 'Map tiles: clusters and single stations as one GeoJSON FeatureCollection',
          description:
            'Tiles are slippy-map tiles (x, y at zoom z); send several by repeating x and y (paired by position). A cluster at zoom z holds the matching stations of one quarter-by-quarter cell of a tile; its expansion_zoom is the zoom at which it splits. Clusters nest across zooms, adjacent tiles never share a station, and the counts of a tile add up to its matching stations. Tiles are cached for about 2 s.',
          tags,
          security,
          querystring: Type.Object({
            // The examples are one valid tile (x and y below 2^z): Berlin at zoom 6.
            x: Type.Array(Type.Integer({ minimum: 0 }), {
              minItems: 1,
              maxItems: MAX_TILES_PER_REQUEST,
              description: 'Tile X coordinates (each below 2^z).',
              examples: [[34]],
            }),
            y: Type.Array(Type.Integer({ minimum: 0 }), {
              minItems: 1,
              maxItems: MAX_TILES_PER_REQUEST,
              description: 'Tile Y coordinates, paired with x (each below 2^z).',
              examples: [[21]],
            }),
            z: Type.Integer({ minimum: 0, maximum: MAX_ZOOM, description: 'Zoom level.', examples: [6] }),
            connector_types: Type.Optional(ConnectorTypes),
            max_price: Type.Optional(
              Type.Number({ minimum: 0, description: 'Leave out stations whose price (in their own currency, incl. VAT) is above this.' }),
            ),
            only_available: Type.Optional(Type.Boolean({ default: false })),
            only_partners: Type.Optional(Type.Boolean({ default: false })),
            operators: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }))),
            power_groups: Type.Optional(Type.Array(Type.String({ enum: ['slow', 'fast', 'turbo'] }), { description: 'Speeds to show.' })),
          }),
          response: withErrors({ 200: TileResponseSchema }, [400]),
        },
      },
      async (request, reply) => {
        const q = request.query;
        if (q.x.length !== q.y.length) throw validationError('y', 'must have as many values as x (tiles are x/y pairs)');
        const limit = 2 ** q.z;
        q.x.forEach((x, k) => {
          if (x >= limit) throw validationError(`x.${k}`, `must be below ${limit} at zoom ${q.z}`);
          if ((q.y[k] as number) >= limit) throw validationError(`y.${k}`, `must be below ${limit} at zoom ${q.z}`);
        });
        const filter = {
          ...filterOf(q),
          speeds: (q.power_groups ?? []) as ('slow' | 'fast' | 'turbo')[],
          ...(q.max_price !== undefined ? { maxPrice: q.max_price } : {}),
        };
        const seen = new Set<string>();
        let features = '';
        for (let k = 0; k < q.x.length; k++) {
          const key = `${q.x[k]}/${q.y[k]}`;
          if (seen.has(key)) continue; // the same tile twice would draw its stations twice
          seen.add(key);
          const tile = catalogue.tile(q.z, q.x[k] as number, q.y[k] as number, filter);
          if (tile.count > 0) features += features ? `,${tile.json}` : tile.json;
        }
        return sendJson(reply, `{"type":"FeatureCollection","features":[${features}]}`);
      },
    );

    app.get(
      '/stations/partners/',
      {
        schema: {
          summary: 'Partner operators, for filtering',
          description: 'A plain array (not paginated).',
          tags,
          security,
          response: withErrors({ 200: Type.Array(PartnerSchema) }),
        },
      },
      async () => catalogue.partners().map((p) => ({ name: p.name, logo_url: p.logo_url })),
    );
  };
}
