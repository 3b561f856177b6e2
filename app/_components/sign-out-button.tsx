'use client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useTRPC } from './trpc';

export function SignOutButton() {
  const t = useTranslations('nav');
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const signOut = useMutation(trpc.auth.signOut.mutationOptions({
    onSettled: () => {
      queryClient.clear();
      window.location.assign('/login');
    },
  }));
  return (
    <button type="button" className="btn btn-small" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
      {t('signOut')}
    </button>
  );
}
