// Wire shapes of station discovery: one definition for validation, types and OpenAPI.
import { Type } from 'typebox';
import { Nullable } from '../../platform/http/schema.ts';
import { AMENITIES, API_CONNECTOR_TYPES, CONNECTOR_TYPE_ALIASES } from './projection.ts';

export const ConnectorTypes = Type.Array(Type.String({ enum: [...API_CONNECTOR_TYPES, ...Object.keys(CONNECTOR_TYPE_ALIASES)] }), {
  description: 'Connector types (repeat the parameter or separate with commas). VENDOR_R/VENDOR_S are accepted for TESLA_R/TESLA_S.',
});

const Weekday = Type.String({ enum: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY', 'ALL'] });

const PriceItem = Type.Object({
  time_from: Type.String({ description: 'HH:MM, local time' }),
  time_to: Type.String({ description: 'HH:MM, local time; 24:00 is the end of the day' }),
  date_from: Type.String({ description: 'YYYY-MM-DD, or empty when unbounded' }),
  date_to: Type.String({ description: 'YYYY-MM-DD (exclusive), or empty when unbounded' }),
  gross_price: Type.String({ description: 'Excl. VAT; time prices per hour.' }),
  user_facing_price: Type.String({ description: 'Incl. VAT; time prices per minute.' }),
  tax: Type.Number({ description: 'VAT percent.' }),
  grace_period_minutes: Nullable(Type.Number()),
  blocking_cap: Nullable(Type.String()),
});
const PriceComponent = Nullable(
  Type.Record(Weekday, Type.Array(PriceItem), { description: 'Keyed by weekday (or ALL); items in the tariff order of precedence.' }),
);

export const PriceGroupSchema = Type.Object({
  type: Type.String({ description: 'Connector standard of the group.' }),
  power: Type.Number({ description: 'kW' }),
  evse_ids: Type.Array(Type.String()),
  prices: Type.Object({
    time_price: PriceComponent,
    kwh_price: PriceComponent,
    blocking_fee: PriceComponent,
    session_fee: PriceComponent,
    starting_fee: PriceComponent,
  }),
  local_datetime: Type.String({ format: 'date-time' }),
  currency: Type.String(),
  pre_authorization_amount: Type.String({ description: 'Amount held on the payment method when charging starts.' }),
  is_fallback: Type.Boolean({ description: 'True when the operator sent no tariff and our configured fallback price applies.' }),
});

/** The sandbox network's scenario station (two of its EVSEs), as `details` answers it. */
const STATION_EXAMPLE = {
  id: 'aad2025b-7bdb-af25-fabf-99c597a533ca',
  name: 'Sandbox scenarios (Helion Highway Charging)',
  address: 'Scenario Street 1, Berlin',
  coordinates: { latitude: '52.521000', longitude: '13.406000' },
  opening_times: { twentyfourseven: true, regular_hours: [] },
  operator: { name: 'Helion Highway Charging', contact: { phone: null } },
  is_partner: false,
  evses: [
    { evse_id: 'DE*HHC*ESCN*NORMAL', status: 'AVAILABLE' },
    { evse_id: 'DE*HHC*ESCN*REJECT', status: 'AVAILABLE' },
  ],
  last_updated: '2026-03-02T08:00:00.000Z',
  speed: 'fast',
  status: 'free',
  amenities: [],
  price_groups: [
    {
      type: 'IEC_62196_T2_COMBO',
      power: 50,
      evse_ids: ['DE*HHC*ESCN*NORMAL', 'DE*HHC*ESCN*REJECT'],
      prices: {
        time_price: {
          ALL: [
            {
              time_from: '00:00',
              time_to: '24:00',
              date_from: '',
              date_to: '',
              gross_price: '1.20',
              user_facing_price: '0.0238',
              tax: 19,
              grace_period_minutes: null,
              blocking_cap: null,
            },
          ],
        },
        kwh_price: {
          ALL: [
            {
              time_from: '00:00',
              time_to: '24:00',
              date_from: '',
              date_to: '',
              gross_price: '0.45',
              user_facing_price: '0.54',
              tax: 19,
              grace_period_minutes: null,
              blocking_cap: null,
            },
          ],
        },
        blocking_fee: null,
        session_fee: {
          ALL: [
            {
              time_from: '00:00',
              time_to: '24:00',
              date_from: '',
              date_to: '',
              gross_price: '0.50',
              user_facing_price: '0.60',
              tax: 19,
              grace_period_minutes: null,
              blocking_cap: null,
            },
          ],
        },
        starting_fee: null,
      },
      currency: 'EUR',
      pre_authorization_amount: '29.00',
      is_fallback: false,
      local_datetime: '2026-03-02T10:15:04+01:00',
    },
  ],
};

export const StationSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    address: Type.String(),
    coordinates: Type.Object({ latitude: Type.String(), longitude: Type.String() }),
    opening_times: Type.Object({
      twentyfourseven: Type.Boolean(),
      regular_hours: Type.Array(Type.Object({ weekday: Weekday, period_begin: Type.String(), period_end: Type.String() })),
    }),
    operator: Type.Object({ name: Type.String(), contact: Type.Object({ phone: Nullable(Type.String()) }) }),
    evses: Type.Array(Type.Object({ evse_id: Type.String(), status: Type.String() })),
    last_updated: Type.String({ format: 'date-time' }),
    price_groups: Type.Array(PriceGroupSchema),
    speed: Type.String({ enum: ['slow', 'fast', 'turbo'] }),
    status: Type.String({ enum: ['free', 'busy', 'unknown', 'error'] }),
    amenities: Type.Array(Type.String({ enum: [...AMENITIES] })),
    is_partner: Type.Boolean(),
    logo_url: Type.Optional(Type.String({ format: 'uri' })),
  },
  { examples: [STATION_EXAMPLE] },
);

export const StationAroundSchema = Type.Object({ ...StationSchema.properties, distance: Type.Number({ description: 'Meters from the search centre.' }) });

export const PartnerSchema = Type.Object({ name: Type.String(), logo_url: Nullable(Type.String({ format: 'uri' })) });

const Speed = Type.String({ enum: ['slow', 'fast', 'turbo'] });
const Status = Type.String({ enum: ['free', 'busy', 'unknown', 'error'] });

export const TileFeatureSchema = Type.Object({
  type: Type.Literal('Feature'),
  geometry: Type.Object({
    type: Type.Literal('Point'),
    coordinates: Type.Array(Type.String(), { minItems: 2, maxItems: 2, description: '[longitude, latitude] as strings' }),
  }),
  properties: Type.Object({
    count: Type.Integer({ minimum: 1, description: 'Stations in the feature: 1 for a station, more for a cluster.' }),
    expansion_zoom: Type.Optional(Type.Integer({ description: 'Clusters only: the zoom at which the cluster splits.' })),
    speed: Speed,
    status: Status,
    operator_id: Type.Optional(Type.String({ description: 'Stations only: the operator (CPO party) id.' })),
  }),
  station_id: Type.Optional(Type.String({ description: 'Single-station features only.' })),
  cluster_id: Type.Optional(Type.String({ description: 'Cluster features only.' })),
  custom_properties: Type.Optional(Type.Object({ is_partner: Type.Boolean() })),
  price_properties: Type.Optional(
    Type.Object({
      price: Type.String({ description: 'Incl. VAT: per kWh (charging_price) or per minute (time_price).' }),
      type: Type.String({ enum: ['charging_price', 'time_price'] }),
      currency: Type.String(),
    }),
  ),
});

export const TileResponseSchema = Type.Object(
  { type: Type.Literal('FeatureCollection'), features: Type.Array(TileFeatureSchema) },
  {
    examples: [
      {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: ['13.379193', '52.534423'] },
            properties: { count: 2, expansion_zoom: 7, speed: 'turbo', status: 'free' },
            cluster_id: '6/1572',
          },
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: ['13.406000', '52.521000'] },
            properties: { count: 1, speed: 'fast', status: 'free', operator_id: 'DE*HHC' },
            station_id: 'aad2025b-7bdb-af25-fabf-99c597a533ca',
            custom_properties: { is_partner: false },
            price_properties: { price: '0.54', type: 'charging_price', currency: 'EUR' },
          },
        ],
      },
    ],
  },
);
