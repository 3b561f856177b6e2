import { z } from 'zod';
import { TOPICS } from './topics';
import { envelopeSchema, nullableTimestamp, timestamp } from './envelope';

const objectStatus = z.enum(['Free', 'Reserved', 'Booked', 'Sold', 'Hidden']);
const statusSource = z.enum(['Crm', 'ExpirationJob', 'Manual', 'Import']);

/** pin.chessboard.property-object-status-changed.v1 (payload of spec 000 / the hold-expiration spec). */
export const propertyObjectStatusChangedPayload = z.object({
  propertyObjectId: z.uuid(),
  tenantId: z.uuid(),
  projectId: z.uuid(),
  buildingId: z.uuid(),
  fromStatus: objectStatus,
  toStatus: objectStatus,
  statusSource,
  reservedUntil: nullableTimestamp,
  bookedUntil: nullableTimestamp,
  holdDealId: z.uuid().nullable(),
  soldAt: nullableTimestamp,
  statusChangedAt: timestamp,
  version: z.number().int().positive(),
});

export const propertyObjectUpsertedPayload = z.object({
  propertyObjectId: z.uuid(),
  tenantId: z.uuid(),
  projectId: z.uuid(),
  buildingId: z.uuid(),
  number: z.string(),
  floor: z.number().int(),
  section: z.number().int(),
  rooms: z.number().int().min(0),
  area: z.number().positive(),
  price: z.number().min(0),
  status: objectStatus,
  version: z.number().int().positive(),
  updatedAt: timestamp,
});
export const propertyObjectDeletedPayload = z.object({
  propertyObjectId: z.uuid(),
  tenantId: z.uuid(),
  projectId: z.uuid(),
  deletedAt: timestamp,
});
export const projectUpsertedPayload = z.object({
  projectId: z.uuid(),
  tenantId: z.uuid(),
  name: z.string(),
  city: z.string(),
  propertyObjectsFreeCount: z.number().int().min(0),
  version: z.number().int().positive(),
  updatedAt: timestamp,
});
export const projectDeletedPayload = z.object({ projectId: z.uuid(), tenantId: z.uuid(), deletedAt: timestamp });

// topic → envelope schema and topic → event type, the same maps as contracts/crm.ts for crm's topics (one per producer)
export const chessboardContracts = {
  [TOPICS.propertyObjectStatusChanged]: envelopeSchema('PropertyObjectStatusChanged', propertyObjectStatusChangedPayload),
  [TOPICS.propertyObjectUpserted]: envelopeSchema('PropertyObjectUpserted', propertyObjectUpsertedPayload),
  [TOPICS.propertyObjectDeleted]: envelopeSchema('PropertyObjectDeleted', propertyObjectDeletedPayload),
  [TOPICS.projectUpserted]: envelopeSchema('ProjectUpserted', projectUpsertedPayload),
  [TOPICS.projectDeleted]: envelopeSchema('ProjectDeleted', projectDeletedPayload),
} as const;

export const CHESSBOARD_EVENT_TYPES = {
  [TOPICS.propertyObjectStatusChanged]: 'PropertyObjectStatusChanged',
  [TOPICS.propertyObjectUpserted]: 'PropertyObjectUpserted',
  [TOPICS.propertyObjectDeleted]: 'PropertyObjectDeleted',
  [TOPICS.projectUpserted]: 'ProjectUpserted',
  [TOPICS.projectDeleted]: 'ProjectDeleted',
} as const;

export type ChessboardTopic = keyof typeof chessboardContracts;
export type ChessboardPayload<T extends ChessboardTopic> = z.infer<(typeof chessboardContracts)[T]>['payload'];
