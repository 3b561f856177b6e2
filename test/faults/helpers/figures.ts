import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR } from '../../../scripts/infra';

/**
 * Prints the figure of a scenario (`[faults] …`) and appends it to .data/faults-figures.jsonl, from
 * which docs/operations.md "Fault and abuse suite" is written after a run of the full profile.
 */
export function figure(scenario: string, line: string, data: Record<string, unknown> = {}): void {
  console.log(`[faults] ${line}`);
  try {
    fs.mkdirSync(DATA_DIR, { recursive: true });
    fs.appendFileSync(
      path.join(DATA_DIR, 'faults-figures.jsonl'),
      `${JSON.stringify({ at: new Date().toISOString(), scenario, line, ...data })}\n`,
    );
  } catch {
    // the figure is printed either way
  }
}

/** Seconds since `t0` with one decimal. */
export const secondsSince = (t0: number) => Math.round((Date.now() - t0) / 100) / 10;
