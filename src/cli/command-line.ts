// The operator CLI's command line: the usage text, the commands it knows, and
// their arguments and options, checked before anything opens the database.
import { parseArgs } from 'node:util';
import { parseDuration } from '../modules/clients/service.ts';
import { isUuid } from '../platform/ids.ts';

export const USAGE = `Usage: charging-access <command> [options]

Commands:
  clients create --name NAME [--expires-in 30d] [--json]   create an API client and its first token
  clients list [--json]                                     list API clients
  clients disable CLIENT_ID                                 disable a client (its tokens stop working within 5 s)
  clients update CLIENT_ID --rate-limit N                   set the client's requests per minute (0 = unlimited,
                                                            "default" = RATE_LIMIT_PER_MINUTE); applies within 5 s
  tokens issue CLIENT_ID [--expires-in 30d] [--json]        issue another token for a client
  tokens revoke TOKEN_ID                                    revoke a token by its token_id (printed when it was issued)
  stations generate --locations N [--seed S]               generate a Europe-wide OCPI catalogue and load it
  stations import FILE                                      load OCPI Locations and Tariffs (JSON array or NDJSON)
  partners add NAME --logo-url URL                          mark an operator as partner (with its logo)
  partners list [--json]                                    list partner operators
  partners remove NAME                                      unmark a partner
  bills held [--json]                                       bills held for the operator (a CDR in another currency than the
                                                            session's payment hold: nothing captured, no invoice), and why
  bills release SESSION_ID [--waive] [--json]               release a held bill: billed at the session's own tariff in the
                                                            hold's currency (captured and invoiced by the running service),
                                                            or with --waive nothing is charged and the hold is released
  cpo connect --versions-url URL --token TOKEN_A [--party CC*PID] [--name NAME] [--raw-tokens] [--tokens-once]
                                                            register with a CPO platform or hub (OCPI credentials handshake; the
                                                            service must be running: the CPO fetches our endpoints), then pull
                                                            its data. --raw-tokens: send our token unencoded (2.1.1/2.2 peers;
                                                            also found by itself: a Base64 token refused with 401 is sent raw);
                                                            --tokens-once: the platform keeps one token store for all its CPO
                                                            parties, push each user's token once (default: to each party).
                                                            Exit 0: connected and pulled; 1: the handshake failed, nothing is
                                                            connected; 3: connected, but pulling its data failed (in part or
                                                            whole; the output names what; \`cpo sync NAME\` pulls again)
  cpo invite [--name NAME] [--raw-tokens] [--tokens-once] [--json]
                                                            issue a TOKEN_A for a CPO that registers with us
  cpo list [--json]                                         list CPO connections (status, party, negotiated OCPI version, platform
                                                            or hub and its parties, token forms each way, how tokens are pushed)
  cpo show NAME [--json]                                    one connection: the above, its endpoints and each party (behind a
                                                            hub: the hub's ClientInfo status of each)
  cpo disconnect NAME                                       unregister at the CPO and stop using the connection
  cpo sync NAME [--full]                                    pull the CPO's locations, tariffs, sessions and CDRs now
  cpo rotate NAME                                           renew both credentials tokens of a connection
  cpo quality NAME [--json]                                 what was normalized or refused of the CPO's data, by rule, with examples
  sandbox cpo                                               run the sandbox CPO network as its own process (for service instances
                                                            started with CPO_SANDBOX=false): waits for the service at PUBLIC_BASE_URL,
                                                            connects the network over OCPI if not yet connected, serves until Ctrl-C
  webhooks list --client CLIENT_ID [--json]                 list a client's webhook endpoints (state, pending and failed deliveries)
  webhooks deliveries ENDPOINT_ID [--json]                  an endpoint's newest deliveries, with their attempts
  migrate                                                   apply database migrations

The database is the service's: DATABASE_URL if set, else the embedded one under DATA_DIR (default ./data).
Exit codes: 0 done; 1 the command failed (its message says why); 2 configuration error; 3 \`cpo connect\`: connected,
but the first pull failed; 64 usage error.`;

export class UsageError extends Error {}

const COMMANDS = [
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
  'bills held',
  'bills release',
  'cpo connect',
  'cpo invite',
  'cpo list',
  'cpo show',
  'cpo disconnect',
  'cpo sync',
  'cpo rotate',
  'cpo quality',
  'sandbox cpo',
  'webhooks list',
  'webhooks deliveries',
  'migrate',
] as const;

export type CommandName = (typeof COMMANDS)[number];

function isCommand(command: string): command is CommandName {
  return (COMMANDS as readonly string[]).includes(command);
}

const OPTIONS = {
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
  'tokens-once': { type: 'boolean', default: false },
  full: { type: 'boolean', default: false },
  client: { type: 'string' },
  waive: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/**
 * An option that takes a value takes the next argument as it is, as getopt does, even when it starts
 * with a dash (a CPO's TOKEN_A may: Base64url), unless that argument is one of our own options
 * (`--name --json` still says --name lacks its value). Node's parseArgs alone refuses `--token -x`.
 */
function valuesJoined(argv: string[]): string[] {
  const known = (name: string) => Object.hasOwn(OPTIONS, name);
  const takesValue = (arg: string) => arg.startsWith('--') && known(arg.slice(2)) && OPTIONS[arg.slice(2) as keyof typeof OPTIONS].type === 'string';
  const isOption = (arg: string) => arg === '-h' || (arg.startsWith('--') && known(arg.slice(2).split('=')[0] as string));
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    // After `--` everything is an argument, as parseArgs reads it.
    if (arg === '--') return [...joined, ...argv.slice(i)];
    if (takesValue(arg) && next?.startsWith('-') && !isOption(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

function parseOptions(argv: string[]) {
  return parseArgs({ args: valuesJoined(argv), allowPositionals: true, options: OPTIONS });
}

/** A command line checked: the command, its argument, its options, and the options' values parsed. */
export interface CommandLine {
  command: CommandName;
  /** What follows the command: an id, a name or a file. */
  arg: string | undefined;
  values: ReturnType<typeof parseOptions>['values'];
  json: boolean;
  expiresInMs: number | undefined;
  locations: number | undefined;
  seed: number;
}

function positiveInteger(flag: string, text: string, min = 1): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > 10_000_000) throw new UsageError(`${flag} must be an integer >= ${min}`);
  return Number(text);
}

/** The command line checked (a UsageError says what is wrong with it), or undefined when it asks for the usage text. */
export function parseCommandLine(argv: string[]): CommandLine | undefined {
  const { values, positionals } = parseOptions(argv);
  const [group, action, arg] = positionals;
  if (values.help || !group) return undefined;
  const json = values.json ?? false;
  const expiresInMs = values['expires-in'] ? parseDuration(values['expires-in']) : undefined;
  const command = `${group} ${action ?? ''}`.trim();
  if (!isCommand(command)) throw new UsageError(`unknown command "${command}"`);
  if (command === 'clients create' && !values.name) throw new UsageError('clients create needs --name NAME');
  if (['clients disable', 'clients update', 'tokens issue', 'tokens revoke', 'bills release'].includes(command) && !arg) {
    throw new UsageError(`${command} needs an id`);
  }
  if (command === 'bills release' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(arg as string)) {
    throw new UsageError('bills release needs a session id (a UUID, as `bills held` lists it)');
  }
  const rateLimit = values['rate-limit'];
  if (command === 'clients update' && (rateLimit === undefined || (rateLimit !== 'default' && !/^\d{1,10}$/.test(rateLimit)))) {
    throw new UsageError('clients update needs --rate-limit N (requests per minute; 0 = unlimited, "default" = RATE_LIMIT_PER_MINUTE)');
  }
  if (['stations import', 'partners add', 'partners remove', 'cpo show', 'cpo disconnect', 'cpo sync', 'cpo rotate', 'cpo quality'].includes(command) && !arg) {
    throw new UsageError(`${command} needs an argument`);
  }
  if (command === 'webhooks list' && !isUuid(values.client ?? '')) {
    throw new UsageError('webhooks list needs --client CLIENT_ID (the API client id, a UUID)');
  }
  if (command === 'webhooks deliveries' && !arg) throw new UsageError('webhooks deliveries needs an ENDPOINT_ID');
  if (command === 'cpo connect' && (!values['versions-url'] || !values.token)) throw new UsageError('cpo connect needs --versions-url URL and --token TOKEN_A');
  const locations = values.locations === undefined ? undefined : positiveInteger('--locations', values.locations);
  const seed = values.seed === undefined ? 1 : positiveInteger('--seed', values.seed, 0);
  if (command === 'stations generate' && locations === undefined) throw new UsageError('stations generate needs --locations N');
  if (command === 'partners add') {
    if (!values['logo-url']) throw new UsageError('partners add needs --logo-url URL');
    if (!/^https?:\/\/\S+$/.test(values['logo-url'])) throw new UsageError('--logo-url must be an http(s) URL');
  }
  return { command, arg, values, json, expiresInMs, locations, seed };
}
