// HTTP edge of station discovery.
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { PageOf, PageQuery, pageRequest, toPage } from '../../platform/http/pagination.ts';
import { normalizeQuery } from '../../platform/http/query.ts';
import { withErrors } from '../../platform/http/schema.ts';
import type { HttpApp } from '../../platform/http/server.ts';
import type { Catalogue } from './catalogue.ts';
import { CONNECTOR_TYPE_ALIASES, connectorBit } from './projection.ts';
import { ConnectorTypes, PartnerSchema, StationAroundSchema, StationSchema } from './schemas.ts';

export const MAX_AROUND_DISTANCE = 100_000;

export interface StationsRoutesDeps {
  catalogue: Catalogue;
  publicBaseUrl: string;
}

export function connectorMaskOf(types: string[] | undefined): number {
  let mask = 0;
  for (const type of types ?? []) mask |= connectorBit(CONNECTOR_TYPE_ALIASES[type] ?? type);
  return mask >>> 0;
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
            latitude: Type.Number({ minimum: -90, maximum: 90, description: 'Centre of the search.' }),
            longitude: Type.Number({ minimum: -180, maximum: 180, description: 'Centre of the search.' }),
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
      async (request) => {
        const q = request.query;
        const page = pageRequest(q);
        const { count, results } = catalogue.around(
          {
            latitude: q.latitude,
            longitude: q.longitude,
            distance: q.distance ?? 100,
            connectorMask: connectorMaskOf(q.connector_types),
            onlyAvailable: q.only_available ?? false,
            onlyPartners: q.only_partners ?? false,
            operators: (q.operators ?? []).map((o) => o.toLowerCase()),
          },
          page,
        );
        return toPage(publicBaseUrl, request.url, page, count, results);
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
            id: Type.String({ minLength: 1, maxLength: 255 }),
            type: Type.String({ enum: ['evse_id', 'station_id'], description: 'What `id` refers to.' }),
          }),
          response: withErrors({ 200: StationSchema }, [400, 404]),
        },
      },
      async (request) => {
        const { id, type } = request.query;
        const station = type === 'evse_id' ? catalogue.findByEvseId(id) : catalogue.findByStationId(id.toLowerCase());
        if (!station) throw notFound('Station');
        return station;
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
