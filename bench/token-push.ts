// Token pushes to a CPO: how fast the outbox drains to the sandbox CPO
// network, and how long a graceful stop takes with a backlog. The real
// service process (`node src/main.ts`, development mode) with its built-in
// sandbox CPO network, on a throw-away embedded PostgreSQL; the backlog is
// queued straight into the outbox (as N user changes would queue it), and
// the bench polls the outbox until it is empty.
//
//   npm run bench:token-push                    # 20,000 pushes, 3 runs, about 1-2 min
//   npm run bench:token-push -- --pushes 5000 --runs 1

import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { freePort } from '../src/platform/free-port.ts';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

type Service = ServiceProcess;

async function startService(env: Record<string, string>): Promise<Service> {
  return startServiceProcess({
    DEMO_CLIENT: 'false',
    CPO_SANDBOX: 'true',
    CPO_SANDBOX_PORT: String(await freePort()),
    CPO_SANDBOX_STATUS_CHANGES_PER_SECOND: '0',
    STATIONS_DEFAULT_LOCATIONS: '200',
    SHUTDOWN_GRACE_MS: '5000',
    LOG_LEVEL: 'warn',
    ...env,
  });
}

async function queue(client: pg.Client, pushes: number, run: number): Promise<number> {
  const { rowCount } = await client.query(
    `INSERT INTO ocpi_outbox (connection_id, module, method, path, body, dedupe_key, next_attempt_at, created_at)
     SELECT c.id, 'tokens', 'PUT', '/DE/CAX/' || gen_random_uuid() || '?type=APP_USER',
            jsonb_build_object('country_code', 'DE', 'party_id', 'CAX', 'uid', 'bench-' || $2 || '-' || i, 'type', 'APP_USER',
                               'contract_id', 'DE-CAX-C' || lpad(i::text, 12, '0'), 'issuer', 'Charging Access', 'valid', true,
                               'whitelist', 'ALLOWED', 'language', 'en', 'last_updated', now()),
            'token:bench-' || $2 || '-' || i, now(), now()
       FROM ocpi_connections c, generate_series(1, $1::int) AS i WHERE c.status = 'connected'`,
    [pushes, run],
  );
  return rowCount ?? 0;
}

const queued = async (client: pg.Client) => (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_outbox')).rows[0]?.n ?? 0;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pushes: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' } } });
  const pushes = Number(values.pushes);
  const runs = Number(values.runs);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-token-push-'));
  await chmod(tmp, 0o755);
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), role: 'cli', log: () => {} });
  const client = new pg.Client({ connectionString: postgres.url });
  let service: Service | undefined;
  try {
    service = await startService({ DATA_DIR: path.join(tmp, 'service'), DATABASE_URL: postgres.url });
    await client.connect();
    const rates: number[] = [];
    for (let run = 1; run <= runs; run++) {
      const n = await queue(client, pushes, run);
      const started = performance.now();
      while ((await queued(client)) > 0) {
        if (performance.now() - started > 600_000) throw new Error('not drained in 10 min');
        await sleep(50);
      }
      const seconds = (performance.now() - started) / 1000;
      rates.push(n / seconds);
      say(`run ${run}: ${n} pushes drained in ${seconds.toFixed(2)} s: ${Math.round(n / seconds)}/s (includes up to 2 s until the next delivery round)`);
    }
    const rate = median(rates);
    say(`drain rate to the sandbox CPO, median of ${runs}: ${Math.round(rate)} pushes/s (target >= 500): ${rate >= 500 ? 'PASS' : 'FAIL'}`);

    // A graceful stop with a backlog under way.
    const n = await queue(client, pushes, runs + 1);
    while ((await queued(client)) >= n) await sleep(20);
    const stopped = performance.now();
    service.child.kill('SIGTERM');
    const code = await service.exited;
    const took = performance.now() - stopped;
    const left = await queued(client);
    const leased = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_outbox WHERE leased_until IS NOT NULL')).rows[0]?.n;
    say(
      `stop with ${left} of ${n} pushes still queued: exit ${code} ${Math.round(took)} ms after SIGTERM (SHUTDOWN_GRACE_MS 5000): ${took < 5_000 ? 'PASS' : 'FAIL'}; left leased: ${leased}`,
    );
  } finally {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    await client.end().catch(() => {});
    await postgres.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
