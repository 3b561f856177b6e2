'use client';
import { createContext, useContext } from 'react';
import type { SignedInUser } from '@/server/auth/sign-in';
import { HOLD_RELEASE_ROLES } from '@/server/chessboard/hold-release-roles';
import { COMMAND_ROLES, type CrmCommandName } from '@/server/crm/permissions';

const SessionContext = createContext<SignedInUser | null>(null);

export function SessionProvider({ user, children }: { user: SignedInUser; children: React.ReactNode }) {
  return <SessionContext.Provider value={user}>{children}</SessionContext.Provider>;
}

export function useSessionUser(): SignedInUser {
  const user = useContext(SessionContext);
  if (!user) throw new Error('useSessionUser outside the console layout');
  return user;
}

/**
 * Which crm commands the user's role allows (the same table the server enforces): the UI shows only
 * those buttons. The server checks again; hiding a button is a courtesy, not the guard.
 */
export function useCan() {
  const user = useSessionUser();
  return (command: CrmCommandName | 'chessboard.releaseHold') => {
    if (command === 'chessboard.releaseHold') return (HOLD_RELEASE_ROLES as readonly string[]).includes(user.role);
    return (COMMAND_ROLES[command] as readonly string[]).includes(user.role);
  };
}
