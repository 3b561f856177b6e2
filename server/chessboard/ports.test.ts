import { sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';

describe('chessboard ports', () => {
  it("an investor's scope refuses until the composition root plugged crm in, then asks it", async () => {
    vi.resetModules();
    const ports = await import('./ports');
    expect(() => ports.investorTenantsOf('i')).toThrow(/server\/main\/registry\.ts/);
    const sub = sql`(SELECT 1)`;
    const fn = vi.fn(() => sub);
    ports.provideInvestorTenants(fn);
    expect(ports.investorTenantsOf('i')).toBe(sub);
    expect(fn).toHaveBeenCalledWith('i');
  });
});
