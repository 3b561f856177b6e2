'use client';
import { useMutation } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useState } from 'react';
import { CATALOG_ACTION_ROLES } from '@/server/chessboard/catalog-action-roles';
import { useInvalidateAll } from './booking-panel';
import { ConfirmDialog, type DialogField } from './confirm-dialog';
import { announce } from './toast';
import { useCan, useSessionUser } from './session';
import { useTRPC, type RouterOutputs } from './trpc';

type ObjectDetails = RouterOutputs['chessboard']['object']['object'];
type Action = 'hide' | 'show' | 'withdrawObject' | 'withdrawProject';

/**
 * Catalog actions of a developer manager / PIN manager in the drawer: hide or show the object
 * on the storefront, withdraw the object or its whole project. Each asks for a reason in a dialog;
 * the server gates the role, scopes the tenant and writes the audit row. Withdrawing cannot be undone,
 * so its dialog also asks for the flat's number (the project's name) typed in. A withdrawn object is
 * gone from the grid, so the drawer closes (onWithdrawn) and the page shell keeps the notice.
 */
export function CatalogActions({ object, onWithdrawn }: { object: ObjectDetails; onWithdrawn: () => void }) {
  const t = useTranslations('catalogActions');
  const trpc = useTRPC();
  const user = useSessionUser();
  const invalidate = useInvalidateAll();
  const [active, setActive] = useState<Action | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const finish = (message: string, gone: boolean) => {
    setActive(null);
    void invalidate();
    if (gone) {
      announce(message);
      onWithdrawn();
    } else {
      setDone(message);
    }
  };
  const hide = useMutation(trpc.chessboard.setObjectHidden.mutationOptions({
    onSuccess: (r) => finish(r.status === 'Hidden' ? t('hidden', { number: object.number }) : t('shown', { number: object.number }), false),
  }));
  const withdrawObject = useMutation(trpc.chessboard.withdrawObject.mutationOptions({ onSuccess: () => finish(t('withdrawnObject', { number: object.number }), true) }));
  const withdrawProject = useMutation(trpc.chessboard.withdrawProject.mutationOptions({ onSuccess: () => finish(t('withdrawnProject', { project: object.projectName }), true) }));
  if (!(CATALOG_ACTION_ROLES as readonly string[]).includes(user.role)) return null;
  const canHide = object.status === 'Free' || object.status === 'Hidden';
  const canWithdraw = object.status !== 'Reserved' && object.status !== 'Booked';
  const pending = hide.isPending || withdrawObject.isPending || withdrawProject.isPending;
  const current = active === 'hide' || active === 'show' ? hide : active === 'withdrawObject' ? withdrawObject : withdrawProject;
  const reasonField: DialogField = { name: 'reason', label: t('reason'), required: true, multiline: true };
  const typed = active === 'withdrawObject' ? object.number : active === 'withdrawProject' ? object.projectName : null;
  const fields: DialogField[] = typed === null ? [reasonField]
    : [reasonField, { name: 'confirmText', label: t(active === 'withdrawObject' ? 'typeNumber' : 'typeProject', { number: object.number, project: object.projectName }), required: true, mustEqual: typed }];
  const open = (a: Action) => { hide.reset(); withdrawObject.reset(); withdrawProject.reset(); setDone(null); setActive(a); };
  return (
    <section className="drawer-section catalog-actions" aria-label={t('title')} data-testid="catalog-actions">
      <h3>{t('title')}</h3>
      {done ? <p className="notice notice-success" role="status" data-testid="catalog-action-done"><span aria-hidden="true">✓ </span>{done}</p> : null}
      {!canWithdraw ? <p className="muted small">{t('heldNote')}</p> : null}
      <div className="ops-actions">
        {canHide ? (
          <button type="button" className="btn" data-action={object.status === 'Hidden' ? 'show' : 'hide'} disabled={pending}
            onClick={() => open(object.status === 'Hidden' ? 'show' : 'hide')}>
            {object.status === 'Hidden' ? t('show') : t('hide')}
          </button>
        ) : null}
        {canWithdraw ? (
          <>
            <button type="button" className="btn btn-danger-outline" data-action="withdrawObject" disabled={pending} onClick={() => open('withdrawObject')}>
              {t('withdrawObject')}
            </button>
            <button type="button" className="btn btn-danger-outline" data-action="withdrawProject" disabled={pending} onClick={() => open('withdrawProject')}>
              {t('withdrawProject')}
            </button>
          </>
        ) : null}
      </div>
      {/* mounted only while asked: no second hidden dialog (and dialog-confirm button) in the drawer */}
      {active ? <ConfirmDialog
        open
        title={t(`${active}Title`, { number: object.number, project: object.projectName })}
        message={t(`${active}Message`, { number: object.number, project: object.projectName })}
        confirmLabel={t(active)}
        danger={active === 'withdrawObject' || active === 'withdrawProject'}
        fields={fields}
        pending={current.isPending}
        error={current.error}
        onConfirm={(v) => {
          const reason = v.reason.trim();
          if (active === 'hide' || active === 'show') hide.mutate({ propertyObjectId: object.id, hidden: active === 'hide', reason });
          else if (active === 'withdrawObject') withdrawObject.mutate({ propertyObjectId: object.id, reason });
          else if (active === 'withdrawProject') withdrawProject.mutate({ projectId: object.projectId, reason });
        }}
        onClose={() => setActive(null)}
      /> : null}
    </section>
  );
}

/**
 * Who can act on this object, for a user who cannot: a developer manager on a Free unit
 * learns that an agent books it; a viewer sees that the drawer is read-only.
 */
export function RoleNote({ object }: { object: ObjectDetails }) {
  const t = useTranslations('catalogActions');
  const user = useSessionUser();
  const can = useCan();
  if (user.role === 'viewer') return <p className="notice" data-testid="read-only-note">{t('readOnly')}</p>;
  if (object.status === 'Free' && !can('booking.create')) return <p className="muted small" data-testid="who-books-note">{t('whoBooks')}</p>;
  return null;
}
