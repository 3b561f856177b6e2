import { and, asc, eq, getViewSelectedFields, gte, inArray, sql } from 'drizzle-orm';
import type { Actor } from '../auth/actor';
import { bookingRecordById } from '../crm/queries';
import { cardProjectionConsumer } from '../catalog/card-projection.consumer';
import { catalogInbox } from '../catalog/schema';
import { dealChatConsumer } from '../messenger/deal-chat.consumer';
import { messengerInbox } from '../messenger/schema';
import { crmPropertyObjectStatusConsumer } from '../chessboard/crm-property-object-status.consumer';
import { chessboardInbox, chessboardOutbox, holdMismatchesView as holdMismatches, holdReleasesView as holdReleases, propertyObjectsView as propertyObjects } from '../chessboard/schema';
import { bookingTimelineView as bookingTimeline, crmOutbox } from '../crm/schema';
import type { DbOrTx } from '../platform/db';
import { AppError } from '../platform/errors';
import { TOPICS } from '../platform/kafka/topics';
import { usersView as users } from '../auth/schema';
import { notificationsBookingEventsConsumer } from '../notifications/booking-events.consumer';
import { notificationsInbox } from '../notifications/schema';
import { rewardsBookingEventsConsumer } from '../rewards/booking-events.consumer';
import { rewardsInbox } from '../rewards/schema';

/**
 * The saga timeline of one booking: every hop of every message it caused, across crm → Kafka →
 * chessboard → Kafka → catalog, joined by messageId / causationId. An ops read-only view, so it may
 * read every schema (DESIGN: "read-only views for ops may join across schemas"); it writes nothing.
 *
 * Because each consumer records its inbox row and its own outbox rows in ONE transaction, the absence
 * of a downstream row is meaningful: an applied inbox row without a status-changed outbox row means
 * no status change was emitted (skipped), not that one is still coming.
 */

export type HopKind =
  | 'command'
  | 'crm_outbox_written'
  | 'crm_published'
  | 'chessboard_applied'
  | 'chessboard_outbox_written'
  | 'chessboard_published'
  | 'catalog_applied'
  | 'messenger_applied'
  | 'safety_net_release'
  /** a participant of the saga: notifications applied the crm message (its own inbox) */
  | 'notifications_applied'
  /** a participant of the saga: rewards applied the crm message (booking-paid and the booking's ending) */
  | 'rewards_applied';

/** done: happened; pending: expected, not yet; failed: rejected / DLQ / mismatch; skipped: will not happen. */
export type HopState = 'done' | 'pending' | 'failed' | 'skipped';

export interface SagaHop {
  key: string;
  kind: HopKind;
  state: HopState;
  at: Date | null;
  /**
   * time since the previous hop of the same chain (null for the first or when either time is unknown);
   * a hop of a consumer that reads the crm message in parallel (messenger) counts from its publication
   */
  latencyMs: number | null;
  /** short machine-readable qualifier: inbox result, topic, DLQ code, consumer… */
  detail: string | null;
  messageId: string | null;
  raw: unknown;
}

export interface SagaChain {
  /** the crm message that starts the chain (or the safety-net release's own message) */
  messageId: string;
  topic: string;
  hops: SagaHop[];
  /**
   * The saga's other participants that react to the crm message besides the chessboard
   * (notifications), each with its latency from the publication. Informational: not part of hasPending.
   */
  participants?: SagaHop[];
}

export interface SagaStep {
  key: string;
  command: {
    at: Date;
    action: string;
    fromStatus: string | null;
    toStatus: string;
    actorType: string;
    actorId: string;
    actorName: string | null;
    reason: string | null;
    correlationId: string | null;
    bookingVersion: number;
    raw: unknown;
  } | null;
  /** a release of the booking's hold outside the booking's own commands: by whom (a person by hand, the safety-net job) and why */
  release?: { source: string; actorId: string | null; actorName: string | null; reason: string | null; at: Date };
  chains: SagaChain[];
}

export interface SagaTimeline {
  booking: {
    id: string; tenantId: string; dealId: string; propertyObjectId: string; status: string; version: number;
    createdAt: Date; updatedAt: Date;
  };
  steps: SagaStep[];
  hasPending: boolean;
  hasFailures: boolean;
  /**
   * false: not one integration event of this booking is on record. Every booking command writes its
   * event in the command's transaction, so such a booking was imported (the demo seed writes bookings
   * directly) or its events were pruned after OUTBOX_RETENTION_MS; the UI says so instead of showing
   * its commands as "internal transitions".
   */
  eventsOnRecord: boolean;
  /**
   * crm and chessboard disagree about this booking once nothing is in flight any more: an active
   * booking whose object is not held by it (e.g. a hold released by hand while the booking was kept),
   * or an ended booking whose object is still held by it. null when they agree (or while hops are pending).
   */
  divergence: { kind: 'booking_not_held' | 'still_held'; objectStatus: string; holdBookingId: string | null } | null;
  generatedAt: Date;
}

/**
 * Which hops to expect (DESIGN "Data flow of one booking"): chessboard applies every booking/deal event
 * that moves an object (not booking-paid, which only messenger/rewards read); catalog applies the
 * status changes. Unioned with the consumers' own subscriptions so a new topic shows up by itself.
 */
const CHESSBOARD_CONSUMED: string[] = [
  TOPICS.bookingCreated, TOPICS.bookingConfirmed, TOPICS.bookingExtended, TOPICS.bookingExpired,
  TOPICS.bookingCancelled, TOPICS.dealCancelled, TOPICS.dealSaleStarted,
];
const CATALOG_CONSUMED: string[] = [TOPICS.propertyObjectStatusChanged];

const notFound = () => new AppError('CRM_BOOKING_NOT_FOUND', 'NOT_FOUND', 'Booking not found');

type OutboxRow = typeof crmOutbox.$inferSelect;

export async function getSagaTimeline(db: DbOrTx, actor: Actor, bookingId: string, now: Date = new Date()): Promise<SagaTimeline> {
  // crm's scope: a tenant role its tenant, an investor the bookings of its deals (another's is not found)
  const booking = await bookingRecordById(db, actor, bookingId);
  if (!booking) throw notFound();

  const timeline = await db
    .select({ row: getViewSelectedFields(bookingTimeline), actorName: users.displayName })
    .from(bookingTimeline)
    .leftJoin(users, sql`${users.id}::text = ${bookingTimeline.actorId}`)
    .where(eq(bookingTimeline.bookingId, bookingId))
    // by version: the order the transitions committed in (two replicas' clocks may disagree)
    .orderBy(asc(bookingTimeline.bookingVersion), asc(bookingTimeline.at), asc(bookingTimeline.id));

  // crm messages: those named by the timeline, plus any outbox row of this booking the timeline does not name
  const namedIds = timeline.flatMap((t) => t.row.messageIds ?? []);
  const crmRows: OutboxRow[] = await db
    .select()
    .from(crmOutbox)
    .where(namedIds.length
      ? sql`${crmOutbox.messageId} IN ${namedIds} OR ${crmOutbox.aggregateId} = ${bookingId}`
      : eq(crmOutbox.aggregateId, bookingId))
    .orderBy(asc(crmOutbox.id));
  const crmById = new Map(crmRows.map((r) => [r.messageId, r]));

  // safety-net / manual releases of this booking's hold, with the person of a manual one
  const releaseRows = await db
    .select({ release: getViewSelectedFields(holdReleases), actorName: users.displayName })
    .from(holdReleases)
    .leftJoin(users, sql`${users.id}::text = ${holdReleases.actorId}`)
    .where(and(
      eq(holdReleases.propertyObjectId, booking.propertyObjectId),
      eq(holdReleases.holdDealId, booking.dealId),
      gte(holdReleases.releasedAt, booking.createdAt),
    ))
    .orderBy(asc(holdReleases.releasedAt));
  const releases = releaseRows.map((r) => r.release);
  const releaseActor = new Map(releaseRows.map((r) => [r.release.id, r.actorName]));

  // downstream rows, each fetched in one query for all messages
  const crmIds = [...crmById.keys()];
  const chessInbox = crmIds.length ? await db.select().from(chessboardInbox).where(inArray(chessboardInbox.messageId, crmIds)) : [];
  const mismatches = crmIds.length ? await db.select().from(holdMismatches).where(inArray(holdMismatches.messageId, crmIds)) : [];
  const chatInbox = crmIds.length
    ? await db.select().from(messengerInbox).where(and(eq(messengerInbox.consumer, dealChatConsumer.name), inArray(messengerInbox.messageId, crmIds)))
    : [];
  const causedIds = [...crmIds, ...releases.map((r) => r.messageId)];
  const chessOut = causedIds.length
    ? await db.select().from(chessboardOutbox).where(sql`${chessboardOutbox.messageId} IN ${causedIds} OR (${chessboardOutbox.payload}->>'causationId') IN ${crmIds.length ? crmIds : ['00000000-0000-0000-0000-000000000000']}`)
    : [];
  const notifInbox = crmIds.length
    ? await db.select().from(notificationsInbox).where(and(inArray(notificationsInbox.messageId, crmIds), eq(notificationsInbox.consumer, notificationsBookingEventsConsumer.name)))
    : [];
  const notificationTopics = new Set<string>(notificationsBookingEventsConsumer.topics);
  const notificationsHop = (msg: OutboxRow): SagaHop => {
    if (!notificationTopics.has(msg.topic)) return hop('notifications_applied', msg.messageId, 'skipped', null, msg.publishedAt, 'not-consumed', null);
    const inbox = notifInbox.find((r) => r.messageId === msg.messageId);
    if (inbox) {
      return hop('notifications_applied', msg.messageId, inbox.result === 'rejected' ? 'failed' : 'done', inbox.processedAt, msg.publishedAt, inbox.result + (inbox.detail ? `:${inbox.detail}` : ''), inbox);
    }
    return hop('notifications_applied', msg.messageId, msg.publishedAt ? 'pending' : 'skipped', null, msg.publishedAt, null, null);
  };
  const rewardInbox = crmIds.length
    ? await db.select().from(rewardsInbox).where(and(inArray(rewardsInbox.messageId, crmIds), eq(rewardsInbox.consumer, rewardsBookingEventsConsumer.name)))
    : [];
  const rewardTopics = new Set<string>(rewardsBookingEventsConsumer.topics);
  const rewardsHop = (msg: OutboxRow): SagaHop => {
    if (!rewardTopics.has(msg.topic)) return hop('rewards_applied', msg.messageId, 'skipped', null, msg.publishedAt, 'not-consumed', null);
    const inbox = rewardInbox.find((r) => r.messageId === msg.messageId);
    if (inbox) {
      return hop('rewards_applied', msg.messageId, inbox.result === 'rejected' ? 'failed' : 'done', inbox.processedAt, msg.publishedAt, inbox.result + (inbox.detail ? `:${inbox.detail}` : ''), inbox);
    }
    return hop('rewards_applied', msg.messageId, msg.publishedAt ? 'pending' : 'skipped', null, msg.publishedAt, null, null);
  };
  const catalogIds = chessOut.map((r) => r.messageId);
  const catInbox = catalogIds.length ? await db.select().from(catalogInbox).where(inArray(catalogInbox.messageId, catalogIds)) : [];

  const chessboardTopics = new Set<string>([...CHESSBOARD_CONSUMED, ...crmPropertyObjectStatusConsumer.topics]);
  const catalogTopics = new Set<string>([...CATALOG_CONSUMED, ...cardProjectionConsumer.topics]);

  const catalogHop = (statusChanged: typeof chessOut[number], prevAt: Date | null, prevState: HopState): SagaHop => {
    const inbox = catInbox.find((r) => r.messageId === statusChanged.messageId);
    if (!catalogTopics.has(statusChanged.topic)) {
      return hop('catalog_applied', statusChanged.messageId, 'skipped', null, prevAt, 'not-consumed', null);
    }
    if (inbox) {
      return hop('catalog_applied', statusChanged.messageId, inbox.result === 'rejected' ? 'failed' : 'done', inbox.processedAt, prevAt, inbox.result + (inbox.detail ? `:${inbox.detail}` : ''), inbox);
    }
    return hop('catalog_applied', statusChanged.messageId, prevState === 'done' ? 'pending' : 'skipped', null, prevAt, null, null);
  };

  /** status-changed written → published → catalog applied, for one chessboard outbox row */
  const downstreamOf = (row: typeof chessOut[number], prevAt: Date | null): SagaHop[] => {
    const written = hop('chessboard_outbox_written', row.messageId, 'done', row.createdAt, prevAt, row.topic, row);
    const published = hop('chessboard_published', row.messageId, row.publishedAt ? 'done' : row.lastError ? 'failed' : 'pending', row.publishedAt, row.createdAt, row.publishedAt ? null : row.lastError ? `error:${row.lastError}` : `attempts:${row.attempts}`, { publishedAt: row.publishedAt, attempts: row.attempts, lastError: row.lastError, headers: row.headers });
    if (published.state === 'failed') published.state = 'pending'; // the relay retries: a publish error is not final
    return [written, published, catalogHop(row, row.publishedAt, published.state)];
  };

  const messengerTopics = new Set<string>(dealChatConsumer.topics);
  /** the deal chat's card of a crm message (messenger.deal-chat reads it in parallel with chessboard) */
  const messengerHop = (msg: OutboxRow): SagaHop => {
    if (!messengerTopics.has(msg.topic)) return hop('messenger_applied', msg.messageId, 'skipped', null, msg.publishedAt, 'not-consumed', null);
    const inbox = chatInbox.find((r) => r.messageId === msg.messageId);
    if (!inbox) return hop('messenger_applied', msg.messageId, msg.publishedAt ? 'pending' : 'skipped', null, msg.publishedAt, null, null);
    return hop('messenger_applied', msg.messageId, inbox.result === 'rejected' ? 'failed' : 'done', inbox.processedAt, msg.publishedAt,
      inbox.result === 'rejected' ? `rejected:${inbox.detail ?? 'DLQ'}` : inbox.result + (inbox.detail ? `:${inbox.detail}` : ''), inbox);
  };
  const chainOf = (msg: OutboxRow, commandAt: Date | null): SagaChain => {
    const chain = chessboardChainOf(msg, commandAt);
    // messenger's card is a hop of the chain; notifications is shown beside it (informational, not in hasPending)
    return { ...chain, hops: [...chain.hops, messengerHop(msg)], participants: [notificationsHop(msg), rewardsHop(msg)] };
  };

  const chessboardChainOf = (msg: OutboxRow, commandAt: Date | null): SagaChain => {
    const hops: SagaHop[] = [];
    const written = hop('crm_outbox_written', msg.messageId, 'done', msg.createdAt, commandAt, msg.topic, msg);
    hops.push(written);
    const published = hop('crm_published', msg.messageId, msg.publishedAt ? 'done' : 'pending', msg.publishedAt, msg.createdAt, msg.publishedAt ? null : msg.lastError ? `error:${msg.lastError}` : `attempts:${msg.attempts}`, { publishedAt: msg.publishedAt, attempts: msg.attempts, lastError: msg.lastError, headers: msg.headers });
    hops.push(published);
    if (!chessboardTopics.has(msg.topic)) {
      hops.push(hop('chessboard_applied', msg.messageId, 'skipped', null, msg.publishedAt, 'not-consumed', null));
      return { messageId: msg.messageId, topic: msg.topic, hops };
    }
    const inbox = chessInbox.find((r) => r.messageId === msg.messageId);
    const mismatch = mismatches.find((r) => r.messageId === msg.messageId);
    if (!inbox) {
      hops.push(hop('chessboard_applied', msg.messageId, published.state === 'done' ? 'pending' : 'skipped', null, msg.publishedAt, null, null));
      hops.push(hop('chessboard_outbox_written', msg.messageId, 'skipped', null, null, null, null));
      return { messageId: msg.messageId, topic: msg.topic, hops };
    }
    const applied = hop(
      'chessboard_applied', msg.messageId, inbox.result === 'rejected' ? 'failed' : 'done', inbox.processedAt, msg.publishedAt,
      inbox.result === 'rejected' ? `rejected:${inbox.detail ?? (mismatch ? 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH' : 'DLQ')}` : inbox.result + (inbox.detail ? `:${inbox.detail}` : ''),
      { inbox, mismatch: mismatch ?? null },
    );
    hops.push(applied);
    const caused = chessOut.filter((r) => (r.payload as { causationId?: string | null })?.causationId === msg.messageId);
    if (caused.length === 0) {
      // same transaction as the inbox row: nothing written now means nothing will be
      hops.push(hop('chessboard_outbox_written', msg.messageId, 'skipped', null, inbox.processedAt, inbox.result === 'applied' ? 'no-status-change' : inbox.result, null));
    }
    for (const row of caused) hops.push(...downstreamOf(row, inbox.processedAt));
    return { messageId: msg.messageId, topic: msg.topic, hops };
  };

  const steps: SagaStep[] = [];
  const attributed = new Set<string>();
  for (const { row, actorName } of timeline) {
    const ids = (row.messageIds ?? []).filter((id) => crmById.has(id));
    ids.forEach((id) => attributed.add(id));
    steps.push({
      key: `timeline:${row.id}`,
      command: {
        at: row.at, action: row.action, fromStatus: row.fromStatus, toStatus: row.toStatus, actorType: row.actorType,
        actorId: row.actorId, actorName: actorName ?? null, reason: row.reason, correlationId: row.correlationId,
        bookingVersion: row.bookingVersion, raw: row,
      },
      chains: ids.map((id) => chainOf(crmById.get(id)!, row.at)),
    });
  }
  // outbox rows the timeline does not name: attach by correlation id, else to the last command before them
  for (const msg of crmRows) {
    if (attributed.has(msg.messageId)) continue;
    const corr = (msg.payload as { correlationId?: string })?.correlationId;
    const byCorrelation = steps.find((s) => s.command?.correlationId && s.command.correlationId === corr);
    const byTime = [...steps].reverse().find((s) => s.command && s.command.at.getTime() <= msg.createdAt.getTime() + 1000);
    const target = byCorrelation ?? byTime;
    if (target) target.chains.push(chainOf(msg, target.command?.at ?? null));
    else steps.push({ key: `message:${msg.messageId}`, command: null, chains: [chainOf(msg, null)] });
  }
  for (const release of releases) {
    const row = chessOut.find((r) => r.messageId === release.messageId);
    const releaseHop = hop('safety_net_release', release.messageId, 'done', release.releasedAt, null, `${release.statusSource}:${release.fromStatus}`, release);
    steps.push({
      key: `release:${release.id}`,
      command: null,
      release: { source: release.statusSource, actorId: release.actorId, actorName: releaseActor.get(release.id) ?? null, reason: release.reason, at: release.releasedAt },
      chains: [{ messageId: release.messageId, topic: 'chessboard.hold_releases', hops: [releaseHop, ...(row ? downstreamOf(row, release.releasedAt) : [])] }],
    });
  }
  const ordered = mergeByVersionThenTime(steps);

  const all = steps.flatMap((s) => s.chains.flatMap((c) => c.hops));
  const hasPending = all.some((h) => h.state === 'pending');
  const [object] = await db
    .select({ status: propertyObjects.status, holdDealId: propertyObjects.holdDealId, holdBookingId: propertyObjects.holdBookingId })
    .from(propertyObjects)
    .where(eq(propertyObjects.id, booking.propertyObjectId));
  return {
    booking,
    steps: ordered,
    hasPending,
    hasFailures: all.some((h) => h.state === 'failed'),
    eventsOnRecord: crmRows.length > 0 || releases.length > 0,
    divergence: hasPending || !object ? null : divergenceOf(booking, object),
    generatedAt: now,
  };
}

function hop(kind: HopKind, messageId: string | null, state: HopState, at: Date | null, prevAt: Date | null, detail: string | null, raw: unknown): SagaHop {
  return {
    key: `${kind}:${messageId ?? ''}`,
    kind,
    state,
    at,
    latencyMs: at && prevAt ? at.getTime() - prevAt.getTime() : null,
    detail,
    messageId,
    raw,
  };
}

const ACTIVE_BOOKING = new Set(['Reserved', 'AwaitingPayment', 'Booked']);

function divergenceOf(
  booking: { id: string; dealId: string; status: string },
  object: { status: string; holdDealId: string | null; holdBookingId: string | null },
): SagaTimeline['divergence'] {
  const heldByThis = (object.status === 'Reserved' || object.status === 'Booked') && object.holdDealId === booking.dealId
    && (object.holdBookingId === null || object.holdBookingId === booking.id);
  const active = ACTIVE_BOOKING.has(booking.status);
  // a completed booking's object is Sold, not held: agreement
  if (active && !heldByThis) return { kind: 'booking_not_held', objectStatus: object.status, holdBookingId: object.holdBookingId };
  if (!active && heldByThis) return { kind: 'still_held', objectStatus: object.status, holdBookingId: object.holdBookingId };
  return null;
}

/**
 * The command steps keep the booking's version order (as the timeline query returned them); a step
 * without a command (a safety-net release, an unattributed message) goes in by its time, before the
 * first command step that happened after it.
 */
function mergeByVersionThenTime(steps: SagaStep[]): SagaStep[] {
  const commands = steps.filter((s) => s.command);
  const others = steps.filter((s) => !s.command).sort((a, b) => firstAt(a) - firstAt(b));
  const out: SagaStep[] = [];
  let o = 0;
  for (const step of commands) {
    while (o < others.length && firstAt(others[o]!) < firstAt(step)) out.push(others[o++]!);
    out.push(step);
  }
  return [...out, ...others.slice(o)];
}

function firstAt(step: SagaStep): number {
  if (step.command) return step.command.at.getTime();
  const first = step.chains[0]?.hops.find((h) => h.at);
  return first?.at?.getTime() ?? Number.MAX_SAFE_INTEGER;
}
