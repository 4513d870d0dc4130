// The TypeBox schemas of charging sessions: validation, the OpenAPI document and the view type (SessionView) at once.
import { type Static, Type } from 'typebox';
import { Money, Nullable, NullableMoney } from '../../platform/http/schema.ts';
import { SessionCost } from '../invoicing/schemas.ts';

const StationInfo = Type.Object({
  station_name: Nullable(Type.String()),
  station_address: Nullable(Type.String()),
  country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-3, as the operator sent it.' })),
  station_speed: Nullable(Type.String({ description: 'slow, fast or turbo' })),
  connector_standard: Nullable(Type.String()),
  connector_power: Nullable(Type.Number({ description: 'kW' })),
  support_phone: Nullable(Type.String()),
  latitude: Nullable(Type.String()),
  longitude: Nullable(Type.String()),
});

const UserFacingPrices = Type.Object({
  kwh_price: NullableMoney('Per kWh incl. VAT at the start.'),
  time_price: NullableMoney('Per minute of charging incl. VAT at the start.'),
  session_fee: NullableMoney('One-off fee of the operator incl. VAT.'),
  blocking_fee: NullableMoney('Per minute of parking (blocking) incl. VAT.'),
  starting_fee: NullableMoney('Our one-off fee incl. VAT.'),
  grace_period_minutes: Nullable(Type.Integer()),
  blocking_cap: NullableMoney('Most blocking fees per session.'),
  currency: Type.String(),
});

/** A session a minute after its start at the sandbox network's NORMAL EVSE (the reference's /docs shows it). */
const ACTIVE_SESSION_EXAMPLE = {
  id: 'cc79d392-c8a5-4528-b7db-88a61859ca08',
  status: 'active',
  is_active: true,
  start_time: '2026-03-02T09:15:06.287Z',
  end_time: null,
  duration: 58,
  consumed_energy: '9.683',
  evse_id: 'DE*HHC*ESCN*NORMAL',
  station_id: 'aad2025b-7bdb-af25-fabf-99c597a533ca',
  station_info: {
    station_name: 'Sandbox scenarios (Helion Highway Charging)',
    station_address: 'Scenario Street 1, Berlin',
    country: 'DEU',
    station_speed: 'fast',
    connector_standard: 'IEC_62196_T2_COMBO',
    connector_power: 50,
    support_phone: null,
    latitude: '52.521000',
    longitude: '13.406000',
  },
  is_partner: false,
  logo_url: null,
  user_facing_session_prices: {
    kwh_price: '0.54',
    time_price: '0.0238',
    session_fee: '0.60',
    blocking_fee: null,
    starting_fee: null,
    grace_period_minutes: null,
    blocking_cap: null,
    currency: 'EUR',
  },
  session_cost: {
    kwh_cost: null,
    time_cost: null,
    session_fee_cost: null,
    blocking_fee_cost: null,
    starting_fee_cost: null,
    invoice_download: null,
    invoice_vat: '0.00',
    invoice_summary: '0.00',
    invoice_credits: '0.00',
    invoice_discount: '0.00',
    currency: 'EUR',
  },
  estimated_cost: '5.80',
  pre_authorization: { amount: '29.00', currency: 'EUR', status: 'authorized' },
  payment_method_id: 'pm_qiTunlkfDvcEU7kKyVKMuiHC',
  failure_reason: null,
  rates: null,
  created_at: '2026-03-02T09:15:05.158Z',
  updated_at: '2026-03-02T09:16:04.420Z',
  version: 13,
};

/** The same session as POST .../charging/start/ answers it: the operator accepted, charging has not begun. */
const PENDING_SESSION_EXAMPLE = {
  ...ACTIVE_SESSION_EXAMPLE,
  status: 'pending',
  start_time: null,
  duration: null,
  consumed_energy: '0.000',
  estimated_cost: null,
  updated_at: '2026-03-02T09:15:05.158Z',
  version: 4,
};

export const ChargingSession = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.String({
      enum: ['pending', 'active', 'stopping', 'completed', 'failed'],
      description:
        'pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).',
    }),
    is_active: Type.Boolean({ description: 'True while pending, active or stopping.' }),
    start_time: Nullable(Type.String({ format: 'date-time' })),
    end_time: Nullable(Type.String({ format: 'date-time' })),
    duration: Nullable(Type.Integer({ description: 'Seconds since the start (to the end once ended).' })),
    consumed_energy: Type.String({ description: 'kWh, 3 decimals.' }),
    evse_id: Type.String(),
    station_id: Type.String(),
    station_info: StationInfo,
    is_partner: Type.Boolean(),
    logo_url: Nullable(Type.String()),
    user_facing_session_prices: UserFacingPrices,
    session_cost: SessionCost,
    estimated_cost: NullableMoney('What the session has cost so far incl. VAT, from the tariff and the charging periods reported.'),
    pre_authorization: Type.Object({
      amount: Money('Amount held on the payment method.'),
      currency: Type.String(),
      status: Type.String({
        description:
          "Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one.",
      }),
      transferred_to: Type.Optional(
        Type.String({
          format: 'uuid',
          description: 'Ours: with status transferred, the session that took this hold over; what it captured is on that session.',
        }),
      ),
      transferred_from: Type.Optional(
        Type.String({
          format: 'uuid',
          description: "Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.",
        }),
      ),
    }),
    payment_method_id: Type.String(),
    failure_reason: Nullable(Type.String()),
    rates: Nullable(Type.Integer({ minimum: 1, maximum: 5 })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    version: Type.Integer({
      minimum: 1,
      description:
        'Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded.',
    }),
  },
  { examples: [ACTIVE_SESSION_EXAMPLE] },
);

/** A session as the start answers it (201): the schema of ChargingSession with a pending example. */
export const StartedChargingSession = Type.Object(ChargingSession.properties, { examples: [PENDING_SESSION_EXAMPLE] });

export type ChargingSessionView = Static<typeof ChargingSession>;
