/**
 * A local Apache Kafka cluster (KRaft) of N processes on loopback, each a combined broker + controller
 * (N controllers: the quorum survives one lost node when N = 3), from the same Maven artifacts as the
 * single broker of scripts/infra/kafka.ts. Every topic, the internal ones included, is replicated N
 * times with min.insync.replicas N-1 (3 → 2), so producers with acks=all lose nothing when one broker
 * dies. Used by `npm run infra -- --brokers 3` and the cluster fault scenarios, which kill and restart
 * single nodes: a node keeps its ports and log dir across `restart()` (the static voter set names them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  findJava, freePort, KAFKA_VERSION, newClusterId, resolveClasspath, run, serverProperties, jvmArgs,
  tail, trackChild, untrackChild, waitUntilReady, warmUp,
} from './kafka';

// three JVMs starting at once on 2 shared cores: a node can take over a minute to answer
const READY_TIMEOUT_MS = 240_000;

export interface KafkaNode {
  id: number;
  /** `127.0.0.1:<port>` of its PLAINTEXT listener */
  broker: string;
  alive(): boolean;
  /** SIGKILL (a crash) or SIGTERM (controlled shutdown); resolves when the process is gone */
  kill(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** starts the node again on the same ports and log dir; resolves when it answers */
  restart(): Promise<void>;
}

export interface LocalKafkaCluster {
  /** comma-separated, usable as KAFKA_BROKERS */
  brokers: string;
  nodes: KafkaNode[];
  replicationFactor: number;
  minInsyncReplicas: number;
  stop(timeoutMs?: number): Promise<void>;
}

export async function startLocalKafkaCluster(opts: {
  dataDir: string;
  size: number;
  fresh?: boolean;
  log?: (line: string) => void;
}): Promise<LocalKafkaCluster> {
  const log = opts.log ?? ((line: string) => console.log(`[kafka] ${line}`));
  if (opts.size < 2) throw new Error('a cluster has 2 nodes or more; use startLocalKafka for one');
  const dataDir = path.resolve(opts.dataDir);
  const java = await findJava();
  const classpath = await resolveClasspath(log);
  if (opts.fresh) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });

  const used: number[] = [];
  const port = async () => { const p = await freePort(used); used.push(p); return p; };
  const specs: { id: number; port: number; controllerPort: number; dir: string }[] = [];
  for (let id = 1; id <= opts.size; id++) specs.push({ id, port: await port(), controllerPort: await port(), dir: path.join(dataDir, `node-${id}`) });
  const voters = specs.map((s) => `${s.id}@127.0.0.1:${s.controllerPort}`).join(',');
  const replicationFactor = Math.min(3, opts.size);
  const minInsyncReplicas = replicationFactor - 1;
  const brokers = specs.map((s) => `127.0.0.1:${s.port}`).join(',');

  const clusterId = newClusterId();
  const quiet = '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn';
  await Promise.all(specs.map(async (s) => {
    const logDir = path.join(s.dir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const propsFile = path.join(s.dir, 'server.properties');
    writeFileSync(propsFile, serverProperties({
      port: s.port, controllerPort: s.controllerPort, logDir,
      cluster: { nodeId: s.id, voters, replicationFactor, minInsyncReplicas },
    }));
    if (!existsSync(path.join(logDir, 'meta.properties'))) {
      await run(java, [quiet, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propsFile]);
    }
  }));

  const nodes = specs.map((s) => {
    let child: ChildProcess | null = null;
    let exited: Promise<void> = Promise.resolve();
    let exitInfo: string | null = 'not started';
    const start = () => {
      const logFd = openSync(path.join(s.dir, 'kafka.log'), 'a');
      const proc = spawn(java, [...jvmArgs(), '-cp', classpath, 'kafka.Kafka', path.join(s.dir, 'server.properties')], {
        cwd: s.dir, stdio: ['ignore', logFd, logFd],
      });
      closeSync(logFd);
      child = proc;
      exitInfo = null;
      exited = new Promise<void>((resolve) => {
        proc.once('exit', (code, signal) => { exitInfo = signal ? `signal ${signal}` : `exit code ${code}`; untrackChild(proc); resolve(); });
        proc.once('error', (e) => { exitInfo = `spawn error: ${e.message}`; untrackChild(proc); resolve(); });
      });
      trackChild(proc);
    };
    const node: KafkaNode & { start: () => void; ready: () => Promise<void>; stopNode: (ms: number) => Promise<void> } = {
      id: s.id,
      broker: `127.0.0.1:${s.port}`,
      alive: () => exitInfo === null,
      start,
      ready: () => waitUntilReady(`127.0.0.1:${s.port}`, () => exitInfo, exited, (l) => log(`node ${s.id}: ${l}`), 1, READY_TIMEOUT_MS),
      async kill(signal = 'SIGKILL') {
        if (exitInfo === null) child?.kill(signal);
        await exited;
      },
      async restart() {
        if (exitInfo === null) throw new Error(`node ${s.id} is running`);
        start();
        // a restarted node answers metadata before it has caught up; the cluster has all N brokers again then
        try {
          await waitUntilReady(brokers, () => exitInfo, exited, log, opts.size, READY_TIMEOUT_MS);
        } catch (error) {
          throw new Error(`${(error as Error).message}\n--- last 30 lines of node ${s.id} ---\n${tail(path.join(s.dir, 'kafka.log'), 30)}`);
        }
      },
      async stopNode(ms: number) {
        if (exitInfo !== null) return;
        child?.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), ms)))]);
        clearTimeout(timer);
        if (timedOut) { child?.kill('SIGKILL'); await exited; }
      },
    };
    return node;
  });

  log(`starting a Kafka ${KAFKA_VERSION} cluster of ${opts.size} nodes on ${brokers} (logs: ${dataDir}/node-*/kafka.log)`);
  const t0 = Date.now();
  for (const n of nodes) n.start(); // all at once: a controller quorum needs a majority of voters up
  try {
    await Promise.all(nodes.map((n) => n.ready()));
    await waitUntilReady(brokers, () => null, new Promise(() => {}), log, opts.size, READY_TIMEOUT_MS);
    await warmUp(brokers);
  } catch (error) {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    throw new Error(`${(error as Error).message}\n--- last 20 lines of node-1 ---\n${tail(path.join(specs[0]!.dir, 'kafka.log'), 20)}`);
  }
  log(`Kafka cluster ready on ${brokers} after ${((Date.now() - t0) / 1000).toFixed(1)} s (RF ${replicationFactor}, min.insync.replicas ${minInsyncReplicas})`);

  let stopping: Promise<void> | undefined;
  return {
    brokers, nodes, replicationFactor, minInsyncReplicas,
    stop(timeoutMs = 15_000) {
      // brokers one by one, controlled: each hands its partitions over instead of the last ones waiting on a lost quorum
      // (the last one has no quorum left to shut down through: it gets a short deadline)
      stopping ??= (async () => { for (const [i, n] of nodes.entries()) await n.stopNode(i === nodes.length - 1 ? Math.min(timeoutMs, 3_000) : timeoutMs); })();
      return stopping;
    },
  };
}
