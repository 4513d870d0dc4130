// `charging-access cpo ...`: the OCPI connections to CPOs (connect, invite, disconnect, sync, rotate; list and show: cpo-show.ts).
import type { Connection } from '../../modules/ocpi/repository.ts';
import type { SyncCounts, SyncProgress } from '../../modules/ocpi/sync.ts';
import type { Progress } from '../../modules/stations/loader.ts';
import type { CommandLine } from '../command-line.ts';
import { print, progress } from '../output.ts';
import { serviceAddress } from '../service-address.ts';
import { ocpiOf, type Session } from '../session.ts';
import { identityOf } from './cpo-show.ts';

/** The OCPI module for commands that hand our address to a CPO (connect, invite, rotate): at the address the service recorded, unless given. */
async function ocpiAtServiceAddress(session: Session) {
  const { publicBaseUrl } = await serviceAddress(session);
  return ocpiOf({ db: session.db, config: { ...session.config, publicBaseUrl } });
}

/** What `cpo connect` says of the connection it made (cpo-show.ts gives the whole view): without a CPO role, its first role's party. */
const connectionView = (c: Connection) => identityOf(c, c.roles[0]);

/** `cpo connect`'s exit code when the connection is stored and connected but pulling its data failed (in part or whole). */
export const CONNECTED_PULL_FAILED = 3;

/** Modules a pull could not get (the others were pulled): one line each on stderr. */
function reportFailedModules(counts: SyncCounts): void {
  for (const f of counts.failed) process.stderr.write(`could not pull ${f.module} (pulled again next time): ${f.reason}\n`);
}

function syncProgress(): SyncProgress | undefined {
  const bars = new Map<string, Progress | undefined>();
  return (module, done, total) => {
    if (!bars.has(module)) bars.set(module, progress(module));
    bars.get(module)?.(done, total);
  };
}

/**
 * `cpo connect`: two steps, and the exit code says which one failed. The credentials handshake: when it fails,
 * nothing is connected (exit 1, "the credentials handshake failed: ..."). Then the first pull of the CPO's data:
 * when it fails, in part or whole, the connection stands (it is stored and connected, and the reconciliation or
 * `cpo sync` pulls again); the command says what was not pulled and exits CONNECTED_PULL_FAILED (3).
 */
export async function cpoConnect(session: Session, { values, json }: CommandLine): Promise<void> {
  const ocpi = await ocpiAtServiceAddress(session);
  let connection: Connection;
  try {
    connection = await ocpi.connections.connect({
      versionsUrl: values['versions-url'] as string,
      token: values.token as string,
      ...(values.party ? { party: values.party } : {}),
      ...(values.name ? { name: values.name } : {}),
      rawTokens: values['raw-tokens'] ?? false,
      ...(values['tokens-once'] ? { tokenPush: 'once' as const } : {}),
    });
  } catch (error) {
    throw new Error(`the credentials handshake failed, nothing is connected: ${(error as Error).message}`);
  }
  process.stderr.write(`connected to ${connection.name} (OCPI ${connection.version}); pulling its tariffs, locations, sessions and CDRs\n`);
  let counts: SyncCounts;
  try {
    counts = await ocpi.sync.syncConnection(connection, { full: true, onProgress: syncProgress() });
  } catch (error) {
    // Not a module the CPO refused (those are in counts.failed) but the pull itself (our database, say).
    const reason = (error as Error).message;
    process.stderr.write(`connected to ${connection.name}, but pulling its data failed (pulled again by the reconciliation or \`cpo sync\`): ${reason}\n`);
    process.exitCode = CONNECTED_PULL_FAILED;
    print(json, { ...connectionView(connection), pulled: false, pull_error: reason }, `connected: ${connection.name}; pulling its data failed: ${reason}`);
    return;
  }
  reportFailedModules(counts);
  if (counts.failed.length > 0) process.exitCode = CONNECTED_PULL_FAILED;
  const failed = counts.failed.map((f) => f.module);
  print(
    json,
    { ...connectionView(connection), pulled: failed.length === 0, synced: counts },
    `connected: ${connection.name}; pulled ${counts.locations} locations, ${counts.tariffs} tariffs` +
      (failed.length > 0 ? `; not pulled: ${failed.join(', ')} (run \`cpo sync ${connection.name}\` to try again)` : ''),
  );
}

export async function cpoInvite(session: Session, { values, json }: CommandLine): Promise<void> {
  const invite = await (await ocpiAtServiceAddress(session)).connections.invite({
    ...(values.name ? { name: values.name } : {}),
    rawTokens: values['raw-tokens'] ?? false,
    ...(values['tokens-once'] ? { tokenPush: 'once' as const } : {}),
  });
  print(
    json,
    { token: invite.token, versions_url: invite.versions_url },
    `token:        ${invite.token}\nversions_url: ${invite.versions_url}\nname:         ${invite.name}`,
  );
}

export async function cpoDisconnect(session: Session, { arg, json }: CommandLine): Promise<void> {
  const result = await ocpiOf(session).connections.disconnect(arg as string);
  print(
    json,
    { name: arg, disconnected: true, peer_informed: result.peerInformed },
    `disconnected ${arg}${result.peerInformed ? '' : ` (the CPO was not told${result.error ? `: ${result.error}` : ''})`}`,
  );
}

export async function cpoSync(session: Session, { arg, values, json }: CommandLine): Promise<void> {
  const ocpi = ocpiOf(session);
  const connection = await ocpi.connections.findByName(arg as string);
  if (connection?.status !== 'connected') throw new Error(`no connected CPO named ${arg}`);
  const counts = await ocpi.sync.syncConnection(connection, { full: values.full ?? false, onProgress: syncProgress() });
  reportFailedModules(counts);
  if (counts.failed.length > 0) process.exitCode = 1;
  print(
    json,
    counts,
    `pulled ${counts.locations} locations, ${counts.tariffs} tariffs, ${counts.sessions} sessions, ${counts.cdrs} CDRs (${counts.skipped} left out: charging-access cpo quality ${arg} says why)`,
  );
}

export async function cpoRotate(session: Session, { arg, json }: CommandLine): Promise<void> {
  await (await ocpiAtServiceAddress(session)).connections.rotate(arg as string);
  print(json, { name: arg, rotated: true }, `new credentials tokens in use for ${arg}`);
}
