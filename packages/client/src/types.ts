// Names for the API's objects, taken from the generated types (the answers of the operations that return them).
import type { ItemOf, ResponseOf } from './operations.ts';

export type User = ResponseOf<'get', '/api/v1/users/{user_id}/'>;
export type BillingDetails = ResponseOf<'get', '/api/v1/users/{user_id}/billing-details/'>;
export type SetupIntent = ResponseOf<'get', '/api/v1/users/{user_id}/setup-intents/'>;
export type PaymentMethod = ItemOf<'/api/v1/users/{user_id}/payment-methods/'>;
export type Station = ResponseOf<'get', '/api/v1/stations/details/'>;
export type StationAround = ItemOf<'/api/v1/stations/around/'>;
export type StationTile = ResponseOf<'get', '/api/v1/stations/tile/'>;
export type Partner = ResponseOf<'get', '/api/v1/stations/partners/'>[number];
export type ChargingSession = ResponseOf<'get', '/api/v1/users/{user_id}/charging-sessions/{session_id}/'>;
export type Debt = ItemOf<'/api/v1/users/{user_id}/charging/debts/'>;
export type Invoice = ItemOf<'/api/v1/users/{user_id}/invoices/'>;
export type WebhookEndpoint = ResponseOf<'get', '/api/v1/webhook-endpoints/{endpoint_id}/'>;
export type WebhookDelivery = ItemOf<'/api/v1/webhook-endpoints/{endpoint_id}/deliveries/'>;
