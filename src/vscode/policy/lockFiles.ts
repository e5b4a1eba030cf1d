/**
 * The workspace's lock files (`.vscode/mcp-pins/NAME.json`, written by `mcp-host … pin FILE`), as
 * the pins (./pins.ts) read them: off the extension host's thread (every step a promise), as
 * policy files (../../core/files/policyFile.ts: no link at them or between the workspace folder
 * and them, a regular file, so a FIFO or a link to /dev/zero planted there is refused, not waited
 * on), at most `MAX_LOCK_FILE_BYTES`, and kept until they change. A gated call makes a server's
 * files current first (`current`): each one's `lstat` compared with what was read (modification
 * time, size, inode, type) and read again when it differs. The tree and the chat's list show what
 * was read last (`known`) and follow `onDidChange` when a read or the file watcher finds a change.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MAX_LOCK_FILE_BYTES, parseLockFile, type PinSet } from '../../core/policy/pins';
import { readPolicyFile } from '../../core/files/policyFile';
import type { ServerDefinition } from '../../core';

/** Where a workspace folder keeps its lock files, one per server name (`mcp-host … pin FILE` writes them). */
export const LOCK_FOLDER = path.join('.vscode', 'mcp-pins');

/** A lock file as read: its pins, or why it could not be read (it then suspends everything of its server). */
export type LockRead = { file: string; pins: PinSet } | { file: string; problem: string };

/** What was read of one path, and the `lstat` it was read at ("none": there was no file). */
interface Known {
  stamp: string;
  read: LockRead | undefined;
}

export class WorkspaceLockFiles implements vscode.Disposable {
  private readonly known = new Map<string, Known>();
  private readonly reading = new Map<string, Promise<Known>>();
  private readonly emitter = new vscode.EventEmitter<void>();
  /** What is known of a lock file changed (read for the first time, written, created, deleted). */
  readonly onDidChange = this.emitter.event;
  private readonly watcher = vscode.workspace.createFileSystemWatcher(`**/${LOCK_FOLDER.split(path.sep).join('/')}/*.json`);

  constructor() {
    for (const event of [this.watcher.onDidChange, this.watcher.onDidCreate, this.watcher.onDidDelete])
      event((uri) => {
        // Only a lock file of a workspace folder itself (`FOLDER/.vscode/mcp-pins/NAME.json`), not one further down.
        const folder = path.dirname(path.dirname(path.dirname(uri.fsPath)));
        if ((vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.scheme === 'file' && f.uri.fsPath === folder))
          void this.refresh(uri.fsPath, folder);
      });
  }

  dispose(): void {
    this.watcher.dispose();
    this.emitter.dispose();
  }

  /** A server's lock file in each workspace folder (on disk or not), with that folder: none for a name no file may have. */
  private paths(def: ServerDefinition): Array<{ file: string; folder: string }> {
    if (!/^[\w.-]+$/.test(def.name) || def.name.startsWith('.')) return [];
    return (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === 'file')
      .map((f) => ({ folder: f.uri.fsPath, file: path.join(f.uri.fsPath, LOCK_FOLDER, `${def.name}.json`) }));
  }

  /**
   * The server's lock files as last read, without waiting: a path never looked at yet is read now,
   * and `onDidChange` fires if it holds a lock file.
   */
  readNow(def: ServerDefinition): LockRead[] {
    const out: LockRead[] = [];
    for (const { file, folder } of this.paths(def)) {
      const known = this.known.get(file);
      if (!known) void this.refresh(file, folder);
      else if (known.read) out.push(known.read);
    }
    return out;
  }

  /** Makes the server's lock files current: each `lstat`ed now, and read again if it changed since it was read. */
  async current(def: ServerDefinition): Promise<void> {
    await Promise.all(
      this.paths(def).map(async ({ file, folder }) => {
        // A read that started before this call may have missed a change: a look of its own after it.
        await this.reading.get(file);
        await this.refresh(file, folder);
      }),
    );
  }

  /** One look at a time per file: read again when its `lstat` differs from what was read. */
  private refresh(file: string, folder: string): Promise<Known> {
    const running = this.reading.get(file);
    if (running) return running;
    const look = this.readIfChanged(file, folder).finally(() => this.reading.delete(file));
    this.reading.set(file, look);
    return look;
  }

  private async readIfChanged(file: string, folder: string): Promise<Known> {
    const stat = await fs.lstat(file).catch(() => undefined);
    const stamp = stat ? `${stat.mtimeMs}:${stat.size}:${stat.ino}:${stat.mode}` : 'none';
    const before = this.known.get(file);
    if (before?.stamp === stamp) return before;
    let read: LockRead | undefined;
    if (stat) {
      try {
        read = { file, pins: parseLockFile(await readPolicyFile(file, MAX_LOCK_FILE_BYTES, { within: [folder] })) };
      } catch (error) {
        read = { file, problem: error instanceof Error ? error.message : String(error) };
      }
    }
    const known = { stamp, read };
    this.known.set(file, known);
    if (before?.read || read) this.emitter.fire();
    return known;
  }
}
