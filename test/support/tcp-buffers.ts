import { readFileSync } from 'node:fs';

/**
 * The most one TCP connection's kernel buffers may hold on this machine: the receive and the send
 * buffer's upper limits (Linux `tcp_rmem` / `tcp_wmem`, which autotuning may grow to, tens of MB
 * on some machines), or 64 MB when they cannot be read. Tests about a peer that stops reading, or
 * a sender that is cut off, size their data and bounds by this rather than by one machine's tuning.
 */
export function tcpBufferMaxBytes(): number {
  try {
    const max = (file: string) => Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]);
    const total = max('/proc/sys/net/ipv4/tcp_rmem') + max('/proc/sys/net/ipv4/tcp_wmem');
    return Number.isFinite(total) && total > 0 ? total : 64 << 20;
  } catch {
    return 64 << 20;
  }
}
