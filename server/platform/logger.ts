import { trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * traceId/spanId of the active OpenTelemetry span on every line written inside it, so a log line can
 * be opened as its trace (nothing is added when tracing is off: there is no active span then).
 */
function traceFields(): Record<string, string> {
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && trace.isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : {};
}

/**
 * JSON lines with level, time, msg, service. Ids and counters only — never names, phones or e-mails.
 * `destination` lets tests capture the lines of one cycle.
 */
export function createLogger(service: string, opts: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: traceFields,
    },
    opts.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}

/** A logger that collects lines in memory: for tests that assert log events and fields. */
export function createCapturingLogger(service = 'test', level = 'debug'): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const buf: string[] = [];
  const destination = { write: (s: string) => { buf.push(s); return true; } } as unknown as pino.DestinationStream;
  const logger = pino({ level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (l) => ({ level: l }) }, mixin: traceFields }, destination);
  return { logger, lines: () => buf.flatMap((chunk) => chunk.split('\n').filter(Boolean).map((l) => JSON.parse(l))) };
}
