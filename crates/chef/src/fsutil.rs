//! Atomic, durable file writes, shared by the file-system store and snapshot files; and
//! bounded reads of files a caller names ([`read_regular`]).
//!
//! One way to replace a file so that a crash at any instant leaves either the old or the new
//! bytes under the name, never a torn or empty file:
//!
//! 1. create a temporary file in the *same directory* (a rename is atomic only within one
//!    file system), exclusively (`O_EXCL`), readable by the owner only;
//! 2. write every byte, then `fsync` the file (the data is on disk before the name points
//!    at it);
//! 3. `rename` it over the target (atomic: readers see the old or the new inode);
//! 4. `fsync` the directory (the rename itself survives a power loss).
//!
//! Temporary files are named `.tmp-<pid>-<random>`. A process killed between steps 1 and 3
//! leaves one behind; [`remove_stale_temps`] deletes those whose writer is gone.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Name prefix of every temporary file this crate writes.
pub(crate) const TEMP_PREFIX: &str = ".tmp-";

/// Age after which a temporary file counts as stale when the writer's liveness cannot be
/// checked (no `/proc`).
const STALE_AGE: Duration = Duration::from_secs(3600);

/// The bytes of the regular file at `path` (a symbolic link is followed), when it holds at
/// most `max` bytes. What is not a regular file (a directory, a FIFO, a device such as
/// `/dev/zero`) is refused before it is opened, since opening a FIFO waits for a writer
/// (kind `InvalidInput`), and a larger file before it is read, or as soon as it grows past
/// `max` while it is read (kind `InvalidData`).
pub(crate) fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let too_big = |len: u64| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the file holds {len} bytes or more; at most {max} are read"),
        )
    };
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a directory, FIFO or device is not read)",
        ));
    }
    if meta.len() > max {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    File::open(path)?
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > max {
        return Err(too_big(read));
    }
    Ok(bytes)
}

/// Replace `path` with `bytes`, atomically and durably (see the module docs). The parent
/// directory must exist.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, None)
}

/// Most symbolic links [`write_file_atomic`] follows to reach the file it replaces.
const MAX_LINKS: usize = 40;

/// [`write_atomic`] for a file a user names (a snapshot): a symbolic link at `path` is
/// followed, so the link stays and the file it points to gets the new bytes (still
/// atomically: the temporary file goes beside that file); an existing file keeps its
/// permission bits (a new one is owner-only); an existing target that is not a regular
/// file (a directory, a FIFO, a device such as `/dev/null`) is refused with
/// [`io::ErrorKind::InvalidInput`] rather than replaced. Stale temporary files of earlier
/// writes that died are removed first from the directory the temporary file goes to (the
/// target's, not the link's).
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = follow_links(path)?;
    remove_stale_temps(parent_dir(&target), false)?;
    let mode = match fs::metadata(&target) {
        Ok(meta) if meta.is_file() => Some(meta.permissions()),
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a regular file (a directory, FIFO or device); a snapshot is \
                     written to a regular file",
                    target.display()
                ),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    replace(&target, bytes, mode)
}

/// Writes `bytes` to a temporary file beside `path` (owner-only, or with `permissions`),
/// renames it over `path` and syncs the directory; the temporary file is removed if any
/// step fails.
fn replace(path: &Path, bytes: &[u8], permissions: Option<fs::Permissions>) -> io::Result<()> {
    let dir = parent_dir(path);
    let tmp = dir.join(format!(
        "{TEMP_PREFIX}{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = write_then_rename(&tmp, path, bytes, permissions).and_then(|()| sync_dir(dir));
    if result.is_err() {
        // Best effort: the temporary file may not exist (create failed) or may already be
        // renamed (directory sync failed); either way nothing else is left to clean.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// `path` with every symbolic link along its last component followed (a dangling link
/// gives the path it points to, which does not exist yet).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                current = parent_dir(&current).join(target);
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow from {}",
        path.display()
    )))
}

/// Writes `tmp` (owner-only, or with `permissions` when given), then renames it to `path`.
fn write_then_rename(
    tmp: &Path,
    path: &Path,
    bytes: &[u8],
    permissions: Option<fs::Permissions>,
) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(tmp)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    fs::rename(tmp, path)
}

/// The directory holding `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `fsync` a directory, making renames, creations and removals in it durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // Directories cannot be opened for syncing on every platform; the rename is still
        // atomic there, only its durability across power loss is the platform's.
        let _ = dir;
        Ok(())
    }
}

/// Create `dir` and its missing ancestors below `base`, syncing each parent in which a
/// directory was created. `dir` must be inside `base`, which must exist.
pub(crate) fn create_dir_durable(base: &Path, dir: &Path) -> io::Result<()> {
    let Ok(rel) = dir.strip_prefix(base) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "directory outside its base",
        ));
    };
    let mut current = base.to_path_buf();
    for component in rel.components() {
        let parent = current.clone();
        current.push(component);
        match fs::create_dir(&current) {
            Ok(()) => sync_dir(&parent)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether a file name is one of our temporary files.
pub(crate) fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX)
}

/// Remove stale temporary files in `dir` (and, with `recursive`, below it, never following
/// symbolic links). A temporary file is stale when the process that wrote it is gone: on
/// Linux its pid (from the name) no longer exists in `/proc`; elsewhere, or when the name
/// carries no pid, it is older than an hour. Files of the current process are kept, as a
/// write may be in flight. Returns the paths removed.
pub(crate) fn remove_stale_temps(dir: &Path, recursive: bool) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let proc_available = Path::new("/proc/self").exists();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let file_type = entry.file_type()?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if file_type.is_dir() {
                if recursive {
                    pending.push(entry.path());
                }
                continue;
            }
            if !file_type.is_file() || !is_temp_name(&name) {
                continue;
            }
            if is_stale(&entry.path(), &name, proc_available) {
                match fs::remove_file(entry.path()) {
                    Ok(()) => removed.push(entry.path()),
                    // Another process cleaned it first.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(removed)
}

/// The writer's pid when `name` is exactly a name [`write_atomic`] gives
/// (`.tmp-<pid>-<lower-case hex digits, at most 32>`); `None` for any other file, which is never
/// ours to delete (a user's `.tmp-999-notes.txt` beside a snapshot stays).
fn temp_writer(name: &str) -> Option<u32> {
    let (pid, random) = name.strip_prefix(TEMP_PREFIX)?.split_once('-')?;
    let ours = !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && (1..=32).contains(&random.len())
        && random
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    ours.then(|| pid.parse::<u32>().ok()).flatten()
}

fn is_stale(path: &Path, name: &str, proc_available: bool) -> bool {
    let Some(pid) = temp_writer(name) else {
        return false;
    };
    match pid {
        pid if pid == std::process::id() => false,
        pid if proc_available => !Path::new("/proc").join(pid.to_string()).exists(),
        _ => fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age > STALE_AGE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_the_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn written_files_are_private_to_the_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write_atomic(&path, b"secret").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
    }

    #[test]
    fn a_write_into_a_missing_directory_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(&dir.path().join("missing/f"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn stale_temps_of_dead_writers_are_removed_and_live_ones_kept() {
        if !Path::new("/proc/self").exists() {
            return; // the pid rule needs /proc; the age rule is covered by is_stale below
        }
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        // pid 0 never names a user process in /proc.
        let random = "0123456789abcdef0123456789abcdef";
        let dead = dir.path().join(format!("sub/.tmp-0-{random}"));
        let mine = dir
            .path()
            .join(format!(".tmp-{}-{random}", std::process::id()));
        let other = dir.path().join(".hidden");
        // A user's files that only look like ours, by a writer that is gone: never deleted.
        let users = [
            dir.path().join("sub/.tmp-0-notes.txt"),
            dir.path().join("sub/.tmp-0"),
            dir.path().join(format!("sub/.tmp-0-{random}.chef")),
            dir.path().join(format!("sub/.tmp-x0-{random}")),
            dir.path().join(format!("sub/.tmp-0-{random}0")),
        ];
        for p in [&dead, &mine, &other].into_iter().chain(&users) {
            fs::write(p, b"x").unwrap();
        }
        assert!(remove_stale_temps(dir.path(), false).unwrap().is_empty());
        assert_eq!(
            remove_stale_temps(dir.path(), true).unwrap(),
            std::slice::from_ref(&dead)
        );
        assert!(!dead.exists() && mine.exists() && other.exists());
        assert!(users.iter().all(|p| p.exists()));
    }

    /// Through a link, the stale temporary files cleared are those beside the file the
    /// link reaches (where this write's own temporary file goes), not beside the link.
    #[cfg(unix)]
    #[test]
    fn a_write_through_a_link_clears_stale_temps_beside_its_target() {
        if !Path::new("/proc/self").exists() {
            return; // the pid rule needs /proc
        }
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("real")).unwrap();
        fs::create_dir(dir.path().join("links")).unwrap();
        let random = "0123456789abcdef0123456789abcdef";
        let beside_target = dir.path().join(format!("real/.tmp-0-{random}"));
        let beside_link = dir.path().join(format!("links/.tmp-0-{random}"));
        fs::write(&beside_target, b"x").unwrap();
        fs::write(&beside_link, b"x").unwrap();
        let link = dir.path().join("links/snap.json");
        std::os::unix::fs::symlink("../real/snap.json", &link).unwrap();
        write_file_atomic(&link, b"{}").unwrap();
        assert_eq!(fs::read(dir.path().join("real/snap.json")).unwrap(), b"{}");
        assert!(!beside_target.exists());
        assert!(beside_link.exists());
    }

    #[test]
    fn a_fresh_temp_without_a_pid_is_not_stale() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".tmp-nopid");
        fs::write(&p, b"x").unwrap();
        assert!(!is_stale(&p, ".tmp-nopid", false));
    }

    #[test]
    fn create_dir_durable_makes_nested_directories() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b/c");
        create_dir_durable(dir.path(), &nested).unwrap();
        assert!(nested.is_dir());
        create_dir_durable(dir.path(), &nested).unwrap();
        assert!(create_dir_durable(&nested, dir.path()).is_err());
    }
}
