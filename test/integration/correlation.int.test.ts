import { randomUUID } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Kafka } from 'kafkajs';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTenant, insertUser } from '../fixtures/auth.fixtures';
import { createSession, SESSION_COOKIE } from '../../server/auth/session';
import { cardProjectionConsumer } from '../../server/catalog/card-projection.consumer';
import { eventually, insertObjects, insertProject, TENANT, type Place } from '../fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from '../../server/chessboard/crm-property-object-status.consumer';
import { createPropertyObjectHoldExpirationJob } from '../../server/chessboard/property-object-hold-expiration.job';
import { actor, callerFor, insertDeal, insertProgram } from '../fixtures/crm.fixtures';
import { createTestContext, type TestContext } from '../harness/harness';
import { readTopics } from '../harness/kafka';
import { resetEnvCache } from '../../server/main/env';
import { runJobCycle } from '../../server/platform/jobs/run-log';
import { createKafka } from '../../server/platform/kafka/client';
import { startConsumer, type RunningConsumer } from '../../server/platform/kafka/consumer-runner';
import { TOPICS, withPrefix } from '../../server/platform/kafka/topics';
import { OUTBOX_NAMES } from '../../server/main/outboxes';
import { createOutboxRelayJob } from '../../server/platform/outbox/outbox-relay.job';
import { startTracing, type Tracing } from '../../server/platform/tracing';
import { projectedObjectOf } from '../harness/crm-projection';

/**
 * End-to-end correlation through the real broker: the request's correlationId (or the job's runId)
 * is on the outbox row, the Kafka headers, the consumers' log lines and the consumer's own outbox row,
 * whose causationId is the incoming messageId; and one OpenTelemetry trace spans command → outbox →
 * relay → consumer → outbox → relay → consumer (in-memory span exporter).
 */

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let t: TestContext;
let kafka: Kafka;
let place: Place;
const consumers: RunningConsumer[] = [];
const relayJob = createOutboxRelayJob(OUTBOX_NAMES);

beforeAll(async () => {
  tracing = await startTracing({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' }, 'pin-test', {
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  t = await createTestContext({ kafka: true });
  kafka = createKafka(t.env);
  place = await insertProject(t.database, TENANT);
  for (const def of [crmPropertyObjectStatusConsumer, cardProjectionConsumer]) {
    consumers.push(await startConsumer(def, { database: t.database, env: t.env, logger: t.logger, kafka }));
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(consumers.map((c) => c.stop()));
  await relayJob.close?.();
  await tracing?.shutdown();
  await t?.close();
});

const deps = () => ({ database: t.database, env: t.env, logger: t.logger, kafka, signal: new AbortController().signal });
async function relayCycle() {
  const res = await runJobCycle(relayJob, deps(), 'manual');
  expect(res.status, res.error).toBe('succeeded');
  return res;
}

interface OutboxRow {
  message_id: string;
  headers: Record<string, string | null>;
  payload: { messageId: string; correlationId: string; causationId: string | null };
}
const outboxRows = (outbox: 'crm' | 'chessboard', aggregateId: string, topic: string) =>
  t.database.sql.unsafe<OutboxRow[]>(`SELECT message_id, headers, payload FROM ${outbox}.outbox WHERE aggregate_id = $1 AND topic = $2 ORDER BY id`, [aggregateId, topic]);
const inboxRow = (inbox: 'chessboard' | 'catalog' | 'crm' | 'messenger', consumer: string, messageId: string) =>
  eventually(async () => (await t.database.sql.unsafe<{ result: string }[]>(
    `SELECT result FROM ${inbox}.inbox WHERE consumer = $1 AND message_id = $2`, [consumer, messageId]))[0], 60_000, `${inbox}.inbox row of ${messageId}`);
/** The consumer's span of one message (it ends right after the offset commit). */
const consumerSpan = (messageId: string) =>
  eventually(async () => exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.message.id'] === messageId), 30_000, `span of ${messageId}`);
const logLine = (messageId: string, msg: RegExp) =>
  eventually(async () => t.logLines().find((l) => l.messageId === messageId && msg.test(String(l.msg))), 30_000, `log line of ${messageId}`);
const traceparentOf = (s: ReadableSpan) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;

describe('correlation and trace propagation', () => {
  it('tRPC command → crm outbox → Kafka → chessboard consumer → chessboard outbox → Kafka → catalog consumer', async () => {
    const [objectId] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const deal = await insertDeal(t, TENANT);
    const program = await insertProgram(t, TENANT);
    const correlationId = randomUUID();

    const booking = await callerFor(t, actor('agent', TENANT), correlationId).booking.create({ dealId: deal.id, propertyObjectId: objectId!, programId: program.id });

    // the command's span and its outbox row
    const command = exporter.getFinishedSpans().find((s) => s.name === 'trpc booking.create')!;
    expect(command).toBeDefined();
    expect(command.attributes).toMatchObject({ 'rpc.method': 'booking.create', 'pin.correlation_id': correlationId, 'pin.tenant_id': TENANT });
    const traceId = command.spanContext().traceId;
    expect(command.events.find((e) => e.name === 'outbox.write')?.attributes).toMatchObject({ 'messaging.destination.name': TOPICS.bookingCreated });
    const [crmRow] = await outboxRows('crm', booking.id, TOPICS.bookingCreated);
    const crmMessageId = crmRow!.message_id;
    expect(crmRow!.payload).toMatchObject({ correlationId, causationId: null });
    expect(crmRow!.headers).toMatchObject({ correlationId, causationId: null, traceparent: traceparentOf(command) });
    expect(t.logLines().find((l) => l.msg === 'crm command applied' && l.bookingId === booking.id)).toMatchObject({ correlationId, traceId });

    // relay → Kafka: the headers travel with the message
    await relayCycle();
    const message = (await readTopics(kafka, [withPrefix(t.prefix, TOPICS.bookingCreated)], (all) => all.some((m) => m.headers.messageId === crmMessageId)))
      .find((m) => m.headers.messageId === crmMessageId);
    expect(message?.headers).toMatchObject({ messageId: crmMessageId, correlationId, traceparent: traceparentOf(command) });
    const relaySpan = exporter.getFinishedSpans().find((s) => s.name === 'outbox-relay publish crm' && s.links.some((l) => l.context.spanId === command.spanContext().spanId));
    expect(relaySpan?.kind).toBe(SpanKind.PRODUCER);

    // chessboard consumer: its span is the command's child; its outbox row is caused by the crm message
    expect(await inboxRow('chessboard', crmPropertyObjectStatusConsumer.name, crmMessageId)).toEqual({ result: 'applied' });
    const chessboardSpan = await consumerSpan(crmMessageId);
    expect(chessboardSpan.spanContext().traceId).toBe(traceId);
    expect(chessboardSpan.parentSpanContext?.spanId).toBe(command.spanContext().spanId);
    expect(chessboardSpan.attributes).toMatchObject({ 'pin.correlation_id': correlationId, 'pin.consumer.result': 'applied', 'messaging.consumer.group.name': withPrefix(t.prefix, crmPropertyObjectStatusConsumer.name) });
    expect(await logLine(crmMessageId, /^consumer applied$/)).toMatchObject({
      consumer: crmPropertyObjectStatusConsumer.name, correlationId, traceId, spanId: chessboardSpan.spanContext().spanId,
    });
    const [cbRow] = await outboxRows('chessboard', objectId!, TOPICS.propertyObjectStatusChanged);
    const cbMessageId = cbRow!.message_id;
    expect(cbRow!.payload).toMatchObject({ correlationId, causationId: crmMessageId });
    expect(cbRow!.headers).toMatchObject({ correlationId, causationId: crmMessageId, traceparent: traceparentOf(chessboardSpan) });

    // relay → catalog consumer: same trace, child of the chessboard consumer's span
    await relayCycle();
    await inboxRow('catalog', cardProjectionConsumer.name, cbMessageId);
    const catalogSpan = await consumerSpan(cbMessageId);
    expect(catalogSpan.spanContext().traceId).toBe(traceId);
    expect(catalogSpan.parentSpanContext?.spanId).toBe(chessboardSpan.spanContext().spanId);
    expect(catalogSpan.attributes).toMatchObject({ 'pin.correlation_id': correlationId, 'pin.causation_id': crmMessageId });
    expect(await logLine(cbMessageId, /^consumer (applied|no-op)$/)).toMatchObject({
      consumer: cardProjectionConsumer.name, correlationId, causationId: crmMessageId, traceId,
    });
  }, 120_000);

  it('a job cycle: correlationId = runId and the cycle\'s span on its outbox rows, through to the catalog consumer', async () => {
    const [objectId] = await insertObjects(t.database, place, [{ status: 'Reserved', timer: new Date(Date.now() - 20 * 60_000) }]);
    const run = await runJobCycle(createPropertyObjectHoldExpirationJob(), deps(), 'manual');
    expect(run.status).toBe('succeeded');
    const jobSpan = exporter.getFinishedSpans().find((s) => s.name === 'job property-object-hold-expiration' && s.attributes['pin.run_id'] === run.runId)!;
    expect(jobSpan.attributes).toMatchObject({ 'pin.correlation_id': run.runId, 'pin.job.status': 'succeeded' });
    expect(t.logLines().find((l) => l.msg === 'lost CRM release' && l.propertyObjectId === objectId)).toMatchObject({
      runId: run.runId, correlationId: run.runId, traceId: jobSpan.spanContext().traceId,
    });

    const [row] = await outboxRows('chessboard', objectId!, TOPICS.propertyObjectStatusChanged);
    // spec: the run id on the cycle's span and on the write of each outgoing event, with the item's tenant
    expect(jobSpan.events.find((e) => e.name === 'outbox.write' && e.attributes?.['messaging.message.id'] === row!.message_id)?.attributes).toMatchObject({
      'pin.correlation_id': run.runId, 'pin.tenant_id': TENANT, 'messaging.destination.name': TOPICS.propertyObjectStatusChanged,
    });
    expect(row!.payload).toMatchObject({ correlationId: run.runId, causationId: null });
    expect(row!.headers).toMatchObject({ correlationId: run.runId, traceparent: traceparentOf(jobSpan) });

    await relayCycle();
    await inboxRow('catalog', cardProjectionConsumer.name, row!.message_id);
    const catalogSpan = await consumerSpan(row!.message_id);
    expect(catalogSpan.spanContext().traceId).toBe(jobSpan.spanContext().traceId);
    expect(catalogSpan.parentSpanContext?.spanId).toBe(jobSpan.spanContext().spanId);
    expect(await logLine(row!.message_id, /^consumer (applied|no-op)$/)).toMatchObject({ correlationId: run.runId });
  }, 120_000);

  it('the HTTP route takes the correlationId from x-correlation-id (or makes one) and it reaches the outbox row', async () => {
    const saved = { ...process.env };
    const g = globalThis as unknown as { __pinServices?: { database: { close(): Promise<void> } } };
    delete g.__pinServices;
    Object.assign(process.env, { DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix, LOG_LEVEL: 'silent' });
    resetEnvCache();
    try {
      const { POST } = await import('@/app/api/trpc/[trpc]/route');
      const tenantId = await insertTenant(t.database.db);
      const user = await insertUser(t.database.db, 'agent', tenantId);
      const { token } = await createSession(t.database.db, user.id, 1);
      const program = await insertProgram(t, tenantId);
      const create = async (headers: Record<string, string>) => {
        const deal = await insertDeal(t, tenantId);
        const objectId = await projectedObjectOf(t.database, tenantId);
        const res = await POST(new Request('http://localhost/api/trpc/booking.create', {
          method: 'POST',
          headers: { 'content-type': 'application/json', host: 'localhost', cookie: `${SESSION_COOKIE}=${token}`, ...headers },
          body: JSON.stringify(superjson.serialize({ dealId: deal.id, propertyObjectId: objectId, programId: program.id })),
        }));
        expect(res.status, await res.clone().text()).toBe(200);
        const [row] = await t.database.sql<OutboxRow[]>`
          SELECT o.message_id, o.headers, o.payload FROM crm.outbox o JOIN crm.bookings b ON b.id = o.aggregate_id WHERE b.deal_id = ${deal.id}`;
        return row!;
      };
      const correlationId = randomUUID();
      const given = await create({ 'x-correlation-id': correlationId });
      expect(given.payload.correlationId).toBe(correlationId);
      expect(given.headers.correlationId).toBe(correlationId);
      const made = await create({});
      expect(made.payload.correlationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(made.payload.correlationId).not.toBe(correlationId);
    } finally {
      // (cast: after the `delete` above TypeScript narrows the property to undefined, but the route set it)
      const services = g.__pinServices as { database: { close(): Promise<void> } } | undefined;
      await services?.database.close();
      delete g.__pinServices;
      process.env = saved;
      resetEnvCache();
    }
  }, 60_000);
});
