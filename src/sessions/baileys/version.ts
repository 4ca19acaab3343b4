/** The WhatsApp Web client version Baileys announces, e.g. `[2, 3000, 1027934701]`. */
export type WaVersion = [number, number, number];

/**
 * Parses a version string such as "2.3000.1027934701" (the form WhatsApp Web publishes) into the
 * triple Baileys' `version` option takes. Throws on anything else, so a bad setting fails at
 * start-up instead of at the first connection.
 */
export function parseWaVersion(text: string): WaVersion {
  const parts = text.trim().split('.');
  if (parts.length !== 3 || !parts.every((part) => /^\d{1,16}$/.test(part))) {
    throw new Error(`invalid WhatsApp version ${JSON.stringify(text)}: expected three dot-separated integers, e.g. 2.3000.1027934701`);
  }
  const [major, minor, patch] = parts.map(Number) as [number, number, number];
  if (![major, minor, patch].every(Number.isSafeInteger)) {
    throw new Error(`invalid WhatsApp version ${JSON.stringify(text)}: a part is too large`);
  }
  if (major === 0) throw new Error(`invalid WhatsApp version ${JSON.stringify(text)}: major version 0`);
  return [major, minor, patch];
}

export function formatWaVersion(version: WaVersion): string {
  return version.join('.');
}
