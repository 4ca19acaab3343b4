/** Sizes are rounded up to this, so downloads of similar sizes share buffers. */
const GRAIN = 1024 * 1024;

export interface SharedBufferPoolOptions {
  /** The most bytes kept between uses; a buffer that would pass it is dropped instead. */
  maxRetainedBytes?: number;
  /** Kept buffers are dropped after this long without a download. */
  idleMs?: number;
}

/**
 * Shared buffers kept between downloads. Filling a fresh buffer faults in its memory a page at a
 * time, which costs a large download as much as one of its hash passes; a reused buffer is
 * already mapped. What is kept is bounded, and let go once downloads stop for a while.
 */
export class SharedBufferPool {
  private free: SharedArrayBuffer[] = [];
  private retained = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly maxRetainedBytes: number;
  private readonly idleMs: number;

  constructor(options: SharedBufferPoolOptions = {}) {
    this.maxRetainedBytes = options.maxRetainedBytes ?? 128 * 1024 * 1024;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** A buffer of at least `size` bytes, the caller's alone until it is released. */
  acquire(size: number): SharedArrayBuffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const length = (this.free[i] as SharedArrayBuffer).byteLength;
      if (length >= size && (best < 0 || length < (this.free[best] as SharedArrayBuffer).byteLength)) best = i;
    }
    if (best < 0) return new SharedArrayBuffer(Math.max(GRAIN, Math.ceil(size / GRAIN) * GRAIN));
    const [buffer] = this.free.splice(best, 1) as [SharedArrayBuffer];
    this.retained -= buffer.byteLength;
    return buffer;
  }

  /** Hands a buffer back; nobody may read or write it afterwards. */
  release(buffer: SharedArrayBuffer): void {
    if (this.retained + buffer.byteLength <= this.maxRetainedBytes) {
      this.free.push(buffer);
      this.retained += buffer.byteLength;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.clear(), this.idleMs);
    this.timer.unref();
  }

  /** Bytes kept for later downloads. */
  get retainedBytes(): number {
    return this.retained;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.free = [];
    this.retained = 0;
  }
}
