import fs from 'node:fs';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { insertUser, TEST_PASSWORD } from '../../fixtures/auth.fixtures';
import { consumers } from '../../../server/main/consumers';
import { createDatabase } from '../../../server/platform/db';
import { OUTBOX_NAMES } from '../../../server/main/outboxes';
import { runMigrations } from '../../../server/platform/migrate';
import { createTopics, DATA_DIR, ensureDatabase, withDatabase } from '../../../scripts/infra';
import { startReplicatedPostgres } from '../../../scripts/infra/postgres-replicated';
import { figure, secondsSince } from '../helpers/figures';
import { randomPrefix } from '../helpers/infra';
import { sleep, startWebHost, startWorker, type ManagedProcess } from '../helpers/processes';
import { seedWorld, signInOverHttp, trpcHttp } from '../helpers/world';

/**
 * PostgreSQL failover under booking load. A primary with one synchronous streaming replica
 * (scripts/infra/postgres-replicated.ts: a COMMIT returns only once the replica has its WAL); web (2
 * processes: the real tRPC route handlers) and worker (2 processes: relay, jobs, consumers) on the
 * multi-host DATABASE_URL. Booking commands go through both webs; the primary is killed (-9, the whole
 * server: postmaster and backends), and `pg_ctl promote` makes the replica the primary `promoteAfterMs`
 * later — what an operator (or Patroni) does. Nobody restarts a process.
 *
 * Then: every command a client saw acknowledged (200) is on the new primary (0 lost); a command refused
 * during the switch (503 DATABASE_UNAVAILABLE, or no answer) is sent again with its idempotency key and
 * booked once; every event reaches every consumer once (each inbox holds it once, the chessboard
 * reserves each booking once); the outboxes drain; the figures (commands refused, seconds until a
 * command succeeds again) are printed and held to the budget.
 */
export async function postgresFailoverScenario(opts: { objects: number; promoteAfterMs: number; recoverBudgetS: number; refusedBudget: number; label: string }): Promise<void> {
  const dataDir = path.join(DATA_DIR, `faults-pg-failover-${process.pid}`);
  const pg = await startReplicatedPostgres({ dataDir, fresh: true, log: (l) => { if (process.env.FAULTS_VERBOSE) console.log(`[faults-infra] ${l}`); } });
  const procs: ManagedProcess[] = [];
  let database: ReturnType<typeof createDatabase> | null = null;
  try {
    const brokers = inject('kafkaBrokers');
    const prefix = randomPrefix('pf');
    await createTopics(brokers, prefix);
    const url = await ensureDatabase(pg.url, 'pin_failover');
    await runMigrations(url);
    const readUrl = withDatabase(pg.readUrl, 'pin_failover');
    database = createDatabase(url, { max: 4, applicationName: 'faults-test' });
    const env = { DATABASE_URL: url, DATABASE_READ_URL: readUrl, KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: prefix, OUTBOX_RELAY_BATCH_SIZE: '50' };
    const world = await seedWorld(database, opts.objects);
    const user = await insertUser(database.db, 'pin_manager', null);
    const name = (p: string) => `pg-failover-${p}-${prefix}`;
    procs.push(...await Promise.all([startWorker(name('w1'), env), startWorker(name('w2'), env)]));
    const webs = await Promise.all([startWebHost(name('web1'), env), startWebHost(name('web2'), env)]);
    procs.push(...webs);
    const cookies: string[] = [];
    for (const w of webs) cookies.push(await signInOverHttp(w.url, user.email, TEST_PASSWORD));

    // the dashboard reads the replica (DATABASE_READ_URL) and says how far behind it is
    const overview = await trpcHttp(webs[0]!.url, 'ops.dashboard.overview', undefined, { cookie: cookies[0], type: 'query' });
    expect(overview.status, overview.text.slice(0, 300)).toBe(200);
    const replication = (overview.body.result?.data?.json as { replication: { readFrom: string; lagSeconds: number | null } }).replication;
    expect(replication.readFrom).toBe('replica');
    expect(replication.lagSeconds).toBeTypeOf('number');

    // ---- load: 2 lanes per web; a refused command is sent again with its idempotency key until it is acknowledged
    const acknowledged = new Map<string, string>(); // idempotency key → booking id
    const statuses = new Map<string, number>();
    let refused = 0;
    let killedAt = 0;
    let firstSuccessAfterKill = 0;
    let next = 0;
    let stopLoad = false;
    const count = (k: string) => statuses.set(k, (statuses.get(k) ?? 0) + 1);
    const createOne = async (web: { url: string; cookie: string }, i: number) => {
      const idempotencyKey = `pf-${prefix}${i}`;
      for (;;) {
        const sentAt = Date.now();
        const res = await trpcHttp(web.url, 'booking.create', { dealId: world.dealIds[i], propertyObjectId: world.objectIds[i], programId: world.programId, idempotencyKey }, { cookie: web.cookie, timeoutMs: 30_000 })
          .catch((e: unknown) => ({ status: 0, text: String(e), body: {} as Awaited<ReturnType<typeof trpcHttp>>['body'] }));
        count(String(res.status));
        if (res.status === 200) {
          acknowledged.set(idempotencyKey, (res.body.result?.data?.json as { id: string }).id);
          if (killedAt && sentAt >= killedAt && !firstSuccessAfterKill) firstSuccessAfterKill = Date.now();
          return;
        }
        // during the switch: a 503 DATABASE_UNAVAILABLE (nothing half-done), never a 500; or no answer at all
        if (res.status !== 0) {
          expect(res.status, res.text.slice(0, 300)).toBe(503);
          expect(res.text).toContain('DATABASE_UNAVAILABLE');
        }
        refused++;
        for (const w of webs) if (!w.alive()) throw new Error(`${w.name} died: ${w.logFile}`);
        await sleep(200);
      }
    };
    const lanes = Array.from({ length: 4 }, async (_, lane) => {
      const web = { url: webs[lane % 2]!.url, cookie: cookies[lane % 2]! };
      while (!stopLoad && next < opts.objects) {
        await createOne(web, next++);
        await sleep(100);
      }
    });
    const load = Promise.all(lanes);
    const deadline0 = Date.now() + 60_000;
    while (acknowledged.size < 30) {
      if (Date.now() > deadline0) throw new Error('the load did not start');
      await sleep(100);
    }

    // ---- the primary's host dies; the replica is promoted
    const beforeKill = acknowledged.size;
    killedAt = Date.now();
    await pg.killPrimary();
    await sleep(opts.promoteAfterMs);
    const promoteStarted = Date.now();
    await pg.promoteReplica();
    const promotedS = secondsSince(promoteStarted);
    while (!firstSuccessAfterKill) {
      if (Date.now() - killedAt > 120_000) throw new Error('no command succeeded within 120 s of the kill');
      await sleep(50);
    }
    const recoverS = Math.round((firstSuccessAfterKill - killedAt) / 100) / 10;
    await sleep(8_000);
    stopLoad = true;
    await load;

    // ---- the new primary is the old replica, and it has every acknowledged command
    const [server] = await database.sql<{ port: number; standby: boolean }[]>`SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby`;
    expect(server).toEqual({ port: pg.replica.port, standby: false });
    const ids = [...acknowledged.values()];
    const present = await database.sql<{ id: string }[]>`SELECT id::text FROM crm.bookings WHERE id = ANY(${ids}::uuid[])`;
    const lost = ids.length - present.length;
    // one booking per object: a command retried with its key after a refusal never booked twice
    const [bookings] = await database.sql<{ n: number; objects: number }[]>`SELECT count(*)::int AS n, count(DISTINCT property_object_id)::int AS objects FROM crm.bookings`;

    // ---- the outboxes drain, every consumer applies every event it subscribes to once
    const t2 = Date.now();
    let last: unknown;
    for (;;) {
      for (const p of procs) if (!p.alive()) throw new Error(`${p.name} died: ${p.logFile}`);
      const unpublished = (await Promise.all(OUTBOX_NAMES.map((o) => database!.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${database!.sql(o)}.outbox WHERE published_at IS NULL`)))
        .reduce((n, [r]) => n + r!.n, 0);
      const missing: Record<string, number> = {};
      for (const c of consumers) {
        const [r] = await database.sql<{ missing: number }[]>`
          SELECT count(*)::int AS missing FROM (
            SELECT message_id, topic FROM crm.outbox UNION ALL SELECT message_id, topic FROM chessboard.outbox) o
           WHERE o.topic = ANY(${[...c.topics]}::text[])
             AND NOT EXISTS (SELECT 1 FROM ${database.sql(c.inbox)}.inbox i WHERE i.consumer = ${c.name} AND i.message_id = o.message_id)`;
        if (r!.missing > 0) missing[c.name] = r!.missing;
      }
      last = { unpublished, missing };
      if (unpublished === 0 && Object.keys(missing).length === 0) break;
      if (Date.now() - t2 > 180_000) throw new Error(`the work was not finished after the failover: ${JSON.stringify(last)}; logs ${procs.map((p) => p.logFile).join(', ')}`);
      await sleep(500);
    }
    const drainedS = secondsSince(t2);

    // applied twice: an inbox holds a message once per consumer (its key); the effects are counted per booking
    const [twice] = await database.sql<{ reserved: number; notified: number; chat: number }[]>`
      SELECT (SELECT count(*)::int FROM (SELECT booking_id FROM chessboard.property_object_status_history
                WHERE to_status = 'Reserved' AND booking_id IS NOT NULL GROUP BY booking_id HAVING count(*) > 1) d) AS reserved,
             (SELECT count(*)::int FROM (SELECT message_id, recipient FROM notifications.notifications GROUP BY 1, 2 HAVING count(*) > 1) d) AS notified,
             (SELECT count(*)::int FROM (SELECT source_message_id FROM messenger.messages WHERE source_message_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1) d) AS chat`;
    // catalog and rewards keep their state per object / per booking: a change applied twice would show as
    // a status other than the booking's, a reward where no booking was paid (this load books free programs)
    const [downstream] = await database.sql<{ catalogReserved: number; catalogOther: number; rewards: number; endings: number }[]>`
      SELECT (SELECT count(*)::int FROM catalog.pending_status_changes WHERE property_object_id = ANY(${world.objectIds}::uuid[]) AND to_status = 'Reserved') AS "catalogReserved",
             (SELECT count(*)::int FROM catalog.pending_status_changes WHERE property_object_id = ANY(${world.objectIds}::uuid[]) AND to_status <> 'Reserved') AS "catalogOther",
             (SELECT count(*)::int FROM rewards.accruals WHERE tenant_id = ${world.tenantId}) AS rewards,
             (SELECT count(*)::int FROM rewards.booking_endings WHERE tenant_id = ${world.tenantId}) AS endings`;
    const [objects] = await database.sql<{ reserved: number }[]>`
      SELECT count(*) FILTER (WHERE status = 'Reserved')::int AS reserved FROM chessboard.property_objects WHERE project_id = ${world.projectId}`;

    figure('postgres-failover', `${opts.label}: primary + 1 synchronous replica, 2 web + 2 worker processes, ${acknowledged.size} bookings acknowledged (${beforeKill} before the kill) — `
      + `primary killed -9, replica promoted ${opts.promoteAfterMs / 1000} s later (pg_ctl promote took ${promotedS} s); first command acknowledged again ${recoverS} s after the kill; `
      + `${refused} attempts refused during the switch (${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}); ${lost} acknowledged lost, `
      + `${bookings!.n - bookings!.objects} booked twice, ${twice!.reserved + twice!.notified + twice!.chat} applied twice downstream (catalog: ${downstream!.catalogReserved} reserved of ${acknowledged.size}, rewards: ${downstream!.rewards}); outboxes drained and every consumer caught up ${drainedS} s after the load`,
    { bookings: acknowledged.size, beforeKill, refused, refusedBudget: opts.refusedBudget, recoverS, promotedS, lost, appliedTwice: twice, downstream, drainedS, budgetS: opts.recoverBudgetS });

    expect(acknowledged.size).toBe(next); // every command was eventually acknowledged
    expect(lost).toBe(0);
    expect(bookings).toEqual({ n: acknowledged.size, objects: acknowledged.size });
    expect(twice).toEqual({ reserved: 0, notified: 0, chat: 0 });
    expect(downstream).toEqual({ catalogReserved: acknowledged.size, catalogOther: 0, rewards: 0, endings: 0 });
    expect(refused).toBeLessThanOrEqual(opts.refusedBudget);
    expect(objects!.reserved).toBe(acknowledged.size);
    expect(recoverS).toBeLessThanOrEqual(opts.recoverBudgetS);
    for (const p of procs) expect(p.alive(), p.logFile).toBe(true);
    // followed the primary by reconnecting, not by crashing and being restarted
    const crashes = procs.flatMap((p) => p.lines.filter((l) => /uncaught|unhandled/i.test(String(l.msg))).map((l) => `${p.name}: ${String(l.msg)}`));
    expect(crashes).toEqual([]);
  } finally {
    await Promise.allSettled(procs.map((p) => p.stop()));
    await database?.close().catch(() => {});
    await pg.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
