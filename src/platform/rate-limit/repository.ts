// SQL of the rate limiter: allowances taken from a subject's one-minute window.
// Only this file touches rate_limit_windows.
import type { Queryable } from '../db.ts';

/**
 * Takes up to `wanted` requests of a window's `limit` for this process, never
 * past the limit (the row lock orders concurrent takers). Returns how many
 * were granted (0: the window is used up) and how many the window has handed
 * out in all, this grant included.
 */
export async function takeAllowance(
  db: Queryable,
  window: { start: Date; subject: string; limit: number; wanted: number },
): Promise<{ granted: number; taken: number }> {
  // SET expressions read the row as it was, so last_grant is this statement's own grant.
  const { rows } = await db.query<{ granted: number; taken: number }>(
    `INSERT INTO rate_limit_windows AS w (window_start, subject, taken, last_grant)
     VALUES ($1, $2, LEAST($3::bigint, $4::bigint), LEAST($3::bigint, $4::bigint))
     ON CONFLICT (window_start, subject) DO UPDATE
        SET taken = w.taken + LEAST($3::bigint, GREATEST($4::bigint - w.taken, 0)),
            last_grant = LEAST($3::bigint, GREATEST($4::bigint - w.taken, 0))
     RETURNING last_grant AS granted, taken`,
    [window.start, window.subject, window.wanted, window.limit],
  );
  const row = rows[0] as { granted: number; taken: number };
  return { granted: row.granted, taken: row.taken };
}

/** Forgets windows that ended before `before`. */
export async function deleteWindowsBefore(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM rate_limit_windows WHERE window_start < $1', [before]);
  return rowCount ?? 0;
}
