'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useId, useState } from 'react';
import { PROFILE_ROLES, type ProfileAction } from '@/server/profile/permissions';
import type { RequisiteFields } from '@/server/profile/requisites';
import { ErrorNotice } from './error-notice';
import { useSessionUser } from './session';
import { useTRPC } from './trpc';

/**
 * The buyer's requisite set: personal data. Lists show it masked; the full set is shown only on "Show",
 * with the reason the reader gives (the server writes it in the audit row of the reveal, and the reveal
 * log shows it), and is dropped again on "Hide". The viewer and ops roles never get this component (the
 * server refuses them too).
 */
export function useCanProfile() {
  const user = useSessionUser();
  return (action: ProfileAction) => (PROFILE_ROLES[action] as readonly string[]).includes(user.role);
}

const FIELDS: Array<keyof RequisiteFields> = [
  'fullName', 'passportSeries', 'passportNumber', 'passportIssuedAt', 'passportIssuedBy', 'registrationAddress', 'phone', 'email', 'inn',
];

/** Booking page: the set the booking was made with, masked, with an audited "Show". */
export function BookingRequisites({ booking }: { booking: { id: string; requisiteSetId: string | null; requisiteSetVersion: number | null } }) {
  const t = useTranslations('requisites');
  const trpc = useTRPC();
  const can = useCanProfile();
  const enabled = can('profile.list') && !!booking.requisiteSetId;
  const list = useQuery(trpc.profile.list.queryOptions({ setId: booking.requisiteSetId ?? undefined }, { enabled }));
  const reveal = useMutation(trpc.profile.reveal.mutationOptions());
  const [reason, setReason] = useState('');
  if (!can('profile.list')) return null;
  const set = list.data?.[0];
  return (
    <section className="requisites" aria-labelledby={`req-${booking.id}`} data-testid="booking-requisites">
      <h3 id={`req-${booking.id}`}>{t('title')}</h3>
      {!booking.requisiteSetId ? <p className="muted small" data-testid="requisites-none">{t('none')}</p> : null}
      {set?.erased ? <p className="muted small">{t('erased')}</p> : null}
      {set?.masked && !reveal.data ? (
        <dl className="kv" data-testid="requisites-masked">
          <dt>{t('fields.fullName')}</dt>
          <dd>{set.masked.name}</dd>
          <dt>{t('passport')}</dt>
          <dd className="mono">{set.masked.passport}</dd>
          <dt>{t('fields.phone')}</dt>
          <dd className="mono">{set.masked.phone}</dd>
          <dt>{t('fields.email')}</dt>
          <dd>{set.masked.email}</dd>
          <dt>{t('version')}</dt>
          <dd>{booking.requisiteSetVersion}</dd>
        </dl>
      ) : null}
      {reveal.data ? (
        <dl className="kv" data-testid="requisites-revealed">
          {FIELDS.map((f) => (
            <div key={f} style={{ display: 'contents' }}>
              <dt>{t(`fields.${f}`)}</dt>
              <dd>{reveal.data.fields[f]}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {set?.masked && can('profile.reveal') ? (
        reveal.data ? (
          <button type="button" className="btn" onClick={() => { reveal.reset(); setReason(''); }} data-action="hide-requisites">{t('hide')}</button>
        ) : (
          <form
            className="row requisites-reveal"
            onSubmit={(e) => { e.preventDefault(); reveal.mutate({ setId: set.id, bookingId: booking.id, reason }); }}
          >
            <label className="field">
              <span>{t('reason')}</span>
              <input
                name="revealReason" value={reason} onChange={(e) => setReason(e.target.value)}
                required minLength={3} maxLength={300} placeholder={t('reasonHint')} autoComplete="off"
              />
            </label>
            <button type="submit" className="btn" disabled={reveal.isPending || reason.trim().length < 3} data-action="show-requisites">
              {t('show')}
            </button>
          </form>
        )
      ) : null}
      {reveal.data ? <p className="muted small">{t('audited')}</p> : null}
      <ErrorNotice error={list.error ?? reveal.error} />
    </section>
  );
}

const EMPTY: Record<keyof RequisiteFields, string> = {
  fullName: '', passportSeries: '', passportNumber: '', passportIssuedAt: '', passportIssuedBy: '', registrationAddress: '', phone: '', email: '', inn: '',
};

/**
 * Create-booking form: pick one of the tenant's sets (masked) or fill a new one. `onChange` gets the
 * chosen set's id + version, or null (none: allowed for a free program; a paid one needs it before the contract).
 */
export function RequisitesPicker({ tenantId, value, onChange, required = false }: {
  tenantId: string;
  value: { setId: string; version: number } | null;
  onChange: (v: { setId: string; version: number } | null) => void;
  /** the command needs a set (a paid booking's contract): the empty choice asks for one instead of offering "none" */
  required?: boolean;
}) {
  const t = useTranslations('requisites');
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const can = useCanProfile();
  const user = useSessionUser();
  const id = useId();
  const [adding, setAdding] = useState(false);
  const [draft, setDraft] = useState(EMPTY);
  const enabled = can('profile.list');
  const sets = useQuery(trpc.profile.list.queryOptions({ tenantId: user.tenantId ? undefined : tenantId, limit: 100 }, { enabled }));
  const create = useMutation(trpc.profile.create.mutationOptions({
    onSuccess: (ref) => {
      onChange({ setId: ref.id, version: ref.version });
      setAdding(false);
      setDraft(EMPTY);
      void queryClient.invalidateQueries({ queryKey: trpc.profile.list.queryKey() });
    },
  }));
  if (!enabled) return null;
  const mine = (sets.data ?? []).filter((s) => s.tenantId === tenantId && !s.erased && s.masked);
  return (
    <fieldset className="requisites-picker" data-testid="requisites-picker">
      <legend>{t('title')}</legend>
      <label className="field">
        <span>{t('pick')}</span>
        <select
          name="requisiteSetId"
          required={required}
          value={value?.setId ?? ''}
          onChange={(e) => {
            const s = mine.find((x) => x.id === e.target.value);
            onChange(s ? { setId: s.id, version: s.version } : null);
          }}
        >
          <option value="" disabled={required}>{t(required ? 'chooseOption' : 'noneOption')}</option>
          {mine.map((s) => (
            <option key={s.id} value={s.id}>{s.masked!.name} · {s.masked!.passport}</option>
          ))}
        </select>
      </label>
      {can('profile.create') && !adding ? (
        <button type="button" className="btn" onClick={() => setAdding(true)} data-action="new-requisites">{t('add')}</button>
      ) : null}
      {adding ? (
        <div className="requisites-form" role="group" aria-label={t('add')}>
          {FIELDS.map((f) => (
            <label className="field" key={f}>
              <span>{t(`fields.${f}`)}</span>
              <input
                id={`${id}-${f}`}
                name={f}
                value={draft[f]}
                onChange={(e) => setDraft({ ...draft, [f]: e.target.value })}
                type={f === 'passportIssuedAt' ? 'date' : f === 'email' ? 'email' : f === 'phone' ? 'tel' : 'text'}
                inputMode={f === 'passportSeries' || f === 'passportNumber' || f === 'inn' ? 'numeric' : undefined}
                placeholder={t.has(`hints.${f}`) ? t(`hints.${f}`) : undefined}
                autoComplete="off"
                required
              />
            </label>
          ))}
          <div className="row">
            <button
              type="button" className="btn btn-primary" disabled={create.isPending} data-action="save-requisites"
              onClick={() => create.mutate({ tenantId: user.tenantId ? undefined : tenantId, fields: draft })}
            >
              {t('save')}
            </button>
            <button type="button" className="btn" onClick={() => { setAdding(false); create.reset(); }}>{t('cancel')}</button>
          </div>
          <ErrorNotice error={create.error} />
          <InvalidFields error={create.error} />
        </div>
      ) : null}
      <ErrorNotice error={sets.error} />
    </fieldset>
  );
}

/** Which fields the server refused (its field errors name the path, e.g. `fields.inn`), in the user's words. */
function InvalidFields({ error }: { error: unknown }) {
  const t = useTranslations('requisites');
  const fields = (error as { data?: { fields?: Array<{ field: string }> } } | null)?.data?.fields ?? [];
  const names = [...new Set(fields.map((f) => f.field.replace(/^fields\./, '')).filter((f): f is keyof RequisiteFields => (FIELDS as string[]).includes(f)))];
  if (!names.length) return null;
  return <p className="small" data-testid="requisites-invalid">{t('invalid')}: {names.map((n) => t(`fields.${n}`)).join(', ')}</p>;
}
