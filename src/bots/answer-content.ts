import type { BotAnswer } from '../domain/bots/events.js';
import type { OutgoingContent } from '../domain/session/outgoing.js';
import type { Logger } from '../infra/logging/logger.js';
import type { MediaPreparer } from '../media/outgoing/prepare-media.js';
import type { SessionManager } from '../sessions/session-manager.js';

/**
 * A bot's answer as it goes out: text as text; an image, video or audio fetched from its URL
 * (outbound rules, size bound), checked and uploaded through the send routes' media pipeline. Media
 * that cannot be fetched or uploaded goes as its link, so the contact still gets the answer.
 */
export function answerContent(manager: SessionManager, preparer: MediaPreparer, logger: Logger) {
  return async (instanceId: string, answer: BotAnswer, delayMs: number): Promise<OutgoingContent> => {
    const delay = delayMs > 0 ? { delay_ms: delayMs } : {};
    if (answer.kind === 'text') return { kind: 'text', text: answer.text, ...delay };
    try {
      const connection = manager.connection(instanceId);
      const prepared = await preparer.prepare(answer.kind, { media: { url: answer.text }, voice: false });
      try {
        return { kind: 'media', media: await connection.uploadMedia(prepared.upload), ...delay };
      } finally {
        await prepared.done();
      }
    } catch (err) {
      logger.warn({ err, instanceId, url: answer.text }, "a bot's media could not be sent as media: its link goes instead");
      return { kind: 'text', text: answer.text, ...delay };
    }
  };
}
