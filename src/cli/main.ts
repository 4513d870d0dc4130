// The operator's command-line tool: `charging-access <command>`.
// It reaches the same database as the service (DATA_DIR or DATABASE_URL),
// whether or not the service is running.
import { parseArgs } from 'node:util';
import { createClientsService, parseDuration } from '../modules/clients/service.ts';
import type { Connection } from '../modules/ocpi/repository.ts';
import { createOcpi } from '../modules/ocpi/service.ts';
import type { SyncProgress } from '../modules/ocpi/sync.ts';
import { createIngestion } from '../modules/stations/ingest.ts';
import { importOcpiFile, loadGeneratedCatalogue, type Progress } from '../modules/stations/loader.ts';
import * as stationsRepo from '../modules/stations/repository.ts';
import { loadSigningKeys } from '../platform/auth/keys.ts';
import { systemClock } from '../platform/clock.ts';
import { type Config, ConfigError, loadConfig } from '../platform/config.ts';
import { createDatabase, type Database } from '../platform/db.ts';
import { startEmbeddedPostgres } from '../platform/embedded-postgres.ts';
import { type MigrationResult, migrate } from '../platform/migrations.ts';
import { runSandboxCpo } from './sandbox-cpo.ts';

const USAGE = `Usage: charging-access <command> [options]

Commands:
  clients create --name NAME [--expires-in 30d] [--json]   create an API client and its first token
  clients list [--json]                                     list API clients
  clients disable CLIENT_ID                                 disable a client (its tokens stop working within 5 s)
  clients update CLIENT_ID --rate-limit N                   set the client's requests per minute (0 = unlimited,
                                                            "default" = RATE_LIMIT_PER_MINUTE); applies within 5 s
  tokens issue CLIENT_ID [--expires-in 30d] [--json]        issue another token for a client
  tokens revoke JTI                                         revoke a token by its id (jti)
  stations generate --locations N [--seed S]               generate a Europe-wide OCPI catalogue and load it
  stations import FILE                                      load OCPI Locations and Tariffs (JSON array or NDJSON)
  partners add NAME --logo-url URL                          mark an operator as partner (with its logo)
  partners list [--json]                                    list partner operators
  partners remove NAME                                      unmark a partner
  cpo connect --versions-url URL --token TOKEN_A [--party CC*PID] [--name NAME] [--raw-tokens]
                                                            register with a CPO (OCPI credentials handshake; the service must
                                                            be running: the CPO fetches our endpoints), then pull its data
  cpo invite [--name NAME] [--raw-tokens] [--json]          issue a TOKEN_A for a CPO that registers with us
  cpo list [--json]                                         list CPO connections
  cpo disconnect NAME                                       unregister at the CPO and stop using the connection
  cpo sync NAME [--full]                                    pull the CPO's locations, tariffs, sessions and CDRs now
  cpo rotate NAME                                           renew both credentials tokens of a connection
  sandbox cpo                                               run the sandbox CPO network as its own process (for service instances
                                                            started with CPO_SANDBOX=false): waits for the service at PUBLIC_BASE_URL,
                                                            connects the network over OCPI if not yet connected, serves until Ctrl-C
  migrate                                                   apply database migrations

The database is the service's: DATABASE_URL if set, else the embedded one under DATA_DIR (default ./data).`;

class UsageError extends Error {}

interface Session {
  config: Config;
  db: Database;
  /** What opening the session applied (every command migrates first). */
  migrations: MigrationResult;
  close(): Promise<void>;
}

async function openSession(config: Config = loadConfig()): Promise<Session> {
  const embedded = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({ dataDir: config.dataDir, role: 'cli', log: (msg) => process.stderr.write(`${msg}\n`) });
  const db = createDatabase(config.databaseUrl ?? (embedded as { url: string }).url, { max: 2, applicationName: 'charging-access-cli' });
  let migrations: MigrationResult;
  try {
    migrations = await migrate(db);
  } catch (error) {
    await db.close();
    await embedded?.stop();
    throw error;
  }
  return {
    config,
    db,
    migrations,
    async close() {
      await db.close();
      await embedded?.stop();
    },
  };
}

async function clientsService(session: Session) {
  const keys = await loadSigningKeys(session.config.jwt, { create: true });
  return createClientsService({ db: session.db, clock: systemClock, jwt: session.config.jwt, keys, cacheTtlMs: 0 });
}

function positiveInteger(flag: string, text: string, min = 1): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > 10_000_000) throw new UsageError(`${flag} must be an integer >= ${min}`);
  return Number(text);
}

/** Progress on a terminal (stderr), nothing when output is redirected. */
function progress(unit: string): Progress | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  return (done, total) => {
    const now = performance.now();
    if (now - last < 200 && done !== total) return;
    last = now;
    const share = total ? ` (${Math.floor((100 * done) / total)}%)` : '';
    process.stderr.write(`\r${done}${total ? `/${total}` : ''} ${unit}${share}   `);
    if (done === total) process.stderr.write('\n');
  };
}

function ocpiOf(session: Pick<Session, 'config' | 'db'>) {
  const { config, db } = session;
  return createOcpi({
    db,
    clock: systemClock,
    config: config.ocpi,
    baseUrl: `${config.publicBaseUrl}/ocpi`,
    ingestion: createIngestion({ db, clock: systemClock }),
    log: (level, message, fields) => {
      if (level !== 'info') process.stderr.write(`${level}: ${message} ${JSON.stringify(fields ?? {})}\n`);
    },
  });
}

/** What `cpo list` shows of a connection (never its tokens). */
function connectionView(c: Connection) {
  const cpo = c.roles.find((r) => r.role === 'CPO');
  return { name: c.name, country_code: cpo?.country_code ?? null, party_id: cpo?.party_id ?? null, status: c.status, versions_url: c.versions_url };
}

function syncProgress(): SyncProgress | undefined {
  const bars = new Map<string, Progress | undefined>();
  return (module, done, total) => {
    if (!bars.has(module)) bars.set(module, progress(module));
    bars.get(module)?.(done, total);
  };
}

/** The warning a bulk load's human output ends with when vacuuming the tables after it failed (the load stands). */
function vacuumWarning(loaded: { vacuumError?: string }): string {
  return loaded.vacuumError ? `\nwarning: vacuuming the station tables afterwards failed (${loaded.vacuumError}); the load stands` : '';
}

/** What `migrate` did, in one line: the migrations it applied now, or that there was nothing to do. */
function migrationSummary(applied: string[], alreadyApplied: number): string {
  if (applied.length === 0) return `migrations are up to date (${alreadyApplied} applied earlier)`;
  const earlier = alreadyApplied === 0 ? '' : `; ${alreadyApplied} applied earlier`;
  return `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}: ${applied.join(', ')}${earlier}`;
}

function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'expires-in': { type: 'string' },
      'rate-limit': { type: 'string' },
      json: { type: 'boolean', default: false },
      locations: { type: 'string' },
      seed: { type: 'string' },
      'logo-url': { type: 'string' },
      'versions-url': { type: 'string' },
      token: { type: 'string' },
      party: { type: 'string' },
      'raw-tokens': { type: 'boolean', default: false },
      full: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [group, action, arg] = positionals;
  if (values.help || !group) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const json = values.json ?? false;
  const expiresInMs = values['expires-in'] ? parseDuration(values['expires-in']) : undefined;
  const command = `${group} ${action ?? ''}`.trim();
  const known = [
    'clients create',
    'clients list',
    'clients disable',
    'clients update',
    'tokens issue',
    'tokens revoke',
    'stations generate',
    'stations import',
    'partners add',
    'partners list',
    'partners remove',
    'cpo connect',
    'cpo invite',
    'cpo list',
    'cpo disconnect',
    'cpo sync',
    'cpo rotate',
    'sandbox cpo',
    'migrate',
  ];
  if (!known.includes(command)) throw new UsageError(`unknown command "${command}"`);
  if (command === 'clients create' && !values.name) throw new UsageError('clients create needs --name NAME');
  if (['clients disable', 'clients update', 'tokens issue', 'tokens revoke'].includes(command) && !arg) throw new UsageError(`${command} needs an id`);
  const rateLimit = values['rate-limit'];
  if (command === 'clients update' && (rateLimit === undefined || (rateLimit !== 'default' && !/^\d{1,10}$/.test(rateLimit)))) {
    throw new UsageError('clients update needs --rate-limit N (requests per minute; 0 = unlimited, "default" = RATE_LIMIT_PER_MINUTE)');
  }
  if (['stations import', 'partners add', 'partners remove', 'cpo disconnect', 'cpo sync', 'cpo rotate'].includes(command) && !arg) {
    throw new UsageError(`${command} needs an argument`);
  }
  if (command === 'cpo connect' && (!values['versions-url'] || !values.token)) throw new UsageError('cpo connect needs --versions-url URL and --token TOKEN_A');
  const locations = values.locations === undefined ? undefined : positiveInteger('--locations', values.locations);
  const seed = values.seed === undefined ? 1 : positiveInteger('--seed', values.seed, 0);
  if (command === 'stations generate' && locations === undefined) throw new UsageError('stations generate needs --locations N');
  if (command === 'partners add') {
    if (!values['logo-url']) throw new UsageError('partners add needs --logo-url URL');
    if (!/^https?:\/\/\S+$/.test(values['logo-url'])) throw new UsageError('--logo-url must be an http(s) URL');
  }

  if (command === 'sandbox cpo') {
    const config = loadConfig();
    await runSandboxCpo({ config, openSession: () => openSession(config), ocpiOf });
    return;
  }

  const session = await openSession();
  try {
    switch (command) {
      case 'migrate': {
        const { applied, alreadyApplied } = session.migrations;
        print(json, { migrated: true, applied, already_applied: alreadyApplied }, migrationSummary(applied, alreadyApplied));
        break;
      }
      case 'clients create': {
        const issued = await (await clientsService(session)).createClient(values.name as string, { expiresInMs });
        print(json, { client_id: issued.clientId, token: issued.token }, `client_id: ${issued.clientId}\ntoken_id:  ${issued.jti}\ntoken:     ${issued.token}`);
        break;
      }
      case 'clients list': {
        const rows = await (await clientsService(session)).listClients();
        const list = rows.map((r) => ({
          client_id: r.id,
          name: r.name,
          created_at: r.created_at.toISOString(),
          disabled_at: r.disabled_at?.toISOString() ?? null,
          active_tokens: r.active_tokens,
          rate_limit_per_minute: r.rate_limit_per_minute,
        }));
        const shownLimit = (perMinute: number | null) =>
          perMinute === null ? `rate=${session.config.rateLimitPerMinute || 'unlimited'}/min (default)` : `rate=${perMinute || 'unlimited'}/min`;
        const text =
          list.length === 0
            ? 'no clients'
            : list
                .map(
                  (c) =>
                    `${c.client_id}  ${c.disabled_at ? 'disabled' : 'active  '}  tokens=${c.active_tokens}  ${shownLimit(c.rate_limit_per_minute)}  ${c.name}`,
                )
                .join('\n');
        print(json, list, text);
        break;
      }
      case 'clients disable': {
        await (await clientsService(session)).disableClient(arg as string);
        print(json, { client_id: arg, disabled: true }, `client ${arg} disabled`);
        break;
      }
      case 'clients update': {
        const perMinute = rateLimit === 'default' ? null : Number(rateLimit);
        await (await clientsService(session)).setRateLimit(arg as string, perMinute);
        const shown = perMinute === null ? `the default (${session.config.rateLimitPerMinute || 'unlimited'})` : perMinute || 'unlimited';
        print(json, { client_id: arg, rate_limit_per_minute: perMinute }, `client ${arg}: ${shown} requests per minute`);
        break;
      }
      case 'tokens issue': {
        const issued = await (await clientsService(session)).issueToken(arg as string, { expiresInMs });
        print(
          json,
          { client_id: issued.clientId, token: issued.token, token_id: issued.jti, expires_at: issued.expiresAt?.toISOString() ?? null },
          `token_id: ${issued.jti}\nexpires:  ${issued.expiresAt?.toISOString() ?? 'never'}\ntoken:    ${issued.token}`,
        );
        break;
      }
      case 'stations generate': {
        const started = performance.now();
        const loaded = await loadGeneratedCatalogue(
          createIngestion({ db: session.db, clock: systemClock }),
          { locations: locations as number, seed },
          progress('locations'),
        );
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        print(json, loaded, `loaded ${loaded.locations} locations and ${loaded.tariffs} tariffs in ${seconds} s${vacuumWarning(loaded)}`);
        break;
      }
      case 'stations import': {
        const loaded = await importOcpiFile(createIngestion({ db: session.db, clock: systemClock }), arg as string, progress('objects'));
        print(json, loaded, `imported ${loaded.locations} locations and ${loaded.tariffs} tariffs${vacuumWarning(loaded)}`);
        break;
      }
      case 'partners add': {
        await stationsRepo.upsertPartner(session.db, { name: arg as string, logo_url: values['logo-url'] as string }, systemClock.now());
        await stationsRepo.notifyCatalogueChanged(session.db, { kind: 'reload' });
        print(json, { name: arg, logo_url: values['logo-url'] }, `partner ${arg} added`);
        break;
      }
      case 'partners list': {
        const partners = await stationsRepo.listPartners(session.db);
        print(json, partners, partners.length === 0 ? 'no partners' : partners.map((p) => `${p.name}  ${p.logo_url}`).join('\n'));
        break;
      }
      case 'partners remove': {
        if (!(await stationsRepo.deletePartner(session.db, arg as string))) throw new Error(`no partner named ${arg}`);
        await stationsRepo.notifyCatalogueChanged(session.db, { kind: 'reload' });
        print(json, { name: arg, removed: true }, `partner ${arg} removed`);
        break;
      }
      case 'cpo connect': {
        const ocpi = ocpiOf(session);
        const connection = await ocpi.connections.connect({
          versionsUrl: values['versions-url'] as string,
          token: values.token as string,
          ...(values.party ? { party: values.party } : {}),
          ...(values.name ? { name: values.name } : {}),
          rawTokens: values['raw-tokens'] ?? false,
        });
        process.stderr.write(`connected to ${connection.name}; pulling its tariffs and locations\n`);
        const counts = await ocpi.sync.syncConnection(connection, { full: true, onProgress: syncProgress() });
        print(
          json,
          { ...connectionView(connection), synced: counts },
          `connected: ${connection.name}; pulled ${counts.locations} locations, ${counts.tariffs} tariffs`,
        );
        break;
      }
      case 'cpo invite': {
        const invite = await ocpiOf(session).connections.invite({ ...(values.name ? { name: values.name } : {}), rawTokens: values['raw-tokens'] ?? false });
        print(
          json,
          { token: invite.token, versions_url: invite.versions_url },
          `token:        ${invite.token}\nversions_url: ${invite.versions_url}\nname:         ${invite.name}`,
        );
        break;
      }
      case 'cpo list': {
        const list = (await ocpiOf(session).connections.list()).map(connectionView);
        print(
          json,
          list,
          list.length === 0
            ? 'no CPO connections'
            : list.map((c) => `${c.name}  ${c.status}  ${c.country_code ?? '-'}*${c.party_id ?? '-'}  ${c.versions_url ?? ''}`).join('\n'),
        );
        break;
      }
      case 'cpo disconnect': {
        const result = await ocpiOf(session).connections.disconnect(arg as string);
        print(
          json,
          { name: arg, disconnected: true, peer_informed: result.peerInformed },
          `disconnected ${arg}${result.peerInformed ? '' : ` (the CPO was not told${result.error ? `: ${result.error}` : ''})`}`,
        );
        break;
      }
      case 'cpo sync': {
        const ocpi = ocpiOf(session);
        const connection = await ocpi.connections.findByName(arg as string);
        if (connection?.status !== 'connected') throw new Error(`no connected CPO named ${arg}`);
        const counts = await ocpi.sync.syncConnection(connection, { full: values.full ?? false, onProgress: syncProgress() });
        print(
          json,
          counts,
          `pulled ${counts.locations} locations, ${counts.tariffs} tariffs, ${counts.sessions} sessions, ${counts.cdrs} CDRs (${counts.skipped} invalid skipped)`,
        );
        break;
      }
      case 'cpo rotate': {
        await ocpiOf(session).connections.rotate(arg as string);
        print(json, { name: arg, rotated: true }, `new credentials tokens in use for ${arg}`);
        break;
      }
      case 'tokens revoke': {
        await (await clientsService(session)).revokeToken(arg as string);
        print(json, { token_id: arg, revoked: true }, `token ${arg} revoked`);
        break;
      }
    }
  } finally {
    await session.close();
  }
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`charging-access: ${(error as Error).message}\n\n${USAGE}\n`);
    process.exit(64);
  }
  process.stderr.write(`charging-access: ${(error as Error).message}\n`);
  process.exit(1);
}
