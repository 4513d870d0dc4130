// What the OpenAPI document and the API reference (/docs) say beyond each
// route's own schema: every tag with its description and the groups the
// reference shows them in; the OCPI interface (routes of the OCPI module,
// which carry no OpenAPI schema: CPOs read the OCPI specification) in tags of
// its own, with a summary per operation; and Scalar's settings, with nothing
// that needs the internet (no hosted AI, MCP or developer tools, no "open in
// client", no web fonts, no links to Scalar's site).

/** Every tag the document uses, in the order the reference lists them, each described. */
export const API_TAGS = [
  {
    name: 'Users',
    description:
      "Your app's end users (drivers). A user belongs to the API client that created it; another client's user is 404. Create with an `Idempotency-Key` to retry safely; find by `custom_properties` (`?search=`).",
  },
  {
    name: 'Billing details',
    description:
      'Who is invoiced. Charging needs complete details: `account_type` `personal` (the default) needs `first_name`, `last_name` and `country`; `business` needs `company_name`, `vat_number` and `country` (else 409 `billing_data_required`).',
  },
  {
    name: 'Payments',
    description:
      "A user's payment methods (cards, PayPal), connected through the payment processor: get a setup intent, confirm it with the processor's frontend SDK (3-D Secure happens there), then the method is listed. The first one is the default.",
  },
  {
    name: 'Stations',
    description:
      'Station discovery over the catalogue CPOs send us over OCPI: around a point, one station, map tiles with clusters, partner operators. Prices are in the station currency: `gross_price` excl. VAT, `user_facing_price` incl. VAT.',
  },
  {
    name: 'Charging',
    description:
      "Start and stop charging for a user at an EVSE, watch the session (poll, or its live event stream), rate it; a user's debts. A start holds the price group's `pre_authorization_amount` on the payment method; the CPO's CDR is billed and invoiced.",
  },
  {
    name: 'Invoices',
    description: 'One invoice per billed session, numbered without gaps; its PDF behind a signed link that needs no token.',
  },
  {
    name: 'Webhooks',
    description:
      'HTTPS endpoints of yours that receive signed events (Standard Webhooks) as they happen, at least once: create, test, read the delivery log, retry, rotate the secret.',
  },
  {
    name: 'Health',
    description: 'Liveness and readiness, without a token: route traffic to an instance only while `/readyz` answers 200.',
  },
  {
    name: 'Errors',
    description: 'Every problem body has a `type` URI under `/problems/`; it describes the error. Clients switch on `error.type`.',
  },
  {
    name: 'Sandbox (payment processor stand-in)',
    description:
      "Only while the built-in Stripe sandbox is the processor (development): what Stripe's frontend SDKs would do, on our port, without a bearer token (the client secret is the credential). Test cards: 4242424242424242 succeeds, 4000002760003184 always asks for authentication, 4000000000000341 attaches but every charge is declined.",
  },
  {
    name: 'Payment processor callbacks',
    description: 'Called by the payment processor (Stripe), never by clients: its signed webhook events.',
  },
  {
    name: 'OCPI 2.2.1',
    description:
      "Our eMSP interface for charge point operators (CPOs), per OCPI 2.2.1: called with `Authorization: Token <credentials token>` (Base64), answered in the OCPI envelope `{data, status_code, status_message, timestamp}`. Not for client apps. Start at `GET /ocpi/versions`; the objects are the OCPI specification's.",
  },
  {
    name: 'OCPI 2.1.1',
    description:
      'The same interface for CPOs that speak OCPI 2.1.1 (unencoded tokens, no routing headers, 2.1.1 objects). A connection uses the endpoints of the version its handshake settled on.',
  },
] as const satisfies readonly { name: string; description: string }[];

export type ApiTag = (typeof API_TAGS)[number]['name'];

/** How the reference groups the tags in its sidebar (`x-tagGroups`). */
const TAG_GROUPS: { name: string; tags: ApiTag[] }[] = [
  { name: 'Client API', tags: ['Users', 'Billing details', 'Payments', 'Stations', 'Charging', 'Invoices', 'Webhooks'] },
  { name: 'Service', tags: ['Health', 'Errors'] },
  { name: 'Payment processor', tags: ['Sandbox (payment processor stand-in)', 'Payment processor callbacks'] },
  { name: 'OCPI (charge point operators)', tags: ['OCPI 2.2.1', 'OCPI 2.1.1'] },
];

/** Document-level extensions (not in the OpenAPI types): the reference's tag groups. */
export const OPENAPI_EXTENSIONS = { 'x-tagGroups': TAG_GROUPS };

const OCPI_OBJECTS: Record<number, string> = { 3: 'a Location', 4: 'an EVSE', 5: 'a Connector' };

/** A one-line summary of an OCPI operation, from its method and path (any route the OCPI module adds gets one). */
function ocpiSummary(method: string, url: string): string {
  const [, version, module, ...rest] = url.split('/').filter(Boolean) as [string, string | undefined, string | undefined, ...string[]];
  if (version === 'versions' && !module) return 'Versions: the OCPI versions we speak';
  if (!module) return `Version details: our OCPI ${version} endpoints`;
  const depth = rest.length;
  const by: Record<string, Record<string, string>> = {
    credentials: {
      GET: 'Credentials: ours, as the registered CPO holds them',
      POST: 'Credentials: a CPO registers with the TOKEN_A we gave it',
      PUT: 'Credentials: a registered CPO renews them (new tokens)',
      DELETE: 'Credentials: a CPO unregisters',
    },
    locations: {
      GET: `Locations: ${OCPI_OBJECTS[depth] ?? 'an object'} as we hold it`,
      PUT: `Locations: a CPO pushes ${OCPI_OBJECTS[depth] ?? 'an object'}`,
      PATCH: `Locations: a CPO updates ${OCPI_OBJECTS[depth] ?? 'an object'} (e.g. an EVSE status)`,
    },
    tariffs: { GET: 'Tariffs: a Tariff as we hold it', PUT: 'Tariffs: a CPO pushes a Tariff', DELETE: 'Tariffs: a CPO deletes a Tariff' },
    sessions: {
      GET: 'Sessions: a Session as we hold it',
      PUT: 'Sessions: a CPO pushes a Session',
      PATCH: 'Sessions: a CPO updates a Session (status, charging periods)',
    },
    cdrs: { POST: 'CDRs: a CPO posts a CDR (billed and invoiced)', GET: 'CDRs: a CDR as we hold it' },
    commands: { POST: "Commands: a CPO's result of our START_SESSION or STOP_SESSION" },
    tokens: { GET: 'Tokens: our tokens (one per user), paginated', POST: "Tokens: real-time authorization of a user's token" },
  };
  return by[module]?.[method] ?? `${module[0]?.toUpperCase()}${module.slice(1)}: ${method}`;
}

type RouteSchema = Record<string, unknown> & { tags?: string[]; summary?: string; hide?: boolean };

/**
 * @fastify/swagger's `transform`: OCPI routes (under `ocpiPrefix`) get their version's tag, a summary and the
 * OCPI token scheme. The returned schema only documents; the route's own (validation, serialization) is untouched.
 */
export function documentRoute(ocpiPrefix: string) {
  return ({ schema, url, route }: { schema: unknown; url: string; route: { method: string | string[] } }) => {
    if (!url.startsWith(`${ocpiPrefix}/`)) return { schema: schema as RouteSchema, url };
    const own = (schema ?? {}) as RouteSchema;
    if (own.hide) return { schema: own, url };
    const version = url.split('/')[2];
    const tag: ApiTag = version === '2.1.1' ? 'OCPI 2.1.1' : 'OCPI 2.2.1';
    const method = (Array.isArray(route.method) ? route.method[0] : route.method) ?? 'GET';
    return {
      schema: {
        ...own,
        tags: own.tags ?? [tag],
        summary: own.summary ?? ocpiSummary(method.toUpperCase(), url),
        security: [{ ocpiToken: [] }],
      },
      url,
    };
  };
}

/** The security schemes the document names: client apps' bearer JWT, CPOs' OCPI credentials token. */
export const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A token the operator issued to your API client.' },
  ocpiToken: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'OCPI: `Token <credentials token>` (Base64 for OCPI 2.2.1; unencoded for 2.1.1).',
  },
} as const;

/**
 * Scalar's settings for /docs. Everything it shows works on this machine alone: the document comes from our
 * origin, "try it" requests go to our server (no proxy), and what would reach Scalar's hosted services or the
 * internet is off: the AI agent, MCP, developer tools and toolbar (shown on localhost by default), the "open in
 * API client" button, telemetry, web fonts, the favicon request, and the "Powered by Scalar" links (hidden by CSS:
 * no setting removes them).
 */
export function docsConfiguration(specUrl: string) {
  return {
    url: specUrl,
    title: 'Charging Access API',
    withDefaultFonts: false,
    // No favicon request (an API has none; a 404 in every browser console otherwise): an empty icon inline.
    favicon: 'data:,',
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never' as const,
    showToolbar: 'never' as const,
    hideClientButton: true,
    telemetry: false,
    customCss: 'a[href^="https://www.scalar.com"], a[href^="https://scalar.com"] { display: none !important; }',
  };
}
