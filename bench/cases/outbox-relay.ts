import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type postgres from 'postgres';
import { createTopics } from '../../scripts/infra/index';
import { Agent } from '../lib/agent-client';
import type { BenchCase } from '../lib/context';
import { rawClient, settle } from '../lib/db';
import { kafkaToolsClasspath, producerPerformance, type ProducerPerfResult } from '../lib/kafka-tools';
import { sampled, type Metric } from '../lib/report';
import { median } from '../lib/stats';

/**
 * The outbox relay draining 100,000 unpublished crm.outbox rows whose Kafka value is 1 KB, with the
 * production relay job (kafkajs idempotent producer, acks=all, batches of OUTBOX_RELAY_BATCH_SIZE,
 * marked published after the broker's ack) in the job-runner child. Compared with Kafka's own
 * ProducerPerformance tool sending the same number of 1 KB records (acks=all, idempotent) to a topic
 * with the same partition count on the same broker, in the same run.
 */

const RECORD_SIZE = 1024;
const TOPIC = 'pin.crm.booking-created.v1';

/** An envelope-shaped value whose JSON is exactly RECORD_SIZE bytes (all uuids and timestamps have fixed lengths). */
function paddingLength(): number {
  const uuid = '00000000-0000-5000-8000-000000000000';
  const envelope = {
    messageId: uuid, type: 'BookingCreated', contractVersion: 1, aggregateType: 'Booking', aggregateId: uuid,
    occurredAt: '2026-01-01T00:00:00.000Z', tenantId: uuid, correlationId: uuid, causationId: null,
    payload: { bookingId: uuid, dealId: uuid, propertyObjectId: uuid, tenantId: uuid, bookingVersion: 1, filler: '' },
  };
  return RECORD_SIZE - JSON.stringify(envelope).length;
}

async function createOutbox(sql: postgres.Sql, rows: number): Promise<void> {
  await sql.unsafe(`
    INSERT INTO crm.outbox (message_id, topic, key, aggregate_type, aggregate_id, payload, headers)
    SELECT m, '${TOPIC}', a::text, 'Booking', a,
           jsonb_build_object('messageId', m, 'type', 'BookingCreated', 'contractVersion', 1, 'aggregateType', 'Booking', 'aggregateId', a,
             'occurredAt', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'tenantId', t, 'correlationId', c, 'causationId', NULL,
             'payload', jsonb_build_object('bookingId', a, 'dealId', bench.uuid('bench:deal:' || i), 'propertyObjectId', bench.uuid('bench:object:' || i),
               'tenantId', t, 'bookingVersion', 1, 'filler', repeat('x', ${paddingLength()}))),
           jsonb_build_object('correlationId', c, 'causationId', NULL, 'contractVersion', '1')
    FROM (SELECT i, bench.uuid('bench:message:' || i) AS m, bench.uuid('bench:booking:' || i) AS a, bench.uuid('bench:tenant:' || (i % 2)) AS t,
                 bench.uuid('bench:correlation:' || i) AS c
          FROM generate_series(1, ${rows}) i) s`);
  const [sample] = await sql<{ payload: unknown }[]>`SELECT payload FROM crm.outbox LIMIT 1`;
  const size = Buffer.byteLength(JSON.stringify(sample.payload));
  if (size !== RECORD_SIZE) throw new Error(`outbox value is ${size} bytes, expected ${RECORD_SIZE}`);
  await sql.unsafe(`CREATE TABLE bench.saved_outbox AS SELECT * FROM crm.outbox`);
  await settle(sql, ['crm.outbox']);
}

async function restore(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`TRUNCATE crm.outbox, ops.job_runs`);
  await sql.unsafe(`INSERT INTO crm.outbox SELECT * FROM bench.saved_outbox`);
  await settle(sql, ['crm.outbox', 'ops.job_runs']);
}

export const outboxRelayCase: BenchCase = {
  name: 'outbox-relay',
  title: 'outbox relay throughput',
  async run(ctx) {
    const rows = ctx.scale(100_000);
    const runs = Math.min(ctx.runs, 3);
    const prefix = `benchrelay${randomBytes(3).toString('hex')}.`;
    await createTopics(ctx.brokers, prefix);
    const url = await ctx.databases.create('relay');
    const sql = rawClient(url);
    const relayRates: number[] = [];
    const relayMs: number[] = [];
    const perf: ProducerPerfResult[] = [];
    try {
      ctx.log(`outbox-relay: ${rows.toLocaleString('en-US')} outbox rows of ${RECORD_SIZE} B`);
      await createOutbox(sql, rows);
      const agent = await Agent.start('relay', ctx.workerEnv(url, prefix), path.join(ctx.logDir, 'agent-relay.log'));
      try {
        const drain = async () => {
          const r = await agent.job('outbox-relay');
          if (r.status !== 'succeeded' || Number(r.summary.Published) !== rows) {
            throw new Error(`relay cycle ${r.status} published ${r.summary.Published} of ${rows}: ${r.error ?? ''}`);
          }
          const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.outbox WHERE published_at IS NULL`;
          if (n !== 0) throw new Error(`${n} rows still unpublished after the relay cycle`);
          return r.ms;
        };
        await restore(sql); await drain(); // warm-up: producer connected, metadata cached
        for (let i = 0; i < runs; i++) {
          await restore(sql);
          const ms = await drain();
          relayMs.push(ms);
          relayRates.push(rows / (ms / 1000));
          ctx.log(`outbox-relay: run ${i + 1}/${runs}: ${rows} in ${(ms / 1000).toFixed(2)} s = ${Math.round(relayRates.at(-1)!)} events/s`);
        }
      } finally {
        await agent.stop();
      }

      const classpath = await kafkaToolsClasspath(ctx.log);
      const perfTopic = `${prefix}bench.producer-performance`;
      const kafka = new Kafka({ clientId: 'pin-bench', brokers: ctx.brokers.split(','), logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      try {
        await admin.createTopics({ topics: [{ topic: perfTopic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
      } finally {
        await admin.disconnect();
      }
      await producerPerformance({ classpath, brokers: ctx.brokers, topic: perfTopic, records: rows, recordSize: RECORD_SIZE }); // warm-up
      for (let i = 0; i < runs; i++) {
        const p = await producerPerformance({ classpath, brokers: ctx.brokers, topic: perfTopic, records: rows, recordSize: RECORD_SIZE });
        perf.push(p);
        ctx.log(`outbox-relay: ProducerPerformance run ${i + 1}/${runs}: ${p.line}`);
      }
    } finally {
      await sql.end({ timeout: 5 });
    }
    const c = 'outbox-relay';
    const relayRate = median(relayRates);
    const perfRate = median(perf.map((p) => p.recordsPerSec));
    const metrics: Metric[] = [
      sampled({ case: c, metric: `relay drain of ${rows.toLocaleString('en-US')} × 1 KB`, unit: 'ev/s', ratio: relayRate / perfRate,
        ratioLabel: 'of ProducerPerformance', budget: '≥ 5,000 ev/s', pass: relayRate >= 5000,
        note: `relay drains in ${relayMs.map((m) => (m / 1000).toFixed(2)).join(' / ')} s; batches of OUTBOX_RELAY_BATCH_SIZE (default 500)` }, relayRates),
      sampled({ case: c, metric: 'Kafka ProducerPerformance (acks=all, idempotent)', unit: 'rec/s',
        note: perf.map((p) => p.line).join(' | ') }, perf.map((p) => p.recordsPerSec)),
    ];
    return metrics;
  },
};
