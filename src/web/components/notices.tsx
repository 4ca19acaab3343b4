/** An error said to assistive technology at once; nothing when there is none. */
export function Alert({ message }: { message: string | null }) {
  return message ? (
    <p role="alert" class="error">
      {message}
    </p>
  ) : null;
}

/** A quiet confirmation (saved, removed...); nothing when there is none. */
export function Notice({ message }: { message: string | null }) {
  return message ? (
    <p role="status" class="ok">
      {message}
    </p>
  ) : null;
}
