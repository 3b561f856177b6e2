/** The contexts that publish events through an outbox (`<name>.outbox`, relayed to Kafka by the worker). */
export const OUTBOX_NAMES = ['crm', 'chessboard'] as const;
