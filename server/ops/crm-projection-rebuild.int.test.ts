import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../auth/actor';
import { insertObjects, insertProject, TENANT, type Place } from '../../test/fixtures/chessboard.fixtures';
import { upsertPropertyObject } from '../chessboard/commands';
import { actor, callerFor, expectTrpcError, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { crmPropertyObjectProjectionConsumer } from '../crm/property-object-projection.consumer';
import { COMPACTED_TOPICS, ensureTopics, TOPICS, withPrefix } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { projectObjects } from '../../test/harness/crm-projection';
import { startBrokerPipeline, type BrokerPipeline } from '../../test/harness/kafka';
import { rebuildCrmProjection } from './crm-projection-rebuild';
import { commandContext } from '../platform/command-context';

/**
 * crm's projection of property objects rebuilt from the chessboard through the real broker, on object
 * topics emptied of everything (deleted and created again: what a projection started after the
 * retention dropped old segments finds) and an emptied crm.property_objects: `npm run
 * crm:rebuild-projection` republishes the chessboard's snapshot, waits for crm's consumer and proves the
 * projection equal — and says when it is not.
 */

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
const OBJECT_TOPICS = [TOPICS.propertyObjectUpserted, TOPICS.propertyObjectStatusChanged, TOPICS.propertyObjectDeleted];

let t: TestContext;
let pipe: BrokerPipeline;
let admin: Admin;
let place: Place;
let program: { id: string };
const agent = actor('agent', TENANT);

/** The worker's relay, as the command expects it to run beside it: publishes chessboard.outbox until stopped. */
function runRelay(): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      await pipe.relay.drain();
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return { async stop() { running = false; await loop; } };
}

interface Run { code: number | null; stdout: string; stderr: string }
function runCommand(script: string, args: string[], timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), [script, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', DATABASE_URL: t.url } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${script} did not end within ${timeoutMs} ms\n${stdout}\n${stderr}`)); }, timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}
const rebuildCommand = (...args: string[]) => runCommand('scripts/rebuild-crm-projection.ts', args);
const lastJson = (run: Run) => JSON.parse(run.stdout.trim().split('\n').at(-1)!);

async function crmView(id: string) {
  const [row] = await t.database.sql<{ tenant_id: string; project_id: string; status: string; price: number | null; source_version: number; deleted: boolean }[]>`
    SELECT tenant_id, project_id, status, price::float8 AS price, source_version, deleted FROM crm.property_objects WHERE id = ${id}`;
  return row;
}

let objects: string[];

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  pipe = await startBrokerPipeline(t, 'chessboard', crmPropertyObjectProjectionConsumer);
  admin = pipe.kafka.admin();
  await admin.connect();
  place = await insertProject(t.database);
  program = await insertProgram(t, TENANT);
  // every sale status, and one object made by the chessboard's command (its events went the normal way)
  objects = await insertObjects(t.database, place, [{ status: 'Free' }, { status: 'Free' }, { status: 'Reserved' }, { status: 'Booked' }, { status: 'Sold' }, { status: 'Hidden' }]);
  const made = randomUUID();
  await t.database.db.transaction((tx) => upsertPropertyObject(tx, {
    id: made, tenantId: TENANT, projectId: place.projectId, buildingId: place.buildingId, section: 2, floor: 3, number: '777', rooms: 1, area: 31, price: 4_500_000,
  }, commandContext(SYSTEM_ACTOR)));
  objects.push(made);
  await pipe.drain();

  // the object topics emptied of every old segment, as after the retention: deleted and made again
  await pipe.stop();
  await admin.deleteTopics({ topics: OBJECT_TOPICS.map((name) => withPrefix(t.prefix, name)) });
  // a deletion finishes after the call returns: while the broker still lists a topic, ensureTopics sees it
  // as existing and creates nothing, and the topic then disappears and never gets a leader
  const deleted = OBJECT_TOPICS.map((name) => withPrefix(t.prefix, name));
  for (let attempt = 0; (await admin.listTopics()).some((name) => deleted.includes(name)); attempt++) {
    if (attempt > 150) throw new Error(`the deleted topics are still listed after 30 s: ${deleted.join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  for (let attempt = 0; ; attempt++) {
    // a deleted topic's name is free again a moment after the call returns
    try { await ensureTopics(admin, t.prefix); break; } catch (e) { if (attempt > 50) throw e; await new Promise((r) => setTimeout(r, 200)); }
  }
  // created is not yet served: until the broker has a leader for every partition of the topics made again, a
  // metadata request about them fails (UNKNOWN_TOPIC_OR_PARTITION) and the relay's first publish with it
  const recreated = OBJECT_TOPICS.map((name) => withPrefix(t.prefix, name));
  for (let attempt = 0; ; attempt++) {
    const served = await admin.fetchTopicMetadata({ topics: recreated })
      .then(({ topics }) => topics.length === recreated.length && topics.every((x) => x.partitions.length > 0 && x.partitions.every((p) => p.leader >= 0)), () => false);
    if (served) break;
    if (attempt > 150) throw new Error(`the recreated topics have no leader after 30 s: ${recreated.join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await pipe.start();
  // and crm's projection empty, as a database whose projection started after those segments were gone
  await t.database.sql`DELETE FROM crm.property_objects`;
}, 180_000);

afterAll(async () => {
  await admin?.disconnect();
  await pipe?.close();
  await t?.close();
});

describe('npm run crm:rebuild-projection', () => {
  it('the object topics are compacted by key', async () => {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false, resources: OBJECT_TOPICS.map((name) => ({ type: 2, name: withPrefix(t.prefix, name) })),
    });
    for (const r of resources) expect(r.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue, r.resourceName).toBe('compact');
    expect(COMPACTED_TOPICS).toEqual(expect.arrayContaining(OBJECT_TOPICS));
  });

  it('on emptied topics and an empty projection: --check names what is missing, the rebuild brings every object back and proves it equal', async () => {
    const deal = await insertDeal(t, TENANT);
    const free = objects[0];
    await expectTrpcError(callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: free, programId: program.id }), 'NOT_FOUND', 'CRM_PROPERTY_OBJECT_NOT_FOUND');

    const check = await rebuildCommand('--check');
    expect(check.code, check.stderr).toBe(1);
    expect(check.stdout).toContain(`chessboard objects ${objects.length}, crm objects 0`);
    expect(check.stdout).toContain(`missing in crm ${objects.length}, extra in crm 0`);
    expect(check.stdout).toContain(`DIFFERENT: ${objects.length} objects differ`);
    expect(lastJson(check)).toMatchObject({ equal: false, missingInCrm: objects.length, differences: objects.length });

    const relay = runRelay();
    let run: Run;
    try {
      run = await rebuildCommand('--timeout', '90');
    } finally {
      await relay.stop();
    }
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`snapshot: ${objects.length} objects republished in 1 batches`);
    expect(run.stdout).toContain('EQUAL: crm.property_objects matches the chessboard');
    expect(lastJson(run)).toMatchObject({
      snapshotObjects: objects.length, processed: objects.length, notProcessed: 0, equal: true,
      comparison: { chessboardObjects: objects.length, crmObjects: objects.length, differences: 0, sample: [] },
    });

    // field by field, as the chessboard has them
    const chessboard = await t.database.sql<{ id: string; tenant_id: string; project_id: string; status: string; price: number; version: number }[]>`
      SELECT id, tenant_id, project_id, status, price::float8 AS price, version FROM chessboard.property_objects WHERE id = ANY(${objects})`;
    for (const c of chessboard) {
      expect(await crmView(c.id), c.id).toEqual({ tenant_id: c.tenant_id, project_id: c.project_id, status: c.status, price: c.price, source_version: c.version, deleted: false });
    }
    expect(new Set(chessboard.map((c) => c.status))).toEqual(new Set(['Free', 'Reserved', 'Booked', 'Sold', 'Hidden']));
    // and the flat is bookable again
    const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: free, programId: program.id });
    expect(booking.status).toBe('Reserved');
  });

  it('a snapshot of what crm already has changes no row (no-op in crm.inbox), and corrects a price lost at the same version', async () => {
    const [lost, kept] = [objects[1], objects[5]];
    await t.database.sql`UPDATE crm.property_objects SET price = 1 WHERE id = ${lost}`;
    const before = await t.database.sql<{ id: string; updated_at: Date }[]>`SELECT id, updated_at FROM crm.property_objects WHERE id = ${kept}`;

    const relay = runRelay();
    const progress: string[] = [];
    let report;
    try {
      report = await rebuildCrmProjection(t.database, { timeoutMs: 60_000, pollMs: 100, onProgress: (l) => progress.push(l) });
    } finally {
      await relay.stop();
    }
    expect(report).toMatchObject({ snapshotObjects: objects.length, notProcessed: 0, equal: true, removedFromCrm: null });
    expect((await crmView(lost)).price).toBe(10_000_000);
    const after = await t.database.sql<{ updated_at: Date }[]>`SELECT updated_at FROM crm.property_objects WHERE id = ${kept}`;
    expect(after[0].updated_at).toEqual(before[0].updated_at);
    const results = await t.database.sql<{ result: string; n: number }[]>`
      SELECT i.result, count(*)::int AS n FROM crm.inbox i JOIN chessboard.outbox o ON o.message_id = i.message_id
      WHERE i.consumer = ${crmPropertyObjectProjectionConsumer.name} AND o.headers->>'correlationId' = ${report.correlationId} GROUP BY i.result`;
    expect(results).toEqual([{ result: 'no-op', n: objects.length }]);
  });

  it('an object crm has and the chessboard does not: the rebuild says so and fails; with --reset it is gone and the projection equal', async () => {
    const gone = randomUUID();
    await projectObjects(t.database, [{ id: gone, tenantId: TENANT, projectId: place.projectId, status: 'Free' }]);

    const relay = runRelay();
    let plain: Run;
    let reset: Run;
    try {
      plain = await rebuildCommand('--timeout', '90');
      reset = await rebuildCommand('--reset', '--timeout', '90');
    } finally {
      await relay.stop();
    }
    expect(plain.code, plain.stderr).toBe(1);
    expect(plain.stdout).toContain('missing in crm 0, extra in crm 1');
    expect(plain.stdout).toMatch(new RegExp(`extra-in-crm +${gone}: chessboard none \\| crm Free`));
    expect(plain.stdout).toContain('rows the chessboard no longer has need --reset');

    expect(reset.code, `${reset.stdout}\n${reset.stderr}`).toBe(0);
    expect(reset.stdout).toContain(`emptied crm.property_objects: ${objects.length + 1} rows removed`);
    expect(lastJson(reset)).toMatchObject({ removedFromCrm: objects.length + 1, equal: true, comparison: { extraInCrm: 0, crmObjects: objects.length } });
    expect(await crmView(gone)).toBeUndefined();
  });

  it('without a worker to carry the snapshot over it ends at the timeout, says what was not consumed and does not claim equality', async () => {
    await pipe.stop();
    try {
      const progress: string[] = [];
      const report = await rebuildCrmProjection(t.database, { timeoutMs: 1_500, pollMs: 100, onProgress: (l) => progress.push(l) });
      expect(report).toMatchObject({ snapshotObjects: objects.length, processed: 0, notProcessed: objects.length, equal: false });
      expect(progress.at(-1)).toMatch(new RegExp(`^${objects.length} of ${objects.length} snapshot events not consumed after \\d+ s: is the worker running`));
    } finally {
      await pipe.start();
      await pipe.drain();
    }
  });
});

describe('npm run chessboard:snapshot', () => {
  it('republishes every object of the tenant once, at its current version, and rejects a bad tenant id', async () => {
    const bad = await runCommand('scripts/chessboard-snapshot.ts', ['--tenant', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--tenant takes a tenant id (uuid)');

    const run = await runCommand('scripts/chessboard-snapshot.ts', ['--tenant', TENANT]);
    expect(run.code, run.stderr).toBe(0);
    const summary = lastJson(run);
    expect(summary).toMatchObject({ objects: objects.length, batches: 1, complete: true });
    const events = await t.database.sql<{ id: string; version: number }[]>`
      SELECT payload->'payload'->>'propertyObjectId' AS id, (payload->'payload'->>'version')::int AS version FROM chessboard.outbox
      WHERE topic = ${TOPICS.propertyObjectUpserted} AND headers->>'correlationId' = ${summary.correlationId}`;
    const versions = await t.database.sql<{ id: string; version: number }[]>`SELECT id, version FROM chessboard.property_objects`;
    expect(events.sort((a, b) => a.id.localeCompare(b.id))).toEqual(versions.sort((a, b) => a.id.localeCompare(b.id)));
  });
});
