/**
 * The files MCP Host writes or reads for its policy: the audit log, its lock and its key, the lock
 * files `pin` writes and `--pinned` and the editor read, the audit's exports. A repository the
 * person clones can plant any of them, or a folder on the way to one, as a symbolic link
 * (`.mcp/audit.jsonl` → `~/.bashrc`, `.mcp` → `~`, a lock file → `/dev/zero`), or as a FIFO that
 * blocks whoever opens it. So each is opened here only:
 *
 * - without following a link in its last component (`O_NOFOLLOW`; where the system has none, an
 *   `lstat` first), nor in the folders between the one the person chose (the CLI's working folder
 *   for a relative path, a workspace folder) and the file: each is `lstat`ed and must be a folder;
 * - without blocking (`O_NONBLOCK`: a FIFO opens at once), and kept only when `fstat` says it is a
 *   regular file (not a FIFO, a device, a folder or a socket);
 * - for writing, only with one name: a hard link would carry what is written into another file;
 * - and checked again once open, before anything is read or written: the path must still lead,
 *   through no link, to the file that is open. A link swapped in between the checks and the open
 *   is found there (what the open created at the link's target stays, empty: nothing is written).
 *
 * A file is read up to a limit its caller sets: one that is larger is refused, not read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Why a policy file was not used; the message names the file. */
export class PolicyFileError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

export interface PolicyFileOptions {
  /**
   * Folders the person chose (the CLI's working folder, a workspace folder): for a file below one
   * of them, every folder between it and the file must be a folder, not a link. A relative path is
   * below the working folder.
   */
  within?: readonly string[];
  /** The mode of a file the open creates (0o666 less the umask by default); a file written whole that existed is given it too. */
  mode?: number;
}

/** How a file is opened: read, appended to (and read: the audit reads its last record), written whole, or created only if absent. */
export type PolicyAccess = 'read' | 'append' | 'write' | 'create';

const C = fs.constants;
const NOFOLLOW = C.O_NOFOLLOW ?? 0;
const NONBLOCK = C.O_NONBLOCK ?? 0;
const FLAGS: Record<PolicyAccess, number> = {
  read: C.O_RDONLY | NOFOLLOW | NONBLOCK,
  append: C.O_RDWR | C.O_APPEND | C.O_CREAT | NOFOLLOW | NONBLOCK,
  // Not O_TRUNC: nothing is cut before the file is known to be the one meant.
  write: C.O_WRONLY | C.O_CREAT | NOFOLLOW | NONBLOCK,
  create: C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW | NONBLOCK,
};

/** Why no link is followed, after what was found. */
const NO_LINKS =
  'MCP Host follows no link to a file it keeps its audit or pins in (a cloned repository can plant one): name the file itself';
const LINK_REASON = `is a symbolic link; ${NO_LINKS}`;

/** What a file that is not a regular one is, for a message: "a symbolic link", "a FIFO", … */
export function fileKind(stat: fs.Stats): string {
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** The error of an open the system refused, as a `PolicyFileError` where it says what the file is. */
function openError(file: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  // ELOOP (Linux, macOS) or EMLINK (FreeBSD): O_NOFOLLOW met a link.
  if (code === 'ELOOP' || code === 'EMLINK') return new PolicyFileError(file, LINK_REASON);
  // A FIFO opened for writing without O_NONBLOCK's reader, a folder opened for writing.
  if (code === 'ENXIO') return new PolicyFileError(file, 'is a FIFO or a device, not a regular file: not opened');
  if (code === 'EISDIR') return new PolicyFileError(file, 'is a folder, not a regular file');
  return error;
}

/**
 * The folders on the way to `file` that the person did not choose: below the chosen folder that
 * holds it (the working folder for a relative path), as spelt, so that `a/..` checks `a` before
 * walking back out of it. None for a file below no chosen folder.
 */
function foldersOnTheWay(file: string, within: readonly string[] | undefined): string[] {
  let base: string;
  let rest: string;
  if (!path.isAbsolute(file)) {
    base = '';
    rest = file;
  } else {
    const chosen = within?.find((w) => file.startsWith(w.endsWith(path.sep) ? w : `${w}${path.sep}`));
    if (chosen === undefined) return [];
    base = chosen.replace(/[\\/]+$/, '');
    rest = file.slice(chosen.length);
  }
  const parts = rest.split(path.sep === '\\' ? /[\\/]+/ : /\/+/).filter(Boolean);
  const out: string[] = [];
  let at = base;
  for (const part of parts.slice(0, -1)) out.push((at = at === '' ? part : `${at}${path.sep}${part}`));
  return out;
}

/** A folder on the way, as `lstat` found it (undefined: not there, the open will say so). */
function judgeFolder(file: string, folder: string, stat: fs.Stats | undefined): void {
  if (!stat) return;
  if (stat.isSymbolicLink()) throw new PolicyFileError(folder, `is a symbolic link, on the way to ${file}; ${NO_LINKS}`);
  if (!stat.isDirectory()) throw new PolicyFileError(folder, `is ${fileKind(stat)}, on the way to ${file}, not a folder`);
}

/** The open file as `fstat` sees it, and the path as `lstat` sees it once it is open: the same regular file, or why not. */
function judgeOpen(file: string, access: PolicyAccess, open: fs.Stats, atPath: fs.Stats | undefined): void {
  if (!open.isFile()) throw new PolicyFileError(file, `is ${fileKind(open)}, not a regular file`);
  if (access !== 'read' && open.nlink > 1)
    throw new PolicyFileError(
      file,
      `has ${open.nlink} names (hard links); MCP Host writes only to a file with one, so that what it writes reaches no other`,
    );
  if (!atPath || atPath.isSymbolicLink() || atPath.dev !== open.dev || atPath.ino !== open.ino)
    throw new PolicyFileError(file, 'was replaced while it was opened (a link swapped in?): not used');
}

function tooLarge(file: string, size: number, maxBytes: number): PolicyFileError {
  return new PolicyFileError(file, `is ${size} bytes, over the ${maxBytes} MCP Host reads of it: not read`);
}

/** The checks before an open where the system has no O_NOFOLLOW: the last component must not be a link now. */
function judgeBeforeOpen(file: string, stat: fs.Stats | undefined): void {
  if (!NOFOLLOW && stat?.isSymbolicLink()) throw new PolicyFileError(file, LINK_REASON);
}

const lstatOrNone = (p: string): fs.Stats | undefined => fs.lstatSync(p, { throwIfNoEntry: false });
const lstatOrNoneAsync = (p: string): Promise<fs.Stats | undefined> =>
  fs.promises.lstat(p).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });

/** Every folder on the way to `file` is a folder, not a link (./policyFile.ts's rule); throws a `PolicyFileError` naming the one that is not. */
export function checkPolicyFolders(file: string, options: PolicyFileOptions = {}): void {
  for (const folder of foldersOnTheWay(file, options.within)) judgeFolder(file, folder, lstatOrNone(folder));
}

async function checkFoldersAsync(file: string, options: PolicyFileOptions): Promise<void> {
  for (const folder of foldersOnTheWay(file, options.within)) judgeFolder(file, folder, await lstatOrNoneAsync(folder));
}

/**
 * Opens a policy file: its descriptor and what `fstat` says of it. A link (at the file or on the
 * way to it), anything but a regular file, a file with several names (for writing) or one replaced
 * while it was opened is refused with a `PolicyFileError`; other errors (ENOENT, EEXIST for
 * `create`) are the system's. The caller closes the descriptor.
 */
export function openPolicyFile(file: string, access: PolicyAccess, options: PolicyFileOptions = {}): { fd: number; stat: fs.Stats } {
  checkPolicyFolders(file, options);
  if (!NOFOLLOW) judgeBeforeOpen(file, lstatOrNone(file));
  let fd: number;
  try {
    fd = fs.openSync(file, FLAGS[access], options.mode ?? 0o666);
  } catch (error) {
    throw openError(file, error);
  }
  try {
    const stat = fs.fstatSync(fd);
    checkPolicyFolders(file, options);
    judgeOpen(file, access, stat, lstatOrNone(file));
    return { fd, stat };
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/** The text of a policy file of at most `maxBytes` bytes (./policyFile.ts's rules); a larger one is refused, not read. */
export function readPolicyFileSync(file: string, maxBytes: number, options: PolicyFileOptions = {}): string {
  const { fd, stat } = openPolicyFile(file, 'read', options);
  try {
    if (stat.size > maxBytes) throw tooLarge(file, stat.size, maxBytes);
    // One byte more than allowed: a file that grew since its fstat is found out, not read on.
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n) n = fs.readSync(fd, buffer, length, buffer.length - length, null);
    if (length > maxBytes) throw tooLarge(file, length, maxBytes);
    return buffer.toString('utf8', 0, length);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a policy file whole (created when absent): refused, unchanged, unless it is the regular file meant (./policyFile.ts). */
export function writePolicyFileSync(file: string, text: string, options: PolicyFileOptions = {}): void {
  const { fd } = openPolicyFile(file, 'write', options);
  try {
    if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
    fs.ftruncateSync(fd, 0);
    const bytes = Buffer.from(text, 'utf8');
    for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done, done);
  } finally {
    fs.closeSync(fd);
  }
}

/** `openPolicyFile` without blocking the thread that calls it: every step a promise (the extension host's reads of a workspace). */
async function openPolicyFileAsync(file: string, access: PolicyAccess, options: PolicyFileOptions): Promise<fs.promises.FileHandle> {
  await checkFoldersAsync(file, options);
  if (!NOFOLLOW) judgeBeforeOpen(file, await lstatOrNoneAsync(file));
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, FLAGS[access], options.mode ?? 0o666);
  } catch (error) {
    throw openError(file, error);
  }
  try {
    const stat = await handle.stat();
    await checkFoldersAsync(file, options);
    judgeOpen(file, access, stat, await lstatOrNoneAsync(file));
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** `readPolicyFileSync` without blocking the thread: for the extension host. */
export async function readPolicyFile(file: string, maxBytes: number, options: PolicyFileOptions = {}): Promise<string> {
  const handle = await openPolicyFileAsync(file, 'read', options);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw tooLarge(file, size, maxBytes);
    const buffer = Buffer.alloc(size + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n)
      ({ bytesRead: n } = await handle.read(buffer, length, buffer.length - length, null));
    if (length > maxBytes) throw tooLarge(file, length, maxBytes);
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}

/** `writePolicyFileSync` without blocking the thread: for the extension host. */
export async function writePolicyFile(file: string, data: string | Buffer, options: PolicyFileOptions = {}): Promise<void> {
  const handle = await openPolicyFileAsync(file, 'write', options);
  try {
    if (options.mode !== undefined) await handle.chmod(options.mode);
    await handle.truncate(0);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Copies a policy file into another (an export), both opened by the rules above, without reading it whole into memory. */
export async function copyPolicyFile(source: string, target: string, options: PolicyFileOptions = {}): Promise<void> {
  const from = await openPolicyFileAsync(source, 'read', {});
  try {
    const to = await openPolicyFileAsync(target, 'write', options);
    try {
      await to.truncate(0);
      const chunk = Buffer.alloc(64 * 1024);
      for (;;) {
        const { bytesRead } = await from.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        await to.write(chunk, 0, bytesRead);
      }
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}
