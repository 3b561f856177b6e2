import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { withDatabase } from './index';
import { startReplicatedPostgres } from './postgres-replicated';

describe('withDatabase', () => {
  it('names another database of the same server(s), a multi-host URL and its query kept', () => {
    expect(withDatabase('postgres://postgres@127.0.0.1:5432/postgres', 'pin')).toBe('postgres://postgres@127.0.0.1:5432/pin');
    expect(withDatabase('postgres://u:p@127.0.0.1:1,127.0.0.1:2/postgres?target_session_attrs=primary', 'pin_x'))
      .toBe('postgres://u:p@127.0.0.1:1,127.0.0.1:2/pin_x?target_session_attrs=primary');
    expect(withDatabase('postgresql://h:1', 'db')).toBe('postgresql://h:1/db');
  });
});

/**
 * The local primary + synchronous replica (`npm run infra -- --pg-replicas 1`, the failover profile):
 * the multi-host URL lands on the primary, a commit is on the replica when it returns, the replica
 * refuses writes, and after the primary is killed and the replica promoted the same URL lands there.
 */
describe('startReplicatedPostgres', () => {
  it('synchronous replica; the multi-host URL follows the primary through kill -9 + promote', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pin-pg-repl-'));
    fs.chmodSync(dataDir, 0o755); // initdb runs as the system user postgres when we are root
    const pg = await startReplicatedPostgres({ dataDir: path.join(dataDir, 'set') });
    const app = postgres(pg.url, { max: 1, onnotice: () => {} });
    const replica = postgres(pg.readUrl, { max: 1, onnotice: () => {} });
    try {
      const [sync] = await app<{ sync_state: string }[]>`SELECT sync_state FROM pg_stat_replication`;
      expect(sync?.sync_state).toBe('sync');
      expect((await app<{ port: number }[]>`SELECT inet_server_port() AS port`)[0]!.port).toBe(pg.primary.port);
      await app`CREATE TABLE acknowledged (id int PRIMARY KEY)`;
      await app`INSERT INTO acknowledged VALUES (1)`;
      // synchronous_commit = on with the replica as the synchronous standby: flushed there before the INSERT returned
      // (replayed a moment later: poll the replay, not the flush)
      const deadline = Date.now() + 10_000;
      while ((await replica`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'acknowledged'`)[0]!.n === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect((await replica<{ n: number }[]>`SELECT count(*)::int AS n FROM acknowledged`)[0]!.n).toBe(1);
      const refused = await replica`INSERT INTO acknowledged VALUES (2)`.then(() => null, (e: { code?: string }) => e.code);
      expect(refused).toBe('25006');
      // why DATABASE_URL says `primary` (server/platform/env.ts refuses read-write): postgres.js 3.4 keeps a
      // `read-write` session on a hot standby. When this fails, postgres.js fixed it and the env rule may go.
      const standbyFirst = `postgres://postgres:postgres@127.0.0.1:${pg.replica.port},127.0.0.1:${pg.primary.port}/postgres`;
      for (const [attrs, port] of [['read-write', pg.replica.port], ['primary', pg.primary.port]] as const) {
        const probe = postgres(`${standbyFirst}?target_session_attrs=${attrs}`, { max: 1, onnotice: () => {} });
        try {
          expect((await probe<{ port: number }[]>`SELECT inet_server_port() AS port`)[0]!.port, attrs).toBe(port);
        } finally {
          await probe.end({ timeout: 1 });
        }
      }

      await pg.killPrimary();
      expect(pg.primary.alive()).toBe(false);
      await pg.promoteReplica();
      // the pool's one connection was the dead primary's: its loss may surface on the first query, as it does to web's reads (run once more)
      const [after] = await app<{ port: number; standby: boolean }[]>`SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby`
        .catch(() => app<{ port: number; standby: boolean }[]>`SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby`);
      expect(after).toEqual({ port: pg.replica.port, standby: false });
      await app`INSERT INTO acknowledged VALUES (3)`;
      expect((await app<{ id: number }[]>`SELECT id FROM acknowledged ORDER BY id`).map((r) => r.id)).toEqual([1, 3]);
    } finally {
      await Promise.allSettled([app.end({ timeout: 1 }), replica.end({ timeout: 1 })]);
      await pg.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
