/**
 * The messages a page's client components are given (the provider writes them into every page's HTML).
 * The ops pages' namespace is as large as all the others together and no other page shows a word of
 * it: the root layout leaves it out and the ops layout adds it back for its pages.
 */
export const OPS_ONLY_NAMESPACES = ['ops'] as const;

type Messages = Record<string, unknown>;

/** Every namespace but the ops pages' own. */
export function sharedMessages(messages: Messages): Messages {
  return Object.fromEntries(Object.entries(messages).filter(([namespace]) => !(OPS_ONLY_NAMESPACES as readonly string[]).includes(namespace)));
}
