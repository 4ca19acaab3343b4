import { DomainError } from '../domain/errors.js';

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: Error): void;
}

/**
 * The callers one session keeps waiting: pairing requests for the network's QR, and restarts for
 * the session to open. The lifecycle says what happened (a QR, an open, an end); the waiters learn
 * it here, each once, and a waiter that timed out is forgotten.
 */
export class PairingWaiters {
  /** The QR the network offers now; null before the first and after the socket ends or opens. */
  private current: string | null = null;
  private qrWaiters: Waiter<string>[] = [];
  private openWaiters: ((open: boolean) => void)[] = [];

  /** The current QR, or the next one the network offers within `timeoutMs`. */
  qr(timeoutMs: number): Promise<string> {
    if (this.current) return Promise.resolve(this.current);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.qrWaiters = this.qrWaiters.filter((w) => w !== waiter);
        reject(new DomainError('upstream_failed', 'the network did not offer a QR code in time; retry'));
      }, timeoutMs);
      const waiter: Waiter<string> = {
        resolve: (qr) => {
          clearTimeout(timer);
          resolve(qr);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.qrWaiters.push(waiter);
    });
  }

  offerQr(qr: string): void {
    this.current = qr;
    const waiters = this.qrWaiters;
    this.qrWaiters = [];
    for (const w of waiters) w.resolve(qr);
  }

  /** The QR no longer pairs anything (the socket opened or ended). */
  clearQr(): void {
    this.current = null;
  }

  /** Resolves true once the session opens, false when it will not soon or after `timeoutMs`. */
  open(isOpen: boolean, timeoutMs: number): Promise<boolean> {
    if (isOpen) return Promise.resolve(true);
    if (timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (open: boolean) => {
        clearTimeout(timer);
        this.openWaiters = this.openWaiters.filter((w) => w !== done);
        resolve(open);
      };
      this.openWaiters.push(done);
    });
  }

  settleOpen(open: boolean): void {
    const waiters = this.openWaiters;
    this.openWaiters = [];
    for (const w of waiters) w(open);
  }

  /** The session went down for now: restarts learn it will not open, QR requests get `qrError`. */
  fail(qrError: Error): void {
    this.settleOpen(false);
    const waiters = this.qrWaiters;
    this.qrWaiters = [];
    for (const w of waiters) w.reject(qrError);
  }
}
