import type { ButtonsContent } from '../port.js';

export const BUTTONS_FALLBACK =
  'text: WhatsApp no longer renders classic button messages on most clients, so the buttons were sent as a numbered list in a text message (the recipient answers with the number or the label)';

/**
 * The text sent in place of a button card: the card's text, the buttons as a numbered list (the
 * recipient can answer with the number), and the footer in italics, as WhatsApp formats `_x_`.
 */
export function buttonsAsText(content: ButtonsContent): string {
  const parts: string[] = [];
  if (content.text?.trim()) parts.push(content.text.trim());
  parts.push(content.buttons.map((button, i) => `${i + 1}. ${button.text}`).join('\n'));
  if (content.footer?.trim()) parts.push(`_${content.footer.trim()}_`);
  return parts.join('\n\n');
}
