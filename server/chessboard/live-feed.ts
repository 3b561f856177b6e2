import { SESSION_REVOKED_CHANNEL } from '../auth/session';
import type { Database } from '../platform/db';
import type { Logger } from '../platform/logger';
import { counter } from '../platform/metrics';
import { outboxChannel, type OutboxNotice } from '../platform/outbox/write';
import { tenantBuildingFingerprint } from './queries';
import { MESSENGER_CHANNEL } from '../messenger/live';
import { NOTIFICATIONS_CHANNEL } from '../notifications/booking-events';

/**
 * Live updates for open console pages (the SSE streams of app/api/events). One LISTEN connection per
 * web process, three channels:
 *   - `pin_outbox_chessboard` / `pin_outbox_crm`: every outbox write NOTIFYs in its transaction, so the
 *     notice arrives at commit; its payload names the tenant and (chessboard) the buildings touched
 *     (OutboxNotice). A stream hears only its own tenant's notices (pin_manager and ops: all tenants).
 *   - `pin_session_revoked`: sign-out NOTIFYs the session's revocation key in the transaction that
 *     deletes it; the streams of that session end at once.
 * A stream watching a building shares one watch per building with every other stream of the process
 * watching it: a chessboard commit naming the building costs ONE fingerprint read, whatever the
 * number of streams, and those streams get `grid` only when the fingerprint changed.
 */

/** `messenger`: a deal chat of the stream's tenant got a card or a message; `notifications`: a notification of the
 * stream's tenant was created (pin_notifications, payload = tenant id). */
export type LiveEvent = 'grid' | 'chessboard' | 'crm' | 'messenger' | 'resync' | 'notifications';

export interface LiveStream {
  /** the actor's tenant scope: null = every tenant (pin_manager, ops) */
  tenantId: string | null;
  /** sessionRevocationKey of the stream's session */
  revocationKey: string;
  /** the building watched, with its tenant (checked visible to the actor at open); null: none */
  building: { id: string; tenantId: string } | null;
  notify(event: LiveEvent): void;
  /** the session was signed out: end the stream */
  revoked(): void;
}

const fingerprintReads = counter(
  'pin_live_feed_fingerprint_reads_total',
  'Building fingerprint reads of the live feed (one per watched building per chessboard commit naming it, shared by its streams)',
);

interface Watch {
  tenantId: string;
  streams: Set<LiveStream>;
  fingerprint: string | null;
  checking: boolean;
  dirty: boolean;
}

interface Hub {
  streams: Set<LiveStream>;
  watches: Map<string, Watch>;
  started: Promise<void> | null;
  database: Database | null;
  logger: Logger | null;
}

const g = globalThis as unknown as { __pinLiveHub?: Hub };

function hub(): Hub {
  g.__pinLiveHub ??= { streams: new Set(), watches: new Map(), started: null, database: null, logger: null };
  return g.__pinLiveHub;
}

function deliver(stream: LiveStream, fn: (s: LiveStream) => void): void {
  try {
    fn(stream);
  } catch {
    // one broken stream must not stop the others
  }
}

const hears = (stream: LiveStream, tenantId: string) => stream.tenantId === null || stream.tenantId === tenantId;

/** An outbox notice; an unreadable one (not written by writeOutbox) reaches no tenant's streams. */
function parseNotice(payload: string): OutboxNotice | null {
  try {
    const n = JSON.parse(payload) as Partial<OutboxNotice>;
    if (typeof n.t !== 'string') return null;
    return { t: n.t, ...(Array.isArray(n.b) ? { b: n.b.filter((b): b is string => typeof b === 'string') } : {}) };
  } catch {
    return null;
  }
}

async function checkWatch(buildingId: string, watch: Watch): Promise<void> {
  const { database, logger } = hub();
  if (!database) return;
  if (watch.checking) {
    watch.dirty = true; // one more read once the running one is done, not one per notice
    return;
  }
  watch.checking = true;
  try {
    do {
      watch.dirty = false;
      fingerprintReads.inc();
      const next = await tenantBuildingFingerprint(database.db, watch.tenantId, buildingId);
      if (next !== watch.fingerprint) {
        watch.fingerprint = next;
        for (const s of watch.streams) deliver(s, (x) => x.notify('grid'));
      }
    } while (watch.dirty && watch.streams.size > 0);
  } catch (e) {
    logger?.warn({ event: 'live_feed.check_failed', err: { message: (e as Error).message } }, 'live feed check failed');
  } finally {
    watch.checking = false;
  }
}

function onChessboard(payload: string): void {
  const notice = parseNotice(payload);
  if (!notice) return;
  const h = hub();
  for (const s of h.streams) if (!s.building && hears(s, notice.t)) deliver(s, (x) => x.notify('chessboard'));
  const named = notice.b ? notice.b.filter((b) => h.watches.has(b)) : [...h.watches.keys()];
  for (const buildingId of named) {
    const watch = h.watches.get(buildingId)!;
    if (watch.tenantId === notice.t) void checkWatch(buildingId, watch);
  }
}

function onCrm(payload: string): void {
  const notice = parseNotice(payload);
  if (!notice) return;
  for (const s of hub().streams) if (hears(s, notice.t)) deliver(s, (x) => x.notify('crm'));
}

/** A deal chat got a card or a message (server/messenger/live.ts): the tenant's streams re-read their chats. */
function onMessenger(payload: string): void {
  const notice = parseNotice(payload);
  if (!notice) return;
  for (const s of hub().streams) if (hears(s, notice.t)) deliver(s, (x) => x.notify('messenger'));
}

function onNotifications(tenantId: string): void {
  for (const s of hub().streams) if (hears(s, tenantId)) deliver(s, (x) => x.notify('notifications'));
}

function onRevoked(key: string): void {
  for (const s of [...hub().streams]) if (s.revocationKey === key) deliver(s, (x) => x.revoked());
}

/**
 * Starts the process-wide LISTEN once. postgres.js re-establishes a dropped LISTEN connection by
 * itself and calls `onlisten` again; a re-listen means notifications may have been missed, so every
 * stream is told to resync (and a revoked session's stream still ends at its periodic session check).
 */
export function ensureLiveListener(database: Database, logger: Logger): Promise<void> {
  const h = hub();
  if (!h.started) {
    h.database = database;
    h.logger = logger;
    const relisten = (channel: string) => {
      let listens = 0;
      return () => {
        if (listens++ === 0) return;
        logger.warn({ event: 'live_feed.relisten', channel }, 'live feed LISTEN re-established');
        for (const s of h.streams) deliver(s, (x) => x.notify('resync'));
      };
    };
    h.started = Promise.all([
      database.sql.listen(outboxChannel('chessboard'), onChessboard, relisten(outboxChannel('chessboard'))),
      database.sql.listen(outboxChannel('crm'), onCrm, relisten(outboxChannel('crm'))),
      database.sql.listen(MESSENGER_CHANNEL, onMessenger, relisten(MESSENGER_CHANNEL)),
      database.sql.listen(SESSION_REVOKED_CHANNEL, onRevoked, relisten(SESSION_REVOKED_CHANNEL)),
      database.sql.listen(NOTIFICATIONS_CHANNEL, onNotifications, relisten(NOTIFICATIONS_CHANNEL)),
    ]).then(
      () => undefined,
      (e) => {
        h.started = null; // let the next stream try again
        throw e;
      },
    );
  }
  return h.started;
}

/**
 * Registers an open stream (after ensureLiveListener). A stream watching a building joins that
 * building's watch; the first one reads the fingerprint the later changes are compared with.
 * Returns the function that unregisters it.
 */
export async function openLiveStream(stream: LiveStream): Promise<() => void> {
  const h = hub();
  h.streams.add(stream);
  const building = stream.building;
  if (building) {
    let watch = h.watches.get(building.id);
    if (!watch) {
      // the first read counts as "in flight": commits arriving meanwhile mark the watch dirty and cost
      // one more read after it (checkWatch), not one concurrent read each
      watch = { tenantId: building.tenantId, streams: new Set(), fingerprint: null, checking: true, dirty: false };
      h.watches.set(building.id, watch);
      watch.streams.add(stream);
      const { database } = h;
      try {
        if (database) {
          fingerprintReads.inc();
          watch.fingerprint = await tenantBuildingFingerprint(database.db, building.tenantId, building.id).catch(() => null);
        }
      } finally {
        watch.checking = false;
      }
      if (watch.dirty && watch.streams.size > 0) void checkWatch(building.id, watch);
    } else {
      watch.streams.add(stream);
    }
  }
  return () => {
    h.streams.delete(stream);
    if (!building) return;
    const watch = h.watches.get(building.id);
    watch?.streams.delete(stream);
    if (watch && watch.streams.size === 0) h.watches.delete(building.id);
  };
}

export function liveStreamCount(): number {
  return hub().streams.size;
}

/** What the hub holds now (tests, diagnostics): open streams, and buildings with a shared watch (one per building with streams). */
export function liveFeedStats(): { streams: number; watchedBuildings: number } {
  const h = hub();
  return { streams: h.streams.size, watchedBuildings: h.watches.size };
}
