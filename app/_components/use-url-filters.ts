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
export function useUrlFilters({ shallow = false }: { shallow?: boolean } = {}) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const setParams = useCallback((patch: UrlPatch) => {
    const next = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    // shallow: the URL changes without asking the server for the page again (a screen whose server
    // part reads data for its first HTML — the chessboard — would read it on every filter click)
    if (shallow) window.history.replaceState(null, '', `${pathname}?${next.toString()}`);
    else router.replace(`${pathname}?${next.toString()}`, { scroll: false });
  }, [params, pathname, router, shallow]);
  return { params, setParams };
}
