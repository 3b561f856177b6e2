import { describe, expect, it, vi } from 'vitest';
import type { JobDefinition, JobName } from './jobs/types';
import type { ConsumerDefinition } from './kafka/consumer-runner';

describe('platform registry', () => {
  it('refuses to answer before the composition root registered its lists', async () => {
    vi.resetModules();
    const { registeredJobs, registeredConsumers } = await import('./registry');
    expect(() => registeredJobs()).toThrow(/server\/main\/registry\.ts/);
    expect(() => registeredConsumers()).toThrow(/server\/main\/registry\.ts/);
  });

  it('hands down a fresh job set per call and the consumers as registered', async () => {
    vi.resetModules();
    const { registerLists, registeredJobs, registeredConsumers } = await import('./registry');
    const consumers = [{ name: 'x' }] as unknown as ConsumerDefinition[];
    registerLists({ jobNames: ['outbox-relay'], createJobs: () => ({ 'outbox-relay': {} as JobDefinition }) as Record<JobName, JobDefinition>, consumers, outboxes: ['crm'] });
    expect(registeredJobs()).not.toBe(registeredJobs());
    expect(Object.keys(registeredJobs())).toEqual(['outbox-relay']);
    expect(registeredConsumers()).toBe(consumers);
  });

  it('the composition root registers every job by its fixed name and every consumer', async () => {
    vi.resetModules();
    await import('../main/registry');
    const { registeredJobs, registeredJobNames, registeredConsumers } = await import('./registry');
    const { JOB_NAMES } = await import('../main/jobs');
    expect(Object.keys(registeredJobs()).sort()).toEqual([...JOB_NAMES].sort());
    expect(registeredJobNames()).toEqual(JOB_NAMES);
    expect(registeredConsumers().length).toBeGreaterThan(0);
  });
});
