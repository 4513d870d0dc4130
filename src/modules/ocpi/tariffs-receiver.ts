// The Tariffs Receiver: a CPO reads back, PUTs and DELETEs its Tariffs, read
// by the tolerant reader (ocpi-protocol/reader/tariff.ts).
import { readTariff } from '../../ocpi-protocol/reader/tariff.ts';
import { OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { objectIdOf } from './quality.ts';
import { checkOwnKey, invalid, locationKey, type PartyPath, type ReceiversContext, requireObject, requireParty, taken } from './receiver-context.ts';
import type * as repo from './repository.ts';

export async function getTariff(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, tariffId: string) {
  await requireParty(ctx, connection, party, 'read');
  const tariff = await ctx.ingestion.findTariff(locationKey(party, tariffId));
  if (!tariff) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown tariff ${tariffId}`);
  return tariff;
}

/** Stores a pushed Tariff; true when it was new (answered 201). */
export async function putTariff(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, tariffId: string, body: unknown): Promise<boolean> {
  await requireParty(ctx, connection, party);
  const object = requireObject(body);
  checkOwnKey(object, party, tariffId);
  const key = locationKey(party, tariffId);
  const tariff = await taken(
    ctx,
    connection,
    'tariffs',
    objectIdOf(key),
    readTariff({ ...object, country_code: key.country_code, party_id: key.party_id, id: tariffId }),
  );
  // Read before the write: two first PUTs of one tariff racing may both be told 201 (both created it, as far as they know).
  const existed = (await ctx.ingestion.findTariff(key)) !== undefined;
  try {
    await ctx.ingestion.putTariff(tariff);
  } catch (error) {
    invalid(error);
  }
  return !existed;
}

export async function deleteTariff(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, tariffId: string) {
  await requireParty(ctx, connection, party);
  if (!(await ctx.ingestion.deleteTariff(locationKey(party, tariffId)))) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown tariff ${tariffId}`);
}
