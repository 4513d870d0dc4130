// The operator's command-line tool: `charging-access <command>`.
// It reaches the same database as the service (DATA_DIR or DATABASE_URL),
// whether or not the service is running.
import { ConfigError, loadConfig } from '../platform/config.ts';
import { SANDBOX_POOL_SIZE } from '../sandbox-network.ts';
import { type CommandLine, type CommandName, parseCommandLine, USAGE, UsageError } from './command-line.ts';
import { billsHeld, billsRelease } from './commands/bills.ts';
import { clientsCreate, clientsDisable, clientsList, clientsUpdate } from './commands/clients.ts';
import { cpoConnect, cpoDisconnect, cpoInvite, cpoRotate, cpoSync } from './commands/cpo.ts';
import { cpoQuality } from './commands/cpo-quality.ts';
import { cpoList, cpoShow } from './commands/cpo-show.ts';
import { migrate } from './commands/migrate.ts';
import { partnersAdd, partnersList, partnersRemove } from './commands/partners.ts';
import { stationsGenerate, stationsImport } from './commands/stations.ts';
import { tokensIssue, tokensRevoke } from './commands/tokens.ts';
import { webhooksDeliveries, webhooksList } from './commands/webhooks.ts';
import { runSandboxCpo } from './sandbox-cpo.ts';
import { ocpiOf, openSession, type Session } from './session.ts';

/** One function per command but `sandbox cpo` (a process of its own), each run in a session opened for it. */
const SESSION_COMMANDS: Record<Exclude<CommandName, 'sandbox cpo'>, (session: Session, line: CommandLine) => Promise<void>> = {
  migrate,
  'clients create': clientsCreate,
  'clients list': clientsList,
  'clients disable': clientsDisable,
  'clients update': clientsUpdate,
  'tokens issue': tokensIssue,
  'tokens revoke': tokensRevoke,
  'stations generate': stationsGenerate,
  'stations import': stationsImport,
  'partners add': partnersAdd,
  'partners list': partnersList,
  'partners remove': partnersRemove,
  'bills held': billsHeld,
  'bills release': billsRelease,
  'cpo connect': cpoConnect,
  'cpo invite': cpoInvite,
  'cpo list': cpoList,
  'cpo show': cpoShow,
  'cpo disconnect': cpoDisconnect,
  'cpo sync': cpoSync,
  'cpo rotate': cpoRotate,
  'cpo quality': cpoQuality,
  'webhooks list': webhooksList,
  'webhooks deliveries': webhooksDeliveries,
};

async function run(argv: string[]): Promise<void> {
  const line = parseCommandLine(argv);
  if (!line) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }

  if (line.command === 'sandbox cpo') {
    const config = loadConfig();
    // A network under load runs many statements at once: the pool the built-in sandboxes get, not a command's 2.
    const pool = { poolSize: SANDBOX_POOL_SIZE, applicationName: 'charging-access-sandbox-cpo' };
    await runSandboxCpo({ config, openSession: (databaseUrl) => openSession({ ...config, databaseUrl }, pool), ocpiOf });
    return;
  }

  const session = await openSession();
  try {
    await SESSION_COMMANDS[line.command](session, line);
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
