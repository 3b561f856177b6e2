import { describe, expect, it, vi } from 'vitest';
import type { Tx } from '../platform/db';

describe('crm ports', () => {
  it('the requisite check refuses until the composition root plugged profile in, then asks it', async () => {
    vi.resetModules();
    const ports = await import('./ports');
    const actor = { userId: 'u', role: 'agent' as const, tenantId: 't' };
    const ref = { tenantId: 't', setId: 's', version: 1 };
    expect(() => ports.checkRequisiteReference({} as Tx, actor, ref)).toThrow(/server\/main\/registry\.ts/);
    const check = vi.fn(async () => 'erased' as const);
    ports.provideRequisiteReferenceCheck(check);
    await expect(ports.checkRequisiteReference({} as Tx, actor, ref)).resolves.toBe('erased');
    expect(check).toHaveBeenCalledWith({}, actor, ref);
  });

  it("the composition root plugs in profile's module API", async () => {
    vi.resetModules();
    await import('../main/registry');
    const ports = await import('./ports');
    // profile's check starts by selecting the set: a transaction that refuses any select shows it was asked
    const tx = { select: () => { throw new Error('profile read its requisite sets'); } } as unknown as Tx;
    await expect(ports.checkRequisiteReference(tx, { userId: 'u', role: 'agent', tenantId: 't' }, { tenantId: 't', setId: 's', version: 1 }))
      .rejects.toThrow('profile read its requisite sets');
  });

  it("the buyer name lookup refuses until wired; the composition root wires profile's masked names", async () => {
    vi.resetModules();
    const unwired = await import('./ports');
    expect(() => unwired.buyerNameLookup()).toThrow(/server\/main\/registry\.ts/);
    vi.resetModules();
    await import('../main/registry');
    const ports = await import('./ports');
    const profile = await import('../profile/module-api');
    expect(ports.buyerNameLookup().maskedBuyerNames).toBe(profile.maskedBuyerNames);
    expect(ports.buyerNameLookup().setIdsMatchingSurname).toBe(profile.requisiteSetIdsMatchingSurname);
  });
});
