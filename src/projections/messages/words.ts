/** Most words kept per message: a long text is still found by its first few hundred words. */
const MAX_WORDS = 300;

/** A word as search compares it: lower case, accents gone (café and CAFE are one word). */
const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/**
 * The words of a text, as the messages model stores them for search and as a query is cut: runs of
 * letters and digits, folded, each once. The stores compare them as they are (see IndexSpec.text).
 */
export function wordsOf(text: string): string[] {
  const words = new Set<string>();
  for (const word of fold(text).split(/[^\p{L}\p{N}]+/u)) {
    if (word === '') continue;
    words.add(word);
    if (words.size >= MAX_WORDS) break;
  }
  return [...words];
}
