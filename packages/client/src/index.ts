// @charging-access/client: the typed client of the Charging Access API, for browsers and Node 24 (fetch, Web Crypto,
// no Node-only module).
export { type Client, type ClientOptions, createClient, randomKey } from './client.ts';
export { ApiError, type ApiErrorType, type FieldError, isApiError, type Problem, type ProblemType, TimeoutError, UNEXPECTED_RESPONSE } from './errors.ts';
export {
  type ClientEvent,
  type EventOf,
  type EventType,
  MalformedEventError,
  parseEventStream,
  type SessionEventsOptions,
  type SseMessage,
  type StreamedEvent,
} from './events.ts';
export type { components, paths, webhooks } from './generated/api.ts';
export type { CallOptions, ItemOf, Method, OptionsArg, PaginatedPath, PathsWith, RequestOptions, ResponseOf } from './operations.ts';
export type { Page } from './pagination.ts';
export type { RetryOptions } from './retry.ts';
export type { Answer, TokenSource } from './transport.ts';
export type * from './types.ts';
export {
  constantTimeEqual,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhooks.ts';
