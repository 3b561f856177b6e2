import type { PlatformEnv } from '../platform/env';

/**
 * A token bucket per user on reads (tRPC queries). Reads are cheap one by one, but a user that sends
 * batches of the heaviest ones in parallel (the ops dashboard's overview scans several tables) can hold
 * the web's CPU for everybody; the bucket lets a console page's polling and bursts through and refuses
 * the rest with 429 + Retry-After. In-process: with n web processes a user gets at most n buckets.
 */

/** What one call of a procedure costs: the ops dashboard's and the catalog backlog's reads scan much more than a lookup. */
export function readCost(procedure: string): number {
  return procedure.startsWith('ops.dashboard.') || procedure === 'catalog.delistedBacklog' || procedure === 'catalog.nextRetentionCandidates' ? 10 : 1;
}

interface Bucket { tokens: number; at: number }

export class ReadBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly perSecond: number, private readonly burst: number, private readonly now: () => number = () => performance.now()) {}

  /** Takes `cost` tokens of `user`'s bucket: 0 when taken, else the seconds until they are there (nothing taken). */
  take(user: string, cost: number): number {
    if (this.perSecond <= 0) return 0;
    const now = this.now();
    const b = this.buckets.get(user) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    // a request dearer than the whole bucket waits for a full one, and then passes
    const need = Math.min(cost, this.burst);
    if (b.tokens < need) {
      this.buckets.set(user, b);
      return (need - b.tokens) / this.perSecond;
    }
    b.tokens -= need;
    this.buckets.set(user, b);
    if (this.buckets.size > 10_000) this.forgetFull(now);
    return 0;
  }

  /** A full bucket is the same as none: dropped, so the map holds only users active lately. */
  private forgetFull(now: number): void {
    for (const [user, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(user);
  }
}

const byEnv = new WeakMap<PlatformEnv, ReadBuckets>();
/** One set of buckets per environment object (the web's services hold one). */
export function readBucketsOf(env: PlatformEnv): ReadBuckets {
  let b = byEnv.get(env);
  if (!b) byEnv.set(env, (b = new ReadBuckets(env.READ_LIMIT_PER_SECOND, env.READ_LIMIT_BURST)));
  return b;
}
