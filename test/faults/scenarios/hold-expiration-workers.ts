import { expect } from 'vitest';
import { insertObjects, insertProject } from '../../fixtures/chessboard.fixtures';
import { TOPICS, withPrefix } from '../../../server/platform/kafka/topics';
import type { TestContext } from '../../harness/harness';
import { figure, secondsSince } from '../helpers/figures';
import { duplicatesOf, readEverything } from '../helpers/kafka-read';
import { startWorker, sleep, type ManagedProcess } from '../helpers/processes';

/**
 * N worker processes run property-object-hold-expiration (every second) on M holds stuck past the
 * grace period (half Reserved, half Booked). Coordination is only PostgreSQL (FOR UPDATE SKIP
 * LOCKED): every object must be released exactly once — M Free objects, M hold_releases rows,
 * exactly M status-changed events in the outbox and on Kafka, no duplicate.
 */
export async function holdExpirationWorkersScenario(t: TestContext, opts: { workers: number; holds: number; timeoutMs: number }): Promise<void> {
  const { sql } = t.database;
  const env = { DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix };
  const workers: ManagedProcess[] = await Promise.all(
    Array.from({ length: opts.workers }, (_, i) => startWorker(`hold-workers-${opts.workers}x${opts.holds}-${t.prefix}${i}`, env)),
  );
  // the holds appear once every instance is running, so that they all compete from the first tick
  const place = await insertProject(t.database);
  const overdue = new Date(Date.now() - 3600_000); // an hour past the timer: far beyond HoldGrace (10 min)
  const specs = Array.from({ length: opts.holds }, (_, i) => ({ status: i % 2 === 0 ? 'Reserved' as const : 'Booked' as const, timer: overdue }));
  const t0 = Date.now();
  try {
    await insertObjects(t.database, place, specs);
    const deadline = Date.now() + opts.timeoutMs;
    for (;;) {
      const [{ held, unpublished }] = await sql<{ held: number; unpublished: number }[]>`
        SELECT (SELECT count(*)::int FROM chessboard.property_objects WHERE status IN ('Reserved', 'Booked')) AS held,
               (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NULL) AS unpublished`;
      if (held === 0 && unpublished === 0) break;
      if (Date.now() > deadline) throw new Error(`not drained in time: ${held} still held, ${unpublished} unpublished`);
      for (const w of workers) if (!w.alive()) throw new Error(`${w.name} died; see ${w.logFile}`);
      await sleep(250);
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
  const drainedIn = secondsSince(t0);

  const [counts] = await sql<{ free: number; byJob: number; releases: number; releasedObjects: number; events: number; eventObjects: number }[]>`
    SELECT (SELECT count(*)::int FROM chessboard.property_objects WHERE status = 'Free') AS free,
           (SELECT count(*)::int FROM chessboard.property_objects WHERE status = 'Free' AND status_source = 'ExpirationJob') AS "byJob",
           (SELECT count(*)::int FROM chessboard.hold_releases) AS releases,
           (SELECT count(DISTINCT property_object_id)::int FROM chessboard.hold_releases) AS "releasedObjects",
           (SELECT count(*)::int FROM chessboard.outbox WHERE topic = ${TOPICS.propertyObjectStatusChanged}) AS events,
           (SELECT count(DISTINCT aggregate_id)::int FROM chessboard.outbox WHERE topic = ${TOPICS.propertyObjectStatusChanged}) AS "eventObjects"`;
  const runs = await sql<{ instance: string; runs: number; released: number }[]>`
    SELECT instance, count(*)::int AS runs,
           sum(coalesce((summary->>'ReservedReleasedCount')::int, 0) + coalesce((summary->>'BookedReleasedCount')::int, 0))::int AS released
      FROM ops.job_runs WHERE job = 'property-object-hold-expiration' AND status = 'succeeded'
     GROUP BY instance ORDER BY instance`;
  const [{ failedRuns }] = await sql<{ failedRuns: number }[]>`
    SELECT count(*)::int AS "failedRuns" FROM ops.job_runs WHERE job = 'property-object-hold-expiration' AND status = 'failed'`;

  const onKafka = await readEverything(t.env.KAFKA_BROKERS, [withPrefix(t.prefix, TOPICS.propertyObjectStatusChanged)]);
  const { extraCopies } = duplicatesOf(onKafka);
  const kafkaObjects = new Set(onKafka.map((m) => m.key)).size;
  const releasedByRuns = runs.reduce((s, r) => s + r.released, 0);
  const sharing = runs.map((r) => r.released).join('/');

  figure('hold-expiration-workers', `${opts.workers} workers: ${counts.free} released, ${onKafka.length} events, ${extraCopies} duplicates `
    + `(outbox ${counts.events}, hold_releases ${counts.releases}, split between instances ${sharing}, ${failedRuns} failed cycles, drained in ${drainedIn} s)`,
  { workers: opts.workers, holds: opts.holds, released: counts.free, events: onKafka.length, duplicates: extraCopies, outboxEvents: counts.events, split: sharing, seconds: drainedIn });

  expect(counts.free).toBe(opts.holds);
  expect(counts.byJob).toBe(opts.holds);
  expect(counts.releases).toBe(opts.holds);
  expect(counts.releasedObjects).toBe(opts.holds);
  expect(counts.events).toBe(opts.holds);
  expect(counts.eventObjects).toBe(opts.holds);
  expect(releasedByRuns).toBe(opts.holds);
  expect(onKafka.length).toBe(opts.holds);
  expect(kafkaObjects).toBe(opts.holds);
  expect(extraCopies).toBe(0);
  // more than one instance did part of the work (they share it, they do not take turns doing it all)
  expect(runs.filter((r) => r.released > 0).length).toBeGreaterThan(1);
}
