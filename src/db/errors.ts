// What a D1 failure means, read from its message (D1 has no error codes): shared by every
// service that turns a unique constraint into a 409.

/** Drizzle wraps the driver's error, so the constraint message may be on a cause. */
export function isUniqueViolation(err: unknown, column: string): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const text = String(e);
    if (text.includes("UNIQUE constraint failed") && text.includes(column)) return true;
  }
  return false;
}

/** A foreign key refused the write (its parent row is gone), on the error or one of its causes. */
export function isForeignKeyViolation(err: unknown): boolean {
  for (let e: unknown = err; e; e = e instanceof Error ? e.cause : undefined) {
    if (String(e).includes("FOREIGN KEY constraint failed")) return true;
  }
  return false;
}
