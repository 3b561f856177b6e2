import { z } from 'zod';
import type { JobDefinition, JobName } from './jobs/types';
import type { ConsumerDefinition } from './kafka/consumer-runner';
import { registerLabelValues } from './metrics';

/**
 * The lists of the running system — every job, every Kafka consumer — as the composition root
 * (server/main/registry.ts) hands them down at start-up. The ops dashboard and platform read them here,
 * so neither imports the composition root nor names a context (they sit on floors below both).
 */
export interface RegisteredLists {
  /** every job's fixed name, in the order the console lists them */
  jobNames: readonly JobName[];
  /** a fresh set per call: stateful jobs (the relay's producer, its advisory-lock connection) belong to one caller */
  createJobs: () => Record<JobName, JobDefinition>;
  consumers: readonly ConsumerDefinition[];
  /** the schemas with an outbox the relay publishes */
  outboxes: readonly string[];
}

let lists: RegisteredLists | null = null;

export function registerLists(l: RegisteredLists): void {
  lists = l;
  registerLabelValues('job', l.jobNames);
  registerLabelValues('consumer', l.consumers.map((c) => c.name));
  registerLabelValues('outbox', l.outboxes);
}

function registered(): RegisteredLists {
  if (!lists) throw new Error('no jobs or consumers registered: the process entry imports server/main/registry.ts');
  return lists;
}

export const registeredJobs = (): Record<JobName, JobDefinition> => registered().createJobs();
export const registeredJobNames = (): readonly JobName[] => registered().jobNames;
export const registeredConsumers = (): readonly ConsumerDefinition[] => registered().consumers;
export const registeredOutboxes = (): readonly string[] => registered().outboxes;
export const registeredConsumerGroups = (): readonly string[] => registered().consumers.map((c) => c.name);

/** A job's name as an input: one of the registered jobs (checked when the input is parsed). */
export const jobNameInput = z.string().max(100).refine((name) => registeredJobNames().includes(name), { message: 'unknown job' });
