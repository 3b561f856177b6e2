'use client';
import { useTranslations } from 'next-intl';
import { useEffect, useId, useRef, useState } from 'react';
import { ErrorNotice } from './error-notice';

export interface DialogField {
  name: string;
  label: string;
  required?: boolean;
  multiline?: boolean;
  defaultValue?: string;
  hint?: string;
  /** a choice instead of text: radio buttons in a fieldset (label = legend); required means one must be picked */
  options?: { value: string; label: string }[];
  /** the text the user must type to confirm (e.g. the flat's number before an irreversible action) */
  mustEqual?: string;
}

/**
 * Every command asks for confirmation in a modal <dialog> (native focus trap, Escape closes, focus
 * returns to the opener). Fields such as the cancel reason are required before the button enables.
 */
export function ConfirmDialog({
  open, title, message, confirmLabel, fields = [], danger = false, pending = false, blocked = false, error, onConfirm, onClose,
}: {
  open: boolean;
  title: string;
  message?: React.ReactNode;
  confirmLabel: string;
  fields?: DialogField[];
  danger?: boolean;
  pending?: boolean;
  /** the confirm button stays off (e.g. until the user has read what changed meanwhile) */
  blocked?: boolean;
  error?: unknown;
  onConfirm: (values: Record<string, string>) => void;
  onClose: () => void;
}) {
  const t = useTranslations('dialog');
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [values, setValues] = useState<Record<string, string>>({});

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      setValues(Object.fromEntries(fields.map((f) => [f.name, f.defaultValue ?? ''])));
      dialog.showModal();
    } else if (!open && dialog.open) {
      dialog.close();
    }
    // fields are static per dialog; re-running on their identity would reset what the user typed
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  const missing = fields.some((f) => (f.required && !(values[f.name] ?? '').trim()) || (f.mustEqual !== undefined && (values[f.name] ?? '').trim() !== f.mustEqual));

  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <form
        method="dialog"
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!missing && !pending && !blocked) onConfirm(values);
        }}
      >
        <h2 id={titleId}>{title}</h2>
        {message ? <div className="dialog-message">{message}</div> : null}
        {fields.map((f) => f.options ? (
          <fieldset key={f.name} className="field choice-field" data-field={f.name}>
            <legend>
              {f.label}
              {f.required ? <span className="required" aria-hidden="true"> *</span> : null}
            </legend>
            {f.options.map((o) => (
              <label key={o.value} className="choice">
                <input
                  type="radio" name={f.name} value={o.value} required={f.required} checked={values[f.name] === o.value}
                  onChange={() => setValues((v) => ({ ...v, [f.name]: o.value }))}
                />{' '}
                <span>{o.label}</span>
              </label>
            ))}
            {f.hint ? <small className="muted">{f.hint}</small> : null}
          </fieldset>
        ) : (
          <label key={f.name} className="field">
            <span>
              {f.label}
              {f.required ? <span className="required" aria-hidden="true"> *</span> : null}
            </span>
            {f.multiline ? (
              <textarea name={f.name} required={f.required} rows={3} maxLength={500} value={values[f.name] ?? ''} onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))} />
            ) : (
              <input name={f.name} required={f.required} maxLength={500} autoComplete="off" value={values[f.name] ?? ''} onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))} />
            )}
            {f.hint ? <small className="muted">{f.hint}</small> : null}
          </label>
        ))}
        <ErrorNotice error={error} />
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose} disabled={pending}>
            {t('cancel')}
          </button>
          <button type="submit" className={`btn ${danger ? 'btn-danger' : 'btn-primary'}`} disabled={missing || pending || blocked} data-testid="dialog-confirm">
            {pending ? t('working') : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
