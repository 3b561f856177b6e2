import type { ChessboardPayload, ChessboardTopic } from '../../contracts/chessboard';
import type { HandlerOutcome } from './consumer-runner';

/** One handler per chessboard topic a projection consumes, each typed with that topic's payload. */
export type ChessboardHandlers = { [T in ChessboardTopic]?: (payload: ChessboardPayload<T>) => Promise<HandlerOutcome> };

/**
 * The topic switch every projection of chessboard's events shares (catalog's cards, crm's view of the
 * objects): the envelope's payload goes to the handler of its topic; a topic without one is a logged
 * no-op (the runner only subscribes the consumer's own topics, so that is a wiring mistake, not data).
 */
export function dispatchChessboardEvent(handlers: ChessboardHandlers, topic: string, payload: unknown): Promise<HandlerOutcome> {
  const handler = handlers[topic as ChessboardTopic] as ((p: unknown) => Promise<HandlerOutcome>) | undefined;
  if (!handler) return Promise.resolve({ result: 'no-op', detail: `topic ${topic} is not projected` });
  return handler(payload);
}
