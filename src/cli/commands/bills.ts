// `charging-access bills ...`: the bills held for the operator (a CDR in another currency than the session's
// payment hold) and their release: billed at the session's own tariff, or waived (--waive). The release is
// recorded here; a running service's job runner captures and invoices (or releases the hold).
import { findSession } from '../../modules/charging/repository.ts';
import { listHeldBills, releaseHeldBill } from '../../modules/invoicing/held-bills.ts';
import { findCdr } from '../../modules/ocpi/repository.ts';
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import { systemClock } from '../../platform/clock.ts';
import { fromMinorUnits } from '../../platform/money.ts';
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import type { Session } from '../session.ts';

export async function billsHeld(session: Session, { json }: CommandLine): Promise<void> {
  const held = (await listHeldBills(session)).map((b) => ({
    session_id: b.session_id,
    client_id: b.client_id,
    user_id: b.user_id,
    held_at: b.held_at.toISOString(),
    reason: b.held_reason,
    cdr: `${b.cdr.country_code}*${b.cdr.party_id}*${b.cdr.id}`,
    cdr_currency: b.cdr_currency,
    cdr_total: b.cdr_total,
    hold_currency: b.hold_currency,
    hold_amount: fromMinorUnits(Number(b.hold_amount), b.hold_currency),
  }));
  print(
    json,
    held,
    held.length === 0
      ? 'no bills held'
      : held
          .map(
            (b) =>
              `${b.session_id}  held since ${b.held_at}  CDR ${b.cdr} ${b.cdr_total ?? '?'} ${b.cdr_currency}  hold ${b.hold_amount} ${b.hold_currency}\n  ${b.reason}`,
          )
          .join('\n'),
  );
}

export async function billsRelease(session: Session, { arg, values, json }: CommandLine): Promise<void> {
  const { db } = session;
  const released = await releaseHeldBill(
    {
      db,
      clock: systemClock,
      session: (id) => findSession(db, id),
      cdr: async (key) => (await findCdr(db, key))?.data as CDR | undefined,
    },
    arg as string,
    values.waive ? 'waived' : 'tariff',
  );
  const what =
    released.released_as === 'waived'
      ? 'waived: nothing is charged, the payment hold is released, no invoice'
      : released.step === 'not_billed'
        ? `priced at the session's tariff: nothing to bill (the payment hold is released)`
        : `billed at the session's tariff: ${released.total} ${released.currency} incl. VAT, captured from the hold and invoiced`;
  print(json, released, `bill of session ${released.session_id} released, ${what} (by the service's job runner)`);
}
