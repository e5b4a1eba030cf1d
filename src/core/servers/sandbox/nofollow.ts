import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Paths walked one name at a time, following no symbolic link anywhere (Linux only).
 *
 * A second sandbox on the same root may run while this one is made: its server can swap any folder
 * it may write for a link at any moment. A path is therefore never handed to the kernel whole:
 * each name is opened relative to the folder opened before it (`/proc/self/fd/N/name` resolves
 * `name` in the open folder N without walking the path again; Node has no `openat`), with
 * `O_NOFOLLOW`, and what is made is made there (`mkdir`, `O_CREAT|O_EXCL`), so a link planted on
 * the way refuses the step instead of leading elsewhere. The descriptors are `O_PATH`: they grant
 * nothing but naming the object, which bubblewrap then binds (`--ro-bind-fd`, `--bind-fd`).
 */

/** `O_PATH` on Linux (x86-64, arm64 and the other architectures with the generic value); Node does not export it. */
const O_PATH = 0o10000000;
const { O_NOFOLLOW, O_DIRECTORY, O_CREAT, O_EXCL, O_WRONLY, O_RDONLY } = fs.constants;

/** A name on the way to a path is a symbolic link, or not a folder, or gone (or the path is not what it should be): the launch is refused. */
export class NotFollowedError extends Error {
  constructor(
    readonly path: string,
    readonly at: string,
  ) {
    super(
      at === path
        ? `${path} is a symbolic link or not what it was when checked`
        : `${at}, on the way to ${path}, is a symbolic link or not a folder`,
    );
  }
}

/** Called before each name is opened or made: tests swap a folder for a link there, at the worst moment. */
export type StepHook = (at: string) => void;

const inFolder = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;
const namesOf = (p: string) => p.split(path.sep).filter(Boolean);

/** Opens the folder `p` (absolute) as an O_PATH descriptor, following no link; throws NotFollowedError naming the first link or non-folder. */
function openFolder(p: string, onStep?: StepHook, make?: (made: string, fd: number) => void): number {
  let fd = fs.openSync('/', O_PATH | O_DIRECTORY);
  let at = '/';
  try {
    for (const name of namesOf(p)) {
      at = path.join(at, name);
      onStep?.(at);
      let next: number;
      try {
        next = fs.openSync(inFolder(fd, name), O_PATH | O_NOFOLLOW | O_DIRECTORY);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // Gone since it was checked (renamed by a server of another sandbox on the root) is refused as a link is, naming it.
        if (code !== 'ENOENT' || !make) throw code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT' ? new NotFollowedError(p, at) : e;
        // mkdir never follows its last name; a link put there meanwhile makes it fail (EEXIST), and the open below refuses it.
        let madeHere = true;
        try {
          fs.mkdirSync(inFolder(fd, name));
        } catch (made) {
          if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made;
          madeHere = false;
        }
        try {
          next = fs.openSync(inFolder(fd, name), O_PATH | O_NOFOLLOW | O_DIRECTORY);
        } catch (again) {
          const code = (again as NodeJS.ErrnoException).code;
          throw code === 'ELOOP' || code === 'ENOTDIR' ? new NotFollowedError(p, at) : again;
        }
        if (madeHere) make(at, next);
      }
      fs.closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** The entry `name` in the open folder `dir`, opened O_PATH without following it; its kind checked. */
function openEntry(dir: number, name: string, p: string, kind?: 'dir' | 'file'): number {
  let fd: number;
  try {
    fd = fs.openSync(inFolder(dir, name), O_PATH | O_NOFOLLOW | (kind === 'dir' ? O_DIRECTORY : 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT' ? new NotFollowedError(p, p) : e;
  }
  const s = fs.fstatSync(fd);
  if (kind === 'dir' ? !s.isDirectory() : kind === 'file' ? !s.isFile() : !s.isDirectory() && !s.isFile()) {
    fs.closeSync(fd);
    throw new NotFollowedError(p, p);
  }
  return fd;
}

/** An O_PATH descriptor of the folder or file `p` (either, without `kind`), reached without following any link: what bubblewrap binds. */
export function openChecked(p: string, kind?: 'dir' | 'file', onStep?: StepHook): number {
  if (kind === 'dir' || p === '/') return openFolder(p, onStep);
  const dir = openFolder(path.dirname(p), onStep);
  try {
    onStep?.(p);
    return openEntry(dir, path.basename(p), p, kind);
  } finally {
    fs.closeSync(dir);
  }
}

export interface MadeEntry {
  path: string;
  kind: 'dir' | 'file';
  ino: number;
  dev: number;
}

/**
 * Makes `p` (a folder, or a file holding `content`) and the folders missing on the way, none
 * through a link; returns each made, outer first, with its inode. An existing `p` makes nothing.
 * Throws NotFollowedError where a name on the way is a link or not a folder.
 */
export function makeChecked(p: string, kind: 'dir' | 'file', content: string, onStep?: StepHook): MadeEntry[] {
  const made: MadeEntry[] = [];
  const remember = (at: string, k: 'dir' | 'file', fd: number) => {
    const s = fs.fstatSync(fd);
    made.push({ path: at, kind: k, ino: s.ino, dev: s.dev });
  };
  if (kind === 'dir') fs.closeSync(openFolder(p, onStep, (at, fd) => remember(at, 'dir', fd)));
  else {
    const dir = openFolder(path.dirname(p), onStep, (at, fd) => remember(at, 'dir', fd));
    try {
      onStep?.(p);
      let fd: number;
      try {
        // O_EXCL with O_CREAT never follows a link in the last name: one planted there fails with EEXIST.
        fd = fs.openSync(inFolder(dir, path.basename(p)), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        // Someone made it meanwhile: what is there is protected as it is, if it is a file.
        fs.closeSync(openEntry(dir, path.basename(p), p, 'file'));
        return made;
      }
      try {
        fs.writeFileSync(fd, content);
        remember(p, 'file', fd);
      } finally {
        fs.closeSync(fd);
      }
    } finally {
      fs.closeSync(dir);
    }
  }
  return made;
}

/**
 * Removes `p` if it is still what was made (same inode unless pending, a folder that is empty, or a
 * file that holds `content`), reaching it without following any link; false where it is not (or gone).
 */
export function removeIfAsMade(
  p: string,
  made: { ino: number; dev: number; kind: 'dir' | 'file'; pending?: true },
  content: string,
): boolean {
  let dir: number;
  try {
    dir = openFolder(path.dirname(p));
  } catch {
    return false;
  }
  const name = path.basename(p);
  try {
    const fd = fs.openSync(inFolder(dir, name), (made.kind === 'dir' ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_NOFOLLOW);
    try {
      const s = fs.fstatSync(fd);
      // A pending one (its maker killed before it learnt the inode) is known by its kind and what it holds alone.
      if ((!made.pending && (s.ino !== made.ino || s.dev !== made.dev)) || (made.kind === 'dir' ? !s.isDirectory() : !s.isFile()))
        return false;
      if (made.kind === 'file' && fs.readFileSync(fd, 'utf8') !== content) return false;
    } finally {
      fs.closeSync(fd);
    }
    // rmdir and unlink never follow their last name, and the folder is the one opened above.
    if (made.kind === 'dir') fs.rmdirSync(inFolder(dir, name));
    else fs.unlinkSync(inFolder(dir, name));
    return true;
  } catch {
    // Not empty any more (the person or VS Code wrote into it), or gone: it is theirs now.
    return false;
  } finally {
    fs.closeSync(dir);
  }
}
