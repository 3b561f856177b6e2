import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { expect } from 'vitest';
import { insertUser, TEST_PASSWORD } from '../../fixtures/auth.fixtures';
import { consumers } from '../../../server/main/consumers';
import { fetchConsumerLag } from '../../../server/platform/kafka/lag';
import { TOPICS, withPrefix } from '../../../server/platform/kafka/topics';
import type { TestContext } from '../../harness/harness';
import { createTopics } from '../../../scripts/infra';
import type { LocalKafkaCluster } from '../../../scripts/infra/kafka-cluster';
import { figure, secondsSince } from '../helpers/figures';
import { randomPrefix } from '../helpers/infra';
import { duplicatesOf, plainKafka, readEverything } from '../helpers/kafka-read';
import { sleep, startWebHost, startWorker, type ManagedProcess } from '../helpers/processes';
import { seedWorld, signInOverHttp, trpcHttp } from '../helpers/world';

/**
 * Beyond one box (issue #21): a 3-broker KRaft cluster (RF 3, min.insync.replicas 2, producers acks=all),
 * 2 web processes (the real tRPC route handlers) and 2 worker processes, a steady booking load through
 * both webs (every fifth booking also confirmed and extended twice: several events of one key on one
 * topic), and one fault in the middle of it:
 * - `broker-kill`: the broker leading the booking-created partitions of most keys is killed (-9) and
 *   restarted 10 s later;
 * - `relay-lock-kill`: the worker whose session holds crm's relay advisory lock is killed (-9); the
 *   other worker's relay must publish within 10 s;
 * - `worker-add-remove`: a third worker joins, then the first one is stopped (SIGTERM): every consumer
 *   group rebalances twice.
 * Then, in every case: 0 failed commands, every crm event on Kafka (0 lost), every event applied once
 * in effect (one Reserve per booking; the inbox absorbs re-sent copies), per-key order kept (both
 * extensions of a booking applied, in version order), consumer lag back to 0.
 */
export type ClusterFault = 'broker-kill' | 'relay-lock-kill' | 'worker-add-remove';

interface LoadResult { made: number; failed: number; failures: string[]; extended: string[]; created: string[] }

export async function clusterScenario(t: TestContext, cluster: LocalKafkaCluster, opts: { fault: ClusterFault; bookings: number; label: string }): Promise<void> {
  const { sql } = t.database;
  const prefix = randomPrefix('cl');
  await createTopics(cluster.brokers, prefix); // RF 3, min.insync.replicas 2 on a 3-broker cluster
  const env = {
    DATABASE_URL: t.url, KAFKA_BROKERS: cluster.brokers, KAFKA_TOPIC_PREFIX: prefix, OUTBOX_RELAY_BATCH_SIZE: '50',
    KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2',
  };
  const world = await seedWorld(t.database, opts.bookings);
  const user = await insertUser(t.database.db, 'pin_manager', null);
  const name = (p: string) => `cluster-${opts.fault}-${p}-${prefix}`;
  const workers: ManagedProcess[] = await Promise.all([startWorker(name('w1'), env), startWorker(name('w2'), env)]);
  const webs = await Promise.all([startWebHost(name('web1'), env), startWebHost(name('web2'), env)]);
  const all = () => [...workers, ...webs];
  try {
    await verifyReplication(cluster.brokers, prefix);
    const cookies: string[] = [];
    for (const w of webs) cookies.push(await signInOverHttp(w.url, user.email, TEST_PASSWORD)); // one after the other: a sign-in in flight holds the account's attempt slot
    let stopLoad = false;
    const load = runLoad(webs.map((w, i) => ({ url: w.url, cookie: cookies[i]! })), world, prefix, () => stopLoad);
    await waitUntil(async () => (await countCreated(sql)) >= 20, 60_000, 'the load did not start');

    let faultFigure = '';
    const faultData: Record<string, unknown> = {};
    if (opts.fault === 'broker-kill') {
      const victim = await leaderOfMost(cluster, withPrefix(prefix, TOPICS.bookingCreated));
      const node = cluster.nodes.find((n) => n.id === victim)!;
      const t0 = Date.now();
      await node.kill('SIGKILL');
      await sleep(10_000);
      const made = await countCreated(sql);
      await node.restart();
      faultData.downS = secondsSince(t0);
      faultData.restartedAfterS = secondsSince(t0 + 10_000);
      faultFigure = `broker ${victim} (leader of most booking-created partitions) killed -9, restarted after 10 s (back in ${faultData.restartedAfterS} s); ${made} bookings by then`;
      await sleep(5_000);
    } else if (opts.fault === 'relay-lock-kill') {
      const holder = await relayLockHolder(sql, workers);
      const t0 = Date.now();
      await holder.kill9();
      const killedAt = new Date().toISOString(); // after the process is gone: a later publish is the survivor's
      const survivor = workers.find((w) => w !== holder)!;
      // the standby's relay publishes a row committed after the kill
      const takeover = await waitUntil(async () => {
        const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.outbox WHERE published_at > ${killedAt}::timestamptz`;
        return r!.n > 0;
      }, 60_000, 'no crm event was published after the relay lock holder was killed');
      faultData.takeoverS = secondsSince(t0);
      faultFigure = `worker holding the crm relay lock (${holder.name}) killed -9: ${survivor.name} published ${faultData.takeoverS} s later`;
      expect(takeover).toBe(true);
      expect(faultData.takeoverS as number).toBeLessThanOrEqual(10);
      workers.splice(workers.indexOf(holder), 1);
      await sleep(5_000);
    } else {
      const t0 = Date.now();
      const added = await startWorker(name('w3'), env);
      workers.push(added);
      await waitForJoins([added], t0, 120_000);
      faultData.joinRebalanceS = secondsSince(t0);
      await sleep(5_000);
      const removed = workers.shift()!;
      const t1 = Date.now();
      await removed.stop();
      await waitForJoins(workers, t1, 120_000);
      faultData.leaveRebalanceS = secondsSince(t1);
      faultFigure = `a third worker joined (every group rebalanced in ${faultData.joinRebalanceS} s), then the first left (SIGTERM; rebalanced in ${faultData.leaveRebalanceS} s)`;
      await sleep(5_000);
    }

    stopLoad = true;
    const result = await load;

    // ---- everything delivered and applied: outboxes empty, every consumer caught up, lag 0
    const t2 = Date.now();
    let lagPeak = 0;
    let last: unknown;
    const admin = plainKafka(cluster.brokers).admin();
    await admin.connect();
    try {
      await waitUntil(async () => {
        for (const p of all()) if (!p.alive() && workers.includes(p)) throw new Error(`${p.name} died: ${p.logFile}`);
        const [s] = await sql<{ unpublished: number; events: number; consumed: number }[]>`
          SELECT (SELECT count(*)::int FROM crm.outbox WHERE published_at IS NULL) + (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NULL) AS unpublished,
                 (SELECT count(*)::int FROM crm.outbox WHERE topic <> ${TOPICS.bookingPaid}) AS events,
                 (SELECT count(*)::int FROM chessboard.inbox) AS consumed`;
        const lags = await fetchConsumerLag(admin, { KAFKA_TOPIC_PREFIX: prefix }, consumers);
        const lag = lags.reduce((n, p) => n + p.lag, 0);
        lagPeak = Math.max(lagPeak, lag);
        last = { ...s!, lag: lags.filter((p) => p.lag > 0) };
        return s!.unpublished === 0 && s!.consumed === s!.events && lag === 0;
      }, 240_000, () => `the cluster did not catch up (${JSON.stringify(last)})`);
    } finally {
      await admin.disconnect();
    }
    const caughtUpS = secondsSince(t2);

    // ---- nothing lost, nothing applied twice, per-key order kept
    const rows = await sql<{ message_id: string; topic: string }[]>`SELECT message_id::text, topic FROM crm.outbox`;
    const onKafka = await readEverything(cluster.brokers, [...new Set(rows.map((r) => withPrefix(prefix, r.topic)))]);
    const ids = new Set(onKafka.map((m) => m.messageId));
    const lost = rows.filter((r) => !ids.has(r.message_id)).length;
    const { extraCopies } = duplicatesOf(onKafka);
    const [twice] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT booking_id FROM chessboard.property_object_status_history
        WHERE to_status = 'Reserved' AND booking_id IS NOT NULL GROUP BY booking_id HAVING count(*) > 1) d`;
    const [objects] = await sql<{ reserved: number; booked: number }[]>`
      SELECT count(*) FILTER (WHERE status = 'Reserved')::int AS reserved, count(*) FILTER (WHERE status = 'Booked')::int AS booked
        FROM chessboard.property_objects WHERE project_id = ${world.projectId}`;
    const extends_ = await sql<{ booking_id: string; version: number }[]>`
      SELECT h.booking_id::text, (o.payload->'payload'->>'bookingVersion')::int AS version
        FROM chessboard.property_object_status_history h JOIN crm.outbox o ON o.message_id = h.causation_id
       WHERE h.reason LIKE ${`${TOPICS.bookingExtended}%`} ORDER BY h.id`;
    const perBooking = new Map<string, number[]>();
    for (const e of extends_) perBooking.set(e.booking_id, [...(perBooking.get(e.booking_id) ?? []), e.version]);
    const outOfOrder = [...perBooking.values()].filter((v) => v.length !== 2 || v[0]! >= v[1]!).length + (result.extended.length - perBooking.size);

    figure('cluster', `${opts.label}: 3 brokers (RF 3, min ISR 2), 2 web + 2 worker processes, ${result.made} bookings (${result.extended.length} also confirmed + extended twice) — `
      + `${faultFigure}; ${result.failed} failed commands, ${lost} lost, ${extraCopies} copies on Kafka absorbed (${twice!.n} applied twice), ${outOfOrder} out of order; `
      + `lag peak ${lagPeak} after the load, back to 0 ${caughtUpS} s after it`,
    { fault: opts.fault, bookings: result.made, failed: result.failed, lost, duplicates: extraCopies, appliedTwice: twice!.n, outOfOrder, lagPeak, caughtUpS, ...faultData });

    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.made).toBeGreaterThan(40);
    expect(lost).toBe(0);
    expect(twice!.n).toBe(0);
    expect(objects).toEqual({ reserved: result.made - result.extended.length, booked: result.extended.length });
    expect(outOfOrder).toBe(0);
    for (const w of workers) expect(w.alive(), w.logFile).toBe(true);
    for (const w of webs) expect(w.alive(), w.logFile).toBe(true);
  } finally {
    await Promise.allSettled(all().map((p) => p.stop()));
  }
}

/** Booking commands over HTTP through both webs (2 lanes each) until `stop()`; every fifth booking is also confirmed and extended twice. */
async function runLoad(webs: { url: string; cookie: string }[], world: Awaited<ReturnType<typeof seedWorld>>, prefix: string, stop: () => boolean): Promise<LoadResult> {
  const r: LoadResult = { made: 0, failed: 0, failures: [], extended: [], created: [] };
  let next = 0;
  const call = async (web: { url: string; cookie: string }, path: string, input: Record<string, unknown>) => {
    const res = await trpcHttp(web.url, path, input, { cookie: web.cookie, timeoutMs: 30_000 });
    if (res.status !== 200) {
      r.failed++;
      if (r.failures.length < 5) r.failures.push(`${path} ${res.status} ${res.text.slice(0, 200)}`);
      return null;
    }
    return res.body.result?.data?.json as { id: string };
  };
  const lanes = Array.from({ length: webs.length * 2 }, async (_, lane) => {
    const web = webs[lane % webs.length]!;
    while (!stop() && next < world.objectIds.length) {
      const i = next++;
      const key = `cl-${prefix}${i}`;
      const b = await call(web, 'booking.create', { dealId: world.dealIds[i], propertyObjectId: world.objectIds[i], programId: world.programId, idempotencyKey: `${key}-c` });
      if (b && i % 5 === 0) {
        const ok = (await call(web, 'booking.confirm', { bookingId: b.id, idempotencyKey: `${key}-f` }))
          && (await call(web, 'booking.extend', { bookingId: b.id, idempotencyKey: `${key}-e1` }))
          && (await call(web, 'booking.extend', { bookingId: b.id, idempotencyKey: `${key}-e2` }));
        if (ok) r.extended.push(b.id);
      }
      if (b) { r.made++; r.created.push(b.id); }
      await sleep(100);
    }
  });
  await Promise.all(lanes);
  return r;
}

async function countCreated(sql: TestContext['database']['sql']): Promise<number> {
  const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings`;
  return r!.n;
}

/** Every topic of the prefix has 3 replicas and min.insync.replicas 2 (what the scenario claims to run on). */
async function verifyReplication(brokers: string, prefix: string): Promise<void> {
  const admin = plainKafka(brokers).admin();
  await admin.connect();
  try {
    const topic = withPrefix(prefix, TOPICS.bookingCreated);
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(topics[0]!.partitions.every((p) => p.replicas.length === 3)).toBe(true);
    const configs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic, configNames: ['min.insync.replicas'] }] });
    expect(configs.resources[0]!.configEntries.find((c) => c.configName === 'min.insync.replicas')?.configValue).toBe('2');
  } finally {
    await admin.disconnect();
  }
}

/** The node leading most partitions of `topic`. */
async function leaderOfMost(cluster: LocalKafkaCluster, topic: string): Promise<number> {
  const admin = plainKafka(cluster.brokers).admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    const count = new Map<number, number>();
    for (const p of topics[0]!.partitions) count.set(p.leader, (count.get(p.leader) ?? 0) + 1);
    return [...count].sort((a, b) => b[1] - a[1])[0]![0];
  } finally {
    await admin.disconnect();
  }
}

/**
 * The worker process whose PostgreSQL session holds crm's relay advisory lock: the lock's backend →
 * its client port (pg_stat_activity) → the local process owning that socket (`ss -p`) → its process
 * group, which is the managed worker's.
 */
async function relayLockHolder(sql: TestContext['database']['sql'], workers: ManagedProcess[]): Promise<ManagedProcess> {
  let port: number | undefined;
  await waitUntil(async () => {
    const rows = await sql<{ port: number }[]>`
      SELECT a.client_port AS port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()
         AND l.objid::bigint = (hashtext('pin:outbox-relay:crm')::bigint & 4294967295)`;
    port = rows[0]?.port;
    return port !== undefined;
  }, 60_000, 'nobody holds the crm relay lock');
  const out = execFileSync('ss', ['-tnpH', `sport = :${port}`], { encoding: 'utf8' });
  const pid = Number(/pid=(\d+)/.exec(out)?.[1]);
  const pgrp = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);
  const holder = workers.find((w) => w.pid === pgrp);
  if (!holder) throw new Error(`the lock holder (pid ${pid}, group ${pgrp}) is none of the workers`);
  return holder;
}

/** Waits until every consumer of each worker logged a group join after `since`. */
async function waitForJoins(workers: ManagedProcess[], since: number, timeoutMs: number): Promise<void> {
  await waitUntil(async () => workers.every((w) => {
    const joined = new Set(w.lines.filter((l) => l.event === 'consumer.group_joined' && Date.parse(String(l.time ?? '')) >= since).map((l) => l.consumer));
    return consumers.every((c) => joined.has(c.name));
  }), timeoutMs, 'the consumer groups did not rebalance');
}

async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string | (() => string)): Promise<true> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) throw new Error(`${typeof what === 'string' ? what : what()} within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}
