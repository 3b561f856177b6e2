'use client';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useRef } from 'react';

/** A patch of URL parameters: a value sets the parameter, null or '' removes it. */
export type UrlPatch = Record<string, string | null>;

/**
 * Filters, sorting and the selected row live in the URL (a reload or a shared link shows the same
 * screen). `setParams` merges a patch into the current query and replaces the history entry
 * without scrolling, so a filter change is not a Back step and the page stays where it is.
 *
 * A replace reaches `useSearchParams` only when its navigation commits. Two patches made before that
 * (two date fields typed one after the other) would each start from the rendered query, and the second
 * would undo the first. So each patch starts from the query the last one asked for, until the URL has
 * caught up with it.
 */
export function useUrlFilters({ shallow = false }: { shallow?: boolean } = {}) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  // the queries asked for and not yet shown, oldest first
  const asked = useRef<string[]>([]);
  useEffect(() => {
    // replaces commit in order (a later one may supersede an earlier): the ones up to the query now shown
    // are done; a query never asked for here (Back, a link) makes every pending one void
    const shown = asked.current.indexOf(params.toString());
    asked.current = shown < 0 ? [] : asked.current.slice(shown + 1);
  }, [params]);
  const setParams = useCallback((patch: UrlPatch) => {
    const next = new URLSearchParams(asked.current.at(-1) ?? params.toString());
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    asked.current.push(next.toString());
    // shallow: the URL changes without asking the server for the page again (a screen whose server
    // part reads data for its first HTML — the chessboard — would read it on every filter click)
    if (shallow) window.history.replaceState(null, '', `${pathname}?${next.toString()}`);
    else router.replace(`${pathname}?${next.toString()}`, { scroll: false });
  }, [params, pathname, router, shallow]);
  return { params, setParams };
}
