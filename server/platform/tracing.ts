import {
  context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace,
  type Attributes, type Context, type Link, type Span, type SpanContext,
} from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { platformEnvSchema, type PlatformEnv } from './env';

/**
 * OpenTelemetry traces of the booking path: a tRPC command (or a job cycle) → its outbox row → the
 * relay → the consumer → the consumer's own outbox row → … (crm-booking-saga "Logs/traces": trace
 * path crm (command/worker) → outbox → chessboard).
 *
 * The outbox is the hop that breaks the call stack, so the W3C `traceparent` of the span that wrote
 * the row is stored in the row's `headers` (writeOutbox → `traceHeaders()`); the relay copies the
 * headers onto the Kafka message, and the consumer runner starts its span with that parent
 * (`contextFromHeaders`). correlationId (= the request's or the run's id) travels next to it in the
 * same headers and the envelope, so logs can be joined even when tracing is off.
 *
 * Off by default (OTEL_TRACES_EXPORTER=none): nothing is started, the API stays a no-op and costs
 * nothing, and no `traceparent` is written. This module imports only `@opentelemetry/api`; the SDK is
 * loaded by `startTracing` when it is enabled.
 */

export const TRACER_NAME = 'pin-booking';

export type TracingSettings = Pick<PlatformEnv, 'OTEL_TRACES_EXPORTER' | 'OTEL_EXPORTER_OTLP_ENDPOINT'>;

export interface Tracing {
  /** false when the exporter is `none` and no span processor was given: the API is a no-op */
  enabled: boolean;
  /** flushes pending spans and unregisters the SDK */
  shutdown(): Promise<void>;
}

const g = globalThis as unknown as { __pinTracing?: Tracing };

/**
 * Starts the OpenTelemetry Node SDK once per process (web: instrumentation.ts; worker: worker.ts).
 * `spanProcessors` replaces the exporter chosen by the settings (tests pass an in-memory exporter).
 * Only traces: the SDK's metrics and logs stay off (metrics are Prometheus, logs are pino JSON lines).
 */
export async function startTracing(
  settings: TracingSettings,
  serviceName: string,
  opts: { spanProcessors?: SpanProcessor[] } = {},
): Promise<Tracing> {
  if (g.__pinTracing) return g.__pinTracing;
  if (settings.OTEL_TRACES_EXPORTER === 'none' && !opts.spanProcessors) {
    return { enabled: false, shutdown: async () => {} };
  }
  const [{ NodeSDK }, { resourceFromAttributes }, base] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  let spanProcessors = opts.spanProcessors;
  if (!spanProcessors) {
    if (settings.OTEL_TRACES_EXPORTER === 'otlp') {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      const url = `${settings.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
      spanProcessors = [new base.BatchSpanProcessor(new OTLPTraceExporter({ url }))];
    } else {
      spanProcessors = [new base.SimpleSpanProcessor(new base.ConsoleSpanExporter())];
    }
  }
  const sdk = new NodeSDK({
    serviceName,
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'pin-booking' }),
    autoDetectResources: false,
    spanProcessors,
    // explicit empty lists: without them the SDK would read OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER
    // and default to OTLP exporters for metrics and logs too
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  const tracing: Tracing = {
    enabled: true,
    shutdown: async () => {
      if (g.__pinTracing !== tracing) return;
      g.__pinTracing = undefined;
      await sdk.shutdown().catch(() => {});
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  g.__pinTracing = tracing;
  return tracing;
}

/**
 * The web process (instrumentation.ts at start-up): only the OTEL_* settings are read here; any other
 * bad variable is reported by loadEnv on the first request, like every other setting of the web.
 */
export async function startWebTracing(source: Record<string, string | undefined> = process.env): Promise<Tracing> {
  const settings = platformEnvSchema.pick({ OTEL_TRACES_EXPORTER: true, OTEL_EXPORTER_OTLP_ENDPOINT: true }).safeParse(source);
  if (!settings.success) {
    console.error(`tracing not started: ${settings.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
    return { enabled: false, shutdown: async () => {} };
  }
  return startTracing(settings.data, 'pin-web');
}

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** the parent (default: the active context) */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `fn` inside a new active span; a thrown error is recorded on the span (status ERROR) and
 * re-thrown. Everything `fn` awaits (SQL, writeOutbox, log lines) sees the span as active.
 */
export function withSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = opts.parent ?? context.active();
  return tracer().startActiveSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed without an exception (e.g. a job cycle that returned status failed). */
export function markSpanFailed(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * The W3C trace context of `ctx` (default: the active span) as headers: `{ traceparent, tracestate? }`.
 * Empty when tracing is off or no span is active — the outbox row then carries only correlationId.
 */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context whose parent is the span described by `traceparent`/`tracestate` in `headers`. */
export function contextFromHeaders(headers: Record<string, unknown> | null | undefined): Context {
  const carrier: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (typeof v === 'string') carrier[k] = v;
    else if (Buffer.isBuffer(v)) carrier[k] = v.toString('utf8');
  }
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** The span context carried by `headers`, as a span link (the relay links its publish span to each row). */
export function linkFromHeaders(headers: Record<string, unknown> | null | undefined): Link | null {
  const sc: SpanContext | undefined = trace.getSpanContext(contextFromHeaders(headers));
  return sc && trace.isSpanContextValid(sc) ? { context: sc } : null;
}

export { SpanKind };
