import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { acquireLock } from '../../core/files/auditLock';

/**
 * What makes the editor's audit log checkable beyond its SHA-256 chain: the file's key (its MACs)
 * in VS Code's SecretStorage, and the head this window wrote last in the extension's global state,
 * both keyed by the audit file's path. A later Verify Audit Log must find that head in the chain,
 * so records cut from the end are caught; every window writes heads that later appends keep in the
 * chain, so whichever window's head is remembered, "the chain contains it" is the check.
 */
export class AuditTrust {
  private created: Promise<Buffer> | undefined;

  constructor(
    private readonly file: string,
    private readonly secrets: vscode.SecretStorage,
    private readonly state: vscode.Memento,
  ) {}

  private get keyName(): string {
    return `mcpHost.audit.key:${this.file}`;
  }

  private get headName(): string {
    return `mcpHost.audit.head:${this.file}`;
  }

  /** The file's key, created at the first write. */
  key(): Promise<Buffer> {
    this.created ??= this.createKey().catch((error: unknown) => {
      this.created = undefined;
      throw error;
    });
    return this.created;
  }

  /** The key when one was made already (verifying never makes one). */
  async existingKey(): Promise<Buffer | undefined> {
    const stored = await this.secrets.get(this.keyName);
    return stored ? Buffer.from(stored, 'hex') : undefined;
  }

  private async createKey(): Promise<Buffer> {
    const stored = await this.existingKey();
    if (stored) return stored;
    // Two windows making it at once: under the audit file's lock, so both use the one stored first.
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    const release = await acquireLock(this.file);
    try {
      const again = await this.existingKey();
      if (again) return again;
      const made = randomBytes(32);
      await this.secrets.store(this.keyName, made.toString('hex'));
      return made;
    } finally {
      release();
    }
  }

  remember(head: string): void {
    void this.state
      .update(this.headName, head)
      .then(undefined, (e) => console.warn(`MCP Host: could not remember the audit head: ${String(e)}`));
  }

  rememberedHead(): string | undefined {
    return this.state.get<string>(this.headName);
  }
}
