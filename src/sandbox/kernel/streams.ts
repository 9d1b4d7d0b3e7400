import type { ServerResponse } from 'node:http';
import type { Principal } from './principal.js';

/** Whose stream this is: its kind, its app, and the key or the token grant (family) that opened it. */
export interface StreamOwner {
  kind: 'relay' | 'log';
  appId: string;
  keyId?: string;
  family?: string;
}

/** What ended a credential: a key deleted, a grant's token revoked, an app deleted. */
export interface CredentialGone {
  keyId?: string;
  family?: string;
  appId?: string;
}

/**
 * Every open stream of the sandbox (the relay, the request log, any later one), by the credential
 * that opened it: one place closes them when that credential is revoked, deleted or its grant ends
 * (the ledger reports each such change: {@link gone}), or when their app goes.
 */
export class Streams {
  private readonly open = new Map<ServerResponse, StreamOwner>();

  /** Registers an open stream; it leaves the registry when its response closes. */
  add(res: ServerResponse, owner: StreamOwner): void {
    this.open.set(res, owner);
    res.on('close', () => this.open.delete(res));
  }

  /** Ends the streams opened with a credential that is gone, or of an app that is gone. */
  gone(what: CredentialGone): void {
    this.close(
      (o) =>
        (what.keyId !== undefined && o.keyId === what.keyId) ||
        (what.family !== undefined && o.family === what.family) ||
        (what.appId !== undefined && o.appId === what.appId),
    );
  }

  /** Ends every stream matching `which` (a secret rotated, the sandbox stopping). */
  close(which: (owner: StreamOwner) => boolean): void {
    for (const [res, owner] of this.open) {
      if (!which(owner)) continue;
      this.open.delete(res);
      res.end();
      // A client that does not read would keep the socket past end(): cut it off shortly after.
      setTimeout(() => res.destroy(), 500).unref();
    }
  }

  /** Ends every stream. */
  closeAll(): void {
    this.close(() => true);
  }
}

/** Writes to a stream unless it was ended (a revocation ends it between two of its writes). */
export function writeOpen(res: ServerResponse, text: string): boolean {
  return res.writableEnded ? true : res.write(text);
}

/** The credential a caller used, as a stream's owner names it. */
export function credentialOf(p: Principal): { keyId: string } | { family: string } {
  return p.kind === 'key' ? { keyId: p.key.id } : { family: p.family };
}
