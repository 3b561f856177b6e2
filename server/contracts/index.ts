import { crmContracts, CRM_EVENT_TYPES } from './crm';
import { chessboardContracts, CHESSBOARD_EVENT_TYPES } from './chessboard';

/** topic (without prefix) → envelope schema; one schema per topic, shared by producer and consumers */
export const contracts = { ...crmContracts, ...chessboardContracts } as const;
export const eventTypes = { ...CRM_EVENT_TYPES, ...CHESSBOARD_EVENT_TYPES } as const;
export type Topic = keyof typeof contracts;
export * from './envelope';
