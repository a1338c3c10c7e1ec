import { type ReactNode, useEffect, useId, useRef } from 'react';
import { ApiError } from '../api';
import { exactDate, formatDate } from '../format';

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** The outcome of the last action (saved, tested, reloaded), announced politely; nothing when empty. */
export function Notice({ message }: { message: ReactNode }) {
  if (!message) return null;
  return (
    <p className="notice" role="status">
      {message}
    </p>
  );
}

/** A failure, with the API's problem detail when there is one. */
export function ErrorBox({ error }: { error: unknown }) {
  if (error instanceof ApiError) {
    const p = error.problem;
    return (
      <div className="error" role="alert">
        <strong>
          {p.title ?? 'Request failed'} ({p.status})
        </strong>
        {p.detail ? <p>{p.detail}</p> : null}
        {p.code ? <p className="muted">code: {p.code}</p> : null}
        {p.request_id ? <p className="muted">request id: {p.request_id}</p> : null}
      </div>
    );
  }
  return (
    <div className="error" role="alert">
      <strong>Something went wrong</strong>
      <p>{error instanceof Error ? error.message : String(error)}</p>
    </div>
  );
}

export function DateTime({
  value,
  withTime = true,
}: {
  value: string | null | undefined;
  withTime?: boolean;
}) {
  if (!value) return <span className="muted">—</span>;
  return (
    <time dateTime={value} title={exactDate(value)}>
      {formatDate(value, withTime)}
    </time>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.toLowerCase()}`}>{status}</span>;
}

export function Section({
  title,
  children,
  actions,
  className,
}: {
  title: string;
  children: ReactNode;
  actions?: ReactNode;
  /** `wide` spans the whole row of a grid. */
  className?: string;
}) {
  const id = useId();
  return (
    <section className={className ? `card ${className}` : 'card'} aria-labelledby={id}>
      <div className="card-head">
        <h2 id={id}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/**
 * A button for an action the caller may not take is disabled and says why (title and a
 * visually hidden note for screen readers).
 */
export function ActionButton({
  allowed,
  reason,
  children,
  className,
  ...rest
}: { allowed: boolean; reason: string } & React.ButtonHTMLAttributes<HTMLButtonElement>) {
  return (
    <button
      type="button"
      {...rest}
      className={className ?? 'button'}
      disabled={!allowed || rest.disabled}
      title={allowed ? rest.title : reason}
      aria-description={allowed ? undefined : reason}
    >
      {children}
    </button>
  );
}

/**
 * A modal confirmation naming what will change. Uses the native <dialog> (focus trapped, Escape
 * closes); the confirm button is labelled with the action itself.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  danger,
  busy,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal?.();
    if (!open && dialog.open) dialog.close?.();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={id} onCancel={onCancel} className="dialog">
      <h2 id={id}>{title}</h2>
      <div className="dialog-body">{children}</div>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className={danger ? 'button danger' : 'button primary'}
          onClick={onConfirm}
          disabled={busy}
        >
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A labelled form field: the label names the control alone, the hint describes it. */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: ReactNode;
  children: (ids: { id: string; describedBy: string | undefined }) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      ) : null}
      {children({ id, describedBy: hint ? hintId : undefined })}
    </div>
  );
}
