'use client';
import { useFormat } from './format';

/** A timestamp in the user's zone, with the exact UTC value on hover. */
export function Time({ value, seconds = false, precise = false }: { value: Date | string | null | undefined; seconds?: boolean; precise?: boolean }) {
  const f = useFormat();
  if (!value) return <span className="muted">—</span>;
  const d = value instanceof Date ? value : new Date(value);
  return (
    <time dateTime={d.toISOString()} title={f.utc(d)}>
      {precise ? f.precise(d) : seconds ? f.dateTimeSeconds(d) : f.dateTime(d)}
    </time>
  );
}
