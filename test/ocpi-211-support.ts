// What the OCPI 2.1.1 tests share: a recording HTTP proxy put between the
// service and a 2.1.1 CPO (every request and answer that crosses it, headers
// and JSON bodies, as on the wire), and the 2.1.1 spec's field lists
// (mod_locations, mod_tariffs, mod_sessions, mod_cdrs, mod_tokens,
// mod_commands, credentials, version_information_endpoint 2.1.1) that every
// recorded 2.1.1 message is held to: its required fields there, and no field
// the 2.1.1 object does not have (2.2.1-only fields such as country_code).
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  method: string;
  path: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: unknown;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  responseBody: unknown;
}

const parse = (text: string): unknown => {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
};

/** A loopback proxy to `target()` (known later: a server's address once it listens) that records every exchange. */
export async function startRecordingProxy(target: () => string) {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const to = new URL(req.url ?? '/', target());
      const headers = { ...req.headers, host: to.host };
      const out = httpRequest(to, { method: req.method, headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          exchanges.push({
            method: req.method ?? 'GET',
            path: to.pathname,
            requestHeaders: req.headers,
            requestBody: parse(body.toString('utf8')),
            status: answer.statusCode ?? 0,
            responseHeaders: answer.headers,
            responseBody: parse(text),
          });
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(text);
        });
      });
      out.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type RecordingProxy = Awaited<ReturnType<typeof startRecordingProxy>>;

interface Shape {
  required: readonly string[];
  optional: readonly string[];
}

/** The 2.1.1 objects' fields, from the 2.1.1 spec's tables (card. 1 / + required; ? / * optional). */
export const SHAPES_211 = {
  Location: {
    required: ['id', 'type', 'address', 'city', 'postal_code', 'country', 'coordinates', 'last_updated'],
    optional: [
      'name',
      'related_locations',
      'evses',
      'directions',
      'operator',
      'suboperator',
      'owner',
      'facilities',
      'time_zone',
      'opening_times',
      'charging_when_closed',
      'images',
      'energy_mix',
    ],
  },
  EVSE: {
    required: ['uid', 'status', 'connectors', 'last_updated'],
    optional: [
      'evse_id',
      'status_schedule',
      'capabilities',
      'floor_level',
      'coordinates',
      'physical_reference',
      'directions',
      'parking_restrictions',
      'images',
    ],
  },
  Connector: {
    required: ['id', 'standard', 'format', 'power_type', 'voltage', 'amperage', 'last_updated'],
    optional: ['tariff_id', 'terms_and_conditions'],
  },
  Tariff: { required: ['id', 'currency', 'elements', 'last_updated'], optional: ['tariff_alt_text', 'tariff_alt_url', 'energy_mix'] },
  PriceComponent: { required: ['type', 'price', 'step_size'], optional: [] },
  Session: {
    required: ['id', 'start_datetime', 'kwh', 'auth_id', 'auth_method', 'location', 'currency', 'status', 'last_updated'],
    optional: ['end_datetime', 'meter_id', 'charging_periods', 'total_cost'],
  },
  CDR: {
    required: [
      'id',
      'start_date_time',
      'stop_date_time',
      'auth_id',
      'auth_method',
      'location',
      'currency',
      'charging_periods',
      'total_cost',
      'total_energy',
      'total_time',
      'last_updated',
    ],
    optional: ['meter_id', 'tariffs', 'total_parking_time', 'remark'],
  },
  Token: { required: ['uid', 'type', 'auth_id', 'issuer', 'valid', 'whitelist', 'last_updated'], optional: ['visual_number', 'language'] },
  Credentials: { required: ['token', 'url', 'business_details', 'party_id', 'country_code'], optional: [] },
  StartSession: { required: ['response_url', 'token', 'location_id'], optional: ['evse_uid'] },
  StopSession: { required: ['response_url', 'session_id'], optional: [] },
  CommandResponse: { required: ['result'], optional: [] },
  Endpoint: { required: ['identifier', 'url'], optional: [] },
} as const satisfies Record<string, Shape>;

export type Shape211 = keyof typeof SHAPES_211;

/** What of `value` departs from the 2.1.1 object `shape` (nested Locations, EVSEs, Connectors, Tariffs and Tokens too). */
export function problems211(shape: Shape211, value: unknown, at: string = shape): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [`${at}: not an object`];
  const o = value as Record<string, unknown>;
  const { required, optional } = SHAPES_211[shape] as Shape;
  const out = [
    ...required.filter((f) => o[f] === undefined || o[f] === null).map((f) => `${at}: ${f} missing`),
    ...Object.keys(o)
      .filter((f) => !required.includes(f) && !optional.includes(f))
      .map((f) => `${at}: ${f} is not a 2.1.1 field`),
  ];
  const each = (field: string, inner: Shape211) => {
    const list = o[field];
    if (!Array.isArray(list)) return;
    for (const [i, item] of list.entries()) out.push(...problems211(inner, item, `${at}.${field}[${i}]`));
  };
  if (shape === 'Location') each('evses', 'EVSE');
  if (shape === 'EVSE') each('connectors', 'Connector');
  if (shape === 'Session' || shape === 'CDR') out.push(...problems211('Location', o.location, `${at}.location`));
  if (shape === 'CDR') each('tariffs', 'Tariff');
  if (shape === 'Tariff' && Array.isArray(o.elements)) {
    for (const [i, e] of (o.elements as { price_components?: unknown[] }[]).entries()) {
      for (const [j, c] of (e.price_components ?? []).entries()) out.push(...problems211('PriceComponent', c, `${at}.elements[${i}].price_components[${j}]`));
    }
  }
  if (shape === 'StartSession') out.push(...problems211('Token', o.token, `${at}.token`));
  return out;
}

/** The OCPI data of a recorded envelope. */
export const dataOf = (body: unknown) => (body as { data?: unknown } | undefined)?.data;

export const ROUTING_HEADERS = ['ocpi-from-country-code', 'ocpi-from-party-id', 'ocpi-to-country-code', 'ocpi-to-party-id'] as const;
