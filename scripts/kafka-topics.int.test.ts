/**
 * `npm run kafka:topics` and the start-up topic check of worker and web, against the real broker with
 * a fresh topic prefix per test (issue 21).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../test/harness/saga-harness';
import { CONSUMER_GROUPS } from '../server/contracts/consumer-groups';
import { allTopicNames, cleanupPolicyOf, COMPACTED_TOPICS, formatTopicAction, reconcileTopics, TOPICS, withPrefix } from '../server/platform/kafka/topics';

/** DESIGN.md's topics plus one dead-letter topic per consumer group (a context that adds a consumer adds one). */
const ALL = Object.values(TOPICS).length + Object.values(CONSUMER_GROUPS).length;
import { REPO_ROOT } from './infra/index';

const TOPIC_RESOURCE = 2;
const brokers = inject('kafkaBrokers');
const prefixes: string[] = [];
let admin: Admin;

beforeAll(async () => {
  admin = new Kafka({ clientId: 'kafka-topics-int', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
});

afterAll(async () => {
  const existing = new Set(await admin.listTopics());
  const ours = prefixes.flatMap((p) => allTopicNames(p)).filter((t) => existing.has(t));
  if (ours.length) await admin.deleteTopics({ topics: ours }).catch(() => {});
  await admin.disconnect();
});

function freshPrefix(): string {
  const p = `kt${randomBytes(4).toString('hex')}.`;
  prefixes.push(p);
  return p;
}

interface Run { code: number | null; stdout: string; stderr: string; ms: number }

/** Runs a command of the repo to its end (tsx from node_modules, no shell). */
function runTsx(script: string, env: Record<string, string>, timeoutMs = 90_000): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), [script], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', ...env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${script} did not end within ${timeoutMs} ms\n${stdout}\n${stderr}`)); }, timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr, ms: Date.now() - started }); });
  });
}

const topicsCommand = (prefix: string, extra: Record<string, string> = {}) =>
  runTsx('scripts/kafka-topics.ts', { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: prefix, ...extra });

async function minIsrOf(topic: string): Promise<Record<string, string>> {
  const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: TOPIC_RESOURCE, name: topic }] });
  return Object.fromEntries(resources[0].configEntries.map((e) => [e.configName, e.configValue]));
}

const nonEmptyLines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');

describe('npm run kafka:topics', () => {
  it('creates every topic and DLQ with the configured partitions and min.insync.replicas, then verifies them without change', async () => {
    const prefix = freshPrefix();
    const first = await topicsCommand(prefix, { KAFKA_TOPIC_PARTITIONS: '2' });
    expect(first.code, first.stderr).toBe(0);
    const wanted = allTopicNames(prefix);
    expect(wanted).toHaveLength(ALL);
    for (const topic of wanted) {
      const compacted = cleanupPolicyOf(topic) === 'compact' ? ', cleanup.policy=compact' : '';
      expect(first.stdout).toContain(`created    ${topic} (2 partitions, replication factor 1, min.insync.replicas=1${compacted})`);
    }
    // chessboard's state topics are compacted by key (a projection rebuilt from the beginning finds every
    // object), the saga's steps and the DLQs keep the time-based retention
    const policies = Object.fromEntries(await Promise.all(wanted.map(async (topic) => [topic, (await minIsrOf(topic))['cleanup.policy']] as const)));
    expect(Object.entries(policies).filter(([, p]) => p === 'compact').map(([topic]) => topic).sort())
      .toEqual(COMPACTED_TOPICS.map((name) => withPrefix(prefix, name)).sort());
    expect(COMPACTED_TOPICS).toEqual(expect.arrayContaining([TOPICS.propertyObjectUpserted, TOPICS.propertyObjectStatusChanged, TOPICS.propertyObjectDeleted]));
    expect(policies[withPrefix(prefix, TOPICS.bookingCreated)]).toBe('delete');
    expect(first.stdout).toContain(`${ALL} topics: ${ALL} created, 0 changed, 0 unchanged, 0 with problems`);

    const { topics } = await admin.fetchTopicMetadata({ topics: wanted });
    expect(topics).toHaveLength(ALL);
    for (const t of topics) {
      expect(t.partitions, t.name).toHaveLength(2);
      expect(t.partitions.every((p) => p.replicas.length === 1 && p.leader >= 0), t.name).toBe(true);
    }
    expect((await minIsrOf(withPrefix(prefix, TOPICS.bookingCreated)))['min.insync.replicas']).toBe('1');

    const second = await topicsCommand(prefix, { KAFKA_TOPIC_PARTITIONS: '2' });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`${ALL} topics: 0 created, 0 changed, ${ALL} unchanged, 0 with problems`);
    expect(second.stdout).not.toMatch(/^(created|partitions|config) /m);
  });

  it('repairs what differs (missing topics, too few partitions, another min.insync.replicas) and keeps the other topic settings', async () => {
    const prefix = freshPrefix();
    const paid = withPrefix(prefix, TOPICS.bookingPaid);
    const expired = withPrefix(prefix, TOPICS.bookingExpired);
    // drift made by hand: one topic with 1 partition, one with min.insync.replicas 2 and a retention of its own, the rest missing
    await admin.createTopics({
      waitForLeaders: false,
      topics: [
        { topic: paid, numPartitions: 1, replicationFactor: 1 },
        { topic: expired, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'min.insync.replicas', value: '2' }, { name: 'retention.ms', value: '3600000' }] },
      ],
    });
    await eventually(async () => (await admin.fetchTopicMetadata({ topics: [paid, expired] })).topics.every((t) => t.partitions.every((p) => p.leader >= 0)), 'leaders of the hand-made topics');

    const report = await reconcileTopics(admin, { prefix, partitions: 3, replicationFactor: 1, minInsyncReplicas: 1 });
    const lines = report.actions.map(formatTopicAction);
    expect(lines).toContain(`partitions ${paid}: 1 -> 3`);
    expect(lines).toContain(`config     ${expired}: min.insync.replicas 2 -> 1`);
    expect(lines.filter((l) => l.startsWith('created '))).toHaveLength(ALL - 2);
    expect({ created: report.created, changed: report.changed, unchanged: report.unchanged, problems: report.problems }).toEqual({ created: ALL - 2, changed: 2, unchanged: 0, problems: 0 });

    const { topics } = await admin.fetchTopicMetadata({ topics: allTopicNames(prefix) });
    for (const t of topics) expect(t.partitions, t.name).toHaveLength(3);
    // the controller applies a config change through the metadata log: the broker shows it a moment later
    const expiredConfig = await eventually(async () => {
      const config = await minIsrOf(expired);
      return config['min.insync.replicas'] === '1' && config;
    }, 'min.insync.replicas 1 on the broker');
    expect(expiredConfig['retention.ms']).toBe('3600000');

    const again = await reconcileTopics(admin, { prefix, partitions: 3, replicationFactor: 1, minInsyncReplicas: 1 });
    expect({ created: again.created, changed: again.changed, unchanged: again.unchanged, problems: again.problems }).toEqual({ created: 0, changed: 0, unchanged: ALL, problems: 0 });
  });

  it('switches a state topic made with the time-based retention to compaction, keeping its other settings', async () => {
    const prefix = freshPrefix();
    const upserted = withPrefix(prefix, TOPICS.propertyObjectUpserted);
    await admin.createTopics({
      waitForLeaders: false,
      topics: [{ topic: upserted, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'min.insync.replicas', value: '1' }, { name: 'retention.ms', value: '3600000' }] }],
    });
    await eventually(async () => (await admin.fetchTopicMetadata({ topics: [upserted] })).topics.every((t) => t.partitions.every((p) => p.leader >= 0)), 'leaders of the hand-made topic');
    expect((await minIsrOf(upserted))['cleanup.policy']).toBe('delete');

    const report = await reconcileTopics(admin, { prefix, partitions: 3, replicationFactor: 1, minInsyncReplicas: 1 });
    expect(report.actions.map(formatTopicAction)).toContain(`config     ${upserted}: cleanup.policy delete -> compact`);
    const config = await eventually(async () => {
      const c = await minIsrOf(upserted);
      return c['cleanup.policy'] === 'compact' && c;
    }, 'cleanup.policy compact on the broker');
    expect(config['retention.ms']).toBe('3600000');
    const again = await reconcileTopics(admin, { prefix, partitions: 3, replicationFactor: 1, minInsyncReplicas: 1 });
    expect(again.changed).toBe(0);
  });

  it('reports a replication factor it cannot change as a problem and leaves the topic as it is', async () => {
    const prefix = freshPrefix();
    const created = withPrefix(prefix, TOPICS.bookingCreated);
    await reconcileTopics(admin, { prefix, partitions: 3, replicationFactor: 1, minInsyncReplicas: 1 });
    const report = await reconcileTopics(admin, { prefix, partitions: 4, replicationFactor: 3, minInsyncReplicas: 2 });
    expect(report.problems).toBe(ALL);
    expect(report.changed).toBe(0);
    expect(report.actions.map(formatTopicAction)).toContain(
      `PROBLEM    ${created}: replication factor is 1, configured 3: change it with a partition reassignment (kafka-reassign-partitions.sh), this command does not move replicas; the topic was left as it is`,
    );
    // nothing changed: min.insync.replicas 2 on one replica would refuse every acks=all write
    expect((await minIsrOf(created))['min.insync.replicas']).toBe('1');
    const { topics } = await admin.fetchTopicMetadata({ topics: [created] });
    expect(topics[0].partitions).toHaveLength(3);
  });

  it('a topic the cluster refuses to create (replication factor above the broker count) is a problem', async () => {
    const prefix = freshPrefix();
    const report = await reconcileTopics(admin, { prefix, partitions: 3, replicationFactor: 3, minInsyncReplicas: 2 });
    expect(report.problems).toBe(ALL);
    expect(report.actions.map(formatTopicAction)).toContainEqual(expect.stringMatching(
      new RegExp(`^PROBLEM    ${withPrefix(prefix, TOPICS.bookingCreated).replace(/\./g, '\\.')}: could not be created: .*REPLICATION_FACTOR`)));
    const existing = new Set(await admin.listTopics());
    expect(allTopicNames(prefix).filter((t) => existing.has(t))).toEqual([]);
  });

  it('bad configuration stops it with one line naming the variable, before anything is created', async () => {
    const prefix = freshPrefix();
    const zero = await topicsCommand(prefix, { KAFKA_TOPIC_PARTITIONS: '0' });
    expect(zero.code).toBe(1);
    expect(nonEmptyLines(zero.stderr)).toEqual([expect.stringMatching(/^invalid configuration: KAFKA_TOPIC_PARTITIONS .*\(got "0"\)$/)]);
    const isr = await topicsCommand(prefix, { KAFKA_REPLICATION_FACTOR: '1', KAFKA_MIN_INSYNC_REPLICAS: '2' });
    expect(isr.code).toBe(1);
    expect(nonEmptyLines(isr.stderr)).toEqual(['invalid configuration: KAFKA_MIN_INSYNC_REPLICAS (2) cannot exceed KAFKA_REPLICATION_FACTOR (1)']);
    const existing = new Set(await admin.listTopics());
    expect(allTopicNames(prefix).filter((t) => existing.has(t))).toEqual([]);
  });
});

describe('start-up topic check', () => {
  // the worker exits before it touches PostgreSQL, so a URL nobody listens on proves that too
  const processEnv = (prefix: string) => ({
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    DATABASE_URL: 'postgres://nobody:none@127.0.0.1:9/none',
    WORKER_METRICS_PORT: '0',
    NODE_ENV: 'test',
  });

  it('the worker exits 1 with one line naming every missing topic and `npm run kafka:topics`', async () => {
    const prefix = freshPrefix();
    const run = await runTsx('server/main/worker.ts', processEnv(prefix));
    expect(run.code).toBe(1);
    expect(nonEmptyLines(run.stdout)).toEqual([]);
    const lines = nonEmptyLines(run.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Kafka topics missing: .*create them with `npm run kafka:topics`/);
    for (const topic of allTopicNames(prefix)) expect(lines[0]).toContain(topic);
  });

  it('the worker names the one topic that is missing', async () => {
    const prefix = freshPrefix();
    expect((await topicsCommand(prefix)).code).toBe(0);
    const dlq = withPrefix(prefix, 'catalog.card-projection.dlq');
    await admin.deleteTopics({ topics: [dlq] });
    const run = await runTsx('server/main/worker.ts', processEnv(prefix));
    expect(run.code).toBe(1);
    expect(nonEmptyLines(run.stderr)).toEqual([
      `Kafka topic missing: ${dlq} — create it with \`npm run kafka:topics\` (same KAFKA_BROKERS and KAFKA_TOPIC_PREFIX)`,
    ]);
  });

  it('the web (its Next.js start-up hook, instrumentation.ts) exits 1 with the same line', async () => {
    const prefix = freshPrefix();
    expect((await topicsCommand(prefix)).code).toBe(0);
    const status = withPrefix(prefix, TOPICS.propertyObjectStatusChanged);
    await admin.deleteTopics({ topics: [status] });
    const run = await runTsx('test/harness/web-register.ts', { ...processEnv(prefix), NEXT_RUNTIME: 'nodejs' });
    expect(run.code).toBe(1);
    expect(nonEmptyLines(run.stdout)).toEqual([]);
    expect(nonEmptyLines(run.stderr)).toEqual([
      `Kafka topic missing: ${status} — create it with \`npm run kafka:topics\` (same KAFKA_BROKERS and KAFKA_TOPIC_PREFIX)`,
    ]);
  });

  it('with every topic in place the web start-up hook goes on', async () => {
    const prefix = freshPrefix();
    expect((await topicsCommand(prefix)).code).toBe(0);
    const run = await runTsx('test/harness/web-register.ts', { ...processEnv(prefix), NEXT_RUNTIME: 'nodejs' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('registered');
  });
});
