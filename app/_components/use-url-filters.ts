'use client';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useCallback } from 'react';

/** A patch of URL parameters: a value sets the parameter, null or '' removes it. */
export type UrlPatch = Record<string, string | null>;

/**
 * Filters, sorting and the selected row live in the URL (a reload or a shared link shows the same
 * screen). `setParams` merges a patch into the current query and replaces the history entry
 * without scrolling, so a filter change is not a Back step and the page stays where it is.
 */
export function useUrlFilters() {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const setParams = useCallback((patch: UrlPatch) => {
    const next = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    router.replace(`${pathname}?${next.toString()}`, { scroll: false });
  }, [params, pathname, router]);
  return { params, setParams };
}
