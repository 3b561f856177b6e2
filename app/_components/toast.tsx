'use client';
import './notices.css';
import { useTranslations } from 'next-intl';
import { useEffect, useSyncExternalStore } from 'react';

/**
 * What just happened, said where it stays in sight: an action whose panel closes (a withdrawn flat, a
 * created booking) leaves its notice here, in the page shell, until it is dismissed or times out.
 */
interface Toast { id: number; message: string; tone: 'success' | 'warning' }
let toasts: Toast[] = [];
let nextId = 1;
const listeners = new Set<() => void>();
const emit = () => { for (const l of listeners) l(); };

export function announce(message: string, tone: Toast['tone'] = 'success'): void {
  toasts = [...toasts.slice(-2), { id: nextId++, message, tone }];
  emit();
}

function dismiss(id: number): void {
  toasts = toasts.filter((x) => x.id !== id);
  emit();
}

const subscribe = (l: () => void) => { listeners.add(l); return () => { listeners.delete(l); }; };
const EMPTY: Toast[] = [];

/** Long enough to read a sentence twice; the button closes it sooner. */
const TOAST_MS = 10_000;

export function ToastHost() {
  const t = useTranslations('dialog');
  const list = useSyncExternalStore(subscribe, () => toasts, () => EMPTY);
  useEffect(() => {
    if (list.length === 0) return;
    const timers = list.map((x) => setTimeout(() => dismiss(x.id), TOAST_MS));
    return () => timers.forEach(clearTimeout);
  }, [list]);
  return (
    <div className="toast-host" role="status" aria-live="polite" data-testid="toasts">
      {list.map((x) => (
        <p key={x.id} className={`notice notice-${x.tone} toast`} data-testid="toast">
          <span aria-hidden="true">{x.tone === 'success' ? '✓ ' : '⚠ '}</span>{x.message}
          <button type="button" className="btn btn-small toast-close" onClick={() => dismiss(x.id)} aria-label={t('close')}>×</button>
        </p>
      ))}
    </div>
  );
}
