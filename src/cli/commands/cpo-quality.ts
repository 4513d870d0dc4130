// `charging-access cpo quality NAME [--json]`: what the tolerant OCPI reader
// made of a CPO connection's objects (pulled and pushed): per module and rule,
// how often it normalized or refused something, and the latest examples with
// the objects' ids. Never the objects themselves.
import { type QualityReport, qualityReport } from '../../modules/ocpi/quality.ts';
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import { ocpiOf, type Session } from '../session.ts';

function asText(name: string, report: QualityReport): string {
  if (report.rules.length === 0) return `${name}: every object received so far was taken as it was sent`;
  const refused = report.rules.filter((r) => r.kind === 'rejected').reduce((n, r) => n + r.count, 0);
  const normalized = report.rules.filter((r) => r.kind === 'normalized').reduce((n, r) => n + r.count, 0);
  const lines = [`${name}: ${refused} refused, ${normalized} normalized (by rule, latest examples first)`];
  for (const r of report.rules) {
    lines.push(
      '',
      `${r.kind === 'rejected' ? 'REFUSED   ' : 'normalized'}  ${r.module.padEnd(9)}  ${r.rule}  x${r.count}  (last ${r.last_seen})`,
      `  ${r.says}`,
    );
    for (const e of r.examples) {
      const where = `${e.object_id}${e.part ? ` [${e.part}]` : ''} ${e.path || '/'}`;
      lines.push(`    ${where}${e.detail ? `: ${e.detail}` : ''}`);
    }
  }
  return lines.join('\n');
}

export async function cpoQuality(session: Session, { arg, json }: CommandLine): Promise<void> {
  const connection = await ocpiOf(session).connections.findByName(arg as string);
  if (!connection) throw new Error(`no CPO connection named ${arg}`);
  const report = await qualityReport(session.db, connection.id);
  print(json, { name: connection.name, ...report }, asText(connection.name, report));
}
