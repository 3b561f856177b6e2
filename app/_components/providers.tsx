'use client';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, httpLink, splitLink, TRPCClientError } from '@trpc/client';
import { useState } from 'react';
import superjson from 'superjson';
import type { AppRouter } from '@/server/main/app-router';
import { GRID_PROCEDURE, TRPC_URL } from './grid-request';
import { TRPCProvider } from './trpc';

/** A session that ended (expired, signed out elsewhere) sends the user to the sign-in page. */
function onAuthError(error: unknown) {
  if (error instanceof TRPCClientError && error.data?.code === 'UNAUTHORIZED' && typeof window !== 'undefined') {
    if (!window.location.pathname.startsWith('/login')) window.location.assign('/login');
  }
}

function makeQueryClient() {
  return new QueryClient({
    queryCache: new QueryCache({ onError: onAuthError }),
    mutationCache: new MutationCache({ onError: onAuthError }),
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        refetchOnWindowFocus: true,
        // a denied or missing resource will not appear by retrying
        retry: (count, error) => {
          const code = error instanceof TRPCClientError ? error.data?.code : undefined;
          if (code && ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_REQUEST'].includes(code)) return false;
          return count < 2;
        },
      },
    },
  });
}

export function Providers({ children }: { children: React.ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          // on their own request: auth.signIn (the server refuses it inside a batch: one request, one
          // attempt), and the chessboard's grid, which must not wait for the slowest query of a batch
          condition: (op) => op.path === 'auth.signIn' || op.path === GRID_PROCEDURE,
          true: httpLink({ url: TRPC_URL, transformer: superjson }),
          false: httpBatchLink({ url: TRPC_URL, transformer: superjson, maxURLLength: 4000, maxItems: 10 }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
