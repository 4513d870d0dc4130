// `charging-access partners ...`: the operators shown as partners (with their logo); every process reloads its catalogue.
import * as stationsRepo from '../../modules/stations/repository.ts';
import { systemClock } from '../../platform/clock.ts';
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import type { Session } from '../session.ts';

export async function partnersAdd(session: Session, { arg, values, json }: CommandLine): Promise<void> {
  await stationsRepo.upsertPartner(session.db, { name: arg as string, logo_url: values['logo-url'] as string }, systemClock.now());
  await stationsRepo.notifyCatalogueChanged(session.db, { kind: 'reload' });
  print(json, { name: arg, logo_url: values['logo-url'] }, `partner ${arg} added`);
}

export async function partnersList(session: Session, { json }: CommandLine): Promise<void> {
  const partners = await stationsRepo.listPartners(session.db);
  print(json, partners, partners.length === 0 ? 'no partners' : partners.map((p) => `${p.name}  ${p.logo_url}`).join('\n'));
}

export async function partnersRemove(session: Session, { arg, json }: CommandLine): Promise<void> {
  if (!(await stationsRepo.deletePartner(session.db, arg as string))) throw new Error(`no partner named ${arg}`);
  await stationsRepo.notifyCatalogueChanged(session.db, { kind: 'reload' });
  print(json, { name: arg, removed: true }, `partner ${arg} removed`);
}
