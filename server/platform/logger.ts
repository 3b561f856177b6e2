import { trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

export type { Logger };

export type LogFormat = 'json' | 'pretty';

/**
 * traceId/spanId of the active OpenTelemetry span on every line written inside it, so a log line can
 * be opened as its trace (nothing is added when tracing is off: there is no active span then).
 */
function traceFields(): Record<string, string> {
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && trace.isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : {};
}

const LEVEL_COLOURS: Record<string, string> = { trace: '90', debug: '90', info: '36', warn: '33', error: '31', fatal: '35' };
const SHOWN_ELSEWHERE = new Set(['level', 'time', 'msg', 'service']);

function fieldValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v !== 'object') return String(v);
  return JSON.stringify(v);
}

/**
 * One JSON log line as a person reads it: `12:04:05.120 INFO  worker  worker started  jobs=[…]`.
 * The level is a word (never colour alone); an error's stack follows on indented lines.
 */
export function prettyLine(json: string, colour = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof o.time === 'string' ? o.time.slice(11, 23) : '';
  const level = String(o.level ?? '').toUpperCase().padEnd(5);
  const shownLevel = colour ? `\x1b[${LEVEL_COLOURS[String(o.level)] ?? '0'}m${level}\x1b[0m` : level;
  const fields = Object.entries(o)
    // a job cycle's correlationId is its runId: said once
    .filter(([k, v]) => !SHOWN_ELSEWHERE.has(k) && v !== undefined && !(k === 'correlationId' && v === o.runId))
    .map(([k, v]) => (k === 'err' && v && typeof v === 'object' ? `err=${String((v as { message?: unknown }).message ?? JSON.stringify(v))}` : `${k}=${fieldValue(v)}`));
  const stack = o.err && typeof o.err === 'object' && typeof (o.err as { stack?: unknown }).stack === 'string'
    ? `\n${String((o.err as { stack: string }).stack).split('\n').slice(1).map((l) => `    ${l.trim()}`).join('\n')}`
    : '';
  return `${[time, shownLevel, String(o.service ?? ''), String(o.msg ?? ''), ...fields].filter(Boolean).join('  ')}${stack}\n`;
}

/** A pino destination that writes each line through `prettyLine` to `out` (stdout by default). */
export function prettyDestination(out: pino.DestinationStream & { isTTY?: boolean } = pino.destination({ fd: 1, sync: false })): pino.DestinationStream & { flush?: (cb?: () => void) => void } {
  const colour = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
  const flushable = out as unknown as { flush?: (cb?: (err?: Error) => void) => void };
  return {
    write: (chunk: string) => {
      for (const line of chunk.split('\n')) if (line) out.write(prettyLine(line, colour));
    },
    flush: (cb?: () => void) => (flushable.flush ? flushable.flush(() => cb?.()) : cb?.()),
  } as pino.DestinationStream & { flush?: (cb?: () => void) => void };
}

/**
 * Lines with level, time, msg, service and the event's fields: JSON (the default: what production and
 * the tests read) or `pretty` for a terminal (LOG_FORMAT). Ids and counters only — never names, phones or
 * e-mails. `destination` lets tests capture the lines of one cycle.
 */
export function createLogger(service: string, opts: { level?: string; format?: LogFormat; destination?: pino.DestinationStream } = {}): Logger {
  const format = opts.format ?? (process.env.LOG_FORMAT === 'pretty' ? 'pretty' : 'json');
  const raw = opts.destination ?? pino.destination({ fd: 1, sync: false });
  return pino(
    {
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: traceFields,
    },
    format === 'pretty' ? prettyDestination(raw) : raw,
  );
}

/** A logger that collects lines in memory: for tests that assert log events and fields. */
export function createCapturingLogger(service = 'test', level = 'debug'): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const buf: string[] = [];
  const destination = { write: (s: string) => { buf.push(s); return true; } } as unknown as pino.DestinationStream;
  const logger = pino({ level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (l) => ({ level: l }) }, mixin: traceFields }, destination);
  return { logger, lines: () => buf.flatMap((chunk) => chunk.split('\n').filter(Boolean).map((l) => JSON.parse(l))) };
}
