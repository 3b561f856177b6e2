'use client';
import { useMutation } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { ErrorNotice } from './error-notice';
import { useTRPC } from './trpc';

export function LoginForm({ initialError }: { initialError?: string | null }) {
  const t = useTranslations('login');
  const trpc = useTRPC();
  const router = useRouter();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation(trpc.auth.signIn.mutationOptions({
    onSuccess: () => {
      router.replace('/chessboard');
      router.refresh();
    },
  }));
  return (
    <form
      className="form login-form"
      method="post"
      action="/api/auth/sign-in"
      onSubmit={(e) => {
        e.preventDefault();
        signIn.mutate({ email, password });
      }}
    >
      <label className="field">
        <span>{t('email')}</span>
        <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
      </label>
      <label className="field">
        <span>{t('password')}</span>
        <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      <ErrorNotice error={signIn.error} />
      {!signIn.error && initialError ? <p role="alert" className="notice notice-error">{initialError}</p> : null}
      <button type="submit" className="btn btn-primary" disabled={signIn.isPending}>
        {signIn.isPending ? t('signingIn') : t('submit')}
      </button>
    </form>
  );
}
