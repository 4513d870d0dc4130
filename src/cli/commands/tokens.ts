// `charging-access tokens ...`: an API client's tokens (issue, revoke).
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import { clientsService, type Session } from '../session.ts';

export async function tokensIssue(session: Session, { arg, json, expiresInMs }: CommandLine): Promise<void> {
  const issued = await (await clientsService(session)).issueToken(arg as string, { expiresInMs });
  print(
    json,
    { client_id: issued.clientId, token: issued.token, token_id: issued.jti, expires_at: issued.expiresAt?.toISOString() ?? null },
    `token_id: ${issued.jti}\nexpires:  ${issued.expiresAt?.toISOString() ?? 'never'}\ntoken:    ${issued.token}`,
  );
}

export async function tokensRevoke(session: Session, { arg, json }: CommandLine): Promise<void> {
  await (await clientsService(session)).revokeToken(arg as string);
  print(json, { token_id: arg, revoked: true }, `token ${arg} revoked`);
}
