import { conflict } from '../../domain/errors.js';
import { KeyedLock } from '../keyed-lock.js';

/**
 * Where a send about to go out and a cancel of it meet, in this process: whichever comes first
 * wins, and the other sees it. A worker enters the gate (re-reading that the send is still
 * pending) before it sends and leaves once it has marked the send done; a cancel finds it inside
 * and answers 409. Across nodes the document claim does the same (see DocClaims).
 */
export class SendGate {
  private readonly lock = new KeyedLock();
  private readonly inside = new Set<string>();

  /** True, with the send now inside, when `stillPending` holds; false: it was canceled or done meanwhile. */
  enter(messageId: string, stillPending: () => Promise<boolean>): Promise<boolean> {
    return this.lock.run(messageId, async () => {
      if (this.inside.has(messageId) || !(await stillPending())) return false;
      this.inside.add(messageId);
      return true;
    });
  }

  leave(messageId: string): void {
    this.inside.delete(messageId);
  }

  /** Runs the cancel unless the send is going out right now (409). */
  cancel<T>(messageId: string, work: () => Promise<T>): Promise<T> {
    return this.lock.run(messageId, async () => {
      if (this.inside.has(messageId)) throw conflict(`message ${messageId} is being sent right now`);
      return work();
    });
  }
}
