export const REDACTED = '[redacted]';

/**
 * The one rule for what history never shows: any field whose name says it holds a secret, a hash
 * of one, a sealed value or key material. It goes by name, at every depth, so a secret field
 * added to any event later is covered without touching this file (test/history/redaction.test.ts
 * walks every event schema to keep it so). Over-redacting an identifier such as `client_token`
 * is the price of never missing one. A keyword (a bot's `stop_keyword`) is a word people type,
 * not key material: it shows.
 */
const SECRET_NAME = /(hash|sealed|secret|password|token|key(?!word)|cipher|credential|private|signature|invite)/i;

export function isSecretField(name: string): boolean {
  return SECRET_NAME.test(name);
}

export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  return redactObject(value);
}

/** An event's data, or any object, with its secret fields redacted at every depth. */
export function redactObject(value: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) out[name] = isSecretField(name) ? REDACTED : redact(field);
  return out;
}
