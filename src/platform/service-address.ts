// The service's public address as the running service recorded it at start,
// for the operator CLI (which runs without the service's PORT or PUBLIC_BASE_URL).
import type { Clock } from './clock.ts';
import type { Queryable } from './db.ts';

export async function recordServiceAddress(ctx: { db: Queryable; clock: Clock }, publicBaseUrl: string): Promise<void> {
  await ctx.db.query(
    `INSERT INTO service_address (singleton, public_base_url, recorded_at) VALUES (true, $1, $2)
     ON CONFLICT (singleton) DO UPDATE SET public_base_url = EXCLUDED.public_base_url, recorded_at = EXCLUDED.recorded_at`,
    [publicBaseUrl, ctx.clock.now()],
  );
}

export async function findRecordedServiceAddress(db: Queryable): Promise<{ publicBaseUrl: string; recordedAt: Date } | undefined> {
  const { rows } = await db.query<{ public_base_url: string; recorded_at: Date }>('SELECT public_base_url, recorded_at FROM service_address');
  return rows[0] ? { publicBaseUrl: rows[0].public_base_url, recordedAt: rows[0].recorded_at } : undefined;
}

/** The address the service announces: PUBLIC_BASE_URL, else https://<host>:<port> with the port it really listens on (PORT=0 picks one). */
export function announcedAddress(config: { publicBaseUrl: string; publicBaseUrlFrom: string; port: number }, listeningPort: number | undefined): string {
  if (config.publicBaseUrlFrom === 'PUBLIC_BASE_URL' || config.port !== 0 || listeningPort === undefined) return config.publicBaseUrl;
  return config.publicBaseUrl.replace(/:0$/, `:${listeningPort}`);
}
