// `charging-access migrate`: opening the session applied the migrations; this says what it did.
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import type { Session } from '../session.ts';

/** What `migrate` did, in one line: the migrations it applied now, or that there was nothing to do. */
function migrationSummary(applied: string[], alreadyApplied: number): string {
  if (applied.length === 0) return `migrations are up to date (${alreadyApplied} applied earlier)`;
  const earlier = alreadyApplied === 0 ? '' : `; ${alreadyApplied} applied earlier`;
  return `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}: ${applied.join(', ')}${earlier}`;
}

export async function migrate(session: Session, { json }: CommandLine): Promise<void> {
  const { applied, alreadyApplied } = session.migrations;
  print(json, { migrated: true, applied, already_applied: alreadyApplied }, migrationSummary(applied, alreadyApplied));
}
