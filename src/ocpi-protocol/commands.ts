// OCPI 2.2.1 Commands module (mod_commands.asciidoc): the requests an eMSP
// posts to a CPO (start/stop a session, reserve, cancel a reservation, unlock
// a connector), the CPO's immediate CommandResponse and the Charge Point's
// CommandResult posted later to the request's response_url.
// Written from the spec's tables.
import { type Static, Type } from 'typebox';
import { Token } from './tokens.ts';
import { CiString, DateTime, DisplayText } from './types.ts';
import { OcpiUrl } from './versions.ts';

export const COMMAND_TYPES = ['CANCEL_RESERVATION', 'RESERVE_NOW', 'START_SESSION', 'STOP_SESSION', 'UNLOCK_CONNECTOR'] as const;
export const CommandType = Type.Enum(COMMAND_TYPES);
export type CommandType = Static<typeof CommandType>;

export const COMMAND_RESPONSE_TYPES = ['ACCEPTED', 'NOT_SUPPORTED', 'REJECTED', 'UNKNOWN_SESSION'] as const;
export const CommandResponseType = Type.Enum(COMMAND_RESPONSE_TYPES);
export type CommandResponseType = Static<typeof CommandResponseType>;

export const COMMAND_RESULT_TYPES = [
  'ACCEPTED',
  'CANCELED_RESERVATION',
  'EVSE_OCCUPIED',
  'EVSE_INOPERATIVE',
  'FAILED',
  'NOT_SUPPORTED',
  'REJECTED',
  'TIMEOUT',
  'UNKNOWN_RESERVATION',
] as const;
export const CommandResultType = Type.Enum(COMMAND_RESULT_TYPES);
export type CommandResultType = Static<typeof CommandResultType>;

/** StartSession. evse_uid is required when connector_id is set. */
export const StartSession = Type.Object(
  {
    response_url: OcpiUrl,
    token: Token,
    location_id: CiString(36),
    evse_uid: Type.Optional(CiString(36)),
    connector_id: Type.Optional(CiString(36)),
    authorization_reference: Type.Optional(CiString(36)),
  },
  { dependencies: { connector_id: ['evse_uid'] } },
);
export type StartSession = Static<typeof StartSession>;

export const StopSession = Type.Object({
  response_url: OcpiUrl,
  session_id: CiString(36),
});
export type StopSession = Static<typeof StopSession>;

export const ReserveNow = Type.Object({
  response_url: OcpiUrl,
  token: Token,
  expiry_date: DateTime,
  reservation_id: CiString(36),
  location_id: CiString(36),
  evse_uid: Type.Optional(CiString(36)),
  authorization_reference: Type.Optional(CiString(36)),
});
export type ReserveNow = Static<typeof ReserveNow>;

export const CancelReservation = Type.Object({
  response_url: OcpiUrl,
  reservation_id: CiString(36),
});
export type CancelReservation = Static<typeof CancelReservation>;

export const UnlockConnector = Type.Object({
  response_url: OcpiUrl,
  location_id: CiString(36),
  evse_uid: CiString(36),
  connector_id: CiString(36),
});
export type UnlockConnector = Static<typeof UnlockConnector>;

/** The CPO's answer to a command request; timeout is in seconds. message is a list (one text per language). */
export const CommandResponse = Type.Object({
  result: CommandResponseType,
  timeout: Type.Integer({ minimum: 0 }),
  message: Type.Optional(Type.Array(DisplayText)),
});
export type CommandResponse = Static<typeof CommandResponse>;

/** The Charge Point's result, posted by the CPO to the command's response_url. */
export const CommandResult = Type.Object({
  result: CommandResultType,
  message: Type.Optional(Type.Array(DisplayText)),
});
export type CommandResult = Static<typeof CommandResult>;
