import type { JobDefinition, JobName } from './jobs/types';
import type { ConsumerDefinition } from './kafka/consumer-runner';

/**
 * The lists of the running system — every job, every Kafka consumer — as the composition root
 * (server/main/registry.ts) hands them down at start-up. The ops dashboard and platform read them here,
 * so neither imports the composition root nor names a context (they sit on floors below both).
 */
export interface RegisteredLists {
  /** a fresh set per call: stateful jobs (the relay's producer, its advisory-lock connection) belong to one caller */
  createJobs: () => Record<JobName, JobDefinition>;
  consumers: readonly ConsumerDefinition[];
}

let lists: RegisteredLists | null = null;

export function registerLists(l: RegisteredLists): void {
  lists = l;
}

function registered(): RegisteredLists {
  if (!lists) throw new Error('no jobs or consumers registered: the process entry imports server/main/registry.ts');
  return lists;
}

export const registeredJobs = (): Record<JobName, JobDefinition> => registered().createJobs();
export const registeredConsumers = (): readonly ConsumerDefinition[] => registered().consumers;
