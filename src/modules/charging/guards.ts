// What the charging module refuses to other modules while a session is unfinished.
import type { Queryable } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import * as repo from './repository.ts';

/** Removal guard of payment methods: not while an unfinished session uses it. */
export async function paymentMethodGuard(tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }): Promise<void> {
  if ((await repo.countUnfinished(tx, target.clientId, target.userId, target.paymentMethodId)) > 0) {
    throw new AppError('already_charging', 'This payment method pays for an unfinished charging session; remove it once the session has ended.');
  }
}

/** Deletion guard of users: not while charging. */
export async function userDeletionGuard(tx: Queryable, clientId: string, userId: string): Promise<void> {
  if ((await repo.countUnfinished(tx, clientId, userId)) > 0) {
    throw new AppError('already_charging', 'The user has an unfinished charging session; delete the user once it has ended.');
  }
}
