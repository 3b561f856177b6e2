import { expect, inject } from 'vitest';
import { insertUser, TEST_PASSWORD } from '../../fixtures/auth.fixtures';
import { insertObjects, insertProject } from '../../fixtures/chessboard.fixtures';
import { createDatabase } from '../../../server/platform/db';
import { figure, secondsSince } from '../helpers/figures';
import { randomPrefix, startOwnPostgres } from '../helpers/infra';
import { createTopics } from '../../../scripts/infra';
import { sleep, startWebHost, startWorker, workerHealth } from '../helpers/processes';
import { seedWorld, signInOverHttp, trpcHttp } from '../helpers/world';

/**
 * PostgreSQL is restarted (fast shutdown: every backend terminated, open transactions rolled back,
 * then started again on the same port) while the relay publishes, the jobs run their batches, the
 * consumer applies and the web takes booking commands. Nobody is restarted by hand: the web (the real
 * tRPC route handlers in a process of their own), the worker and its consumers must answer again,
 * and the next cycles must finish the work — every booking applied on the chessboard, every stuck
 * hold released, the outbox empty. The PostgreSQL is this scenario's own (the shared one is never
 * touched); Kafka is the shared broker (topics under a prefix of their own).
 */
/** seconds from PostgreSQL accepting connections again to the web's first answered read and command */
const RECOVERY_BUDGET_S = 2;

export async function postgresRestartScenario(opts: { restarts: number; downMs: number; objects: number; holds: number; label: string }): Promise<void> {
  const pg = await startOwnPostgres(`pg-restart-${opts.restarts}`);
  const brokers = inject('kafkaBrokers');
  const prefix = randomPrefix('pg');
  await createTopics(brokers, prefix);
  const url = await pg.createDatabase();
  const database = createDatabase(url, { max: 4, applicationName: 'faults-test' });
  const env = { DATABASE_URL: url, KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: prefix, HOLD_EXPIRATION_BATCH_SIZE: '25', OUTBOX_RELAY_BATCH_SIZE: '20' };
  const worker = await startWorker(`pg-restart-worker-${prefix}`, env);
  const web = await startWebHost(`pg-restart-web-${prefix}`, env);
  try {
    const world = await seedWorld(database, opts.objects);
    const place = await insertProject(database);
    const user = await insertUser(database.db, 'pin_manager', null);
    const cookie = await signInOverHttp(web.url, user.email, TEST_PASSWORD);

    // ---- load: booking commands through the web (each retried with its idempotency key until it answers 200)
    let failedAttempts = 0;
    const statuses = new Map<number, number>();
    let next = 0;
    const created: string[] = [];
    const createdAt: number[] = [];
    const createOne = async (i: number) => {
      const idempotencyKey = `faults-pg-${prefix}${i}`;
      for (;;) {
        try {
          const res = await trpcHttp(web.url, 'booking.create', { dealId: world.dealIds[i], propertyObjectId: world.objectIds[i], programId: world.programId, idempotencyKey }, { cookie, timeoutMs: 20_000 });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 200) {
            created.push((res.body.result?.data?.json as { id: string }).id);
            createdAt.push(Date.now());
            return;
          }
          // while PostgreSQL is down the web answers 503 DATABASE_UNAVAILABLE (retry as it is), never a
          // bare 500, a hang or a dead process
          expect(res.status, res.text.slice(0, 300)).toBe(503);
          expect(res.text).toContain('DATABASE_UNAVAILABLE');
        } catch (e) {
          if (!web.alive()) throw new Error(`the web process died: ${web.logFile}`);
          if (!(e instanceof Error && /aborted|timeout|fetch failed/i.test(e.message))) throw e;
        }
        failedAttempts++;
        await sleep(200);
      }
    };
    // a steady stream (3 lanes, ~15 commands/s) from before the first restart until after the last one
    let stopLoad = false;
    const load = (async () => {
      const lanes = Array.from({ length: 3 }, async () => {
        while (!stopLoad && next < opts.objects) {
          const i = next++;
          await createOne(i);
          await sleep(150);
        }
      });
      await Promise.all(lanes);
    })();

    // ---- stuck holds for the job, a restart in the middle of its batches, the relay's and the consumer's work
    const restartsAt: number[] = [];
    const webRecoveredAfter: number[] = [];
    const webBackAfterUp: number[] = [];
    const upAt: number[] = [];
    for (let r = 0; r < opts.restarts; r++) {
      // the safety net gets a backlog that takes it several cycles (batches of 25 per phase): it is mid-batch at the stop
      await insertObjects(database, place, Array.from({ length: Math.ceil(opts.holds / opts.restarts) }, (_, i) => ({
        status: i % 2 ? 'Booked' as const : 'Reserved' as const, timer: new Date(Date.now() - 3600_000),
      })));
      await sleep(2000);
      const t0 = Date.now();
      restartsAt.push(t0);
      await pg.stop();
      await sleep(opts.downMs);
      await pg.start();
      const up = Date.now();
      upAt.push(up);
      // the web answers again without being restarted
      for (;;) {
        const res = await trpcHttp(web.url, 'booking.programs', undefined, { cookie, type: 'query', timeoutMs: 10_000 }).catch(() => null);
        if (res?.status === 200) break;
        if (!web.alive()) throw new Error(`the web process died after the restart: ${web.logFile}`);
        await sleep(200);
      }
      webRecoveredAfter.push(secondsSince(t0));
      webBackAfterUp.push(secondsSince(up));
      await sleep(2500);
    }
    stopLoad = true;
    await load;
    const bookingsMade = next;
    // the first command that succeeded after PostgreSQL was up again, per restart
    const commandBackAfterUp = upAt.map((up) => Math.round((Math.min(...createdAt.filter((t) => t >= up)) - up) / 100) / 10);
    const lastRestart = restartsAt[restartsAt.length - 1]!;

    // ---- the next cycles finish the work
    const deadline = Date.now() + 180_000;
    let state: { reserved: number; held: number; unpublishedCrm: number; unpublishedCb: number } | undefined;
    for (;;) {
      expect(worker.alive(), `the worker died: ${worker.logFile}`).toBe(true);
      try {
        [state] = await database.sql<{ reserved: number; held: number; unpublishedCrm: number; unpublishedCb: number }[]>`
          SELECT (SELECT count(*)::int FROM chessboard.property_objects WHERE project_id = ${world.projectId} AND status = 'Reserved') AS reserved,
                 (SELECT count(*)::int FROM chessboard.property_objects WHERE project_id = ${place.projectId} AND status IN ('Reserved', 'Booked')) AS held,
                 (SELECT count(*)::int FROM crm.outbox WHERE published_at IS NULL) AS "unpublishedCrm",
                 (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NULL) AS "unpublishedCb"`;
        if (state!.reserved === bookingsMade && state!.held === 0 && state!.unpublishedCrm === 0 && state!.unpublishedCb === 0) break;
      } catch { /* the test's own pool reconnects as well */ }
      if (Date.now() > deadline) throw new Error(`the work was not finished after the restart: ${JSON.stringify(state)}; logs ${worker.logFile}`);
      await sleep(500);
    }
    const finishedAfter = secondsSince(lastRestart);
    const health = await workerHealth(worker);
    const [after] = await database.sql<{ jobsOk: number; applied: number; failedRuns: number }[]>`
      SELECT (SELECT count(*)::int FROM ops.job_runs WHERE status = 'succeeded' AND started_at > ${new Date(lastRestart).toISOString()}) AS "jobsOk",
             (SELECT count(*)::int FROM chessboard.inbox WHERE result = 'applied') AS applied,
             (SELECT count(*)::int FROM ops.job_runs WHERE status = 'failed') AS "failedRuns"`;
    const crashes = worker.lines.filter((l) => /uncaught|unhandled/i.test(String(l.msg)) || l.raw === true && /TypeError|Error:/.test(String(l.msg)));

    figure('postgres-restart', `${opts.label}: ${opts.restarts} PostgreSQL restart(s) (${opts.downMs / 1000} s down each) during relay, jobs and consumers — `
      + `worker alive (pid ${worker.pid}, /health ${health?.status}), web alive (answered again after ${webRecoveredAfter.join('/')} s; after PostgreSQL was up: a read ${webBackAfterUp.join('/')} s, a command ${commandBackAfterUp.join('/')} s), `
      + `work finished ${finishedAfter} s after the last restart: ${created.length}/${bookingsMade} bookings applied (Reserved), ${opts.holds} stuck holds released, outboxes empty; `
      + `${failedAttempts} web attempts refused during the outage (${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}), ${after.failedRuns} failed job cycles, ${crashes.length} crash lines`,
    { restarts: opts.restarts, downMs: opts.downMs, bookings: created.length, holds: opts.holds, webRecoveredAfter, webBackAfterUp, commandBackAfterUp, finishedAfter, failedAttempts, failedRuns: after.failedRuns });

    expect(worker.alive()).toBe(true);
    expect(web.alive()).toBe(true);
    // back within 2 s of the database accepting connections: no pool waiting out a grown reconnect backoff
    for (const s of [...webBackAfterUp, ...commandBackAfterUp]) expect(s).toBeLessThanOrEqual(RECOVERY_BUDGET_S);
    expect(health?.status).toBe(200);
    expect(created).toHaveLength(bookingsMade);
    expect(new Set(created).size).toBe(bookingsMade);
    const [{ bookings }] = await database.sql<{ bookings: number }[]>`SELECT count(*)::int AS bookings FROM crm.bookings`;
    expect(bookings).toBe(bookingsMade); // idempotency keys: a retried create never booked twice
    expect(after.jobsOk).toBeGreaterThan(0);
    expect(after.applied).toBeGreaterThanOrEqual(bookingsMade);
    // the restarts really hit work in flight: commands were refused and retried
    expect(failedAttempts).toBeGreaterThan(0);
    expect(crashes).toEqual([]);
  } finally {
    await Promise.allSettled([worker.stop(), web.stop()]);
    await database.close().catch(() => {});
    await pg.close();
  }
}
