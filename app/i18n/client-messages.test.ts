import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import en from './messages/en.json';
import ru from './messages/ru.json';
import { OPS_ONLY_NAMESPACES, sharedMessages } from './client-messages';

/** The source files of the app outside the ops pages (the ones that get the shared messages only). */
function sourcesOutsideOps(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full.endsWith(path.join('(console)', 'ops')) ? [] : sourcesOutsideOps(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('sharedMessages', () => {
  it('leaves out the ops pages\' namespace and keeps every other one', () => {
    for (const messages of [ru, en]) {
      const shared = sharedMessages(messages);
      expect(Object.keys(shared)).toEqual(Object.keys(messages).filter((k) => k !== 'ops'));
      expect(shared.chessboard).toBe(messages.chessboard);
    }
  });

  it('leaves out nothing a page outside ops translates', () => {
    const appDir = path.resolve(import.meta.dirname, '..');
    const used = sourcesOutsideOps(appDir).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/[Tt]ranslations\(\s*['"]([\w.]+)['"]/g)].map((m) => m[1].split('.')[0]));
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((namespace) => (OPS_ONLY_NAMESPACES as readonly string[]).includes(namespace))).toEqual([]);
  });
});
