/**
 * Starts a real single-node Apache Kafka broker (KRaft, combined broker+controller) without Docker.
 *
 * The broker is plain Java: its jars are resolved from Maven Central with Maven (first run only;
 * the resulting classpath is cached in `<repo>/.data/kafka-dist/<version>/classpath.txt`) and
 * `kafka.Kafka` is run as a child process. Requires Java 17+ and Maven on PATH (or JAVA_HOME).
 *
 *   const kafka = await startLocalKafka({ dataDir: '.data/kafka' });
 *   // ... use kafka.brokers ('127.0.0.1:<port>')
 *   await kafka.stop();
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';

export interface LocalKafka {
  /** `host:port` of the PLAINTEXT listener, usable as KAFKA_BROKERS. */
  brokers: string;
  /** SIGTERM (controlled shutdown), SIGKILL after `timeoutMs` (default: the start option, else 15 s) */
  stop(timeoutMs?: number): Promise<void>;
}

export interface StartLocalKafkaOptions {
  /** Broker state (server.properties, logs/, kafka.log). Created if missing. */
  dataDir: string;
  /** PLAINTEXT port; a free port is picked when omitted. */
  port?: number;
  /** Progress lines (Maven download, startup). Defaults to console.log with a `[kafka]` prefix. */
  log?: (line: string) => void;
  /** Delete `dataDir` first, i.e. start with an empty cluster. */
  fresh?: boolean;
  /** How long `stop()` waits for the controlled shutdown before it kills the broker (default 15 s). */
  stopTimeoutMs?: number;
}

/**
 * Kafka release to run. Overridable with LOCAL_KAFKA_VERSION (e.g. to compare with 3.9.x);
 * each version gets its own cached classpath.
 */
export const KAFKA_VERSION = process.env.LOCAL_KAFKA_VERSION || '4.4.0';

// Kafka depends on slf4j-api 1.7.x, which cannot bind slf4j-simple 2.x (it would silently fall back
// to the NOP logger and kafka.log would stay empty), so the pom pins a matching 2.x slf4j-api.
const SLF4J_VERSION = '2.0.17';
// Pinned so the Maven step does not depend on whatever plugin version metadata resolves to today.
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 15_000;
const HINT = 'Install Java 17+ and Maven 3.8+ (both on PATH, or set JAVA_HOME), or point KAFKA_BROKERS at an existing Kafka.';

export async function startLocalKafka(opts: StartLocalKafkaOptions): Promise<LocalKafka> {
  const log = opts.log ?? ((line: string) => console.log(`[kafka] ${line}`));
  const dataDir = path.resolve(opts.dataDir);
  const java = await findJava();
  const classpath = await resolveClasspath(log);

  await killStaleBroker(dataDir, log);
  if (opts.fresh) rmSync(dataDir, { recursive: true, force: true });
  const logDir = path.join(dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });

  const port = opts.port ?? (await freePort());
  if (opts.port !== undefined) await assertPortFree(port);
  const controllerPort = await freePort([port]);
  const propsFile = path.join(dataDir, 'server.properties');
  writeFileSync(propsFile, serverProperties({ port, controllerPort, logDir }));

  // Format only once: meta.properties marks a formatted log dir and holds the cluster id.
  // Changing ports between restarts is fine, the static voter set only names node 1.
  if (!existsSync(path.join(logDir, 'meta.properties'))) {
    const clusterId = newClusterId();
    const quiet = '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'; // skip the config dump
    const out = await run(java, [quiet, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propsFile]);
    log(out.split('\n').find((line) => line.startsWith('Formatting')) ?? `formatted ${logDir}`);
  }

  const brokers = `127.0.0.1:${port}`;
  const logFile = path.join(dataDir, 'kafka.log');
  log(`starting Kafka ${KAFKA_VERSION} on ${brokers} (broker log: ${logFile})`);
  const startedAt = Date.now();

  // The broker writes straight into the file (not through Node), so its output is kept even if
  // this process dies, and a chatty broker never blocks on a full pipe.
  const logFd = openSync(logFile, 'w');
  const child = spawn(java, [...jvmArgs(), '-cp', classpath, 'kafka.Kafka', propsFile], {
    cwd: dataDir,
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);

  let exitInfo: string | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
      resolve();
    });
    child.once('error', (error) => {
      exitInfo = `spawn error: ${error.message}`;
      resolve();
    });
  });
  trackChild(child);
  const pidFile = path.join(dataDir, 'kafka.pid');
  if (child.pid) writeFileSync(pidFile, JSON.stringify({ broker: child.pid, owner: process.pid }));

  const cleanUp = () => {
    untrackChild(child);
    rmSync(pidFile, { force: true });
  };

  try {
    await waitUntilReady(brokers, () => exitInfo, exited, log);
    await warmUp(brokers);
  } catch (error) {
    if (!exitInfo) {
      child.kill('SIGKILL');
      await exited;
    }
    cleanUp();
    throw new Error(`${(error as Error).message}\n--- last 30 lines of ${logFile} ---\n${tail(logFile, 30)}`);
  }
  log(`Kafka ready on ${brokers} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);

  let stopping: Promise<void> | undefined;
  const defaultStopTimeoutMs = opts.stopTimeoutMs ?? STOP_TIMEOUT_MS;
  return {
    brokers,
    stop(timeoutMs?: number) {
      const stopTimeoutMs = timeoutMs ?? defaultStopTimeoutMs;
      stopping ??= (async () => {
        // a broker that is gone before anyone stopped it (a signal from elsewhere, a crash) is said so
        if (exitInfo) log(`broker had already exited (${exitInfo}) before it was stopped`);
        if (!exitInfo) {
          child.kill('SIGTERM'); // controlled shutdown: flushes logs, no recovery on next start
          let timer: NodeJS.Timeout | undefined;
          const timedOut = await Promise.race([
            exited.then(() => false),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), stopTimeoutMs))),
          ]);
          clearTimeout(timer); // a pending 15 s timer would keep the caller's process alive
          if (timedOut) {
            log(`broker did not stop within ${stopTimeoutMs / 1000} s, killing it`);
            child.kill('SIGKILL');
            await exited;
          }
        }
        cleanUp();
      })();
      return stopping;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Classpath resolution (Maven)

/** Returns the broker classpath, running Maven only when there is no valid cached one. */
export async function resolveClasspath(log: (line: string) => void): Promise<string> {
  const distDir = path.join(REPO_ROOT, '.data', 'kafka-dist', KAFKA_VERSION);
  const cpFile = path.join(distDir, 'classpath.txt');
  const cached = readClasspath(cpFile);
  if (cached) return cached;

  mkdirSync(distDir, { recursive: true });
  const pom = path.join(distDir, 'pom.xml');
  writeFileSync(pom, pomXml());
  log(`resolving Kafka ${KAFKA_VERSION} from Maven Central (first run only, ~1-2 min)...`);
  const startedAt = Date.now();
  // Unique temp name + rename: concurrent first runs never see a half-written classpath file.
  const tmpName = `classpath.${process.pid}.tmp`;
  const ticker = setInterval(() => {
    log(`still downloading... (${Math.round((Date.now() - startedAt) / 1000)} s)`);
  }, 10_000);
  try {
    await run(mvnCommand(), ['-q', '-B', '-f', pom, `${DEPENDENCY_PLUGIN}:build-classpath`, `-Dmdep.outputFile=${tmpName}`], {
      cwd: distDir,
      missing: `Maven (mvn) was not found on PATH. ${HINT}`,
    });
  } finally {
    clearInterval(ticker);
  }
  renameSync(path.join(distDir, tmpName), cpFile);
  const classpath = readClasspath(cpFile);
  if (!classpath) throw new Error(`Maven produced an unusable classpath in ${cpFile}`);
  log(`resolved Kafka ${KAFKA_VERSION} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  return classpath;
}

/** The cached classpath, or null if absent or if any jar vanished (e.g. ~/.m2 was cleaned). */
function readClasspath(cpFile: string): string | null {
  if (!existsSync(cpFile)) return null;
  const classpath = readFileSync(cpFile, 'utf8').trim();
  const jars = classpath.split(path.delimiter).filter(Boolean);
  const hasKafka = jars.some((jar) => path.basename(jar) === `kafka_2.13-${KAFKA_VERSION}.jar`);
  return hasKafka && jars.every((jar) => existsSync(jar)) ? classpath : null;
}

function pomXml(): string {
  const dep = (groupId: string, artifactId: string, version: string) =>
    `    <dependency><groupId>${groupId}</groupId><artifactId>${artifactId}</artifactId><version>${version}</version></dependency>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by scripts/infra/kafka.ts; only used to resolve the broker classpath. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.dev</groupId>
  <artifactId>kafka-dist</artifactId>
  <version>${KAFKA_VERSION}</version>
  <packaging>pom</packaging>
  <dependencies>
${dep('org.apache.kafka', 'kafka_2.13', KAFKA_VERSION)}
${dep('org.slf4j', 'slf4j-api', SLF4J_VERSION)}
${dep('org.slf4j', 'slf4j-simple', SLF4J_VERSION)}
  </dependencies>
</project>
`;
}

// ---------------------------------------------------------------------------------------------
// Broker configuration

export function serverProperties(p: {
  port: number; controllerPort: number; logDir: string;
  /** a node of a cluster (scripts/infra/kafka-cluster.ts): its id, the voters, RF and min ISR of every topic */
  cluster?: { nodeId: number; voters: string; replicationFactor: number; minInsyncReplicas: number };
}): string {
  const rf = p.cluster?.replicationFactor ?? 1;
  const minIsr = p.cluster?.minInsyncReplicas ?? 1;
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': p.cluster?.nodeId ?? 1,
    'controller.quorum.voters': p.cluster?.voters ?? `1@127.0.0.1:${p.controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${p.port},CONTROLLER://127.0.0.1:${p.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${p.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': p.logDir,
    // Single node: every internal topic must be satisfiable with one replica.
    // (a cluster: every internal topic replicated like ours, so losing one broker loses nothing)
    'offsets.topic.replication.factor': rf,
    'transaction.state.log.replication.factor': rf,
    'transaction.state.log.min.isr': minIsr,
    'share.coordinator.state.topic.replication.factor': rf,
    'share.coordinator.state.topic.min.isr': minIsr,
    'default.replication.factor': rf,
    'min.insync.replicas': minIsr,
    // Internal topics default to 50 partitions; creating them on the first consumer group /
    // idempotent producer is the slowest part of a fresh broker, and one node gains nothing.
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.num.partitions': 1,
    // Consumers join immediately instead of waiting 3 s for more members.
    'group.initial.rebalance.delay.ms': 0,
    'num.partitions': 3,
    // Topics come from ensureTopics(); a typo must fail instead of creating a stray topic.
    'auto.create.topics.enable': false,
    'delete.topic.enable': true,
    // Keep a dev broker light: fewer threads, small log-cleaner buffer (default 128 MB of heap).
    'num.network.threads': 2,
    'num.io.threads': 4,
    'num.recovery.threads.per.data.dir': 1,
    'log.cleaner.dedupe.buffer.size': 16 * 1024 * 1024,
  };
  // Backslashes are escapes in .properties files (Windows paths).
  const escape = (value: string) => value.replace(/\\/g, '\\\\');
  return Object.entries(props)
    .map(([key, value]) => `${key}=${escape(String(value))}`)
    .join('\n')
    .concat('\n');
}

export function jvmArgs(): string[] {
  return [
    '-Xms256m',
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
    // Logging goes through slf4j-simple (to stderr, i.e. kafka.log). log4j-core is on the
    // classpath only as a Kafka dependency; silence its "no configuration found" status output.
    '-Dlog4j2.StatusLogger.level=OFF',
    '-Dorg.slf4j.simpleLogger.defaultLogLevel=info',
    '-Dorg.slf4j.simpleLogger.showDateTime=true',
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS",
  ];
}

// ---------------------------------------------------------------------------------------------
// Process management

/** Polls with a kafkajs admin until the broker answers a metadata request. */
export async function waitUntilReady(
  brokers: string,
  exitInfo: () => string | null,
  exited: Promise<void>,
  log: (line: string) => void,
  expectBrokers = 1,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  const kafka = new Kafka({
    clientId: 'local-kafka-probe',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
  const startedAt = Date.now();
  let lastProgress = startedAt;
  let lastError: unknown;
  for (;;) {
    const admin = kafka.admin({ retry: { retries: 0 } });
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length >= expectBrokers) return;
    } catch (error) {
      lastError = error;
    } finally {
      await admin.disconnect().catch(() => {});
    }
    const exit = exitInfo();
    if (exit) throw new Error(`Kafka broker exited during startup (${exit})`);
    const elapsed = Date.now() - startedAt;
    if (elapsed > timeoutMs) {
      throw new Error(
        `Kafka broker did not answer on ${brokers} within ${timeoutMs / 1000} s` +
          (lastError ? ` (last error: ${(lastError as Error).message})` : ''),
      );
    }
    if (Date.now() - lastProgress >= 5_000) {
      log(`waiting for the broker to accept connections... (${Math.round(elapsed / 1000)} s)`);
      lastProgress = Date.now();
    }
    await Promise.race([sleep(500), exited]);
  }
}

/**
 * On a fresh cluster the group coordinator (__consumer_offsets), the transaction coordinator
 * (__transaction_state) and the producer-id manager initialise lazily on first use; until then
 * JoinGroup / FindCoordinator / InitProducerId fail with retriable errors
 * (GROUP_COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS), which kafkajs logs as ERRORs and
 * answers by crashing and restarting the consumer. Trigger all three here, so that the broker handed
 * out is ready (and quiet) for the first consumer, idempotent and transactional producer.
 */
export async function warmUp(brokers: string): Promise<void> {
  const kafka = new Kafka({ clientId: 'local-kafka-warmup', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer({ transactionalId: 'local-kafka-warmup', idempotent: true, maxInFlightRequests: 1 });
  try {
    await admin.connect();
    await admin.describeGroups(['local-kafka-warmup']); // retried until the group coordinator is loaded
    await producer.connect(); // idempotent InitProducerId, retried until producer ids are available
    // transaction() runs FindCoordinator(TRANSACTION) + a transactional InitProducerId, retried
    // until __transaction_state exists and is loaded; the empty transaction is then dropped.
    const transaction = await producer.transaction();
    await transaction.abort();
  } finally {
    await producer.disconnect().catch(() => {});
    await admin.disconnect().catch(() => {});
  }
}

// Brokers started by this process. Killed synchronously when the process exits so that no
// orphaned JVM keeps the ports and the log-dir lock.
const children = new Set<ChildProcess>();
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

function onSignal(signal: NodeJS.Signals): void {
  // Only act where Node's default would have terminated the process without an 'exit' event:
  // if the application installed its own handler, it owns shutdown (and may call stop()).
  if (process.listenerCount(signal) > 1) return;
  killAll();
  for (const s of EXIT_SIGNALS) process.removeListener(s, onSignal);
  process.kill(process.pid, signal); // re-raise: default behaviour (exit by signal)
}

export function trackChild(child: ChildProcess): void {
  if (children.size === 0) {
    process.on('exit', killAll);
    for (const s of EXIT_SIGNALS) process.on(s, onSignal);
  }
  children.add(child);
}

export function untrackChild(child: ChildProcess): void {
  if (!children.delete(child) || children.size > 0) return;
  process.removeListener('exit', killAll);
  for (const s of EXIT_SIGNALS) process.removeListener(s, onSignal);
}

/**
 * `<dataDir>/kafka.pid` records the broker and the Node process that owns it. A broker whose owner
 * was SIGKILLed (no exit handler ran) still holds the ports and the log-dir lock, so it is killed
 * here; a broker whose owner is alive means the dataDir is in use and is left alone. Only a process
 * whose command line proves it is this dataDir's broker is ever killed (Linux /proc; elsewhere the
 * pid file is ignored).
 */
async function killStaleBroker(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'kafka.pid');
  let recorded: { broker?: unknown; owner?: unknown };
  try {
    recorded = JSON.parse(readFileSync(pidFile, 'utf8'));
  } catch {
    return; // no (readable) pid file
  }
  const { broker, owner } = recorded;
  if (typeof broker !== 'number' || typeof owner !== 'number') return;
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${broker}/cmdline`, 'utf8');
  } catch {
    rmSync(pidFile, { force: true }); // broker gone (or not Linux)
    return;
  }
  if (!cmdline.includes('kafka.Kafka') || !cmdline.includes(path.join(dataDir, 'server.properties'))) return;
  if (isAlive(owner)) {
    throw new Error(
      `${dataDir} is in use by a Kafka broker (pid ${broker}) of the running process ${owner}; stop it or use another dataDir`,
    );
  }
  log(`killing orphaned Kafka broker (pid ${broker}) left over from a previous run`);
  process.kill(broker, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  while (existsSync(`/proc/${broker}`) && Date.now() < deadline) await sleep(50);
  rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: existence check only
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

export async function findJava(): Promise<string> {
  const fromHome = process.env.JAVA_HOME && path.join(process.env.JAVA_HOME, 'bin', process.platform === 'win32' ? 'java.exe' : 'java');
  const java = fromHome && existsSync(fromHome) ? fromHome : 'java';
  // `java -version` prints e.g. `openjdk version "17.0.15" 2025-04-15` (or "1.8.0_402" for Java 8).
  const out = await run(java, ['-version'], { missing: `Java was not found (JAVA_HOME or PATH). ${HINT}` });
  const match = /version "(\d+)(?:\.(\d+))?/.exec(out);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : NaN;
  if (!(major >= 17)) {
    throw new Error(`Kafka ${KAFKA_VERSION} needs Java 17+, but ${java} reports: ${out.split('\n')[0]}. ${HINT}`);
  }
  return java;
}

function mvnCommand(): string {
  return process.platform === 'win32' ? 'mvn.cmd' : 'mvn';
}

/** Runs a command to completion; resolves with stdout+stderr, rejects with them on failure. */
export function run(cmd: string, args: string[], opts: { cwd?: string; missing?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: opts.cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (!error) return resolve(output);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && opts.missing) return reject(new Error(opts.missing));
      // Leave the (long) classpath out of the message; error.message would repeat it.
      const shown = args.map((arg, i) => (args[i - 1] === '-cp' ? '<classpath>' : arg)).join(' ');
      const status = error.killed ? `signal ${error.signal}` : `exit code ${error.code}`;
      const lines = output.split('\n').slice(-40).join('\n');
      reject(new Error(`\`${path.basename(cmd)} ${shown}\` failed (${status})\n${lines}`));
    });
  });
}

/** Asks the OS for a free TCP port on 127.0.0.1 (bind to port 0, read it, release it). */
export function freePort(exclude: number[] = []): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => (exclude.includes(port) ? freePort(exclude).then(resolve, reject) : resolve(port)));
    });
  });
}

function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (error) => reject(new Error(`Kafka port ${port} is not free: ${error.message}`)));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

/** The last `count` lines of a file (reads at most its last 256 KB). */
export function tail(file: string, count: number): string {
  try {
    const size = statSync(file).size;
    const length = Math.min(size, 256 * 1024);
    const buffer = Buffer.alloc(length);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    return buffer.toString('utf8').trimEnd().split('\n').slice(-count).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * A Kafka cluster id: 16 random bytes as 22 chars of base64url, like `kafka-storage random-uuid`.
 * Like Kafka's Uuid.randomUuid(), reject ids starting with '-': the CLI would parse them as options.
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
