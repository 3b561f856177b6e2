'use client';
import { TRPCClientError } from '@trpc/client';
import { useLocale, useTranslations } from 'next-intl';
import { makeFormat } from './format';

/** domainCode (stable, from the server) → plain words from the dictionary; never a stack trace. */
export function useErrorText() {
  const t = useTranslations('errors');
  const tb = useTranslations('booking');
  const statusName = (domain: string | null | undefined, status: string): string | null => {
    const key = domain?.startsWith('CRM_DEAL_') ? `dealStatus.${status}` : `status.${status}`;
    return tb.has(key) ? tb(key) : null;
  };
  const format = makeFormat(useLocale());
  return (error: unknown): string => {
    if (!error) return '';
    if (error instanceof TRPCClientError) {
      const data = error.data as { domainCode?: string | null; code?: string; deadline?: string; currentStatus?: string } | undefined;
      const domain = data?.domainCode;
      // someone else moved it first: say to which status (the UI has already refreshed the data)
      const status = data?.currentStatus ? statusName(domain, data.currentStatus) : null;
      if (domain && status && t.has(`domainStatus.${domain}`)) return t(`domainStatus.${domain}`, { status });
      // the expiry worker won: say when the deadline was (in the user's time zone)
      if (domain && data?.deadline && t.has(`domainAt.${domain}`)) return t(`domainAt.${domain}`, { deadline: format.dateTimeSeconds(new Date(data.deadline)) });
      if (domain && t.has(`domain.${domain}`)) return t(`domain.${domain}`);
      if (data?.code && t.has(`code.${data.code}`)) return t(`code.${data.code}`);
      if (/fetch|network/i.test(error.message)) return t('network');
    }
    return t('generic');
  };
}

export function ErrorNotice({ error, className = '' }: { error: unknown; className?: string }) {
  const text = useErrorText();
  if (!error) return null;
  return (
    <p role="alert" className={`notice notice-error ${className}`}>
      {text(error)}
    </p>
  );
}
